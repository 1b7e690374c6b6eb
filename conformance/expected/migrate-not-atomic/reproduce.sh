#!/bin/sh
# git (2.46 to master): a `git refs migrate` that fails after it started removing the old
# ref store leaves no repository: `fatal: not a git repository`.
#
# refs.c repo_migrate_ref_storage_format() writes the new store into .git/ref_migration.*,
# then removes the old one file by file and moves the new one into place. A failure in
# between (here the removal of HEAD, failed with EIO by strace) stops it with HEAD already
# gone or not yet moved back: git then does not take .git for a repository at all. git says
# where the migrated refs are ("migrated refs can be found at ..."), and its source says the
# state can be recovered by moving them into place by hand; a reported failure still changed
# the repository and left it unusable. Found by reftable-rs's `conformance faults` (its
# `refs migrate` trials) on 2.47.3, 2.49.1 and master v2.55.0-618, in both directions.
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
strace -f -qq -o "$scratch/trace" -P "$scratch/repo/.git/HEAD" -P .git/HEAD \
  -e trace=unlink -e inject=unlink:error=EIO \
  "$GIT" refs migrate --ref-format=reftable
echo "refs migrate exit $?"
grep INJECTED "$scratch/trace"
ls .git
if ! "$GIT" rev-parse --git-dir >/dev/null 2>&1; then
  echo "DEFECT: after the failed migration git does not find a repository"
  exit 1
fi
echo "ok"
exit 0
