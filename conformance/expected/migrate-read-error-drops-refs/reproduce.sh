#!/bin/sh
# git (2.46 to master): `git refs migrate --ref-format=reftable` reports success after an
# I/O error reading a loose ref, and the ref is gone.
#
# The files backend lists the refs to migrate; when a loose ref (or a directory of them, or
# HEAD) cannot be read, the listing leaves it out without an error. git migrates the refs it
# got, exits 0 and removes the files store, so the ref is lost for good. Found by
# reftable-rs's `conformance faults` (its `refs migrate` trials: EIO on one `openat`), seen
# on 2.47.3, 2.49.1 and master v2.55.0-618; here strace fails every open of one ref file.
#
# Usage: sh reproduce.sh [GIT]    Exit 1 when the defect shows, 0 when it does not.
set -u
GIT=${1:-git}
command -v strace >/dev/null || { echo "needs strace"; exit 2; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export HOME="$scratch" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null LC_ALL=C
export GIT_AUTHOR_NAME=A GIT_AUTHOR_EMAIL=a@example.com GIT_COMMITTER_NAME=C GIT_COMMITTER_EMAIL=c@example.com
"$GIT" version
"$GIT" init -q --ref-format=files -b main "$scratch/repo" && cd "$scratch/repo" || exit 2
# No reflogs: 2.46 and 2.47 do not migrate them.
"$GIT" config core.logAllRefUpdates false || exit 2
"$GIT" commit -q --allow-empty -m first || exit 2
"$GIT" branch topic || exit 2
# -P twice: git opens the ref by a relative path, which strace matches by its text.
strace -f -qq -o "$scratch/trace" -P "$scratch/repo/.git/refs/heads/topic" -P .git/refs/heads/topic \
  -e trace=openat -e inject=openat:error=EIO \
  "$GIT" refs migrate --ref-format=reftable
status=$?
echo "refs migrate exit $status"
grep INJECTED "$scratch/trace"
"$GIT" for-each-ref --format='%(refname)'
if [ $status -eq 0 ] && ! "$GIT" rev-parse -q --verify refs/heads/topic >/dev/null; then
  echo "DEFECT: the migration reported success and refs/heads/topic is gone"
  exit 1
fi
echo "ok: the migration failed or kept refs/heads/topic"
exit 0
