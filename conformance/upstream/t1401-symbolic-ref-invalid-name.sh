#!/bin/sh

test_description='git symbolic-ref refuses a ref name the format check refuses

check_refname_format() refuses a component ending in ".lock", and git
update-ref refuses such a name. git symbolic-ref checks only its target:
the name reaches the transaction, which applies the full check only to
updates with a new object id, so the symref is written under a name that
for-each-ref then ignores as broken (and, with the files backend, a file
that stands where the lock of refs/heads/a goes).'

. ./test-lib.sh

test_expect_success 'setup' '
	test_commit A &&
	test_must_fail git check-ref-format refs/heads/a.lock
'

test_expect_success 'update-ref refuses the name' '
	test_must_fail git update-ref refs/heads/a.lock HEAD
'

test_expect_failure 'symbolic-ref refuses the name' '
	test_must_fail git symbolic-ref refs/heads/a.lock "$(git symbolic-ref HEAD)" &&
	git for-each-ref >out 2>err &&
	test_must_be_empty err
'

test_done
