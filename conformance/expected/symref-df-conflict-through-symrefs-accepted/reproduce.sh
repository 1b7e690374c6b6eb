#!/bin/sh
# git >= 2.50 (reftable): a transaction that deletes refs/heads/b through a chain of symrefs
# and creates refs/heads/b/c/d through another symref is committed, though the two names
# conflict (a file and a directory of each other); git 2.47 refuses it ("cannot process
# 'refs/heads/b/c/d' and 'refs/heads/b' at the same time"), and every git refuses the same
# two updates named directly.
#
# The names a symref update is split into are appended to the transaction's name list,
# which the directory/file check of the whole transaction reads as a sorted list (since
# c3baddf04f, refs: move duplicate refname update check to generic layer, v2.50.0): the
# referents of the split updates are not seen, and the conflict between them goes unnoticed.
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
"$GIT" symbolic-ref refs/heads/topic refs/heads/b || exit 2
"$GIT" symbolic-ref refs/heads/x refs/heads/topic || exit 2
"$GIT" symbolic-ref refs/heads/a.b refs/heads/b/c/d || exit 2
# The same two updates named directly are refused by every git: the check works there.
if printf 'delete refs/heads/b\ncreate refs/heads/b/c/d %s\n' "$c" | "$GIT" update-ref --stdin 2>/dev/null; then
  echo "the direct form was committed too: another defect"; exit 2
fi
if printf 'delete refs/heads/x\ncreate refs/heads/a.b %s\n' "$c" | "$GIT" update-ref --stdin; then
  echo "committed: $("$GIT" for-each-ref --format='%(refname)' refs/heads/b/ | tr '\n' ' ')"
  exit 1
fi
exit 0
