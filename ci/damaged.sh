#!/usr/bin/env bash
# The damaged-stack gate: stacks the gate wrote, damaged structure by structure and handed to
# git's readers and writers and to ours. Fails (exit 1) on any crash, hang, file touched
# outside the repository or silent wrong answer on our side; git's findings are reported.
#
#   ci/damaged.sh [--git PATH] [--trials N] [--seconds S] [--seed S] [--bases N]
#
# Reports go to target/conformance/damaged.{json,md}, each distinct git finding (minimized,
# with a git-only reproduce.sh) to target/conformance/damaged/. Backtraces need gdb (optional).
#
# CONFORMANCE_PROFILE=dev runs the debug build (what `cargo test` has already built) instead
# of the release build: about two and a half minutes of build saved on 2 cores, for a
# slower harness. With CONFORMANCE_BIN=PATH that binary runs and nothing is built (see
# ci/conformance.sh: a build after `cargo test --workspace` rebuilds serde and the gate).
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
exec "$bin" damaged \
  --report-json target/conformance/damaged.json \
  --report-md target/conformance/damaged.md \
  "$@"
