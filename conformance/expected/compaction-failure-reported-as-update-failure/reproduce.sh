#!/bin/sh
# git 2.45 to master (reftable): `git update-ref` reports failure ("fatal: update_ref failed
# for ref ...: reftable: transaction failure") for an update it has committed, when the
# auto-compaction that follows the commit fails (here: ENOSPC injected into one of its
# writes). The ref is there afterwards; a caller that believes the exit status and retries
# with the old value is refused.
#
# reftable/stack.c reftable_addition_commit() renames the new tables.list into place, then
# runs the auto-compaction and returns its error (all but lock and outdated errors), and
# refs/reftable-backend.c reports that as the transaction's failure. The update was durable
# (as durable as git makes it) from the rename on. Found by reftable-rs's fault injection;
# reftable-rs reports success and keeps the compaction's error as a warning
# (Stack::after_commit_error).
#
# Usage: sh reproduce.sh [GIT]    Exit 1 when the defect shows, 0 when it does not, 2 when
# strace (for the fault injection) is missing.
set -u
GIT=${1:-git}
command -v strace >/dev/null 2>&1 || { echo "needs strace"; exit 2; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export HOME="$scratch" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null LC_ALL=C
export GIT_AUTHOR_NAME=A GIT_AUTHOR_EMAIL=a@example.com GIT_COMMITTER_NAME=C GIT_COMMITTER_EMAIL=c@example.com
"$GIT" version
shown=0
# The n-th write(2) of the update fails with ENOSPC: the first ones belong to the new
# table and tables.list (a clean refusal), later ones to the compaction after the commit.
for n in 1 2 3 4 5 6 7 8 9 10 11 12; do
  rm -rf "$scratch/repo"
  "$GIT" init -q --ref-format=reftable "$scratch/repo" && cd "$scratch/repo" || exit 2
  "$GIT" commit -q --allow-empty -m first || exit 2
  "$GIT" pack-refs || exit 2
  commit=$("$GIT" rev-parse HEAD)
  strace -f -o /dev/null -e trace=write -e inject=write:error=ENOSPC:when=$n \
    "$GIT" update-ref -m m refs/heads/x "$commit" 2>"$scratch/err"
  status=$?
  if "$GIT" rev-parse -q --verify refs/heads/x >/dev/null; then there=yes; else there=no; fi
  echo "ENOSPC on write $n: exit $status, refs/heads/x there: $there"
  if [ $status -ne 0 ] && [ $there = yes ]; then
    sed 's/^/    /' "$scratch/err"
    shown=1
  fi
  cd "$scratch" || exit 2
done
if [ $shown -eq 1 ]; then
  echo "DEFECT: git reported failure for an update it committed"
  exit 1
fi
echo "ok: every reported failure left the ref as it was"
exit 0
