#!/bin/sh

test_description='reftable: commands on a damaged log block release what they read

Each test below damages the log block of a table and runs a command that
reads it. An ordinary build passes them. On a build with SANITIZE=leak (the
leak-checking CI job) each fails today, as LeakSanitizer reports what the
command did not release:

 - a log record whose value type is neither a deletion nor an update is
   decoded as an update, and releasing it frees neither the name, the email
   nor the message decoding allocated;

 - a linear seek that reads the first key of the next log block and fails
   does not release that block, whose inflated copy then leaks;

 - a compaction that fails on the logs after it wrote the refs frees its
   writer without the object index the writer built for those refs.'

GIT_TEST_DEFAULT_REF_FORMAT=reftable
export GIT_TEST_DEFAULT_REF_FORMAT
GIT_TEST_REFTABLE_AUTOCOMPACTION=false
export GIT_TEST_REFTABLE_AUTOCOMPACTION

. ./test-lib.sh

# The newest table of the stack in the repository $1.
newest_table () {
	echo "$1/.git/reftable/$(tail -n 1 "$1/.git/reftable/tables.list")"
}

# The offset of the log section of table $1, a big-endian 64-bit number
# 20 bytes before its end in the footer of either format version.
log_offset () {
	size=$(wc -c <"$1") &&
	set -- $(od -An -tu1 -j $((size - 20)) -N 8 "$1") &&
	off=0 &&
	for byte
	do
		off=$((off * 256 + byte)) || return 1
	done &&
	echo $off
}

# Rewrite the single log block of table $1 in repository $2 (with footer
# size $3) with the byte at offset $4 of its inflated records set to the
# octal value $5. With a sixth argument "append", keep the block as it was
# and append the damaged copy after it as a second log block.
damage_log_block () {
	table=$1 footer=$2 at=$3 value=$4 how=$5 &&
	size=$(wc -c <"$table") &&
	log=$(log_offset "$table") &&
	test_copy_bytes $((log + 4)) <"$table" >head &&
	dd if="$table" of=header bs=1 skip=$log count=4 2>/dev/null &&
	dd if="$table" of=stream bs=1 skip=$((log + 4)) \
		count=$((size - footer - log - 4)) 2>/dev/null &&
	dd if="$table" of=footer bs=1 skip=$((size - footer)) 2>/dev/null &&
	test-tool zlib inflate <stream >records &&
	cp records damaged &&
	printf "\\$value" | dd of=damaged bs=1 seek=$at conv=notrunc 2>/dev/null &&
	test-tool zlib deflate <damaged >damaged.z &&
	if test "$how" = append
	then
		test-tool zlib deflate <records >records.z &&
		cat head records.z header damaged.z footer >"$table"
	else
		cat head damaged.z footer >"$table"
	fi
}

test_expect_success 'setup' '
	test_oid_cache <<-\EOF &&
	footer sha1:68
	footer sha256:72
	EOF
	git init repo &&
	test_commit -C repo A &&
	git -C repo pack-refs &&
	cp -R repo/.git/reftable reftable.good
'

restore () {
	rm -rf repo/.git/reftable &&
	cp -R reftable.good repo/.git/reftable
}

# The records of a log block start with the first record: its prefix length
# (0), then its suffix length and value type in one varint: the key of HEAD
# is 13 bytes long and an update has type 1, so that byte is 13 << 3 | 1;
# 155 (octal) gives it type 5. Today git decodes such a record as an update.
test_expect_success 'a log record of unknown value type' '
	test_when_finished restore &&
	damage_log_block $(newest_table repo) $(test_oid footer) 1 155 &&
	test_might_fail git -C repo reflog list
'

test_expect_success 'a second log block whose first key does not decode' '
	test_when_finished restore &&
	damage_log_block $(newest_table repo) $(test_oid footer) 0 005 append &&
	test_must_fail git -C repo reflog list
'

test_expect_success 'a compaction that fails on a damaged log record' '
	test_when_finished restore &&
	git -C repo update-ref refs/heads/other HEAD &&
	test_line_count = 2 repo/.git/reftable/tables.list &&
	damage_log_block repo/.git/reftable/$(head -n 1 repo/.git/reftable/tables.list) \
		$(test_oid footer) 0 005 &&
	test_must_fail git -C repo pack-refs &&
	test_line_count = 2 repo/.git/reftable/tables.list
'

test_done
