#!/usr/bin/env bash
# The tests that need the library's test hooks (planted defects, crash points): our crates
# built with `--cfg reftable_test_hooks` in a target directory of their own, so that no
# ordinary build (and no binary a user installs) ever contains the hooks.
#
#   ci/test-hooks.sh            the planted-defect gate tests (sequential, concurrent, faults), the
#                               stack crash test, the two-writer ordering tests and the adapter's
#                               protocol test
set -euo pipefail
cd "$(dirname "$0")/.."
# Only the workspace's crates get the flag (RUSTC_WORKSPACE_WRAPPER): the dependencies are
# the ordinary build's. So a first build here starts from a copy of what the ordinary debug
# build has already compiled (its build scripts' outputs, fingerprints and libraries; no
# test binaries), and compiles only our crates again: in `.ci/run` about 50 CPU seconds
# instead of 120. Cargo rebuilds whatever the copy does not match (other settings, another
# toolchain), so the copy only saves time.
here=$PWD
hooks=${CARGO_TARGET_DIR:-target}/test-hooks
ordinary=${CARGO_TARGET_DIR:-target}/debug
if [ ! -d "$hooks/debug" ] && [ -d "$ordinary/deps" ]; then
  mkdir -p "$hooks/debug/deps"
  cp -a "$ordinary/.fingerprint" "$ordinary/build" "$hooks/debug/"
  find "$ordinary/deps" -maxdepth 1 -name 'lib*' -exec cp -a -t "$hooks/debug/deps" {} +
fi
# One cargo invocation for every package the tests need, so that their dependencies are
# resolved and built once (three invocations took about 10 s more on 2 cores). The reference
# adapter's planted defects are found by `conformance impl` (tests/impl_roles.rs), which
# runs the adapter beside the gate's binary: its protocol test makes cargo build that
# binary with the same flag. reftable/tests/orderings.rs runs two writers on one stack in
# every order of their steps.
RUSTC_WORKSPACE_WRAPPER=$here/ci/test-hooks-rustc exec cargo test --locked \
  -p reftable -p conformance -p reftable-adapter --target-dir "$hooks" \
  --test orderings --test protocol \
  --test planted_defects --test stack_stress --test no_test_hooks --test concurrent --test faults \
  --test impl_roles "$@"
