#!/usr/bin/env bash
# `reftable verify` on a live repository: two git writers update, delete and pack refs
# (each write may compact the stack) while verify runs N times. Every run that reports a
# problem is a false alarm: git wrote a sound stack, only it changed under the check.
#
#   ci/verify-live.sh BINARY [N]     (default N=300; exit 1 on any false alarm)
set -uo pipefail
bin=$(realpath "${1:?usage: ci/verify-live.sh BINARY [N]}") n=${2:-300}
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
export GIT_CONFIG_NOSYSTEM=1 HOME=$tmp GIT_AUTHOR_NAME=w GIT_AUTHOR_EMAIL=w@x GIT_COMMITTER_NAME=w GIT_COMMITTER_EMAIL=w@x
git init -q --ref-format=reftable "$tmp/repo" || exit 2
cd "$tmp/repo" && git commit -q --allow-empty -m init || exit 2
writer() {
    local i=0
    while :; do
        git update-ref "refs/heads/w$1-$((i % 40))" HEAD 2>/dev/null
        (( i % 7 == 0 )) && git update-ref -d "refs/heads/w$1-$(((i + 20) % 40))" 2>/dev/null
        (( i % 11 == 0 )) && git commit -q --allow-empty -m "w$1 $i" 2>/dev/null
        (( i % 25 == 0 )) && git pack-refs --all 2>/dev/null
        i=$((i + 1))
    done
}
writer 1 & pids+=($!)
writer 2 & pids+=($!)
sleep 1
alarms=0
for ((k = 1; k <= n; k++)); do
    if ! out=$("$bin" verify "$tmp/repo" 2>&1); then
        alarms=$((alarms + 1))
        (( alarms <= 5 )) && echo "run $k: $out" | head -5
    fi
done
last=$(tail -1 .git/reftable/tables.list)
max=${last#*-0x}; max=$((16#${max%%-*}))
echo "verify-live: $n runs while two git writers wrote (update index $max at the end), $alarms false alarms"
(( alarms == 0 ))
