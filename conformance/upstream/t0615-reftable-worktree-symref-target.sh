#!/bin/sh

test_description='reftable: for-each-ref in a worktree names each symref'"'"'s own target

In a linked worktree, for-each-ref merges the worktree'"'"'s stack with the
common one. The reftable iterator resolves a symref with
refs_resolve_ref_unsafe(), whose answer lives in a static buffer, and keeps a
pointer to it as the ref'"'"'s target. While the merge holds the worktree'"'"'s
ORIG_HEAD, it advances the common iterator, which resolves the next symref
into the same buffer: ORIG_HEAD is then listed with that symref'"'"'s target.'

GIT_TEST_DEFAULT_REF_FORMAT=reftable
export GIT_TEST_DEFAULT_REF_FORMAT

. ./test-lib.sh

test_expect_success 'setup: ORIG_HEAD in both stacks, a symref after it in the common one' '
	test_commit A &&
	git worktree add --detach wt HEAD &&
	git update-ref ORIG_HEAD HEAD &&
	git symbolic-ref refs/heads/alias refs/heads/elsewhere &&
	git -C wt update-ref refs/bisect/bad HEAD &&
	git -C wt symbolic-ref ORIG_HEAD refs/bisect/bad &&
	echo refs/bisect/bad >expect &&
	git -C wt symbolic-ref ORIG_HEAD >actual &&
	test_cmp expect actual
'

test_expect_failure 'for-each-ref in the worktree names the target of its ORIG_HEAD' '
	echo "ORIG_HEAD refs/bisect/bad" >expect &&
	git -C wt for-each-ref --include-root-refs \
		--format="%(refname) %(symref)" >out &&
	grep "^ORIG_HEAD " out >actual &&
	test_cmp expect actual
'

test_done
