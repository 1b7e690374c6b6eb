/*
 * F1: a symref written through libgit2 gets no reflog entry (refdb_reftable_write_table:
 * "Symbolic refs other than HEAD do not create an entry, either."); git symbolic-ref -m
 * writes one.
 */
#include "common.h"

int main(void)
{
	git_repository *repo = repro_repo(NULL);
	git_reference *ref = NULL;
	git_reflog *log = NULL;
	size_t n;

	if (repo == NULL ||
	    git_reference_symbolic_create(&ref, repo, "refs/heads/sym", "refs/heads/main", 0, "make sym") < 0 ||
	    git_reflog_read(&log, repo, "refs/heads/sym") < 0)
		return CANNOT_RUN;
	n = git_reflog_entrycount(log);
	printf("%zu reflog entries for refs/heads/sym (git writes 1)\n", n);
	return n == 1 ? 0 : 1;
}
