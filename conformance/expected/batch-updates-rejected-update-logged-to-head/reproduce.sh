#!/bin/sh
# git 2.50 to master (reftable and files): `update-ref --stdin --batch-updates` writes a
# HEAD reflog entry for an update of HEAD's branch that it rejected.
#
# With --batch-updates an update that fails its checks is reported on standard output
# ("rejected <ref> ... incorrect old value provided") and left out; the others are committed.
# An update of the branch HEAD points at is split in the backend's prepare step: a log-only
# update of HEAD is queued (refs/reftable-backend.c prepare_single_update, master 1a3e64c6c4
# line 1130; files-backend.c split_head_update) before the branch's old value is checked
# (line 1292). When that check rejects the branch's update, only the branch's update is
# marked rejected; the log-only update of HEAD is not, so it is written (line 1494 skips only
# rejected updates): HEAD's reflog says HEAD moved to the new id while the branch did not.
# Found by reftable-rs's conformance gate (its model leaves HEAD's reflog alone).
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
"$GIT" commit -q --allow-empty -m second || exit 2
first=$("$GIT" rev-parse HEAD~1)
second=$("$GIT" rev-parse HEAD)
before=$("$GIT" reflog show --format=%H HEAD | wc -l)
# Wrong old value: main is at $second, the update expects $first.
printf 'update refs/heads/main %s %s\n' "$first" "$first" |
  "$GIT" update-ref -m rejected --stdin --batch-updates ||
  { echo "cannot run: update-ref --batch-updates failed (gits before 2.50 lack it)"; exit 2; }
after=$("$GIT" reflog show --format=%H HEAD | wc -l)
echo "refs/heads/main is at $("$GIT" rev-parse refs/heads/main) (expected $second)"
echo "HEAD's reflog: $before entries before the batch, $after after"
"$GIT" reflog show -1 --format='HEAD@{0}: %H %gs' HEAD
if [ "$after" -eq "$before" ]; then
  echo "ok: the rejected update left HEAD's reflog alone"
  exit 0
fi
echo "DEFECT: HEAD's reflog has an entry for the rejected update of refs/heads/main"
exit 1
