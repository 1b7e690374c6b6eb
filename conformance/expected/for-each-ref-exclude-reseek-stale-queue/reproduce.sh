#!/bin/sh
# git 2.47 (reftable): `git for-each-ref --exclude=...` on a stack of more than one table
# leaves out refs that no pattern excludes, and can show a ref with another ref's value.
#
# An --exclude pattern makes the reftable backend seek its merged iterator past the excluded
# names in the middle of the iteration (1869525066, v2.47.0). Seeking the merged iterator did
# not empty its priority queue (reftable/merged.c merged_iter_seek()), so records queued
# before the seek come out after it, in place of the records the seek should yield. Fixed by
# 9d471b9dfe (reftable/merged: drain priority queue on reseek), v2.48.0, whose message takes
# the effect on exclude patterns to be harmless; this script shows it is not. Found by
# reftable-rs's conformance gate (filtered listings at the end of a case).
#
# Usage: sh reproduce.sh [GIT]    Exit 1 when the defect shows, 0 when it does not.
set -u
GIT=${1:-git}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export HOME="$scratch" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null LC_ALL=C
export GIT_AUTHOR_NAME=A GIT_AUTHOR_EMAIL=a@example.com GIT_COMMITTER_NAME=C GIT_COMMITTER_EMAIL=c@example.com
export GIT_TEST_REFTABLE_AUTOCOMPACTION=false
"$GIT" version
"$GIT" init -q --ref-format=reftable -b main "$scratch/repo" && cd "$scratch/repo" || exit 2
"$GIT" commit -q --allow-empty -m first || exit 2
# Two branches in one table, refs/custom/x in a newer one.
printf 'create refs/heads/a/b HEAD\ncreate refs/heads/c HEAD\n' | "$GIT" update-ref --stdin || exit 2
"$GIT" update-ref refs/custom/x HEAD || exit 2
want=$("$GIT" for-each-ref --format='%(refname) %(objectname)' | grep -v '^refs/custom/x ')
got=$("$GIT" for-each-ref --format='%(refname) %(objectname)' --exclude=refs/custom/x) || exit 2
echo "$got"
if [ "$got" = "$want" ]; then
  echo "ok: every ref but refs/custom/x listed, with its value"
  exit 0
fi
echo "DEFECT: with --exclude=refs/custom/x git listed the above; expected:"
echo "$want"
exit 1
