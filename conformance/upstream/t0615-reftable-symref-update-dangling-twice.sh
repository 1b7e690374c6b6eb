#!/bin/sh

test_description='reftable: two updates of one missing ref through two symrefs

When two symrefs point at the same missing ref, a transaction that writes
through both of them updates that ref twice and must be refused, as a
transaction naming it twice is. Since the duplicate check moved into the
generic layer (c3baddf04f, refs: move duplicate refname update check to
generic layer), the names the backend adds while it splits a symref update
are appended to a list that is then searched as a sorted one, the second
update is not found, both are queued, and the table writer refuses the
second record: git dies on an assertion in write_transaction_table() and
leaves tables.list.lock behind, so that every later write fails.'

GIT_TEST_DEFAULT_REF_FORMAT=reftable
export GIT_TEST_DEFAULT_REF_FORMAT

. ./test-lib.sh

test_expect_success 'setup' '
	test_commit A &&
	git symbolic-ref refs/heads/topic refs/heads/target &&
	git symbolic-ref refs/tags/v1 refs/heads/target
'

test_expect_failure 'a second update of a missing ref through another symref is refused' '
	cat >input <<-EOF &&
	create refs/tags/v1 $(git rev-parse A)
	symref-update refs/heads/topic refs/heads/other
	EOF
	test_must_fail git update-ref --stdin <input 2>err &&
	test_grep "multiple updates for .refs/heads/target." err &&
	test_must_fail git rev-parse --verify refs/heads/target
'

test_expect_failure 'the refused transaction leaves the stack unlocked' '
	test_path_is_missing .git/reftable/tables.list.lock
'

test_expect_success 'each update alone goes through' '
	rm -f .git/reftable/tables.list.lock &&
	echo "create refs/tags/v1 $(git rev-parse A)" | git update-ref --stdin &&
	test_cmp_rev A refs/heads/target
'

test_done
