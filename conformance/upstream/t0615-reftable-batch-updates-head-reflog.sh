#!/bin/sh

test_description='update-ref --batch-updates leaves HEAD'"'"'s reflog alone for a rejected update

An update of the branch HEAD points at also writes an entry into HEAD'"'"'s reflog:
the backend queues a reflog-only update of HEAD beside the branch'"'"'s. With
--batch-updates an update whose old value is wrong is rejected and left out,
but only the branch'"'"'s update is marked rejected; HEAD'"'"'s reflog-only update is
still written, and HEAD@{0} claims a move that did not happen.'

. ./test-lib.sh

test_expect_success 'setup' '
	test_commit A &&
	test_commit B
'

test_expect_failure 'a rejected update of the current branch writes no HEAD reflog entry' '
	git reflog show --format=%H HEAD >before &&
	echo "update $(git symbolic-ref HEAD) $(git rev-parse A) $(git rev-parse A)" >in &&
	git update-ref -m rejected --stdin --batch-updates <in >out &&
	test_grep "^rejected" out &&
	git rev-parse B >expect &&
	git rev-parse HEAD >actual &&
	test_cmp expect actual &&
	git reflog show --format=%H HEAD >after &&
	test_cmp before after
'

test_done
