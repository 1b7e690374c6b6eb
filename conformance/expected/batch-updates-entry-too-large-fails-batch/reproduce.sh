#!/bin/sh
# git 2.50 and later (reftable): `update-ref --stdin --batch-updates` dies for the whole batch
# when one update's record does not fit the table's block size, instead of rejecting that
# update and committing the others.
#
# --batch-updates lets an update fail on its own: it is reported ("rejected ...") and left
# out, the others are committed. A record too large for a block is found only when the
# table is written (refs/reftable-backend.c write_transaction_table, after every update
# passed its checks in prepare), and the error there ends the whole transaction:
# "fatal: reftable: transaction failure: entry too large", nothing written. The same update
# alone, without --batch-updates, is refused with that message, as it should be.
# Found by reftable-rs's conformance soak (fresh seeds, git 2.53.0).
#
# Usage: sh reproduce.sh [GIT]    Exit 1 when the defect shows, 0 when it does not, 2 when
# the git cannot run it (no --batch-updates before 2.50).
set -u
GIT=${1:-git}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export HOME="$scratch" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null LC_ALL=C
export GIT_AUTHOR_NAME=A GIT_AUTHOR_EMAIL=a@example.com GIT_COMMITTER_NAME=C GIT_COMMITTER_EMAIL=c@example.com
"$GIT" version
"$GIT" init -q --ref-format=reftable -b main "$scratch/repo" && cd "$scratch/repo" || exit 2
"$GIT" config reftable.blockSize 300 || exit 2
"$GIT" commit -q --allow-empty -m first || exit 2
id=$("$GIT" rev-parse HEAD)
long=refs/heads/$(printf '%0400d' 0 | tr 0 l)
printf 'create %s %s\ncreate refs/heads/fits %s\n' "$long" "$id" "$id" >"$scratch/in"
"$GIT" update-ref --stdin --batch-updates <"$scratch/in" >"$scratch/out" 2>"$scratch/err"
status=$?
cat "$scratch/out" "$scratch/err" | cut -c1-120
echo "exit $status"
if [ "$status" = 129 ] || grep -q "unknown option" "$scratch/err"; then
  echo "cannot run: this git has no update-ref --batch-updates (2.50 and later have it)"
  exit 2
fi
if "$GIT" rev-parse -q --verify refs/heads/fits >/dev/null; then
  echo "ok: the update that fits was committed"
  exit 0
fi
echo "DEFECT: one update too large for the block size failed the whole batch"
exit 1
