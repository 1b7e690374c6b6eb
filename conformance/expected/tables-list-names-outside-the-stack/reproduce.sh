#!/bin/sh
# git (reftable): a `tables.list` line naming a file outside `.git/reftable` makes
# `git pack-refs` delete that file.
#
# Stack code joins each listed name to the stack directory without checking that it is a
# plain file name (reftable/stack.c stack_filename), and compaction unlinks every table it
# merged. A listed `../../../outside/victim.ref` that holds a valid table is read, compacted
# into the new table and then removed, although it is outside the repository. Found by
# reftable-rs's `conformance damaged` (damage class list-outside) on 2.47.3; the same on
# 2.52.0 and master v2.55.0-618. reftable-rs refuses such a line ("is not a table file name
# in the stack directory") and never opens it.
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
mkdir -p "$scratch/work/outside"
"$GIT" init -q --ref-format=reftable -b main "$scratch/work/repo" && cd "$scratch/work/repo" || exit 2
"$GIT" commit -q --allow-empty -m first || exit 2
"$GIT" branch side || exit 2
"$GIT" pack-refs || exit 2
# A valid table outside the repository: a copy of the repository's only one (git checks
# nothing that tells the two apart).
first=$(head -n 1 .git/reftable/tables.list)
cp ".git/reftable/$first" "$scratch/work/outside/victim.ref" || exit 2
echo "../../../outside/victim.ref" >> .git/reftable/tables.list
ls -l "$scratch/work/outside"
"$GIT" pack-refs
echo "pack-refs exit $?"
if [ -e "$scratch/work/outside/victim.ref" ]; then
  echo "ok: the file outside the repository is still there"
  exit 0
fi
echo "DEFECT: git pack-refs deleted $scratch/work/outside/victim.ref, outside the repository"
exit 1
