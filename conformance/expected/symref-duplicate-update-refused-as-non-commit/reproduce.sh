#!/bin/sh
# git >= 2.50 (reftable): a transaction that writes one missing branch twice through two
# symrefs (refs/heads/topic -> a-b gets a symref, refs/tags/v1.0 -> a-b an annotated tag) is
# not refused for its two updates of refs/heads/a-b: git 2.53 refuses it for the tag written
# to a branch ("trying to write non-commit object"), master aborts on an assertion, git 2.47
# refuses it as it should ("multiple updates for 'refs/heads/a-b' ... are not allowed").
# The unsorted name list of c3baddf04f (v2.50.0): the second update of the referent is not
# found (see symref-updates-through-two-dangling-symrefs-assert).
#
# Usage: sh reproduce.sh [GIT]. Exit 1 while git refuses the transaction for the non-commit
# object instead of its two updates of one ref (this entry's form), 0 otherwise (master's
# abort is symref-updates-through-two-dangling-symrefs-assert's), 2 when the scenario cannot
# be set up.
GIT=${1:-git}
d=$(mktemp -d) || exit 2
trap 'rm -rf "$d"' EXIT
export HOME="$d" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null LC_ALL=C
export GIT_COMMITTER_NAME=C GIT_COMMITTER_EMAIL=c@example.com GIT_AUTHOR_NAME=A GIT_AUTHOR_EMAIL=a@example.com
"$GIT" init -q --ref-format=reftable -b main "$d/r" && cd "$d/r" || exit 2
tree=$("$GIT" mktree </dev/null) || exit 2
c=$(echo one | "$GIT" commit-tree "$tree") || exit 2
"$GIT" update-ref refs/remotes/origin/main "$c" || exit 2
tag=$(printf 'object %s\ntype commit\ntag t\ntagger C <c@example.com> 1112911993 -0700\n\nt\n' "$c" | "$GIT" mktag) || exit 2
"$GIT" symbolic-ref refs/tags/v1.0 refs/heads/a-b || exit 2
"$GIT" symbolic-ref refs/heads/topic refs/heads/a-b || exit 2
printf 'symref-create refs/heads/topic refs/remotes/origin/main\ncreate refs/tags/v1.0 %s\n' "$tag" |
  "$GIT" update-ref --stdin 2>"$d/err"
status=$?
cat "$d/err"
if [ $status -ne 0 ] && grep -q "trying to write non-commit object" "$d/err"; then
  echo "refused for the non-commit object, not for the two updates of refs/heads/a-b"
  exit 1
fi
exit 0
