#!/bin/sh

test_description='reftable: migrating to files keeps the peeled values of tags

git refs migrate --ref-format=files writes packed-refs with a header that
says fully-peeled, which promises a peel line after every annotated tag. Since
3ab3d5077d (refs: use peeled tag values in reference backends) peeling is
left to the generic layer, which skips it for the migration (it writes with
REF_SKIP_OID_VERIFICATION), and the peel lines are missing under that
header.'

GIT_TEST_DEFAULT_REF_FORMAT=reftable
export GIT_TEST_DEFAULT_REF_FORMAT

. ./test-lib.sh

test_expect_success 'setup: an annotated tag in a reftable repository' '
	test_commit A &&
	git tag -a -m "an annotated tag" annotated A &&
	git refs migrate --ref-format=files &&
	test_grep "^# pack-refs with:.* fully-peeled" .git/packed-refs
'

test_expect_failure 'packed-refs has the peel line of the annotated tag' '
	echo "^$(git rev-parse annotated^{commit})" >expect &&
	sed -n "/ refs\/tags\/annotated\$/{n;p;}" .git/packed-refs >actual &&
	test_cmp expect actual
'

test_done
