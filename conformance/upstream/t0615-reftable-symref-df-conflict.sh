#!/bin/sh

test_description='reftable: a file and a directory of each other reached through symrefs

One transaction must not leave refs that are a file and a directory of each
other, nor delete one while it creates the other. Named directly, deleting
refs/heads/b and creating refs/heads/b/c/d are refused together. Reached through
symrefs, the names the updates are split into are appended to the
transaction'"'"'s list of names after it was sorted, the directory/file check does
not see the pair, and the transaction is committed.'

GIT_TEST_DEFAULT_REF_FORMAT=reftable
export GIT_TEST_DEFAULT_REF_FORMAT

. ./test-lib.sh

test_expect_success 'setup' '
	git symbolic-ref refs/heads/topic refs/heads/b &&
	git symbolic-ref refs/heads/x refs/heads/topic &&
	git symbolic-ref refs/heads/a.b refs/heads/b/c/d &&
	tree=$(git mktree </dev/null) &&
	echo one | git commit-tree $tree >commit
'

test_expect_success 'the two updates named directly are refused' '
	cat >input <<-EOF &&
	delete refs/heads/b
	create refs/heads/b/c/d $(cat commit)
	EOF
	test_must_fail git update-ref --stdin <input 2>err &&
	test_grep "cannot process" err
'

test_expect_failure 'the same two updates through symrefs are refused' '
	cat >input <<-EOF &&
	delete refs/heads/x
	create refs/heads/a.b $(cat commit)
	EOF
	test_must_fail git update-ref --stdin <input 2>err &&
	test_grep "cannot process" err &&
	test_must_fail git rev-parse --verify -q refs/heads/b/c/d
'

test_done
