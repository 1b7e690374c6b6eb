#!/bin/sh
# git >= 2.50 (reftable): a transaction that deletes a missing branch through one symref and
# creates it through another is committed; git 2.47 refuses it ("multiple updates for
# 'refs/heads/main' (including one via symref 'refs/custom/x') are not allowed").
#
# Since c3baddf04f (refs: move duplicate refname update check to generic layer, v2.50.0)
# the names of a transaction's updates are appended to a list sorted once before prepare;
# splitting the update of a symref appends its referent, and the duplicate check of the
# next split is a binary search of that list, unsorted once a name sorting after the
# referent came before it (refs/heads/zz here). The second update of refs/heads/main is not
# found, and as the deletion of a missing ref writes no record, the writer does not trip
# over two records of one name (with the branch present it does, and git aborts:
# symref-updates-through-two-dangling-symrefs-assert).
#
# Usage: sh reproduce.sh [GIT]. Exit 1 while git commits the transaction, 0 when it
# refuses it, 2 when the scenario cannot be set up.
GIT=${1:-git}
d=$(mktemp -d) || exit 2
trap 'rm -rf "$d"' EXIT
export HOME="$d" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null LC_ALL=C
export GIT_COMMITTER_NAME=C GIT_COMMITTER_EMAIL=c@example.com GIT_AUTHOR_NAME=A GIT_AUTHOR_EMAIL=a@example.com
"$GIT" init -q --ref-format=reftable -b main "$d/r" && cd "$d/r" || exit 2
tree=$("$GIT" mktree </dev/null) || exit 2
c=$(echo one | "$GIT" commit-tree "$tree") || exit 2
"$GIT" symbolic-ref refs/heads/a0 refs/heads/main || exit 2
"$GIT" symbolic-ref refs/custom/x refs/heads/main || exit 2
if printf 'delete refs/heads/zz\ndelete refs/heads/a0\nupdate refs/custom/x %s\n' "$c" |
  "$GIT" update-ref --stdin; then
  echo "committed: refs/heads/main is $("$GIT" rev-parse --verify -q refs/heads/main || echo missing)"
  exit 1
fi
exit 0
