#!/bin/sh
# git before 2.47.0 loses acknowledged ref updates when several processes write one
# reftable repository while tables are compacted: a compaction that released
# tables.list.lock while it merged tables wrote back the list it had read before, so tables
# another writer appended meanwhile vanished from tables.list (fixed by ed1ad6b44d,
# "reftable/stack: fix corruption on concurrent compaction", in v2.47.0).
#
# Two writers create refs (each `git update-ref` auto-compacts afterwards) while a third
# process runs `git pack-refs`; then every ref whose update-ref exited 0 is looked up.
#
#   sh reproduce.sh [GIT] [REFS-PER-WRITER]
# Exit 1: acknowledged refs are missing (the defect); 0: all present.
GIT=${1:-git}
N=${2:-300}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
"$GIT" init -q --ref-format=reftable "$dir/r" || exit 2
cd "$dir/r" || exit 2
c=$("$GIT" -c user.name=r -c user.email=r@example.com commit-tree -m x \
  "$("$GIT" mktree </dev/null)") || exit 2
writer() {
  i=0
  while [ "$i" -lt "$N" ]; do
    "$GIT" update-ref "refs/heads/w$1/$i" "$c" 2>/dev/null && echo "refs/heads/w$1/$i" >>"$dir/acked"
    i=$((i + 1))
  done
}
writer 1 &
a=$!
writer 2 &
b=$!
while kill -0 "$a" 2>/dev/null || kill -0 "$b" 2>/dev/null; do
  "$GIT" pack-refs 2>/dev/null
done
wait
acked=$(wc -l <"$dir/acked")
missing=0
while read -r ref; do
  "$GIT" show-ref --verify --quiet "$ref" || missing=$((missing + 1))
done <"$dir/acked"
echo "$("$GIT" version): $acked updates acknowledged, $missing missing"
[ "$missing" -eq 0 ]
