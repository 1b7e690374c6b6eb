#!/bin/sh
# git (reftable, 2.47.3 to master v2.55.0-618): a ref lookup never ends when an index entry
# points at its own index block.
#
# reftable/table.c table_iter_seek_indexed() walks down the index levels by following each
# entry's block offset until it reaches a block of the record type; nothing checks that the
# offset points below the current level. An entry whose offset is its own index block makes
# every seek through it start over at the same block, forever: `git for-each-ref`,
# `git show-ref --verify` and `git reflog show` hang at 100% CPU. Found by reftable-rs's
# `conformance damaged` (damage class index-value-varint: one 2-byte varint of a ref index
# entry rewritten); the stack is fixtures/damaged/git-hang-for-each-ref-18/stack.
# reftable-rs refuses such an entry ("index entry points at offset N which is not before its
# index block").
#
# Usage: sh reproduce.sh [GIT]    Exit 1 when the defect shows, 0 when it does not.
set -u
GIT=${1:-git}
here=$(cd "$(dirname "$0")" && pwd)
stack="$here/../../../fixtures/damaged/git-hang-for-each-ref-18/stack"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export HOME="$scratch" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null LC_ALL=C
"$GIT" version
"$GIT" init -q --ref-format=reftable -b main "$scratch/repo" || exit 2
rm -rf "$scratch/repo/.git/reftable" && cp -r "$stack" "$scratch/repo/.git/reftable" || exit 2
cd "$scratch/repo" || exit 2
timeout 10 "$GIT" for-each-ref --format='%(refname)' >/dev/null 2>&1
status=$?
echo "for-each-ref exit $status"
if [ $status -eq 124 ]; then
  echo "DEFECT: git for-each-ref still running after 10 s"
  exit 1
fi
echo "ok: for-each-ref ended"
exit 0
