#!/bin/sh
# git symbolic-ref writes a ref whose name git's own format check refuses.
#
# `git symbolic-ref refs/heads/a.lock refs/heads/main` succeeds, although a component
# ending in ".lock" is refused by check_refname_format() (git check-ref-format exits 1 on
# it). builtin/symbolic-ref.c checks only the target's format; the update then goes
# through ref_transaction_update() (since 300b38e46f, v2.46.0; before it the reftable
# backend's create_symref wrote the table with no check), which applies the full format
# check only to updates with a new object id and merely refname_is_safe() to symref
# updates. for-each-ref then warns "ignoring ref with broken name", and in a files
# repository the ref's file stands where refs/heads/a's lock goes, so refs/heads/a can no
# longer be written.
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
if "$GIT" check-ref-format refs/heads/a.lock; then
  echo "this git takes refs/heads/a.lock as a valid name: nothing to check"
  exit 2
fi
"$GIT" symbolic-ref refs/heads/a.lock refs/heads/main
status=$?
echo "symbolic-ref exit $status"
if [ $status -ne 0 ]; then
  echo "ok: the invalid name was refused"
  exit 0
fi
"$GIT" for-each-ref 2>&1
echo "DEFECT: git symbolic-ref wrote refs/heads/a.lock, a name check-ref-format refuses"
exit 1
