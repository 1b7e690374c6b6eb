#!/usr/bin/env bash
# Complexity regression gate: runs our scenarios at small sizes (counters are exact, so
# this is deterministic and needs no git) and compares them with the committed baseline.
# Exits 1 when any counter (records decoded, blocks read, key comparisons, heap operations,
# tables.list reads, ...) differs from the baseline at any size, saying which moved and by
# how much. Regenerate the baseline after an intended change, in the same commit, with
#   ci/complexity.sh --update
# and check that the gate bites with a planted regression (suppress_deletions) with
#   ci/complexity.sh --plant-regression      (must exit 1)
set -euo pipefail
cd "$(dirname "$0")/.."
SIZES=1000,2000,4000,8000
COMMON=(--sizes "$SIZES" --no-git --suppress-max-size 4000 --compaction-max-size 2000)
# PERF_BIN_DIR=DIR runs the binaries already built there and builds nothing: `.ci/run` hands it
# the debug build `cargo test` made (the counters do not depend on the build; a release
# build of these binaries cost about 28 s on 2 cores there).
if [[ -n "${PERF_BIN_DIR:-}" ]]; then
  BIN=$PERF_BIN_DIR/complexity
else
  # With the binaries ci/resource-bounds.sh runs, in one invocation: the same packages
  # resolve the same features, so that script's build finds them built (a build of perf
  # alone differs in serde_json's features and rebuilt perf there, about 10 s on 2 cores).
  cargo build --release --locked -p reftable-cli -p perf --bin complexity --bin reftable --bin crafted
  BIN=${CARGO_TARGET_DIR:-target}/release/complexity
fi
if [[ "${1:-}" == "--update" ]]; then
  "$BIN" "${COMMON[@]}" --json perf/results/baseline.json
  echo "wrote perf/results/baseline.json"
  exit 0
fi
mkdir -p perf/results/tmp
"$BIN" "${COMMON[@]}" "$@" --json perf/results/tmp/current.json \
  --markdown perf/results/tmp/current.md --baseline perf/results/baseline.json
