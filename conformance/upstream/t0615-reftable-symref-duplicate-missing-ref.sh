#!/bin/sh

test_description='reftable: a missing branch deleted and created through two symrefs

One transaction must not update a ref twice, also when both updates reach it
through symrefs. Here the branch does not exist yet: one update deletes it
through a symref, another creates it through a second symref, and a third
update of a name sorting after the branch comes first. The names added while
splitting symref updates are appended to the transaction'"'"'s list of names,
which is then searched as a sorted list, so the second update of the branch
is not found; the deletion of a missing ref writes no record, and the
transaction is committed.'

GIT_TEST_DEFAULT_REF_FORMAT=reftable
export GIT_TEST_DEFAULT_REF_FORMAT

. ./test-lib.sh

test_expect_success 'setup' '
	git symbolic-ref refs/heads/a0 refs/heads/main &&
	git symbolic-ref refs/custom/x refs/heads/main &&
	tree=$(git mktree </dev/null) &&
	echo one | git commit-tree $tree >commit
'

test_expect_failure 'deleting and creating one branch through two symrefs is refused' '
	cat >input <<-EOF &&
	delete refs/heads/zz
	delete refs/heads/a0
	update refs/custom/x $(cat commit)
	EOF
	test_must_fail git update-ref --stdin <input 2>err &&
	test_grep "multiple updates for" err &&
	test_must_fail git rev-parse --verify -q refs/heads/main
'

test_done
