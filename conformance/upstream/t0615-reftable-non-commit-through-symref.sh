#!/bin/sh

test_description='a branch reached through a symref still refuses a non-commit

A symref outside refs/heads/ that points at a branch must not let update-ref
write a tree or a tag into that branch. Up to 2.54 the update the symref is
split into was checked like any update of a branch; since b32c23be3b (refs:
move object parsing to the generic layer) only the name the caller gave is
checked, and the branch ends up pointing at a tree.'

. ./test-lib.sh

test_expect_success 'setup' '
	test_commit A &&
	git symbolic-ref refs/custom/alias "$(git symbolic-ref HEAD)"
'

test_expect_failure 'update-ref refuses a tree through a symref to a branch' '
	tree=$(git mktree </dev/null) &&
	echo "update refs/custom/alias $tree" >in &&
	test_must_fail git update-ref --stdin <in &&
	echo commit >expect &&
	git cat-file -t HEAD >actual &&
	test_cmp expect actual
'

test_expect_success 'update-ref refuses a tree written to the branch by name' '
	tree=$(git mktree </dev/null) &&
	test_must_fail git update-ref "$(git symbolic-ref HEAD)" $tree
'

test_done
