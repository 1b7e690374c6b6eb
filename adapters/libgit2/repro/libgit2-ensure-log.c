/*
 * F3: git_reference_ensure_log never creates a reflog (refdb_reftable_write_log_existence_table
 * reads reftable_stack_read_log's "not found" (> 0) as "exists"), so an update asked to
 * create a reflog (git update-ref --create-reflog) writes none.
 */
#include "common.h"

int main(void)
{
	git_repository *repo = repro_repo(NULL);
	int rc, has;

	if (repo == NULL)
		return CANNOT_RUN;
	rc = git_reference_ensure_log(repo, "refs/tags/v1");
	has = git_reference_has_log(repo, "refs/tags/v1");
	printf("ensure_log: %d, has_log afterwards: %d\n", rc, has);
	return rc == 0 && has == 1 ? 0 : 1;
}
