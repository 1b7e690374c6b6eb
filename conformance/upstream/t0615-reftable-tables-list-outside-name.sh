#!/bin/sh

test_description='reftable: a tables.list line names a file outside the stack

Each line of tables.list is joined to the stack directory as it is, so a
line like ../../outside/t.ref names a file outside the repository. When that
file holds a valid table, git reads it as part of the stack, and compaction
then deletes it with the tables it merged: git pack-refs removes a file it
does not own. A line that is not a plain file name should be refused.'

GIT_TEST_DEFAULT_REF_FORMAT=reftable
export GIT_TEST_DEFAULT_REF_FORMAT

. ./test-lib.sh

test_expect_success 'setup: a valid table outside the repository' '
	test_commit A &&
	git branch side &&
	git pack-refs &&
	mkdir outside &&
	cp .git/reftable/$(head -n 1 .git/reftable/tables.list) outside/t.ref &&
	cp outside/t.ref t.ref.orig &&
	echo ../../outside/t.ref >>.git/reftable/tables.list
'

test_expect_failure 'pack-refs leaves the file outside the stack alone' '
	test_might_fail git pack-refs &&
	test_path_is_file outside/t.ref &&
	test_cmp_bin t.ref.orig outside/t.ref
'

test_done
