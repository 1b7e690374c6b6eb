#!/bin/sh
# git >= 2.50 (reftable): a transaction that reaches one missing branch twice, once through
# HEAD -> main -> a.b (a create) and once through refs/heads/a/b -> a.b (a delete), is
# committed; git 2.47 refuses it ("multiple updates for 'refs/heads/a.b' (including one via
# symref 'refs/heads/main') are not allowed"). The unsorted name list of c3baddf04f
# (v2.50.0): the second update of the referent is not found (see
# symref-updates-through-two-dangling-symrefs-assert; the deletion of a missing ref writes no
# record, so the writer does not abort).
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
"$GIT" symbolic-ref refs/heads/main refs/heads/a.b || exit 2
"$GIT" symbolic-ref refs/heads/a/b refs/heads/a.b || exit 2
if printf 'create HEAD %s\ndelete refs/heads/a/b\n' "$c" | "$GIT" update-ref --stdin; then
  echo "committed: refs/heads/a.b is $("$GIT" rev-parse --verify -q refs/heads/a.b || echo missing)"
  exit 1
fi
exit 0
