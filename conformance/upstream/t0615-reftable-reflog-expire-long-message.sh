#!/bin/sh

test_description='reftable: reflog expire keeps an entry git wrote itself

When a reflog message does not fit, the reftable backend cuts it to half the
block size before writing the entry. reflog expire then rewrites the entries
it keeps into a table of log records only, whose first block also carries
the file header; an entry that fitted when it was written can be too big
there, and git reflog expire fails with REFTABLE_ENTRY_TOO_BIG_ERROR
(exit 245) on a reflog git itself wrote.'

GIT_TEST_DEFAULT_REF_FORMAT=reftable
export GIT_TEST_DEFAULT_REF_FORMAT

. ./test-lib.sh

# The block size at which the entry below fits when it is written but not
# when reflog expire rewrites it.
test_oid_cache <<\EOF
blocksize sha1:256
blocksize sha256:300
EOF

test_expect_success 'setup: a reflog entry with a message cut to fit' '
	git config reftable.blockSize $(test_oid blocksize) &&
	test_commit A &&
	msg=$(test_seq 1000 | tr -d "\\n") &&
	git update-ref -m "$msg" refs/heads/long HEAD &&
	git reflog show --format=%gs refs/heads/long >out &&
	test_line_count = 1 out
'

test_expect_failure 'reflog expire keeps that entry' '
	git reflog expire --all --expire=never --expire-unreachable=never &&
	git reflog show --format=%gs refs/heads/long >actual &&
	test_cmp out actual
'

test_done
