#!/usr/bin/env bash
# Find the git commit that made a scenario's system calls per operation worse: `git bisect
# run` in your git checkout, with `complexity --counters` against the good commit's counters
# as the test (a counter per operation up by 1.5x or more at the largest size, or an
# exponent up by 0.3, is bad). This script builds nothing: your --build command does, at
# every step, and must leave the binary at --git-bin.
#
#   ci/bisect-git-counters.sh --repo ~/src/git --good v2.49.0 --bad v2.50.1 \
#       --build 'make -j2 NO_PERL=1 NO_GETTEXT=1 >/dev/null' --git-bin ~/src/git/git \
#       --scenario create-tags [--sizes 100,200,400]
#
# A step whose build fails is skipped (exit 125 to git bisect). Prints the first bad commit
# and leaves the checkout as it found it (git bisect reset). Needs strace.
# `ci/bisect-git-counters.sh --self-test` bisects a made-up history of wrapper scripts
# around the git on PATH, one of which stats a file per input line, and checks that it is
# the commit found.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
self=$here/ci/$(basename "$0")
# PERF_BIN_DIR=DIR: the complexity binary built there (as ci/complexity.sh), made absolute
# for the steps, which run in the checkout.
if [[ -n "${PERF_BIN_DIR:-}" ]]; then
  PERF_BIN_DIR=$(realpath -m "$PERF_BIN_DIR")
  export PERF_BIN_DIR
fi
BIN=${PERF_BIN_DIR:-${CARGO_TARGET_DIR:-$here/target}/release}/complexity
REPO= GOOD= BAD= BUILD= GITBIN= SCENARIO= SIZES=100,200,400 SELFTEST=0 STEP=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --repo) REPO=$2; shift 2 ;;
    --good) GOOD=$2; shift 2 ;;
    --bad) BAD=$2; shift 2 ;;
    --build) BUILD=$2; shift 2 ;;
    --git-bin) GITBIN=$2; shift 2 ;;
    --scenario) SCENARIO=$2; shift 2 ;;
    --sizes) SIZES=$2; shift 2 ;;
    --self-test) SELFTEST=1; shift ;;
    --step) STEP=1; shift ;;
    *) echo "bisect-git-counters: unknown argument $1" >&2; exit 2 ;;
  esac
done

if [[ $STEP -eq 1 ]]; then
  # One bisection step, run by git bisect in the checkout: build, then compare.
  if ! sh -c "$BUILD"; then exit 125; fi
  set +e
  "$BIN" --counters --sizes "$SIZES" --scenarios "$SCENARIO" --git "$GITBIN" \
    --counters-baseline "$BASELINE_JSON" >/dev/null 2>"$BASELINE_JSON.err"
  status=$?
  set -e
  case $status in
    0) exit 0 ;;
    1) exit 1 ;;
    *) cat "$BASELINE_JSON.err" >&2; exit 125 ;;
  esac
fi

if [[ $SELFTEST -eq 1 ]]; then
  real=$(command -v git)
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  repo=$work/history
  git init -q "$repo"
  # Five commits of a "git" that wraps the real one; the fourth stats a file per line of
  # update-ref --stdin input.
  for i in 1 2 3 4 5; do
    if [[ $i -ge 4 ]]; then
      body="if [ \"\$1\" = update-ref ] && [ \"\$2\" = --stdin ]; then
  while IFS= read -r line; do [ -e \"$work/nothing\" ] || :; printf '%s\\n' \"\$line\"; done >\"$work/in.\$\$\"
  exec \"$real\" \"\$@\" <\"$work/in.\$\$\"
fi"
    else
      body=":"
    fi
    printf '#!/bin/sh\n# version %s\n%s\nexec "%s" "$@"\n' "$i" "$body" "$real" >"$repo/git.sh"
    git -C "$repo" add git.sh
    git -C "$repo" -c user.name=T -c user.email=t@example.com commit -q -m "version $i"
  done
  first_bad=$(git -C "$repo" rev-parse HEAD~1)
  out=$("$self" --repo "$repo" --good "$(git -C "$repo" rev-list --max-parents=0 HEAD)" --bad HEAD \
    --build "cp git.sh $work/git && chmod +x $work/git" --git-bin "$work/git" \
    --scenario create-tags --sizes "$SIZES")
  echo "$out"
  if grep -q "first bad commit: $first_bad" <<<"$out"; then
    echo "bisect-git-counters: self-test found the planted commit"
    exit 0
  fi
  echo "bisect-git-counters: self-test did not find $first_bad" >&2
  exit 1
fi

for v in REPO GOOD BAD BUILD GITBIN SCENARIO; do
  if [[ -z ${!v} ]]; then echo "bisect-git-counters: --${v,,} is required (see the header)" >&2; exit 2; fi
done
command -v strace >/dev/null || { echo "bisect-git-counters: needs strace" >&2; exit 2; }
[[ -x $BIN ]] || cargo build --release --locked -p perf --bin complexity --manifest-path "$here/Cargo.toml"
BASELINE_JSON=$(mktemp --suffix=.json)
export BASELINE_JSON
cd "$REPO"
start=$(git rev-parse --abbrev-ref HEAD 2>/dev/null || git rev-parse HEAD)
GOOD=$(git rev-parse --verify "$GOOD^{commit}")
BAD=$(git rev-parse --verify "$BAD^{commit}")
git checkout -q "$GOOD"
sh -c "$BUILD" || { echo "bisect-git-counters: the good commit does not build" >&2; exit 2; }
"$BIN" --counters --sizes "$SIZES" --scenarios "$SCENARIO" --git "$GITBIN" --json "$BASELINE_JSON" >/dev/null
git bisect start "$BAD" "$GOOD" >/dev/null
set +e
git bisect run "$self" --step --build "$BUILD" --git-bin "$GITBIN" --scenario "$SCENARIO" --sizes "$SIZES" \
  >"$BASELINE_JSON.log" 2>&1
status=$?
set -e
first=$(grep -o '^[0-9a-f]\{40\} is the first bad commit' "$BASELINE_JSON.log" | cut -d' ' -f1 || true)
git bisect reset >/dev/null 2>&1
git checkout -q "$start"
if [[ $status -ne 0 || -z $first ]]; then
  cat "$BASELINE_JSON.log" >&2
  echo "bisect-git-counters: no first bad commit found" >&2
  exit 1
fi
echo "first bad commit: $first"
git -C "$REPO" log -1 --format='  %h %s (%as)' "$first"
