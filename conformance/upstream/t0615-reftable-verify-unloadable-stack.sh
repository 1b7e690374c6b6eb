#!/bin/sh

test_description='reftable: refs verify on a stack that does not load

A stack whose tables.list names a table that cannot be opened does not load.
The backend remembers the error and leaves its stack unset; the reads and
writes check that error first, but the consistency check hands the unset
stack to reftable_fsck_check(), so git refs verify dies by SIGSEGV instead
of saying what is broken (since 466a3a1afd, refs/reftable: add fsck check
for checking the table name).'

GIT_TEST_DEFAULT_REF_FORMAT=reftable
export GIT_TEST_DEFAULT_REF_FORMAT

. ./test-lib.sh

test_expect_success 'setup' '
	test_commit A &&
	cp .git/reftable/tables.list tables.list.good
'

test_expect_failure 'refs verify reports a listed table that is missing' '
	test_when_finished "cp tables.list.good .git/reftable/tables.list" &&
	echo 0x000000000009-0x000000000009-00000000.ref >>.git/reftable/tables.list &&
	test_must_fail git refs verify
'

test_expect_failure 'refs verify reports a listed table cut short' '
	table=$(head -n 1 tables.list.good) &&
	cp .git/reftable/$table table.good &&
	test_when_finished "cp table.good .git/reftable/$table" &&
	printf REFT >.git/reftable/$table &&
	test_must_fail git refs verify
'

test_expect_success 'refs verify passes once the stack is whole again' '
	git refs verify
'

test_done
