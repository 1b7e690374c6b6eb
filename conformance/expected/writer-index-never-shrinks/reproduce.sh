#!/bin/sh
# git (reftable, 2.45.0 to master v2.55.0-618): writing a table whose index records do not
# fit two to a block never ends.
#
# reftable/writer.c writer_finish_section() writes index levels until one has at most three
# blocks. A level of index blocks that each hold a single record has as many records as the
# level below it, so the loop writes the same level again and again: git fills the disk at
# about 100 MB a second. It takes four refs whose records fill a block each and whose index
# records (their names) are longer than half a block: with the default block size (4096),
# four names of 2,100 bytes; with reftable.blockSize=300 and reftable.restartInterval=1
# (no prefix compression), four names of 150. Any write of such a table shows it: the
# transaction's own table, pack-refs, or the auto-compaction after a write.
# Found by reftable-rs's conformance soak (seed 7390004, case 38: git refs rename on
# master). reftable-rs refuses the table ("a 300-byte block holds too few index records to
# build an index").
#
# Each git runs with a file-size limit (ulimit -f), so the defect ends in SIGXFSZ (exit
# 153) within a second instead of filling the disk; a timeout (exit 124) stops it where
# ulimit is missing.
#
# Usage: sh reproduce.sh [GIT]    Exit 1 when the defect shows, 0 when it does not.
set -u
GIT=${1:-git}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export HOME="$scratch" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null LC_ALL=C
export GIT_AUTHOR_NAME='A U Thor' GIT_AUTHOR_EMAIL=author@example.com
export GIT_COMMITTER_NAME='C O Mitter' GIT_COMMITTER_EMAIL=committer@example.com
"$GIT" version || exit 2
if command -v timeout >/dev/null; then t="timeout 20"; else t=; fi
shown=

# Four refs named "refs/heads/<i>" and $2 times "l" in one update-ref transaction, in a new
# repository with the config "$3" (key=value words), under a 32,768-block file-size limit.
four_long_names () {
  repo="$scratch/$1"
  "$GIT" init -q --ref-format=reftable "$repo" || exit 2
  for kv in $3; do "$GIT" -C "$repo" config "${kv%%=*}" "${kv#*=}" || exit 2; done
  c=$("$GIT" -C "$repo" commit-tree -m x "$("$GIT" -C "$repo" mktree </dev/null)") || exit 2
  long=$(printf "%$2s" '' | tr ' ' l)
  for i in 1 2 3 4; do echo "create refs/heads/$i$long $c"; done >"$scratch/$1.in"
  (ulimit -f 32768; exec $t "$GIT" -C "$repo" update-ref --stdin <"$scratch/$1.in")
  status=$?
  echo "$1: update-ref exit $status, left: $(ls "$repo/.git/reftable" | tr '\n' ' ')"
  case $status in
  124|153) echo "DEFECT: git wrote without end ($1)"; shown=1 ;;
  esac
}

four_long_names default-block 2100 ""
four_long_names small-block 150 "reftable.blockSize=300 reftable.restartInterval=1"

[ -n "$shown" ] && exit 1
echo "ok: git wrote each table or refused it"
exit 0
