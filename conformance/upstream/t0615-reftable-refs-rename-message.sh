#!/bin/sh

test_description='reftable: git refs rename says why it failed

When the reftable backend cannot write a rename (here a reflog record that
does not fit reftable.blockSize under the new, longer name), git branch -m
says "branch rename failed"; git refs rename exits 1 without a word, as the
backend returns the library'"'"'s error code and the command prints nothing
for it.'

GIT_TEST_DEFAULT_REF_FORMAT=reftable
export GIT_TEST_DEFAULT_REF_FORMAT

. ./test-lib.sh

test_expect_success 'setup' '
	git config reftable.blockSize 300 &&
	git config core.logAllRefUpdates always &&
	test_commit A &&
	git branch b &&
	git branch -M b b/c/d &&
	long=refs/heads/$(printf "l%.0s" $(test_seq 150)) &&
	echo "$long" >long
'

test_expect_success 'git branch -m says why it failed' '
	test_must_fail git branch -m b/c/d "$(cat long | sed s,refs/heads/,,)" 2>err &&
	test_grep "branch rename failed" err
'

test_expect_failure 'git refs rename says why it failed' '
	test_must_fail git refs rename --message="rename" refs/heads/b/c/d "$(cat long)" 2>err &&
	test -s err
'

test_done
