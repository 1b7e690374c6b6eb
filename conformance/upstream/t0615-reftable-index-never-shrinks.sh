#!/bin/sh

test_description='reftable: an index whose records do not fit two to a block

When a section spans more than three blocks, the writer adds index levels
until the topmost has at most three blocks. Each level indexes the blocks
of the one below, so it is smaller only when its blocks hold more than one
record each. With names longer than half a block (and, here, no prefix
compression between them), every index block holds a single record, each
level is as large as the last, and the writer never stops: update-ref fills
the disk. It should refuse the table as one it cannot index, as it refuses
a record too large for its block.'

GIT_TEST_DEFAULT_REF_FORMAT=reftable
export GIT_TEST_DEFAULT_REF_FORMAT

. ./test-lib.sh

# Each case writes into a repository of its own: a write killed by the file
# size limit leaves tables.list.lock behind.
test_expect_success 'setup: four names longer than half a block' '
	test_commit A &&
	git init small &&
	git -C small config reftable.blockSize 300 &&
	git -C small config reftable.restartInterval 1 &&
	git init default &&
	oid=$(git rev-parse HEAD) &&
	git -C small fetch .. HEAD &&
	git -C default fetch .. HEAD &&
	long=$(printf "%150s" "" | tr " " l) &&
	for i in 1 2 3 4
	do
		echo "create refs/heads/$i$long $oid" || return 1
	done >small.in &&
	long=$(printf "%2100s" "" | tr " " l) &&
	for i in 1 2 3 4
	do
		echo "create refs/heads/$i$long $oid" || return 1
	done >default.in
'

test_expect_failure 'a table of them with 300-byte blocks is refused, not written forever' '
	# 8192 blocks (4 or 8 MiB, as the shell counts them) end the
	# endless write: SIGXFSZ, which test_must_fail counts as a failure.
	(
		ulimit -f 8192 &&
		test_must_fail git -C small update-ref --stdin <small.in
	)
'

test_expect_failure 'a table of them with the default block size is refused, not written forever' '
	(
		ulimit -f 8192 &&
		test_must_fail git -C default update-ref --stdin <default.in
	)
'

test_done
