#!/bin/sh
# git (2.46 to master): when `git refs migrate` cannot write the new format into the
# config, the refs have already been moved: the repository is left with a reftable stack
# that its config does not name, and reads as a files repository without refs.
#
# refs.c repo_migrate_ref_storage_format() removes the old store and moves the new one into
# place, and only then sets extensions.refstorage; when that config write fails (here the
# rename of config.lock, failed with EIO by strace), git dies ("could not set
# 'extensions.refstorage'") without saying that the refs are in .git/reftable and only the
# config is missing. The other direction (to files) is left the same way, its config still
# naming reftable ("repo version is 0, but v1-only extension found" on 2.47). Found by
# reftable-rs's `conformance faults` (its `refs migrate` trials), on 2.47.3, 2.49.1 and
# master v2.55.0-618.
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
# -P twice: git names the file by a relative path, which strace matches by its text.
strace -f -qq -o "$scratch/trace" -P "$scratch/repo/.git/config.lock" -P .git/config.lock \
  -e trace=rename -e inject=rename:error=EIO \
  "$GIT" refs migrate --ref-format=reftable
echo "refs migrate exit $?"
grep INJECTED "$scratch/trace"
listed=$("$GIT" for-each-ref --format='%(refname)')
echo "for-each-ref: $listed"
ls .git
if [ -d .git/reftable ] && ! echo "$listed" | grep -q refs/heads/topic; then
  echo "DEFECT: the refs are in .git/reftable, which the config does not name; git lists none"
  exit 1
fi
echo "ok"
exit 0
