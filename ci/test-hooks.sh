#!/usr/bin/env bash
# The tests that need the library's test hooks (planted defects, crash points): built with
# `--cfg reftable_test_hooks` in a target directory of their own, so that no ordinary build
# (and no binary a user installs) ever contains the hooks.
#
#   ci/test-hooks.sh            the planted-defect gate tests (sequential, concurrent, faults), the
#                               stack crash test, the two-writer ordering tests and the adapter's
#                               protocol test
set -euo pipefail
cd "$(dirname "$0")/.."
# One cargo invocation for every package the tests need, so that their dependencies are
# resolved and built once (three invocations took about 10 s more on 2 cores). The reference
# adapter's planted defects are found by `conformance impl` (tests/impl_roles.rs), which
# runs the adapter beside the gate's binary: its protocol test makes cargo build that
# binary with the same flag. reftable/tests/orderings.rs runs two writers on one stack in
# every order of their steps.
exec cargo test --locked -p reftable -p conformance -p reftable-adapter \
  --config 'build.rustflags=["--cfg", "reftable_test_hooks"]' \
  --target-dir target/test-hooks \
  --test orderings --test protocol \
  --test planted_defects --test stack_stress --test no_test_hooks --test concurrent --test faults \
  --test impl_roles "$@"
