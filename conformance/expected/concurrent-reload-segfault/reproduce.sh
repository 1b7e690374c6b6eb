#!/bin/sh
# git before 2.47.0 can die of SIGSEGV in `git update-ref` when another process compacts
# the reftable stack at the same time: after committing its table the writer reloads the
# stack reusing the tables it has open; when that reload fails (a table it wanted to open
# was just compacted away) it frees the reused tables too, and the retry reads freed memory
# (reftable/stack.c reftable_stack_reload_once, strcmp on a freed table's name; fixed by
# 85da2a2ab6 "reftable/stack: fix segfault when reload with reused readers fails", v2.47.0).
#
# Three writers create refs while `git pack-refs` runs in a loop, for up to ROUNDS rounds.
#
#   sh reproduce.sh [GIT] [ROUNDS]
# Exit 1: an update-ref died of a signal (the defect); 0: none did.
GIT=${1:-git}
ROUNDS=${2:-30}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
round=0
while [ "$round" -lt "$ROUNDS" ]; do
  rm -rf "$dir/r"
  "$GIT" init -q --ref-format=reftable "$dir/r" || exit 2
  cd "$dir/r" || exit 2
  c=$("$GIT" -c user.name=r -c user.email=r@example.com commit-tree -m x \
    "$("$GIT" mktree </dev/null)") || exit 2
  writer() {
    i=0
    while [ "$i" -lt 300 ]; do
      "$GIT" update-ref "refs/heads/w$1/$i" "$c" 2>/dev/null
      [ $? -gt 128 ] && echo "update-ref refs/heads/w$1/$i died of a signal" >>"$dir/crashes"
      i=$((i + 1))
    done
  }
  writer 1 & a=$!
  writer 2 & b=$!
  writer 3 & d=$!
  while kill -0 "$a" 2>/dev/null || kill -0 "$b" 2>/dev/null || kill -0 "$d" 2>/dev/null; do
    "$GIT" pack-refs 2>/dev/null
  done
  wait
  cd "$dir" || exit 2
  round=$((round + 1))
  if [ -s "$dir/crashes" ]; then
    echo "$("$GIT" version), round $round: $(wc -l <"$dir/crashes") crashes; first: $(head -1 "$dir/crashes")"
    exit 1
  fi
done
echo "$("$GIT" version): no crash in $ROUNDS rounds"
exit 0
