#!/bin/sh
# git 2.45 to master (reftable): `git update-ref main-worktree/refs/bisect/x` in a linked
# worktree exits 0 and writes a ref no read can find: the record's name in the main stack is
# the prefixed name itself, "main-worktree/refs/bisect/x".
#
# Reads resolve "main-worktree/" and "worktrees/<id>/" names to the other worktree's store and
# the name inside it (refs.c parse_worktree_ref). The reftable backend picks the right stack
# for such a name (refs/reftable-backend.c backend_for), but writes the record under the name
# the caller gave (write_transaction_table uses the update's refname as is), so the ref the
# command reported written is neither refs/bisect/x of the main worktree nor readable under
# the prefixed name. The files backend writes .git/refs/bisect/x. Found by reftable-rs while
# adding linked worktrees to its library (which refuses such writes).
#
# Usage: sh reproduce.sh [GIT]    Exit 1 when the defect shows, 0 when it does not.
set -u
GIT=${1:-git}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export HOME="$scratch" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null LC_ALL=C
export GIT_AUTHOR_NAME=A GIT_AUTHOR_EMAIL=a@example.com GIT_COMMITTER_NAME=C GIT_COMMITTER_EMAIL=c@example.com
"$GIT" version
"$GIT" init -q --ref-format=reftable -b main "$scratch/main" && cd "$scratch/main" || exit 2
"$GIT" commit -q --allow-empty -m first || exit 2
"$GIT" worktree add -q "$scratch/linked" -b linked 2>/dev/null || exit 2
cd "$scratch/linked" || exit 2
"$GIT" update-ref main-worktree/refs/bisect/x HEAD
echo "update-ref exit $?"
if "$GIT" rev-parse -q --verify main-worktree/refs/bisect/x >/dev/null &&
   (cd "$scratch/main" && "$GIT" rev-parse -q --verify refs/bisect/x >/dev/null); then
  echo "ok: the main worktree has refs/bisect/x"
  exit 0
fi
echo "DEFECT: update-ref succeeded, but neither main-worktree/refs/bisect/x nor the main worktree's refs/bisect/x can be read"
exit 1
