#!/bin/sh

test_description='for-each-ref: dereferencing a ref to a missing object

A format that asks what a ref peels to, such as %(*objectname), makes
for-each-ref read the object of every ref. When a ref names an object the
repository does not have, git must stop with "missing object" instead of
crashing, also after it has read the objects of refs listed before it.'

. ./test-lib.sh

test_expect_success 'setup: a ref to a missing object, listed after others' '
	test_commit A &&
	missing=$(echo gone | git hash-object -w --stdin) &&
	git update-ref refs/tags/missing $missing &&
	rm .git/objects/$(test_oid_to_path $missing) &&
	test_must_fail git cat-file -e $missing
'

test_expect_failure 'for-each-ref %(*objectname) refuses the missing object' '
	test_expect_code 128 git for-each-ref --format="%(*objectname)" 2>err &&
	test_grep "missing object $missing for refs/tags/missing" err
'

test_done
