#!/bin/sh
# git syncs a new reftable before writing its footer, then renames it into place and commits
# tables.list without syncing it again: after a power loss tables.list can name a table whose
# footer never reached the disk, and the stack no longer loads. Shown with strace on one
# `git -c core.fsync=reference update-ref`: the new table's last write comes after its last
# fsync. Exit 1 when the defect shows, 0 when it does not, 2 when it cannot run.
#
#   sh reproduce.sh [GIT]
set -u
GIT=${1:-git}
command -v strace >/dev/null || { echo "needs strace" >&2; exit 2; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir" || exit 2
"$GIT" init -q --ref-format=reftable repo || exit 2
cd repo || exit 2
"$GIT" -c user.name=A -c user.email=a@example.com commit -q --allow-empty -m one || exit 2
strace -f -qq -y -e trace=write,fsync,fdatasync,rename -o "$dir/trace" \
  "$GIT" -c core.fsync=reference update-ref refs/heads/x HEAD || exit 2
# The calls on the new table (its temporary name), in order.
calls=$(grep '\.temp\.' "$dir/trace" | sed -n 's/^[0-9]* *\([a-z0-9]*\)(.*/\1/p' | tr '\n' ' ')
echo "calls on the new table: $calls"
case "$calls" in
*fsync\ write\ rename*|*fdatasync\ write\ rename*)
  echo "DEFECT: the table's footer is written after its last fsync, and it is renamed unsynced"
  exit 1 ;;
esac
echo "the table is synced after its last write"
exit 0
