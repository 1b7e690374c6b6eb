#!/bin/sh
# git 2.43 and later: `git stash push` (and `git stash store`) in a SHA-256 repository
# writes one byte past a stack buffer.
#
# builtin/stash.c do_store_stash() formats the stash commit's id into
# `char revision[GIT_MAX_HEXSZ]` with oid_to_hex_r(), which writes the hex digits and a
# terminating NUL: 65 bytes for a SHA-256 id into 64. The buffer came with d9b6634589
# (stash: be careful what we store, v2.43.0). An ordinary build survives it silently; a
# build with SANITIZE=address (git's own sanitizer CI job) aborts with
# "stack-buffer-overflow ... in do_store_stash". Any ref format: found by the gate's stash
# probe on a reftable repository.
#
# Usage: sh reproduce.sh [GIT]    GIT built with SANITIZE=address. Exit 1 when the defect
# shows, 0 when it does not (an ordinary build always says 0).
set -u
GIT=${1:-git}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export HOME="$scratch" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null LC_ALL=C
export GIT_AUTHOR_NAME=A GIT_AUTHOR_EMAIL=a@example.com GIT_COMMITTER_NAME=C GIT_COMMITTER_EMAIL=c@example.com
export ASAN_OPTIONS=abort_on_error=1
"$GIT" version
"$GIT" init -q --object-format=sha256 --ref-format=reftable "$scratch/repo" && cd "$scratch/repo" || exit 2
echo one >file && "$GIT" add file && "$GIT" commit -q -m one || exit 2
echo two >file
"$GIT" stash push -q -m first 2>"$scratch/err"
status=$?
echo "stash push exit $status"
if grep -q "stack-buffer-overflow" "$scratch/err"; then
  grep -m 3 -e "ERROR: AddressSanitizer" -e "in do_store_stash" "$scratch/err"
  echo "DEFECT: git stash wrote past the stash id's buffer"
  exit 1
fi
[ "$status" = 0 ] || { cat "$scratch/err"; exit 2; }
echo "ok: no overflow reported (an ordinary build cannot tell)"
exit 0
