#!/bin/sh
# git 2.51 to 2.53: update-ref --batch-updates reports one rejected update once per conflict.
#
# With refs/heads/a/b and refs/heads/a/x in the repository, a batch that creates
# refs/heads/a rejects it for a refname conflict, and prints the rejection twice: the
# availability check of batched updates marks the update rejected and goes on to the next
# ref below it rather than to the next update. b52a28b03e (refs: skip to next ref when
# current ref is rejected, v2.54.0) made it move on to the next update.
#
# Usage: sh reproduce.sh [GIT]    Exit 1 when the defect shows, 0 when it does not, 2 for a
# git without --batch-updates.
set -u
GIT=${1:-git}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export HOME="$scratch" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null LC_ALL=C
export GIT_AUTHOR_NAME=A GIT_AUTHOR_EMAIL=a@example.com GIT_COMMITTER_NAME=C GIT_COMMITTER_EMAIL=c@example.com
"$GIT" version
"$GIT" init -q --ref-format=reftable -b main "$scratch/repo" && cd "$scratch/repo" || exit 2
"$GIT" commit -q --allow-empty -m first || exit 2
"$GIT" update-ref refs/heads/a/b HEAD || exit 2
"$GIT" update-ref refs/heads/a/x HEAD || exit 2
head=$("$GIT" rev-parse HEAD)
out=$(printf 'create refs/heads/a %s\n' "$head" | "$GIT" update-ref --stdin --batch-updates 2>/dev/null)
status=$?
if [ $status -ne 0 ] && [ -z "$out" ]; then
  echo "this git has no --batch-updates (exit $status)"
  exit 2
fi
echo "$out"
n=$(printf '%s\n' "$out" | grep -c '^rejected refs/heads/a ')
echo "refs/heads/a rejected $n times"
if [ "$n" -gt 1 ]; then
  echo "DEFECT: one update reported rejected $n times"
  exit 1
fi
echo "ok: the update is reported once"
exit 0
