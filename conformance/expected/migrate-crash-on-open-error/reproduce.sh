#!/bin/sh
# (The repository's .git is kept as git-dir/, so that it is not taken for a repository of its own.)
# Git crash before-commit refs-migrate-to-reftable, seed1-case0: openat:error=EIO:when=55 on new git dir (openat(AT_FDCWD</dev/shm/reftable-conformance-nIXEfc/faults/seed1-case0/migrate/to-reftable/trial-98/repo>, "/dev/shm/reftable-conformance-nIXEfc/faults/seed1-case0/migrate/to-reftable/trial-98/repo/.git/ref_migration.qZGQyt/reftable/tables.list", O_RDONLY) = -1 EIO (Input/output error) (INJECTED)): signal 6: BUG: refs.c:2403: error while iterating over references; format files, 11 refs, left ref_migration.qZGQyt
#
# git's command on a copy of repo/ with strace failing one system call (openat:error=EIO:when=55).
#   sh reproduce.sh [GIT]    Exit 1 when git refs migrate dies of a signal (the defect), 0 when
#   it does not, 2 when it cannot run (no strace, no `git refs migrate`).
GIT=${1:-git}
command -v strace >/dev/null || { echo "needs strace"; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/repo" && cp -R "$here/git-dir" "$work/repo/.git" || exit 2
cd "$work/repo" || exit 2
GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null "$GIT" refs migrate -h >/dev/null 2>&1
[ $? -eq 129 ] || { echo "cannot run: $GIT has no refs migrate (git 2.46 and later)"; exit 2; }
env -i PATH="$PATH" HOME="$work" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null \
  GIT_AUTHOR_NAME='A U Thor' GIT_AUTHOR_EMAIL=author@example.com GIT_AUTHOR_DATE='1113511993 -0700' \
  GIT_COMMITTER_NAME='C O Mitter' GIT_COMMITTER_EMAIL='committer@example.com' GIT_COMMITTER_DATE='1113511993 -0700' LC_ALL=C TZ=UTC \
  strace -f -qq -y -o "$work/trace" -e trace=openat,write,pwrite64,fsync,fdatasync,close,rename,renameat,renameat2,unlink,unlinkat,mkdir,rmdir -e inject=openat:error=EIO:when=55 "$GIT" 'refs' 'migrate' '--ref-format=reftable' <"$here/stdin"
status=$?
echo "exit status $status"
grep -E 'INJECTED|EFBIG' "$work/trace"
env -i PATH="$PATH" HOME="$work" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null \
  GIT_AUTHOR_NAME='A U Thor' GIT_AUTHOR_EMAIL=author@example.com GIT_AUTHOR_DATE='1113511993 -0700' \
  GIT_COMMITTER_NAME='C O Mitter' GIT_COMMITTER_EMAIL='committer@example.com' GIT_COMMITTER_DATE='1113511993 -0700' LC_ALL=C TZ=UTC "$GIT" for-each-ref
echo "for-each-ref: exit status $?"
ls .git/reftable
if [ $status -gt 128 ] && [ $status -lt 193 ]; then
  echo "DEFECT: git refs migrate died of signal $((status - 128)) after a failed open"
  exit 1
fi
echo "ok: git refs migrate did not die of a signal"
exit 0
