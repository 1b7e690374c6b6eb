#!/bin/sh
# git 2.53.0 (reftable): a transaction that writes one missing ref through two symrefs
# pointing at it aborts git on an assertion instead of refusing the second update.
#
# refs/heads/topic and refs/tags/v1 both point at refs/heads/target, which does not exist.
# `create refs/tags/v1 ID` goes through v1 and creates target; `symref-update
# refs/heads/topic refs/heads/other` goes through topic and makes target a symref. Two
# updates of target: git 2.47.3 refuses the transaction ("multiple updates for
# 'refs/heads/target' (including one via symref 'refs/heads/topic') are not allowed").
# git 2.53.0 queues both, and the reftable writer refuses the second record of the same
# name (REFTABLE_API_ERROR: keys must increase), which trips
# `assert(ret != REFTABLE_API_ERROR)` in refs/reftable-backend.c write_transaction_table:
# SIGABRT, nothing written. Found by reftable-rs's conformance soak (fresh seeds).
#
# Usage: sh reproduce.sh [GIT]    Exit 1 when the defect shows, 0 when it does not, 2 when
# the git cannot run it (no symref-update before 2.45).
set -u
GIT=${1:-git}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export HOME="$scratch" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null LC_ALL=C
export GIT_AUTHOR_NAME=A GIT_AUTHOR_EMAIL=a@example.com GIT_COMMITTER_NAME=C GIT_COMMITTER_EMAIL=c@example.com
"$GIT" version
"$GIT" init -q --ref-format=reftable -b main "$scratch/repo" && cd "$scratch/repo" || exit 2
"$GIT" commit -q --allow-empty -m first || exit 2
id=$("$GIT" rev-parse HEAD)
"$GIT" symbolic-ref refs/heads/topic refs/heads/target || exit 2
"$GIT" symbolic-ref refs/tags/v1 refs/heads/target || exit 2
printf 'create refs/tags/v1 %s\nsymref-update refs/heads/topic refs/heads/other\n' "$id" |
  "$GIT" update-ref --stdin 2>"$scratch/err"
status=$?
cat "$scratch/err"
echo "exit $status"
if grep -q "unknown command\|invalid command" "$scratch/err"; then
  echo "cannot run: this git has no symref-update"
  exit 2
fi
if [ "$status" -gt 128 ]; then
  echo "DEFECT: git died of signal $((status - 128)) instead of refusing the second update of refs/heads/target"
  exit 1
fi
echo "ok: git did not die (exit $status)"
exit 0
