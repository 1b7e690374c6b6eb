#!/usr/bin/env bash
# The tests that need the library's test hooks (planted defects, crash points): built with
# `--cfg reftable_test_hooks` in a target directory of their own, so that no ordinary build
# (and no binary a user installs) ever contains the hooks.
#
#   ci/test-hooks.sh            the planted-defect gate tests (sequential, concurrent, faults), the
#                               stack crash test and the two-writer ordering tests
set -euo pipefail
cd "$(dirname "$0")/.."
# The reference adapter's planted defects are found by `conformance impl` (tests/impl_roles.rs),
# which runs the adapter beside the gate's binary: build it with the same flag first.
cargo build --locked -p reftable-adapter \
  --config 'build.rustflags=["--cfg", "reftable_test_hooks"]' --target-dir target/test-hooks
# Two writers on one stack in every order of their steps (reftable/tests/orderings.rs).
cargo test --locked -p reftable --test orderings \
  --config 'build.rustflags=["--cfg", "reftable_test_hooks"]' --target-dir target/test-hooks
exec cargo test --locked -p conformance \
  --config 'build.rustflags=["--cfg", "reftable_test_hooks"]' \
  --target-dir target/test-hooks \
  --test planted_defects --test stack_stress --test no_test_hooks --test concurrent --test faults \
  --test impl_roles "$@"
