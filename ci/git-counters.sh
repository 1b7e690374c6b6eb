#!/usr/bin/env bash
# git builds compared on system calls per operation (`complexity --counters`), and a check
# that the comparison bites: a wrapper around the same git that stats one extra file per line
# of `update-ref --stdin` input (a planted per-ref regression, like the stack reloads git once
# did per created ref) must be reported as a regression, exit 1.
#
# Usage: ci/git-counters.sh [--plant-only] [GIT...]   (default: REFTABLE_TEST_GIT, else git)
# Writes perf/results/tmp/git-counters.{md,json}. Needs strace (installed when missing).
set -euo pipefail
cd "$(dirname "$0")/.."
PLANT_ONLY=0
if [[ "${1:-}" == "--plant-only" ]]; then PLANT_ONLY=1; shift; fi
GITS=("$@")
if [[ ${#GITS[@]} -eq 0 ]]; then GITS=("${REFTABLE_TEST_GIT:-$(command -v git)}"); fi
if ! command -v strace >/dev/null; then
  apt-get install -y strace >/dev/null 2>&1 || { echo "git-counters: needs strace" >&2; exit 2; }
fi
# PERF_BIN_DIR=DIR runs the complexity binary already built there (as ci/complexity.sh);
# else the packages ci/complexity.sh builds together (the same features resolved: no
# rebuild). What it counts are git's system calls, whichever build counts them.
if [[ -n "${PERF_BIN_DIR:-}" ]]; then
  BIN=$PERF_BIN_DIR/complexity
else
  cargo build --release --locked -p reftable-cli -p perf --bin complexity
  BIN=${CARGO_TARGET_DIR:-target}/release/complexity
fi
mkdir -p perf/results/tmp
SIZES=${GIT_COUNTER_SIZES:-100,200,400}

if [[ $PLANT_ONLY -eq 0 ]]; then
  args=()
  for g in "${GITS[@]}"; do args+=(--git "$g"); done
  "$BIN" --counters --sizes "$SIZES" "${args[@]}" \
    --markdown perf/results/tmp/git-counters.md --json perf/results/tmp/git-counters.json
  echo "wrote perf/results/tmp/git-counters.md"
fi

# The planted regression: the same git behind a wrapper that stats missing files for every
# input line of update-ref --stdin before handing the input on (twenty per line: git 2.47.3
# itself stats about ten files per created tag, and the verdict must come from newfstatat,
# not only from the shell's byte-wise reads of the input).
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
real=$(command -v "${GITS[0]}" || echo "${GITS[0]}")
cat >"$work/git" <<WRAP
#!/bin/sh
if [ "\$1" = update-ref ] && [ "\$2" = --stdin ]; then
  while IFS= read -r line; do
    for k in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
      [ -e "$work/no-such-file-\$k" ] || :
    done
    printf '%s\n' "\$line"
  done >"$work/input.\$\$"
  exec "$real" "\$@" <"$work/input.\$\$"
fi
exec "$real" "\$@"
WRAP
chmod +x "$work/git"
set +e
"$BIN" --counters --sizes "$SIZES" --scenarios create-tags --git "$real" --git "$work/git" \
  --markdown "$work/plant.md" 2>"$work/plant.err"
status=$?
set -e
if [[ $status -eq 1 ]] && grep "regression" "$work/plant.err" | grep -q newfstatat; then
  echo "git-counters: the planted per-ref stat is reported as a regression (exit 1), as it must be"
  grep regression "$work/plant.err"
else
  echo "git-counters: the planted regression was NOT caught (exit $status)" >&2
  cat "$work/plant.err" >&2
  exit 1
fi
