#!/usr/bin/env bash
# Mutation testing of the library's core (varint, record, block, table, merged, stack, refdb)
# with cargo-mutants, in two stages so that it fits CI jobs:
#   1. every mutant against the library's own tests (unit and integration, no doctests);
#   2. the mutants stage 1 missed, against the conformance crate's tests too (the bounded
#      gate against real git, the ref-database model, the stack stress test).
# A mutant is caught when a test fails, missed when all pass, unviable when it does not build.
#
# Usage: ci/mutants.sh [--shard K/N] [--list] [--out DIR] [--summary FILE]
#   --shard K/N   run the K-th of N slices (0-based, as cargo-mutants counts), e.g. one per CI job
#   --list        only list the mutants and count them per file
#   --summary F   write the per-file table (caught / missed / unviable / timeout) to F
#                 (default: DIR/summary.md; the committed one is ci/mutants-summary.md)
# Combine shards with ci/mutants-summary.py DIR1 DIR2 ... > ci/mutants-summary.md
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=27.1.0
SHARD="" LIST="" OUT="" SUMMARY=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --shard) SHARD="$2"; shift 2 ;;
    --list) LIST=1; shift ;;
    --out) OUT="$2"; shift 2 ;;
    --summary) SUMMARY="$2"; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
if ! cargo mutants --version 2>/dev/null | grep -q "$VERSION"; then
  cargo install --locked cargo-mutants --version "$VERSION"
fi
FILES=(
  reftable/src/codec/varint.rs
  reftable/src/codec/fields.rs
  reftable/src/codec/ref_view.rs
  reftable/src/codec/record.rs
  reftable/src/codec/block.rs
  reftable/src/codec/block_writer.rs
  reftable/src/table/info.rs
  reftable/src/table/open.rs
  reftable/src/table/pool.rs
  reftable/src/table/iter.rs
  reftable/src/table/seek.rs
  reftable/src/table/budget.rs
  reftable/src/table/peek.rs
  reftable/src/table/lookup.rs
  reftable/src/table/refs_for.rs
  reftable/src/merged/mod.rs
  reftable/src/merged/ref_log.rs
  reftable/src/stack.rs
  reftable/src/stack_reader.rs
  reftable/src/tables_list.rs
  reftable/src/refdb/mod.rs
  reftable/src/refdb/update.rs
  reftable/src/refdb/objects.rs
  reftable/src/refdb/read.rs
  reftable/src/refdb/transaction.rs
  reftable/src/refdb/reflog.rs
)
# Two mutants at once: much of each one's time is linking and single-threaded tests.
ARGS=(--package reftable --no-shuffle --timeout-multiplier 3 --jobs "${MUTANTS_JOBS:-2}")
for f in "${FILES[@]}"; do ARGS+=(--file "$f"); done
for f in "${FILES[@]}"; do
  [[ -f "$f" ]] || { echo "ci/mutants.sh: $f does not exist (moved?): fix FILES" >&2; exit 2; }
done
ALL=("${ARGS[@]}")
# Mutants no test can tell from the original, each with its reason (see the file).
while IFS=$'\t' read -r pattern _; do
  [[ -z "$pattern" || "$pattern" == \#* ]] || ARGS+=(--exclude-re "$pattern")
done < ci/mutants-equivalent.txt
if [[ -n "$LIST" ]]; then
  cargo mutants "${ARGS[@]}" --list | sed 's/:.*//' | sort | uniq -c
  cargo mutants "${ARGS[@]}" --list | wc -l
  exit 0
fi
SLICE=${SHARD:-all}
OUT=${OUT:-target/mutants/${SLICE//\//-of-}}
mkdir -p "$OUT"
cargo mutants "${ALL[@]}" --list > "$OUT/all-mutants.txt"
export REFTABLE_REQUIRE_GIT=${REFTABLE_REQUIRE_GIT:-1}
# Each mutant is a rebuild and a relink of every test binary: no debug info, and mold when the
# machine has it, make that a few seconds instead of twenty.
export CARGO_PROFILE_DEV_DEBUG=${CARGO_PROFILE_DEV_DEBUG:-0}
# The round-trip property test is most of the library's test time; a quarter of its cases
# per mutant (the CI test run keeps all of them).
export PROPTEST_CASES=${PROPTEST_CASES:-24}
if command -v mold >/dev/null; then
  export RUSTFLAGS="${RUSTFLAGS:-} -C link-arg=-fuse-ld=mold"
fi
start=$(date +%s)
# Stage 1: the library's tests. Exit status 2 means "some mutants missed": not an error here.
# ITERATE=1 resumes an interrupted run: mutants already caught or unviable are not run again.
cargo mutants "${ARGS[@]}" ${SHARD:+--shard "$SHARD"} ${ITERATE:+--iterate} --test-package reftable \
  --output "$OUT/stage1" -- --lib --tests || { rc=$?; [[ $rc -eq 2 || $rc -eq 3 ]]; }
missed="$OUT/stage1/mutants.out/missed.txt"
# STAGE1_ONLY=1 stops after stage 1 (to kill survivors with new tests first).
if [[ -s "$missed" && -z "${STAGE1_ONLY:-}" ]]; then
  # Stage 2: only the survivors, with the conformance crate's tests as well.
  re=$(sed 's/[][\\.^$*+?(){}|]/\\&/g; s/^/^/; s/$/$/' "$missed" | paste -sd'|')
  cargo mutants "${ARGS[@]}" --baseline skip --test-package reftable --test-package conformance \
    --re "$re" --output "$OUT/stage2" -- --lib --tests || { rc=$?; [[ $rc -eq 2 || $rc -eq 3 ]]; }
fi
echo "wall time: $(( $(date +%s) - start )) s" | tee "$OUT/wall-time.txt"
python3 ci/mutants-summary.py "$OUT" > "${SUMMARY:-$OUT/summary.md}"
cat "${SUMMARY:-$OUT/summary.md}"
