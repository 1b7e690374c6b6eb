#!/bin/sh

test_description='reftable: a failed auto-compaction does not fail a committed update

Once tables.list names the new table, the update is committed. When the
auto-compaction that follows fails, update-ref still exits with an error
("update_ref failed ... transaction failure") although the ref was written:
reftable_addition_commit() returns the compaction error after the commit.
The compaction is made to fail by a file size limit that the small new
table fits in and the compacted table does not.'

GIT_TEST_DEFAULT_REF_FORMAT=reftable
export GIT_TEST_DEFAULT_REF_FORMAT

. ./test-lib.sh

test_expect_success 'setup: three tables of about 8 KiB each' '
	test_commit A &&
	git pack-refs &&
	for t in 1 2 3
	do
		for i in $(test_seq 200)
		do
			printf "create refs/heads/table-%d/branch-with-a-rather-long-name-%03d HEAD\n" $t $i ||
			return 1
		done >in &&
		GIT_TEST_REFTABLE_AUTOCOMPACTION=false git update-ref --stdin <in ||
		return 1
	done &&
	test_line_count = 4 .git/reftable/tables.list
'

test_expect_failure 'update-ref succeeds when the compaction after its commit fails' '
	# 16 blocks (8 or 16 KiB, as the shell counts them): the new table
	# fits, the compacted one (the three 8 KiB tables merged) does not.
	# SIGXFSZ is ignored so that the write fails with EFBIG instead of
	# killing git.
	(
		trap "" XFSZ &&
		ulimit -f 16 &&
		git update-ref refs/heads/new HEAD
	) &&
	git rev-parse --verify refs/heads/new
'

test_expect_success 'the update is in the stack either way' '
	git rev-parse --verify refs/heads/new &&
	git for-each-ref refs/heads/table-1/ >out &&
	test_line_count = 200 out
'

test_done
