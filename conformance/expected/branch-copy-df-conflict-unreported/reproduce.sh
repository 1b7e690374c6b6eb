#!/bin/sh
# git 2.45 (reftable): a copy of a branch into a directory of its own name fails with no
# reason given.
#
# `git branch -c c c/x` must be refused: refs/heads/c would be a file and a directory. git
# 2.46 and later say why ("'refs/heads/c' exists; cannot create 'refs/heads/c/x'") before
# "fatal: branch copy failed". Up to 2.45 the reftable backend left the old name out of the
# D/F check for a copy as for a rename; the reftable library then refused the table and
# nothing but "fatal: branch copy failed" was printed. Fixed by f57cc987a9 (refs/reftable:
# fix D/F conflict error message on ref copy, v2.46.0).
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
"$GIT" branch c || exit 2
err=$("$GIT" branch -c c c/x 2>&1)
echo "branch -c exit $?: $err"
if "$GIT" rev-parse -q --verify refs/heads/c/x >/dev/null; then
  echo "DEFECT: the copy was written"
  exit 1
fi
case "$err" in
  *"exists; cannot create"*) echo "ok: refused with the reason"; exit 0 ;;
  *) echo "DEFECT: refused without saying why"; exit 1 ;;
esac
