#!/usr/bin/env bash
# How many of a set of hand-written library defects each guard catches: the library's
# tests (`cargo test -p reftable`), the default gate run (`conformance run`, 120 cases and
# the concurrent round against the git on PATH, or --git) and, where the library's tests
# miss a defect, the rest of the workspace's tests (`cargo test --workspace`; they include
# the library's, so what those catch the workspace catches). Each defect (a patch, one bug
# each) is applied in turn to a scratch worktree of HEAD (3-way where the code moved),
# built in a target directory of its own, and measured; the worktree is removed at the end.
#
#   ci/blind-defects.sh [--set DIR] [--git GIT] [--out FILE] [ID...]
#
# DIR defaults to fixtures/blind-defects (NN.patch and MANIFEST.md); FILE to
# target/blind-defects.tsv, one line per defect: id, lib=<exit>, gate=<exit>,
# workspace=<exit> (0: not caught). About two minutes per defect on 2 idle cores (five where
# the workspace runs), after a first build of about ten.
set -euo pipefail
cd "$(dirname "$0")/.."
set_dir=fixtures/blind-defects out=target/blind-defects.tsv git_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --set) set_dir=$2; shift 2 ;;
    --git) git_args=(--git "$2"); shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) break ;;
  esac
done
ids=("$@")
if [ ${#ids[@]} -eq 0 ]; then
  for p in "$set_dir"/[0-9]*.patch; do ids+=("$(basename "$p" .patch)"); done
fi
set_dir=$(cd "$set_dir" && pwd)
mkdir -p "$(dirname "$out")"
out=$(cd "$(dirname "$out")" && pwd)/$(basename "$out")
wt=$(mktemp -d)/wt
git worktree add -q --detach "$wt" HEAD
trap 'git worktree remove --force "$wt"; git worktree prune' EXIT
export CARGO_TARGET_DIR=${BLIND_TARGET_DIR:-$PWD/target/blind}
: > "$out"
for id in "${ids[@]}"; do
  git -C "$wt" reset -q --hard
  if ! git -C "$wt" apply -3 "$set_dir/$id.patch" >/dev/null 2>&1; then
    echo -e "$id\tdoes not apply" | tee -a "$out"
    continue
  fi
  (cd "$wt" && cargo test -q -p reftable --offline >/dev/null 2>&1) && lib=0 || lib=$?
  ws=$lib
  if [ "$lib" = 0 ]; then
    (cd "$wt" && cargo test -q --workspace --exclude reftable --offline >/dev/null 2>&1) && ws=0 || ws=$?
  fi
  # The gate runs the debug build, as .ci/run does (after the workspace's tests, already built).
  (cd "$wt" && cargo build -q -p conformance --offline >/dev/null 2>&1)
  (cd "$wt" && "$CARGO_TARGET_DIR"/debug/conformance run --no-minimize "${git_args[@]}" \
    --out "$CARGO_TARGET_DIR/cases-$id" >/dev/null 2>&1) && gate=0 || gate=$?
  echo -e "$id\tlib=$lib\tgate=$gate\tworkspace=$ws" | tee -a "$out"
done
awk -F'\t' '$2 ~ /^lib=/ {n++; l+=($2!="lib=0"); g+=($3!="gate=0"); w+=($4!="workspace=0"); e+=($2!="lib=0" || $3!="gate=0"); a+=($3!="gate=0" || $4!="workspace=0")}
  END {printf "blind defects: %d measured; library tests catch %d, the gate %d, the workspace %d, library tests or gate %d, any guard %d\n", n, l, g, w, e, a}' "$out"
