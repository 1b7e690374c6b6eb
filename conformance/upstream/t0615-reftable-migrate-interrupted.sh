#!/bin/sh

test_description='migrating refs does not lose them when it cannot finish

git refs migrate writes the new ref store aside, removes the old one, moves the
new one into place and only then records the new format in the config. When
the config cannot be written (here: a config.lock left behind), the refs are
already in the new format and the repository reads as the old format without
refs. When a loose ref cannot be read, the files backend leaves it out of the
listing without an error, and the migration reports success after deleting it.
When the old store cannot be removed completely, the migration stops half way
and leaves no HEAD: git no longer finds a repository.'

. ./test-lib.sh

test_expect_success 'setup: a files repository without reflogs' '
	git init --ref-format=files repo &&
	git -C repo config core.logAllRefUpdates false &&
	test_commit -C repo A &&
	git -C repo branch topic
'

test_expect_failure 'a migration that cannot write the config keeps the refs readable' '
	test_when_finished "rm -f repo/.git/config.lock" &&
	>repo/.git/config.lock &&
	test_must_fail git -C repo refs migrate --ref-format=reftable &&
	rm repo/.git/config.lock &&
	git -C repo rev-parse --verify refs/heads/topic
'

test_expect_failure SANITY 'a migration does not drop a loose ref it cannot read' '
	git init --ref-format=files unreadable &&
	git -C unreadable config core.logAllRefUpdates false &&
	test_commit -C unreadable A &&
	git -C unreadable branch topic &&
	chmod 0 unreadable/.git/refs/heads/topic &&
	test_when_finished "chmod 644 unreadable/.git/refs/heads/topic || :" &&
	test_might_fail git -C unreadable refs migrate --ref-format=reftable &&
	{ chmod 644 unreadable/.git/refs/heads/topic || :; } &&
	git -C unreadable rev-parse --verify refs/heads/topic
'

test_expect_failure SANITY 'a migration that cannot remove the old refs leaves a repository' '
	git init --ref-format=files readonly &&
	git -C readonly config core.logAllRefUpdates false &&
	test_commit -C readonly A &&
	git -C readonly branch topic &&
	chmod 555 readonly/.git/refs/heads &&
	test_when_finished "chmod 755 readonly/.git/refs/heads" &&
	test_must_fail git -C readonly refs migrate --ref-format=reftable &&
	chmod 755 readonly/.git/refs/heads &&
	git -C readonly rev-parse --verify refs/heads/topic
'

test_done
