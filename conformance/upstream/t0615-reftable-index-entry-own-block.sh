#!/bin/sh

test_description='reftable: an index entry that points at its own index block

A seek walks down the index levels by following each index entry to the
block at its offset, until it reaches a block of records. Nothing checks
that the offset leads below the index block the entry is in: when a damaged
entry points at its own block, every step of the seek starts over at that
block and the lookup never ends (git show-ref --verify, for-each-ref and
reflog show spin at full CPU). The seek should fail as corrupt instead.'

GIT_TEST_DEFAULT_REF_FORMAT=reftable
export GIT_TEST_DEFAULT_REF_FORMAT

. ./test-lib.sh

# Print the big-endian unsigned number of $3 bytes at offset $2 of file $1.
be_uint () {
	od -An -v -tu1 -j "$2" -N "$3" "$1" |
	awk '{ for (i = 1; i <= NF; i++) n = n * 256 + $i } END { print n }'
}

test_expect_success 'setup: one table of several ref blocks with an index' '
	git config reftable.blockSize 256 &&
	git config reftable.indexObjects false &&
	test_commit A &&
	for i in $(test_seq 60)
	do
		printf "create refs/heads/branch-%03d HEAD\n" $i || return 1
	done >in &&
	git update-ref --stdin <in &&
	git pack-refs &&
	test_line_count = 1 .git/reftable/tables.list &&
	git for-each-ref --format="%(refname)" refs/heads/ >names
'

test_expect_success 'setup: point the index entry of the second block at the index' '
	table=.git/reftable/$(cat .git/reftable/tables.list) &&
	size=$(wc -c <"$table") &&
	# The footer repeats the header (24 bytes, 28 in version 2) and then
	# gives the offset of the ref index.
	version=$(be_uint "$table" 4 1) &&
	if test "$version" = 1
	then
		footer=$((size - 68)) header=24
	else
		footer=$((size - 72)) header=28
	fi &&
	index=$(be_uint "$table" $((footer + header)) 8) &&
	test "$index" -ge 1024 &&
	test "$index" -lt 16384 &&
	# The entry of the block at offset 256 holds that offset as a
	# two-byte varint, 0x81 0x00; names are ASCII, so the first 0x81 in
	# the index block is that value.
	at=$(od -An -v -tx1 -j "$index" -N 256 "$table" |
		tr -s " " "\n" | grep -v "^\$" |
		awk "\$1 == \"81\" { print NR - 1; exit }") &&
	test -n "$at" &&
	hi=$(( ((index >> 7) - 1) | 128 )) &&
	lo=$((index & 127)) &&
	printf "\\$(printf %03o $hi)\\$(printf %03o $lo)" >varint &&
	dd if=varint of="$table" bs=1 seek=$((index + at)) conv=notrunc
'

test_expect_failure 'a lookup through that entry fails instead of spinning' '
	# A CPU time limit stops the endless seek (SIGXCPU), which
	# test_must_fail counts as a failure, not as the expected error.
	(
		ulimit -t 3 &&
		test_must_fail git show-ref --verify $(cat names)
	)
'

test_done
