#!/bin/sh

test_description='reftable: one missing branch written twice through symrefs, oversized log

A transaction that reaches one ref twice through two symrefs must be refused,
whatever else goes wrong with it. Here the branch is unborn, one update
creates it through a symref and another deletes it through a second one, and
the reflog message is longer than a table block can hold. The second update
of the branch is missed when the transaction is prepared, and writing the
table fails in a way the backend asserts cannot happen: git aborts.'

GIT_TEST_DEFAULT_REF_FORMAT=reftable
export GIT_TEST_DEFAULT_REF_FORMAT

. ./test-lib.sh

test_expect_success 'setup' '
	git config core.logAllRefUpdates always &&
	git config reftable.blockSize 1024 &&
	git symbolic-ref refs/custom/x refs/heads/main &&
	git symbolic-ref refs/notes/commits refs/heads/main &&
	tree=$(git mktree </dev/null) &&
	echo one | git commit-tree $tree >commit &&
	printf "%3000s" "" | tr " " m >message
'

test_expect_failure 'two updates of one branch through symrefs are refused, not fatal' '
	cat >input <<-EOF &&
	update refs/notes/commits $(cat commit)
	delete refs/custom/x
	EOF
	test_must_fail git update-ref -m "$(cat message)" --stdin <input 2>err &&
	test_grep "multiple updates for" err
'

test_done
