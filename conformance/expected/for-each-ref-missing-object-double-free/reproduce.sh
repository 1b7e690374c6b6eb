#!/bin/sh
# git for-each-ref crashes (free(): double free) when a format asks what a ref peels to
# (%(*objectname)) and a ref names an object the repository does not have, after refs
# whose objects it read. git 2.45 to 2.52 refuse cleanly: "fatal: missing object <id> for
# <ref>", exit 128. Any ref backend: the ref is written here as a loose ref.
#
# ref-filter.c get_object(): when the object cannot be read it jumps to its cleanup, which
# frees oi->content; oi is the file-scope expand_data reused for every ref, and its content
# pointer still holds the buffer of the previous ref's object (no longer its to free).
# v2.52.0 is clean; v2.53.0 and master v2.55.0-618 crash. Built with SANITIZE=address, git
# reports the double free; built with SANITIZE=leak alone it does not notice (exit 0 there).
#
# Usage: sh reproduce.sh [GIT]    Exit 1 when the defect shows, 0 when it does not.
set -u
GIT=${1:-git}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export HOME="$scratch" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null LC_ALL=C
export GIT_AUTHOR_NAME=A GIT_AUTHOR_EMAIL=a@example.com GIT_COMMITTER_NAME=C GIT_COMMITTER_EMAIL=c@example.com
"$GIT" version
"$GIT" init -q "$scratch/repo" && cd "$scratch/repo" || exit 2
"$GIT" commit -q --allow-empty -m first || exit 2
missing=$("$GIT" rev-parse HEAD | tr '0-9a-f' '1')
echo "$missing" >.git/refs/tags/missing || exit 2
"$GIT" for-each-ref --format='%(*objectname)' >out 2>err
status=$?
cat err
if grep -q 'AddressSanitizer: attempting double-free' err; then
  echo "DEFECT: AddressSanitizer caught for-each-ref freeing a buffer twice on a ref to a missing object"
  exit 1
fi
if [ $status -gt 128 ]; then
  echo "DEFECT: for-each-ref died of signal $((status - 128)) on a ref to a missing object"
  exit 1
fi
echo "ok: for-each-ref exited $status"
exit 0
