#!/usr/bin/env bash
# The 1,000,000-ref comparison as whole processes: git's `update-ref --stdin` (one
# transaction, auto-compaction off) and `for-each-ref` beside ours writing and iterating the
# same refs, each under /usr/bin/time (wall and CPU seconds, peak RSS): our table writer
# alone (`million write`), the same creates through a `RefDb` transaction with git's checks
# and reflogs (`million transaction`), the CLI's `reftable refs` beside
# `for-each-ref --no-sort` (same lines checked). Also 10,000 random exact lookups: ours
# in-process, git through one `cat-file --batch-check`. Single runs: for ratios on a noisy
# machine, repeat or use an interleaving timer.
# Usage: ci/bench-vs-git.sh [N]   (git from $REFTABLE_TEST_GIT, else `git` on PATH)
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-1000000}
K=10000
GIT=${REFTABLE_TEST_GIT:-git}
if [[ ! -x /usr/bin/time ]]; then
  apt-get install -y time >/dev/null || { echo "need GNU time (apt-get install time)" >&2; exit 2; }
fi
cargo build --release --locked -p perf --bin million -p reftable-cli --bin reftable
OURS=${CARGO_TARGET_DIR:-$PWD/target}/release/million
CLI=${CARGO_TARGET_DIR:-$PWD/target}/release/reftable
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/home"
# Isolated git: no system or global config, fixed identity and dates.
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null HOME="$WORK/home" LC_ALL=C
export GIT_AUTHOR_NAME="A U Thor" GIT_AUTHOR_EMAIL=author@example.com
export GIT_COMMITTER_NAME="C O Mitter" GIT_COMMITTER_EMAIL=committer@example.com
export GIT_AUTHOR_DATE="1112911993 -0700" GIT_COMMITTER_DATE="1112911993 -0700"
unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE GIT_TEST_DEFAULT_REF_FORMAT || true

measure() { # label command...  (stdin/stdout of the call are the command's)
  local label=$1; shift
  /usr/bin/time -f '%e %U %S %M' -o "$WORK/time" timeout 600 "$@"
  read -r secs user sys kib <"$WORK/time"
  printf '%-52s %8.2f s wall %8.2f s CPU %9.1f MiB\n' "$label" "$secs" \
    "$(echo "$user + $sys" | bc -l)" "$(echo "$kib / 1024" | bc -l)" >&2
}

echo "$("$GIT" --version), $N refs, $(nproc) cores" >&2
"$GIT" init -q --ref-format=reftable "$WORK/repo"
tree=$("$GIT" -C "$WORK/repo" mktree </dev/null)
commit=$("$GIT" -C "$WORK/repo" commit-tree "$tree" -m base)
awk -v n="$N" -v c="$commit" 'BEGIN { for (i = 0; i < n; i++) printf "create refs/heads/branch-%07d %s\n", i, c }' >"$WORK/input"
awk -v n="$N" -v k="$K" 'BEGIN { x = 12345; for (i = 0; i < k; i++) { x = (x * 1103515245 + 12345) % 2147483648; printf "refs/heads/branch-%07d\n", x % n } }' >"$WORK/names"

GIT_TEST_REFTABLE_AUTOCOMPACTION=false measure "git update-ref --stdin (create $N)" \
  "$GIT" -C "$WORK/repo" update-ref --stdin <"$WORK/input"
measure "git for-each-ref (iterate $N)" "$GIT" -C "$WORK/repo" for-each-ref >"$WORK/git.out"
measure "git cat-file --batch-check ($K lookups)" \
  "$GIT" -C "$WORK/repo" cat-file --batch-check='%(objectname)' <"$WORK/names" >/dev/null
measure "ours: million write (create $N)" "$OURS" write "$WORK/ours" "$N" "$commit"
measure "ours: million iterate (iterate $N)" "$OURS" iterate "$WORK/ours" >"$WORK/ours.out"
measure "ours: million seek ($K lookups)" "$OURS" seek "$WORK/ours" "$K" "$N" >"$WORK/seek.out"
cat "$WORK/seek.out" >&2
echo "git table(s): $(ls "$WORK/repo/.git/reftable" | grep -c ref) of $(du -sh "$WORK/repo/.git/reftable" | cut -f1); ours: $(du -sh "$WORK/ours" | cut -f1)" >&2
# Same refs listed the same way?
if cmp -s <(grep -v ' refs/heads/main$' "$WORK/git.out") "$WORK/ours.out"; then
  echo "for-each-ref output identical: yes" >&2
else
  echo "for-each-ref output identical: NO" >&2
  diff <(head -3 "$WORK/git.out") <(head -3 "$WORK/ours.out") >&2 || true
fi
measure "ours: million transaction (create $N via RefDb)" "$OURS" transaction "$WORK/ours-tx" "$N" "$commit"
measure "git for-each-ref --no-sort (refname objectname)" \
  "$GIT" -C "$WORK/repo" for-each-ref --no-sort --format='%(refname) %(objectname)' >"$WORK/git-nosort.out"
measure "ours: reftable refs" "$CLI" refs "$WORK/repo" >"$WORK/cli.out"
# The CLI lists HEAD too (for-each-ref needs --include-root-refs for it).
if cmp -s <(grep -v '^HEAD ' "$WORK/cli.out" | sort) <(sort "$WORK/git-nosort.out"); then
  echo "reftable refs output identical to for-each-ref --no-sort: yes" >&2
else
  echo "reftable refs output identical to for-each-ref --no-sort: NO" >&2
fi
