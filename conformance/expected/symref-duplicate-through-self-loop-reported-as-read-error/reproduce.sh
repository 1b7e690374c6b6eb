#!/bin/sh
# git >= 2.50 (reftable): with HEAD a symref to itself and refs/remotes/origin/main a symref
# to HEAD, a transaction that creates origin/main's target through it, beside a create of
# refs/notes/commits, is refused with "cannot lock ref 'HEAD': error reading reference":
# the second update of HEAD (split off through the symref, then through HEAD's own referent)
# is not found in the transaction's name list, so git goes on to read HEAD's symref loop.
# git 2.47.3 refuses it for the duplicate ("multiple updates for 'HEAD' (including one via
# its referent 'HEAD') are not allowed"), and so does master without the second update,
# whose name, sorting after HEAD's, leaves the list unsorted: the cause of
# symref-updates-through-two-dangling-symrefs-assert (c3baddf04f).
#
# Usage: sh reproduce.sh [GIT]. Exit 1 when git refuses with the read error, 0 when it
# refuses for the duplicate, 2 when the scenario cannot be set up.
set -u
GIT=${1:-git}
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
export HOME="$d" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null LC_ALL=C
export GIT_AUTHOR_NAME=A GIT_AUTHOR_EMAIL=a@example.com GIT_COMMITTER_NAME=C GIT_COMMITTER_EMAIL=c@example.com
"$GIT" version || exit 2
"$GIT" init -q --ref-format=reftable -b main "$d/repo" && cd "$d/repo" || exit 2
"$GIT" commit -q --allow-empty -m one || exit 2
id=$("$GIT" rev-parse HEAD) || exit 2
"$GIT" symbolic-ref refs/remotes/origin/main HEAD || exit 2
printf 'symref-update HEAD HEAD\n' | "$GIT" update-ref --no-deref --stdin || exit 2
if "$GIT" symbolic-ref HEAD >/dev/null 2>&1; then
  echo "cannot run: HEAD did not become a symref to itself"
  exit 2
fi
printf 'symref-create refs/remotes/origin/main refs/heads/topic\ncreate refs/notes/commits %s\n' "$id" |
  "$GIT" update-ref --stdin 2>"$d/err"
status=$?
cat "$d/err"
echo "exit $status"
if grep -q "error reading reference" "$d/err"; then
  echo "DEFECT: refused for reading HEAD's loop, not for the two updates of HEAD"
  exit 1
fi
exit 0
