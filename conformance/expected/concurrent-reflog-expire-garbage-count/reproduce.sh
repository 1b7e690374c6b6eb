#!/bin/sh
# git before 2.47.0 can die in `git reflog expire` with "fatal: size_t overflow: <huge> *
# 168" when other processes write and compact the reftable stack at the same time: the
# count of log records it sizes an allocation by is garbage (168 bytes is one reflog
# record), as if read from a table that a concurrent reload had already freed.
#
# Two writers update a branch (each update-ref auto-compacts) while `git pack-refs` and
# `git reflog expire` run in a loop, for up to ROUNDS rounds.
#
#   sh reproduce.sh [GIT] [ROUNDS]
# Exit 1: reflog expire died with a size_t overflow (the defect); 0: it never did.
GIT=${1:-git}
ROUNDS=${2:-20}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
round=0
while [ "$round" -lt "$ROUNDS" ]; do
  rm -rf "$dir/r"
  "$GIT" init -q --ref-format=reftable "$dir/r" || exit 2
  cd "$dir/r" || exit 2
  t=$("$GIT" mktree </dev/null)
  c1=$("$GIT" -c user.name=r -c user.email=r@example.com commit-tree -m 1 "$t")
  c2=$("$GIT" -c user.name=r -c user.email=r@example.com commit-tree -m 2 "$t")
  writer() {
    i=0
    while [ "$i" -lt 200 ]; do
      "$GIT" update-ref -m "w$1 $i" refs/heads/expiry "$c1" 2>/dev/null
      "$GIT" update-ref -m "w$1 $i" "refs/heads/w$1/$i" "$c2" 2>/dev/null
      i=$((i + 1))
    done
  }
  writer 1 & a=$!
  writer 2 & b=$!
  while kill -0 "$a" 2>/dev/null || kill -0 "$b" 2>/dev/null; do
    "$GIT" pack-refs 2>/dev/null
    "$GIT" reflog expire --expire=now --expire-unreachable=now refs/heads/expiry 2>>"$dir/expire.err"
  done
  wait
  cd "$dir" || exit 2
  round=$((round + 1))
  if grep -q "size_t overflow" "$dir/expire.err"; then
    echo "$("$GIT" version), round $round: $(grep -m1 'size_t overflow' "$dir/expire.err")"
    exit 1
  fi
done
echo "$("$GIT" version): no size_t overflow in $ROUNDS rounds"
exit 0
