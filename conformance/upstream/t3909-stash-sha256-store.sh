#!/bin/sh

test_description='stash stores its commit in a SHA-256 repository within bounds

git stash push and git stash store write the id of the stash commit as hex
into a buffer on the stack before they check it and update refs/stash. A
SHA-256 id takes GIT_MAX_HEXSZ digits and a NUL after them, one byte more
than the buffer holds since d9b6634589 (stash: be careful what we store).
An ordinary build does not notice and passes the tests below; on a build
with SANITIZE=address (the sanitizer CI job) git aborts and both fail.'

. ./test-lib.sh

test_expect_success 'setup a SHA-256 repository with a change to stash' '
	git init --object-format=sha256 repo &&
	test_commit -C repo one file &&
	echo changed >repo/file
'

test_expect_success 'stash push stores the stash commit' '
	git -C repo stash push -m first &&
	git -C repo rev-parse --verify refs/stash &&
	echo one >expect &&
	test_cmp expect repo/file
'

test_expect_success 'stash store records a given commit' '
	commit=$(git -C repo rev-parse refs/stash) &&
	git -C repo stash drop &&
	git -C repo stash store -m again "$commit" &&
	echo "$commit" >expect &&
	git -C repo rev-parse refs/stash >actual &&
	test_cmp expect actual
'

test_done
