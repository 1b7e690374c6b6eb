#!/bin/sh
# git refs verify checks the main worktree's reftable stack once for every worktree: in a
# repository with a linked worktree, a table whose name the reftable format refuses is
# warned of twice. git 2.52.0 (the first with the reftable consistency checks) does; 2.53.0
# checks each worktree's own stack (upstream 9341740bea, "refs/reftable: fix consistency
# checks with worktrees").
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
"$GIT" worktree add -q ../linked || exit 2
# Rename the main stack's only table to a name the format refuses.
table=$(head -n 1 .git/reftable/tables.list)
mv ".git/reftable/$table" .git/reftable/table.ref && echo table.ref >.git/reftable/tables.list || exit 2
"$GIT" refs verify 2>err
status=$?
cat err
n=$(grep -c 'table.ref: badReftableTableName' err)
if [ "$n" -gt 1 ]; then
  echo "DEFECT: refs verify warned of table.ref $n times (exit $status)"
  exit 1
fi
echo "ok: refs verify warned of table.ref $n time(s), exit $status"
exit 0
