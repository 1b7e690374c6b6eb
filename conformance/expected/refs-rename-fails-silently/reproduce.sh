#!/bin/sh
# git master (reftable): `git refs rename` that the backend cannot write fails with exit
# status 1 and no message at all.
#
# With reftable.blockSize=300, renaming a branch whose reflog has a `branch -M` entry to a
# 150-byte name gives a reflog record the table cannot hold: `git branch -m` says "fatal: branch rename failed",
# `git refs rename` says nothing. builtin/refs.c cmd_refs_rename() turns a negative
# refs_rename_ref() into exit status 1, and the reftable backend's rename returns the
# reftable library's error code without writing a message (the files backend prints its
# own). Found by reftable-rs's conformance soak (fresh seeds).
#
# Usage: sh reproduce.sh [GIT]    Exit 1 when the defect shows, 0 when it does not, 2 when
# the git cannot run it (no `git refs rename`).
set -u
GIT=${1:-git}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export HOME="$scratch" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null LC_ALL=C
export GIT_AUTHOR_NAME='A U Thor' GIT_AUTHOR_EMAIL=author@example.com
export GIT_COMMITTER_NAME='C O Mitter' GIT_COMMITTER_EMAIL=committer@example.com
"$GIT" version
"$GIT" init -q --ref-format=reftable -b main "$scratch/repo" && cd "$scratch/repo" || exit 2
"$GIT" config reftable.blockSize 300 || exit 2
"$GIT" config core.logAllRefUpdates always || exit 2
"$GIT" commit -q --allow-empty -m first || exit 2
"$GIT" branch b || exit 2
"$GIT" branch -M b b/c/d || exit 2
if ! "$GIT" refs rename -h 2>&1 | grep -q "git refs rename"; then
  echo "cannot run: this git has no git refs rename"
  exit 2
fi
long=refs/heads/$(printf 'l%.0s' $(seq 150))
"$GIT" refs rename --message="refs rename of b/c/d" refs/heads/b/c/d "$long" 2>"$scratch/err"
status=$?
cat "$scratch/err"
echo "exit $status"
if [ "$status" -ne 0 ] && [ ! -s "$scratch/err" ]; then
  echo "DEFECT: git refs rename failed (exit $status) and said nothing"
  exit 1
fi
echo "ok: git refs rename either succeeded or said why not"
exit 0
