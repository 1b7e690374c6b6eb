#!/usr/bin/env bash
# Name the git commit behind a finding: `git bisect run` over the finding's git-only
# reproducer (a registry entry's `reproducer`, or a case directory's reproduce.sh: exit 1
# while the defect shows, 0 when it does not, 2 when it cannot run), each step built in a
# scratch worktree of your checkout (your own work tree and HEAD are never touched) with
# the build flags of the git CI job (ci/git-ci/run-gate.sh: git's plain `make`, plus
# GIT_MAKE_FLAGS).
#
#   ci/bisect-finding.sh --repo ~/src/git --good v2.51.0 --bad v2.52.0 \
#       --reproducer conformance/expected/ID/reproduce.sh [--fixed] [--report FILE]
#
# --fixed looks for the commit that made the defect go away (good: it shows, bad: gone)
# instead of the one that brought it. A step whose build fails, or whose reproducer cannot
# run (exit 2), is skipped (125 to git bisect). Prints the commit and its subject; --report
# writes them as JSON. Exit 0 found, 1 not found, 2 usage or set-up error.
#
#   BISECT_BUILD   the build command in the worktree (default: make -j$(nproc) $GIT_MAKE_FLAGS)
#   BISECT_GIT     the git to run, relative to the worktree (default: bin-wrappers/git)
#
# `ci/bisect-finding.sh --self-test` bisects a made-up history of wrapper scripts around
# the git on PATH, one of which starts refusing a ref name, with a reproducer of ours, both
# ways (--fixed too), and checks that the planted commits are the ones found.
set -euo pipefail
self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
REPO= GOOD= BAD= REPRO= FIXED=0 REPORT= SELFTEST=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --repo) REPO=$2; shift 2 ;;
    --good) GOOD=$2; shift 2 ;;
    --bad) BAD=$2; shift 2 ;;
    --reproducer) REPRO=$2; shift 2 ;;
    --fixed) FIXED=1; shift ;;
    --report) REPORT=$2; shift 2 ;;
    --self-test) SELFTEST=1; shift ;;
    --step) # One step, run by git bisect in the worktree: build, reproduce, answer.
      # git hands its own GIT_* variables down (GIT_DIR from a worktree of a bare
      # repository): a reproducer's `git init` would act on the repository being bisected.
      for v in $(env | sed -n 's/^\(GIT_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
      sh -c "${BISECT_BUILD}" >"$BISECT_LOG.build" 2>&1 || exit 125
      set +e
      sh "$2" "$PWD/$BISECT_GIT" >"$BISECT_LOG.repro" 2>&1
      status=$?
      set -e
      case "$status,$FIXED_SEARCH" in
        0,0) exit 0 ;;   # looking for the first bad commit: gone here, so good
        1,0) exit 1 ;;
        0,1) exit 1 ;;   # looking for the fix: gone here, so the new term
        1,1) exit 0 ;;
        *) exit 125 ;;
      esac ;;
    *) echo "bisect-finding: unknown argument $1" >&2; exit 2 ;;
  esac
done

self_test() {
  local real repo first_bad fix out
  real=$(command -v git)
  WORK=$(mktemp -d)
  trap 'rm -rf "$WORK"' EXIT
  local work=$WORK
  repo=$work/history
  git init -q "$repo"
  # Eight versions of a "git" that wraps the real one: from the fourth on, update-ref of a
  # name with "bad" in it fails; from the seventh on it works again.
  for i in 1 2 3 4 5 6 7 8; do
    mkdir -p "$repo/bin-wrappers"
    if [[ $i -ge 4 && $i -lt 7 ]]; then
      body='case "$*" in update-ref*bad*) echo "fatal: refused" >&2; exit 128 ;; esac'
    else
      body=:
    fi
    printf '#!/bin/sh\n# version %s\n%s\nexec "%s" "$@"\n' "$i" "$body" "$real" \
      >"$repo/bin-wrappers/git.in"
    printf 'bin-wrappers/git\n' >"$repo/.gitignore"
    git -C "$repo" add .gitignore bin-wrappers/git.in
    git -C "$repo" -c user.name=T -c user.email=t@example.com commit -q -m "version $i"
  done
  # The reproducer: exit 1 while update-ref of refs/heads/bad fails.
  cat >"$work/repro.sh" <<'EOF'
GIT=${1:-git}
d=$(mktemp -d) && trap 'rm -rf "$d"' EXIT
export HOME=$d GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
"$GIT" init -q --ref-format=reftable "$d/r" && cd "$d/r" || exit 2
c=$(printf 'c\n' | GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@b GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@b "$GIT" commit-tree "$("$GIT" mktree </dev/null)") || exit 2
"$GIT" update-ref refs/heads/bad "$c" 2>/dev/null && exit 0
exit 1
EOF
  # Bisected as a bare repository, as a mirror is: the reproducer's `git init` must not
  # reach it (its configuration and refs are compared before and after).
  git clone -q --bare "$repo" "$work/bare"
  repo=$work/bare
  cp "$repo/config" "$work/config.before"
  git -C "$repo" for-each-ref >"$work/refs.before"
  first_bad=$(git -C "$repo" rev-parse HEAD~4)
  fix=$(git -C "$repo" rev-parse HEAD~1)
  export BISECT_BUILD='cp bin-wrappers/git.in bin-wrappers/git && chmod +x bin-wrappers/git'
  local root
  root=$(git -C "$repo" rev-list --max-parents=0 HEAD)
  out=$("$self" --repo "$repo" --good "$root" --bad HEAD~2 --reproducer "$work/repro.sh")
  echo "$out"
  grep -q "first bad commit: $first_bad" <<<"$out" || {
    echo "bisect-finding: self-test did not find $first_bad" >&2
    exit 1
  }
  out=$("$self" --repo "$repo" --good HEAD~3 --bad HEAD --reproducer "$work/repro.sh" \
    --fixed --report "$work/report.json")
  echo "$out"
  grep -q "first fixed commit: $fix" <<<"$out" && grep -q "\"commit\": \"$fix\"" "$work/report.json" || {
    echo "bisect-finding: self-test did not find the fix $fix" >&2
    exit 1
  }
  git -C "$repo" for-each-ref >"$work/refs.after"
  cmp -s "$work/config.before" "$repo/config" && cmp -s "$work/refs.before" "$work/refs.after" || {
    echo "bisect-finding: self-test: the bisected repository was changed" >&2
    exit 1
  }
  [[ $(git -C "$repo" worktree list | wc -l) -eq 1 ]] || {
    echo "bisect-finding: self-test left a worktree behind" >&2
    exit 1
  }
  echo "bisect-finding: self-test found the planted commit and its fix"
}

if [[ $SELFTEST -eq 1 ]]; then
  self_test
  exit 0
fi

for v in REPO GOOD BAD REPRO; do
  if [[ -z ${!v} ]]; then
    echo "bisect-finding: --$(tr '[:upper:]' '[:lower:]' <<<"$v" | sed 's/repro/reproducer/') is required (see the header)" >&2
    exit 2
  fi
done
REPRO=$(cd "$(dirname "$REPRO")" && pwd)/$(basename "$REPRO")
[[ -f $REPRO ]] || { echo "bisect-finding: no reproducer $REPRO" >&2; exit 2; }
GOOD=$(git -C "$REPO" rev-parse --verify "$GOOD^{commit}") || exit 2
BAD=$(git -C "$REPO" rev-parse --verify "$BAD^{commit}") || exit 2
export BISECT_BUILD=${BISECT_BUILD:-make -j$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2) ${GIT_MAKE_FLAGS:-}}
export BISECT_GIT=${BISECT_GIT:-bin-wrappers/git}
export FIXED_SEARCH=$FIXED
scratch=$(mktemp -d)
export BISECT_LOG=$scratch/step
tree=$scratch/worktree
cleanup() {
  git -C "$tree" bisect reset >/dev/null 2>&1 || true
  git -C "$REPO" worktree remove --force "$tree" >/dev/null 2>&1 || true
  rm -rf "$scratch"
}
trap cleanup EXIT
git -C "$REPO" worktree add -q --detach "$tree" "$BAD" || { echo "bisect-finding: cannot add a worktree to $REPO" >&2; exit 2; }
cd "$tree"
if [[ $FIXED -eq 1 ]]; then
  git bisect start --term-old=broken --term-new=fixed "$BAD" "$GOOD" >/dev/null
  term=fixed
else
  git bisect start "$BAD" "$GOOD" >/dev/null
  term=bad
fi
set +e
git bisect run "$self" --step "$REPRO" >"$scratch/bisect.log" 2>&1
status=$?
set -e
first=$(grep -o "^[0-9a-f]\{40\} is the first $term commit" "$scratch/bisect.log" | cut -d' ' -f1 || true)
if [[ $status -ne 0 || -z $first ]]; then
  tail -20 "$scratch/bisect.log" >&2
  echo "bisect-finding: no first $term commit found" >&2
  exit 1
fi
subject=$(git -C "$REPO" log -1 --format=%s "$first")
echo "first $term commit: $first"
git -C "$REPO" log -1 --format='  %h %s (%an, %as)' "$first"
if [[ -n $REPORT ]]; then
  python3 -c 'import json,sys; print(json.dumps({"term": sys.argv[1], "commit": sys.argv[2], "subject": sys.argv[3], "good": sys.argv[4], "bad": sys.argv[5], "reproducer": sys.argv[6]}, indent=1))' \
    "$term" "$first" "$subject" "$GOOD" "$BAD" "$REPRO" >"$REPORT"
fi
