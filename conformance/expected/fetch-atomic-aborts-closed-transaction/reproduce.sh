#!/bin/sh
# reftable-rs conformance case seed29500004-case0-min (git 2.47.3)
#
# Runs the operations of a reftable-rs conformance case with git alone and prints
# each command's exit status and the refs after it.
# Usage: sh reproduce.sh [GIT]   (default: git on PATH)
# Exit 1 while git crashes or hangs where the gate saw it, 0 when it does not, 2 when
# the case cannot be set up or git alone cannot judge the answers (the gate's model does).
#
# What the gate saw:
#   step 0: fetch --atomic txn [update refs/heads/llllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllll 02d0f99f4a253c27d87b0e6c2e4ab5ddc2686bd5]
#     GitCrashed (git crashed): signal 6: From .
#      * [new ref]         02d0f99f4a253c27d87b0e6c2e4ab5ddc2686bd5 -> llllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllll
#     error: reftable: transaction failure: entry too large
#     BUG: refs.c:2278: abort called on a closed reference transaction
#
# Options: sha1 object format, reftable.blockSize=300, reftable.restartInterval=3, reftable.indexObjects=true, core.logAllRefUpdates=true, auto-compaction on.
set -u
GIT=${1:-git}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export HOME="$scratch" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null LC_ALL=C TZ=UTC
export GIT_AUTHOR_NAME='A U Thor' GIT_AUTHOR_EMAIL=author@example.com GIT_COMMITTER_NAME='C O Mitter' GIT_COMMITTER_EMAIL=committer@example.com
at() { tz=-0700; [ $(( $1 % 3 )) -eq 2 ] && tz=+0530; export GIT_AUTHOR_DATE="$(( 1112911993 + 60 * $1 )) $tz" GIT_COMMITTER_DATE="$(( 1112911993 + 60 * $1 )) $tz"; }
state() {
  "$GIT" for-each-ref --include-root-refs --format='%(refname) %(objectname) %(*objectname) %(symref)' 2>/dev/null ||
    "$GIT" for-each-ref --format='%(refname) %(objectname) %(*objectname) %(symref)'
}
"$GIT" version || { echo "cannot run $GIT"; exit 2; }
crashed= hung=
if command -v timeout >/dev/null; then t="timeout 60"; else t=; fi
"$GIT" init -q --ref-format=reftable --object-format=sha1 -b main "$scratch/repo" && cd "$scratch/repo" || exit 2
"$GIT" config reftable.blockSize 300 || exit 2
"$GIT" config reftable.restartInterval 3 || exit 2
"$GIT" config reftable.indexObjects true || exit 2
"$GIT" config core.logAllRefUpdates true || exit 2
at 0
tree=$("$GIT" mktree </dev/null)
c0=$(printf 'commit 0\n' | "$GIT" commit-tree "$tree")
[ "$c0" = f7a92a17ea093fd18c58c017dd76effb4b8c66ee ] || echo "warning: commit 0 is $c0, not the gate's f7a92a17ea093fd18c58c017dd76effb4b8c66ee"
c1=$(printf 'commit 1\n' | "$GIT" commit-tree "$tree" -p "$c0")
[ "$c1" = 02d0f99f4a253c27d87b0e6c2e4ab5ddc2686bd5 ] || echo "warning: commit 1 is $c1, not the gate's 02d0f99f4a253c27d87b0e6c2e4ab5ddc2686bd5"
c2=$(printf 'commit 2\n' | "$GIT" commit-tree "$tree" -p "$c1")
[ "$c2" = 075ce700ca64935ec5f32bf97af9851629a8c5d4 ] || echo "warning: commit 2 is $c2, not the gate's 075ce700ca64935ec5f32bf97af9851629a8c5d4"
c3=$(printf 'commit 3\n' | "$GIT" commit-tree "$tree" -p "$c2")
[ "$c3" = 074f1795aa3bc126b431cb795d79296c4a259b0b ] || echo "warning: commit 3 is $c3, not the gate's 074f1795aa3bc126b431cb795d79296c4a259b0b"
c4=$(printf 'commit 4\n' | "$GIT" commit-tree "$tree" -p "$c3")
[ "$c4" = b0387344c8e4c617c2dc64df807f62e7309d9a48 ] || echo "warning: commit 4 is $c4, not the gate's b0387344c8e4c617c2dc64df807f62e7309d9a48"
c5=$(printf 'commit 5\n' | "$GIT" commit-tree "$tree" -p "$c4")
[ "$c5" = 5be736bb583d9678417bce9b80006e8f2400e59a ] || echo "warning: commit 5 is $c5, not the gate's 5be736bb583d9678417bce9b80006e8f2400e59a"
t0=$(printf 'object %s\ntype commit\ntag tag0\ntagger C O Mitter <committer@example.com> 1112911993 -0700\n\nannotated 0\n' "$c1" | "$GIT" mktag)
[ "$t0" = 8d10589e8c2f564e40b439afeb44c4eaae1e87a3 ] || echo "warning: tag 0 is $t0, not the gate's 8d10589e8c2f564e40b439afeb44c4eaae1e87a3"
t1=$(printf 'object %s\ntype commit\ntag tag1\ntagger C O Mitter <committer@example.com> 1112911993 -0700\n\nannotated 1\n' "$c4" | "$GIT" mktag)
[ "$t1" = 8b8ab1a0089fa4dbe7ab98a714f76311c13401ac ] || echo "warning: tag 1 is $t1, not the gate's 8b8ab1a0089fa4dbe7ab98a714f76311c13401ac"

echo '== step 0: fetch --atomic txn [update refs/heads/llllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllll 02d0f99f4a253c27d87b0e6c2e4ab5ddc2686bd5]'
at 1
$t "$GIT" fetch --atomic --no-tags --no-write-fetch-head --no-auto-maintenance . '+02d0f99f4a253c27d87b0e6c2e4ab5ddc2686bd5:refs/heads/llllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllll'
status=$?
echo "exit $status"
[ $status -gt 128 ] && [ $status -lt 193 ] && crashed=${crashed:-0}
[ $status -eq 124 ] && hung=${hung:-0}
state

if [ -n "$crashed" ]; then
  echo "DEFECT: git died of a signal at step $crashed"
  exit 1
fi
echo 'ok: git neither crashed nor hung'
exit 0
