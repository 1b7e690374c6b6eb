#!/bin/sh
# git 2.47.3 (reftable), in a linked worktree: `git for-each-ref --format='%(symref)'` of a
# per-worktree symref (ORIG_HEAD -> refs/bisect/bad, in the worktree's own stack) names the
# target of another symref, one the common stack holds (refs/heads/l -> refs/heads/e), not
# refs/bisect/bad, when the main worktree has an ORIG_HEAD of its own (in the common stack). %(refname) and %(objectname) are right; `git symbolic-ref ORIG_HEAD` in
# the worktree is right. The listing merges the worktree's stack with the common one, and
# the symref target it reports for the worktree's record comes from the other iterator.
# Found by reftable-rs's conformance gate (worktree cases of `conformance run`, seed 1,
# case 28 of 40). Only 2.47.3 tried.
#
# Usage: sh reproduce.sh [GIT]    Exit 1 when the defect shows, 0 when it does not.
set -u
GIT=${1:-git}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export HOME="$scratch" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null LC_ALL=C
export GIT_AUTHOR_NAME=A GIT_AUTHOR_EMAIL=a@example.com GIT_COMMITTER_NAME=C GIT_COMMITTER_EMAIL=c@example.com
"$GIT" version
"$GIT" init -q --ref-format=reftable "$scratch/repo" && cd "$scratch/repo" || exit 2
"$GIT" commit -q --allow-empty -m first || exit 2
"$GIT" worktree add -q --detach "$scratch/wt" HEAD || exit 2
"$GIT" update-ref ORIG_HEAD HEAD || exit 2
"$GIT" symbolic-ref refs/heads/l refs/heads/e || exit 2
cd "$scratch/wt" || exit 2
"$GIT" update-ref refs/bisect/bad HEAD || exit 2
"$GIT" symbolic-ref ORIG_HEAD refs/bisect/bad || exit 2
echo "symbolic-ref ORIG_HEAD: $("$GIT" symbolic-ref ORIG_HEAD)"
listed=$("$GIT" for-each-ref --include-root-refs --format='%(refname) %(symref)') || exit 2
echo "$listed"
case "$listed" in
*"ORIG_HEAD refs/bisect/bad"*) echo "ok: for-each-ref names ORIG_HEAD's target"; exit 0 ;;
esac
echo "DEFECT: for-each-ref shows another symref's target for the worktree's ORIG_HEAD"
exit 1
