#!/bin/sh

test_description='reftable: writing a ref of another worktree by its prefixed name

From a linked worktree, main-worktree/refs/bisect/x names the main worktree'"'"'s
refs/bisect/x: reading it does, and update-ref reports it written. The
reftable backend writes the record in the main worktree'"'"'s stack but under
the prefixed name as given, so no read finds it.'

GIT_TEST_DEFAULT_REF_FORMAT=reftable
export GIT_TEST_DEFAULT_REF_FORMAT

. ./test-lib.sh

test_expect_success 'setup: a linked worktree' '
	test_commit A &&
	git worktree add linked
'

test_expect_failure 'update-ref of main-worktree/refs/bisect/x from a linked worktree' '
	git -C linked update-ref main-worktree/refs/bisect/x HEAD &&
	git rev-parse HEAD >expect &&
	git rev-parse refs/bisect/x >actual &&
	test_cmp expect actual &&
	git -C linked rev-parse main-worktree/refs/bisect/x >actual &&
	test_cmp expect actual
'

test_expect_success 'the same ref written from the main worktree is read from the linked one' '
	git update-ref refs/bisect/y HEAD &&
	git rev-parse HEAD >expect &&
	git -C linked rev-parse main-worktree/refs/bisect/y >actual &&
	test_cmp expect actual
'

test_done
