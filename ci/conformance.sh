#!/usr/bin/env bash
# The conformance gate: generated ref operation sequences on real git and on reftable-rs,
# compared after every step. Exit 0 clean, 1 unexpected divergence, 2 usage/environment error.
#
#   ci/conformance.sh [--git PATH] [--cases N] [--ops N] [--seed S] [--shard K/N] [--jobs J]
#
# The git under test comes from --git, else REFTABLE_TEST_GIT, else git on PATH; it must support
# reftable (git 2.45+). Reports go to target/conformance/report.{json,md}; divergent cases
# (minimized) to target/conformance/cases/.
#
# CONFORMANCE_PROFILE=dev runs the debug build (what `cargo test` has already built) instead
# of the release build: about two and a half minutes of build saved on 2 cores, for a
# slower harness. With CONFORMANCE_BIN=PATH that binary runs and nothing is built: `cargo
# build -p conformance` after `cargo test --workspace` rebuilds serde and the gate (the test
# build unifies more features: criterion's), about 25 s on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
profile=${CONFORMANCE_PROFILE:-release}
bin_dir=${CARGO_TARGET_DIR:-target}/$([ "$profile" = dev ] && echo debug || echo "$profile")
mkdir -p target/conformance
bin=${CONFORMANCE_BIN:-}
if [ -z "$bin" ]; then
  cargo build --profile "$profile" --locked -p conformance
  bin=$bin_dir/conformance
fi
exec "$bin" run \
  --report-json target/conformance/report.json \
  --report-md target/conformance/report.md \
  "$@"
