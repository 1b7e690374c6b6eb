/*
 * F2: creating refs/heads/main/sub while refs/heads/main exists fails with GIT_ERROR (-1),
 * not GIT_EDIRECTORY as the opposite conflict does (refdb_reftable_check_refname_available
 * sets error = -1 in its loop over the name's parents).
 */
#include "common.h"

int main(void)
{
	git_repository *repo = repro_repo(NULL);
	git_reference *ref = NULL;
	git_oid id;
	int below, above;

	if (repo == NULL || git_reference_name_to_id(&id, repo, "refs/heads/main") < 0 ||
	    git_reference_create(&ref, repo, "refs/heads/dir/file", &id, 0, NULL) < 0)
		return CANNOT_RUN;
	git_reference_free(ref);
	below = git_reference_create(&ref, repo, "refs/heads/dir", &id, 0, NULL);
	above = git_reference_create(&ref, repo, "refs/heads/main/sub", &id, 0, NULL);
	printf("ref below: %d, ref above: %d (%s)\n", below, above, repro_err());
	return above == GIT_EDIRECTORY ? 0 : 1;
}
