#!/bin/sh
# git 2.47 to 2.49 (reftable): `git for-each-ref --exclude=refs/heads/a` also leaves out
# refs/heads/ab, refs/heads/a-b and every other name that merely starts with the same bytes.
#
# git-for-each-ref(1) matches an --exclude pattern as it matches a name pattern: the whole
# name, or its beginning up to a slash. The reftable backend turns each exclude pattern
# without glob characters into a seek past every name that has the pattern as a byte prefix
# (refs/reftable-backend.c should_exclude_current_ref(), since 1869525066 "refs/reftable:
# wire up support for exclude patterns", v2.47.0). The files backend lists such names.
# Fixed by 10e8a9352b (refs.c: stop matching non-directory prefixes in exclude patterns),
# v2.50.0. Found by reftable-rs's conformance gate (filtered listings at the end of a case).
#
# Usage: sh reproduce.sh [GIT]    Exit 1 when the defect shows, 0 when it does not.
set -u
GIT=${1:-git}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export HOME="$scratch" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null LC_ALL=C
export GIT_AUTHOR_NAME=A GIT_AUTHOR_EMAIL=a@example.com GIT_COMMITTER_NAME=C GIT_COMMITTER_EMAIL=c@example.com
"$GIT" version
"$GIT" init -q --ref-format=reftable "$scratch/repo" && cd "$scratch/repo" || exit 2
"$GIT" commit -q --allow-empty -m first || exit 2
printf 'create refs/heads/a HEAD\ncreate refs/heads/ab HEAD\n' | "$GIT" update-ref --stdin || exit 2
listed=$("$GIT" for-each-ref --format='%(refname)' --exclude=refs/heads/a refs/heads/) || exit 2
echo "$listed"
case "$listed" in
*refs/heads/ab*) echo "ok: refs/heads/ab listed"; exit 0 ;;
esac
echo "DEFECT: --exclude=refs/heads/a left out refs/heads/ab"
exit 1
