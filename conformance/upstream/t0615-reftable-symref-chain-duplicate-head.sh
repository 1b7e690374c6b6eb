#!/bin/sh

test_description='reftable: HEAD reached twice through symrefs in one transaction

A transaction must not update one ref twice, also when the two updates reach
it through different symrefs. Here one update goes through a chain of symrefs
that ends in HEAD and another through a second symref to the branch HEAD
points at. The backend appends the names it adds while splitting symref
updates to the transaction'"'"'s list of names, which is searched as a sorted
list afterwards: the check for a second update of HEAD misses it and the
transaction is committed.'

GIT_TEST_DEFAULT_REF_FORMAT=reftable
export GIT_TEST_DEFAULT_REF_FORMAT

. ./test-lib.sh

test_expect_success 'setup' '
	git symbolic-ref HEAD refs/heads/main &&
	git symbolic-ref refs/tags/v1 refs/heads/b &&
	git symbolic-ref ORIG_HEAD refs/heads/main &&
	echo "symref-update refs/tags/v1 HEAD" | git update-ref --stdin
'

test_expect_failure 'two updates that reach HEAD are refused' '
	cat >input <<-\EOF &&
	symref-create refs/tags/v1 refs/custom/x
	verify ORIG_HEAD
	EOF
	test_must_fail git update-ref --stdin <input 2>err &&
	test_grep "multiple updates for" err &&
	test "$(git symbolic-ref HEAD)" = refs/heads/main
'

test_done
