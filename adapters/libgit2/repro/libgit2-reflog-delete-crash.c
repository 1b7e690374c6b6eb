/*
 * git_reflog_delete on a ref that has no reflog records dies of SIGSEGV
 * (refdb_reftable_reflog_write_delete_table reads deletions[0] of an empty list); on a ref
 * that has them it fails with "misuse of the reftable API" (the table's limits are set to
 * the old entries' update index, below the stack's next one).
 */
#include "common.h"

int main(void)
{
	git_repository *repo = repro_repo(NULL);
	int status, rc;
	pid_t pid;

	if (repo == NULL)
		return CANNOT_RUN;
	if ((pid = fork()) == 0) /* refs/tags/v1 has no reflog */
		_exit(git_reflog_delete(repo, "refs/tags/v1") < 0 ? 3 : 0);
	waitpid(pid, &status, 0);
	if (WIFSIGNALED(status)) {
		printf("git_reflog_delete(refs/tags/v1) without a reflog: died of signal %d\n",
		       WTERMSIG(status));
		return 1;
	}
	rc = git_reflog_delete(repo, "refs/heads/topic"); /* has one entry */
	printf("git_reflog_delete(refs/tags/v1): exit %d; (refs/heads/topic): %d %s\n",
	       WEXITSTATUS(status), rc, rc < 0 ? repro_err() : "");
	return WEXITSTATUS(status) == 0 && rc == 0 ? 0 : 1;
}
