#!/bin/sh
# git 2.55 (reftable and files): a tree can be written to a branch through a symref.
#
# git refuses to point a branch (refs/heads/*, HEAD) at a non-commit: "trying to write
# non-commit object ... to branch". Up to 2.54 the reftable backend checked every update it
# wrote, including the one a symref update is split into, so an update of refs/custom/s ->
# refs/heads/main with a tree was refused. b32c23be3b (refs: move object parsing to the
# generic layer, v2.55.0) moved the check into ref_transaction_update(), which sees only the
# name the caller gave (refs/custom/s, not a branch); the split update is no longer checked,
# and refs/heads/main ends up pointing at a tree.
#
# Usage: sh reproduce.sh [GIT]    Exit 1 when the defect shows, 0 when it does not.
set -u
GIT=${1:-git}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export HOME="$scratch" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null LC_ALL=C
export GIT_AUTHOR_NAME=A GIT_AUTHOR_EMAIL=a@example.com GIT_COMMITTER_NAME=C GIT_COMMITTER_EMAIL=c@example.com
"$GIT" version
"$GIT" init -q --ref-format=reftable -b main "$scratch/repo" && cd "$scratch/repo" || exit 2
"$GIT" commit -q --allow-empty -m first || exit 2
"$GIT" symbolic-ref refs/custom/s refs/heads/main || exit 2
tree=$("$GIT" mktree </dev/null)
printf 'update refs/custom/s %s\n' "$tree" | "$GIT" update-ref --stdin
echo "update-ref exit $?"
type=$("$GIT" cat-file -t refs/heads/main)
echo "refs/heads/main is a $type"
if [ "$type" = commit ]; then
  echo "ok: the branch still points at a commit"
  exit 0
fi
echo "DEFECT: a branch points at a $type"
exit 1
