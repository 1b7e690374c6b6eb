#!/bin/sh
# git 2.48 to 2.52 (reftable): `git for-each-ref --format=%(*objectname)` dies with
# "fatal: bad tag" when a symref points at an annotated tag.
#
# Since 2e7c6d2f41 (ref-filter: format iteratively with lexicographic refname sorting,
# v2.48.0) refs are formatted while the ref iterator is still positioned on them. Peeling
# then asks the iterator (peel_iterated_oid), whose record for the symref has no peeled
# value, so the peel fails and ref-filter.c dies. Older gits hit the same with --no-sort.
# Fixed by the ps/ref-peeled-tags series (70b783c3a1 ref-filter: propagate peeled object ID,
# 705114772e refs: drop infrastructure to peel via iterators), v2.53.0.
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
"$GIT" tag -a -m annotated v1 || exit 2
"$GIT" symbolic-ref refs/heads/to-tag refs/tags/v1 || exit 2
if "$GIT" for-each-ref --format='%(refname) %(objectname) %(*objectname)'; then
  echo "ok: every ref listed"
  exit 0
fi
echo "DEFECT: for-each-ref died on a symref to an annotated tag"
exit 1
