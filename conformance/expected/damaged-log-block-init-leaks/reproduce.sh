#!/bin/sh
# git 2.45 - master (reftable): `git reflog list` leaks memory allocated in reftable_block_init (block_reader_init
# before 2.50's rename) when a table of the
# stack is damaged. The stack beside this script is one `conformance damaged` made (the
# damage is in the header of its finding: see the registry entry). An ordinary build does
# not show it; a build with SANITIZE=leak (git's leak-checking CI job) exits 23 with
# "LeakSanitizer: detected memory leaks" and an allocation stack through reftable_block_init
# (block_reader_init on older gits).
#
# Usage: sh reproduce.sh [GIT]    GIT built with SANITIZE=leak. Exit 1 when the defect
# shows, 0 when it does not (an ordinary build always says 0).
set -u
GIT=${1:-git}
here=$(cd "$(dirname "$0")" && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export HOME="$scratch" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null LC_ALL=C
export GIT_TEST_REFTABLE_AUTOCOMPACTION=false
"$GIT" version
"$GIT" init -q --ref-format=reftable --object-format=sha1 "$scratch/repo" || exit 2
rm -rf "$scratch/repo/.git/reftable" && cp -R "$here/stack" "$scratch/repo/.git/reftable" || exit 2
cd "$scratch/repo" || exit 2
"$GIT" reflog list >/dev/null 2>"$scratch/err"
echo "git reflog list exit $?"
if grep -q "LeakSanitizer: detected memory leaks" "$scratch/err" && grep -q " in \(reftable_block_init\|block_reader_init\) " "$scratch/err"; then
  grep -m 1 -B 3 " in \(reftable_block_init\|block_reader_init\) " "$scratch/err"
  echo "DEFECT: git reflog list leaked memory allocated in the block's initialization"
  exit 1
fi
echo "ok: no leak through the block's initialization reported (an ordinary build cannot tell)"
exit 0
