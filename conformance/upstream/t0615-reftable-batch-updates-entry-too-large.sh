#!/bin/sh

test_description='reftable: a batched update too large for a block

With --batch-updates an update that cannot be made is rejected and reported,
and the others are committed. A record too large for the table'"'"'s block
size is found only when the table is written, after every update passed its
checks, and that error fails the whole transaction: update-ref dies and
writes none of the batch.'

GIT_TEST_DEFAULT_REF_FORMAT=reftable
export GIT_TEST_DEFAULT_REF_FORMAT

. ./test-lib.sh

test_expect_success 'setup' '
	git config reftable.blockSize 300 &&
	test_commit A
'

test_expect_success 'the same update alone is refused as too large' '
	long=refs/heads/$(printf "%0400d" 0 | tr 0 l) &&
	test_must_fail git update-ref "$long" A 2>err &&
	test_grep "entry too large" err
'

test_expect_failure 'an update too large for a block is rejected alone in a batch' '
	long=refs/heads/$(printf "%0400d" 0 | tr 0 l) &&
	cat >input <<-EOF &&
	create $long $(git rev-parse A)
	create refs/heads/fits $(git rev-parse A)
	EOF
	git update-ref --stdin --batch-updates <input >out &&
	test_cmp_rev A refs/heads/fits &&
	test_must_fail git rev-parse --verify "$long"
'

test_done
