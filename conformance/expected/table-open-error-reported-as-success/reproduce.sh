#!/bin/sh
# git 2.48 and 2.49 crash (SIGSEGV) when a table of the stack cannot be opened for a reason
# other than its absence (EIO, EACCES, EMFILE, ...): reftable_block_source_from_file()
# returns 0 on that path, so the stack goes on to read a block source that was never set up
# (and frees an uninitialized pointer). strace fails the first open of the stack's first
# table with EIO; a git without the defect reports an error instead. Exit 1 when git is killed
# by a signal, 0 otherwise, 2 when it cannot run.
#
#   sh reproduce.sh [GIT]
set -u
GIT=${1:-git}
command -v strace >/dev/null || { echo "needs strace" >&2; exit 2; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir" || exit 2
"$GIT" init -q --ref-format=reftable repo || exit 2
cd repo || exit 2
"$GIT" -c user.name=A -c user.email=a@example.com commit -q --allow-empty -m one || exit 2
table="$PWD/.git/reftable/$(head -n 1 .git/reftable/tables.list)"
strace -f -qq -o /dev/null -P "$table" -e trace=openat -e inject=openat:error=EIO:when=1 \
  "$GIT" for-each-ref
status=$?
echo "git for-each-ref: exit status $status"
if [ "$status" -gt 128 ]; then
  echo "DEFECT: git was killed by signal $((status - 128)) after a table failed to open"
  exit 1
fi
echo "git reported the failure"
exit 0
