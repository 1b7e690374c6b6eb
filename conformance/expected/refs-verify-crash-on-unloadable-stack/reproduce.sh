#!/bin/sh
# git (reftable, 2.52.0 to master): `git refs verify` dies with SIGSEGV on a stack that does
# not load.
#
# When the reftable backend cannot load its stack (here: tables.list names a table that is
# not there), it keeps the error and leaves the backend's stack pointer unset. Every other
# entry point checks that error first; refs/reftable-backend.c reftable_be_fsck() does not and
# passes the unset stack to reftable/fsck.c reftable_fsck_check(), which reads its table
# count. Introduced by 466a3a1afd (refs/reftable: add fsck check for checking the table name,
# v2.52.0). Found by reftable-rs's `conformance damaged` on master v2.55.0-618 (a table whose
# footer gives an obj section offset with a zero id length does not open). 2.47.3 to 2.51
# exit 0 without looking at the tables at all.
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
echo 0x000000000009-0x000000000009-00000000.ref >>.git/reftable/tables.list
"$GIT" refs verify 2>"$scratch/err"
status=$?
cat "$scratch/err" >&2
echo "refs verify exit $status"
if [ $status -gt 128 ]; then
  echo "DEFECT: git refs verify died by signal $((status - 128))"
  exit 1
fi
# A sanitizer build catches the signal itself and exits with its own code.
if grep -q "Sanitizer: SEGV" "$scratch/err"; then
  echo "DEFECT: git refs verify died by SIGSEGV (caught by a sanitizer, exit $status)"
  exit 1
fi
echo "ok: refs verify did not crash"
exit 0
