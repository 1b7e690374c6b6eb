#!/bin/sh
# The table the hot-path comparison reads: a reftable repository in DIR whose stack holds
# one table of N lightweight tags refs/tags/t-%07d (default 1,000,000), written by GIT in one
# `update-ref --stdin` transaction and compacted by `pack-refs` (plus HEAD and main).
#
#   sh perf/c/make-table.sh DIR [N] [GIT]      then: DIR/.git/reftable is the stack
set -eu
dir=${1:?usage: make-table.sh DIR [N] [GIT]}
n=${2:-1000000}
GIT=${3:-git}
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null LC_ALL=C
export GIT_AUTHOR_NAME=A GIT_AUTHOR_EMAIL=a@example.com GIT_COMMITTER_NAME=C GIT_COMMITTER_EMAIL=c@example.com
export GIT_AUTHOR_DATE='1700000000 +0000' GIT_COMMITTER_DATE='1700000000 +0000'
rm -rf "$dir"
"$GIT" init -q --ref-format=reftable -b main "$dir"
cd "$dir"
"$GIT" commit -q --allow-empty -m first
head=$("$GIT" rev-parse HEAD)
awk -v n="$n" -v id="$head" 'BEGIN { for (i = 0; i < n; i++) printf "create refs/tags/t-%07d %s\n", i, id }' |
  "$GIT" update-ref --stdin
"$GIT" pack-refs
ls -l .git/reftable
