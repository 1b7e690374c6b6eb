/*
 * Without HEAD (git update-ref -d --no-deref HEAD), every ref write that is logged fails
 * with "reference 'HEAD' not found" (GIT_ENOTFOUND): refdb_reftable_write_table asks
 * git_refdb_should_write_head_reflog (refdb.c), which looks HEAD up and returns the lookup's
 * error. git writes the ref (and, for HEAD itself, creates it).
 */
#include "common.h"

int main(void)
{
	git_repository *repo = repro_repo("git update-ref -d --no-deref HEAD");
	git_reference *ref = NULL;
	git_oid id;
	int rc;

	if (repo == NULL || git_reference_name_to_id(&id, repo, "refs/heads/main") < 0)
		return CANNOT_RUN;
	rc = git_reference_create(&ref, repo, "refs/heads/b", &id, 0, "make b");
	printf("git_reference_create refs/heads/b without HEAD: %d %s\n", rc, rc < 0 ? repro_err() : "");
	git_reference_free(ref);
	return rc == 0 ? 0 : 1;
}
