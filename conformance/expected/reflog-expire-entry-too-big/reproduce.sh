#!/bin/sh
# reftable-rs known git defect reflog-expire-entry-too-big: git reflog expire --all exits 245 on a reflog git wrote (blockSize 300)
#
# Runs the operations of a reftable-rs conformance case with git alone and prints
# each command's exit status and the refs after it.
# Usage: sh reproduce.sh [GIT]   (default: git on PATH)
# Exit 1 when `git reflog expire --all` fails (the defect), 0 when it does not, 2 when the
# case cannot be set up.
#
# What the gate saw:
#   step 1: reflog expire Before(1112912053) refs/heads/b/c/d
#     ExpiryCompaction (git failed): git reflog expire --all --expire=1112912053 +0000 --expire-unreachable=never: Code(245): 
#
# Options: sha256 object format, reftable.blockSize=300, reftable.restartInterval=16, reftable.indexObjects=true, core.logAllRefUpdates=true, auto-compaction off.
set -u
GIT=${1:-git}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export HOME="$scratch" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null LC_ALL=C TZ=UTC
export GIT_AUTHOR_NAME='A U Thor' GIT_AUTHOR_EMAIL=author@example.com GIT_COMMITTER_NAME='C O Mitter' GIT_COMMITTER_EMAIL=committer@example.com
export GIT_TEST_REFTABLE_AUTOCOMPACTION=false
at() { export GIT_AUTHOR_DATE="$(( 1112911993 + 60 * $1 )) -0700" GIT_COMMITTER_DATE="$(( 1112911993 + 60 * $1 )) -0700"; }
state() {
  "$GIT" for-each-ref --include-root-refs --format='%(refname) %(objectname) %(*objectname) %(symref)' 2>/dev/null ||
    "$GIT" for-each-ref --format='%(refname) %(objectname) %(*objectname) %(symref)'
}
"$GIT" version
"$GIT" init -q --ref-format=reftable --object-format=sha256 -b main "$scratch/repo" && cd "$scratch/repo" || exit 2
"$GIT" config reftable.blockSize 300 || exit 2
"$GIT" config reftable.restartInterval 16 || exit 2
"$GIT" config reftable.indexObjects true || exit 2
"$GIT" config core.logAllRefUpdates true || exit 2
at 0
tree=$("$GIT" mktree </dev/null) || exit 2
c0=$(printf 'commit 0\n' | "$GIT" commit-tree "$tree")
[ "$c0" = c7eb4c16e9b0eed8d661683994bcf15128fc623428bbe6f728bf246e52677064 ] || echo "warning: commit 0 is $c0, not the gate's c7eb4c16e9b0eed8d661683994bcf15128fc623428bbe6f728bf246e52677064"
c1=$(printf 'commit 1\n' | "$GIT" commit-tree "$tree" -p "$c0")
[ "$c1" = 08d729bddd7af5cdd34cd885a192cd91772cfb9ecde89040a9ef80ffec123a38 ] || echo "warning: commit 1 is $c1, not the gate's 08d729bddd7af5cdd34cd885a192cd91772cfb9ecde89040a9ef80ffec123a38"
c2=$(printf 'commit 2\n' | "$GIT" commit-tree "$tree" -p "$c1")
[ "$c2" = 262971d46ff1cc540dea9c4fc241a06e6ea3a66139c1b007f2d32698769d280c ] || echo "warning: commit 2 is $c2, not the gate's 262971d46ff1cc540dea9c4fc241a06e6ea3a66139c1b007f2d32698769d280c"
c3=$(printf 'commit 3\n' | "$GIT" commit-tree "$tree" -p "$c2")
[ "$c3" = 85be64387d546f6de628be18f3c2fa78afa8e1cae9f31fc9d60ba4c909b62585 ] || echo "warning: commit 3 is $c3, not the gate's 85be64387d546f6de628be18f3c2fa78afa8e1cae9f31fc9d60ba4c909b62585"
c4=$(printf 'commit 4\n' | "$GIT" commit-tree "$tree" -p "$c3")
[ "$c4" = cd8534b4c057ae975db1f433ea140590a031dc27f221ac49a23fb5ebf2eee13f ] || echo "warning: commit 4 is $c4, not the gate's cd8534b4c057ae975db1f433ea140590a031dc27f221ac49a23fb5ebf2eee13f"
c5=$(printf 'commit 5\n' | "$GIT" commit-tree "$tree" -p "$c4")
[ "$c5" = 3c921d2210ee2d3103f9aaf4e1e0953fdf2d2b0f80560fc3b60428f51a3c2ba7 ] || echo "warning: commit 5 is $c5, not the gate's 3c921d2210ee2d3103f9aaf4e1e0953fdf2d2b0f80560fc3b60428f51a3c2ba7"
t0=$(printf 'object %s\ntype commit\ntag tag0\ntagger C O Mitter <committer@example.com> 1112911993 -0700\n\nannotated 0\n' "$c1" | "$GIT" mktag)
[ "$t0" = 988e363ee6c2fc26033a3a42fe13c8b988c7932a2a3f11cc1c57aa35e2044b99 ] || echo "warning: tag 0 is $t0, not the gate's 988e363ee6c2fc26033a3a42fe13c8b988c7932a2a3f11cc1c57aa35e2044b99"
t1=$(printf 'object %s\ntype commit\ntag tag1\ntagger C O Mitter <committer@example.com> 1112911993 -0700\n\nannotated 1\n' "$c4" | "$GIT" mktag)
[ "$t1" = 39c5d9ad13f10988b61c3ebe0571ee6274eeaceee89657b43f18c6ba30374e82 ] || echo "warning: tag 1 is $t1, not the gate's 39c5d9ad13f10988b61c3ebe0571ee6274eeaceee89657b43f18c6ba30374e82"

echo '== step 0: txn [create refs/heads/main 08d729bddd7af5cdd34cd885a192cd91772cfb9ecde89040a9ef80ffec123a38]'
at 1
"$GIT" update-ref -m 'mmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmm' --stdin <<'REFTABLE_EOF'
start
create refs/heads/main 08d729bddd7af5cdd34cd885a192cd91772cfb9ecde89040a9ef80ffec123a38
prepare
commit
REFTABLE_EOF
status=$?
echo "exit $status"
[ $status -eq 0 ] || { echo "cannot run: the first transaction failed"; exit 2; }
state

echo '== step 1: reflog expire Before(1112912053) refs/heads/b/c/d'
at 1
"$GIT" reflog expire --all --expire='1112912053 +0000' --expire-unreachable=never; status=$?; echo "all exit $status"; "$GIT" log -g --format='%gs' HEAD | awk '{print length($0)}'
echo "exit $?"
state
if [ $status -ne 0 ]; then
  echo "DEFECT: git reflog expire --all failed (exit $status) on a reflog git wrote"
  exit 1
fi
echo "ok: git reflog expire --all succeeded"
exit 0
