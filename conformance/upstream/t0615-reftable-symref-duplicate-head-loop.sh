#!/bin/sh

test_description='reftable: HEAD updated twice through its own symref loop

With HEAD a symref to itself and another symref pointing at HEAD, an update
through that symref reaches HEAD twice: once split off from the symref, once
more through HEAD'"'"'s referent. The transaction must be refused for the two
updates of HEAD. When another update in it names a ref sorting after HEAD,
the second update of HEAD is not found in the transaction'"'"'s list of names,
and git goes on to read HEAD, whose loop it reports as an error reading the
reference instead.'

GIT_TEST_DEFAULT_REF_FORMAT=reftable
export GIT_TEST_DEFAULT_REF_FORMAT

. ./test-lib.sh

test_expect_success 'setup' '
	test_commit one &&
	git rev-parse HEAD >commit &&
	git symbolic-ref refs/remotes/origin/main HEAD &&
	echo "symref-update HEAD HEAD" | git update-ref --no-deref --stdin &&
	test_must_fail git symbolic-ref HEAD
'

test_expect_success 'alone, the update through the loop is refused as a duplicate' '
	echo "symref-create refs/remotes/origin/main refs/heads/topic" >input &&
	test_must_fail git update-ref --stdin <input 2>err &&
	test_grep "multiple updates for ${SQ}HEAD${SQ}" err
'

test_expect_failure 'beside a later name, it is still refused as a duplicate' '
	cat >input <<-EOF &&
	symref-create refs/remotes/origin/main refs/heads/topic
	create refs/notes/commits $(cat commit)
	EOF
	test_must_fail git update-ref --stdin <input 2>err &&
	test_grep "multiple updates for ${SQ}HEAD${SQ}" err
'

test_done
