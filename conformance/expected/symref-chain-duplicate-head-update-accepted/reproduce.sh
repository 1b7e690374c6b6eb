#!/bin/sh
# git 2.50 and later (reftable): a transaction that reaches the branch HEAD points at both
# through a chain of symrefs that ends in HEAD and through another symref is accepted,
# where git 2.47.3 refuses it as two updates of one ref.
#
# HEAD -> refs/heads/main (unborn), refs/tags/v1 -> refs/heads/b -> HEAD, ORIG_HEAD ->
# refs/heads/main. `symref-create refs/tags/v1 refs/custom/x` goes through v1, b and HEAD
# to main, and
# `verify ORIG_HEAD` goes through ORIG_HEAD to main. git 2.47.3 refuses the transaction
# ("multiple updates for 'HEAD' (including one via its referent 'refs/heads/main') are not
# allowed"). Since the generic layer keeps the transaction's ref names in a list sorted once
# before prepare, a name the reftable backend appends while it splits a symref update
# leaves the list unsorted, and the binary search that should find HEAD misses it: the
# transaction is committed with two updates that reach HEAD. Found by reftable-rs's
# conformance soak (fresh seeds).
#
# Usage: sh reproduce.sh [GIT]    Exit 1 when the defect shows, 0 when it does not, 2 when
# the git cannot run it (no symref-* commands before 2.46).
set -u
GIT=${1:-git}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export HOME="$scratch" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null LC_ALL=C
export GIT_AUTHOR_NAME=A GIT_AUTHOR_EMAIL=a@example.com GIT_COMMITTER_NAME=C GIT_COMMITTER_EMAIL=c@example.com
"$GIT" version
"$GIT" init -q --ref-format=reftable -b main "$scratch/repo" && cd "$scratch/repo" || exit 2
"$GIT" symbolic-ref refs/tags/v1 refs/heads/b || exit 2
"$GIT" symbolic-ref ORIG_HEAD refs/heads/main || exit 2
# Through v1: refs/heads/b becomes a symref to HEAD.
printf 'symref-update refs/tags/v1 HEAD\n' | "$GIT" update-ref --stdin 2>"$scratch/err"
if grep -q "unknown command\|invalid command" "$scratch/err"; then
  cat "$scratch/err"
  echo "cannot run: this git has no symref-update"
  exit 2
fi
printf 'symref-create refs/tags/v1 refs/custom/x\nverify ORIG_HEAD\n' |
  "$GIT" update-ref --stdin 2>"$scratch/err"
status=$?
cat "$scratch/err"
echo "exit $status"
if [ "$status" -eq 0 ]; then
  echo "DEFECT: git accepted two updates that reach HEAD's branch (through refs/tags/v1, refs/heads/b and HEAD, and through ORIG_HEAD)"
  exit 1
fi
if grep -q "multiple updates for" "$scratch/err"; then
  echo "ok: git refused the transaction as two updates of one ref"
  exit 0
fi
echo "cannot judge: git refused for another reason"
exit 2
