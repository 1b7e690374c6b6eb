#!/bin/sh
# git >= 2.50 (reftable): a transaction that updates one missing branch through one symref
# and deletes it through another (refs/notes/commits -> main and refs/custom/x -> main, main
# unborn), with a reflog message too long for the table's blocks, aborts git on
# `assert(ret != REFTABLE_API_ERROR)` in reftable_be_transaction_finish (SIGABRT) instead of
# refusing the two updates of refs/heads/main, as git 2.47.3 does ("multiple updates for
# 'refs/heads/main' (including one via symref 'refs/custom/x') are not allowed"). With a
# short message the same transaction is committed and the deletion lost
# (symref-duplicate-create-of-missing-ref-accepted): both come from the unsorted name list of
# c3baddf04f (see symref-updates-through-two-dangling-symrefs-assert).
#
# Usage: sh reproduce.sh [GIT]. Exit 1 when git dies of a signal, 0 when it does not, 2 when
# the scenario cannot be set up.
set -u
GIT=${1:-git}
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
export HOME="$d" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null LC_ALL=C
export GIT_AUTHOR_NAME=A GIT_AUTHOR_EMAIL=a@example.com GIT_COMMITTER_NAME=C GIT_COMMITTER_EMAIL=c@example.com
"$GIT" version || exit 2
"$GIT" init -q --ref-format=reftable -b main "$d/repo" && cd "$d/repo" || exit 2
"$GIT" config core.logAllRefUpdates always || exit 2
"$GIT" config reftable.blockSize 1024 || exit 2
id=$(echo one | "$GIT" commit-tree "$("$GIT" mktree </dev/null)") || exit 2
"$GIT" symbolic-ref refs/custom/x refs/heads/main || exit 2
"$GIT" symbolic-ref refs/notes/commits refs/heads/main || exit 2
msg=$(printf '%3000s' '' | tr ' ' m)
printf 'update refs/notes/commits %s\ndelete refs/custom/x\n' "$id" |
  "$GIT" update-ref -m "$msg" --stdin 2>"$d/err"
status=$?
cut -c1-200 "$d/err"
echo "exit $status"
if [ "$status" -gt 128 ]; then
  echo "DEFECT: git died of signal $((status - 128)) instead of refusing two updates of refs/heads/main"
  exit 1
fi
exit 0
