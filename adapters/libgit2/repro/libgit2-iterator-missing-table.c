/*
 * F4: on a stack whose tables.list names a missing table, git_reference_iterator_new dies of
 * SIGSEGV (refdb_reftable_iterator_new ends with "return 0;" after freeing the iterator on
 * failure; git_refdb_iterator then writes through the unset *out).
 */
#include "common.h"

int main(void)
{
	git_repository *repo = repro_repo(
		"echo 0x000000000099-0x000000000099-deadbeef.ref >> .git/reftable/tables.list");
	git_reference_iterator *it = NULL;
	int status;
	pid_t pid;

	if (repo == NULL)
		return CANNOT_RUN;
	if ((pid = fork()) == 0)
		_exit(git_reference_iterator_new(&it, repo) < 0 ? 0 : 3);
	waitpid(pid, &status, 0);
	if (WIFSIGNALED(status))
		printf("git_reference_iterator_new died of signal %d\n", WTERMSIG(status));
	else
		printf("git_reference_iterator_new: child exit %d\n", WEXITSTATUS(status));
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
