/*
 * Not libgit2's defect (git's behaviour, the reference): deleting a ref that does not exist
 * is a no-op for libgit2 (there is nothing to hand git_reference_delete), while git 2.47.3
 * refuses it when the name has a D/F conflict: `git update-ref -d refs/heads/main/sub`
 * with refs/heads/main present fails "'refs/heads/main' exists; cannot create
 * 'refs/heads/main/sub'". Exits 1 while git refuses (the divergence shows).
 */
#include "common.h"

int main(void)
{
	git_repository *repo = repro_repo(NULL);
	git_reference *ref = NULL;
	int rc, git_rc;

	if (repo == NULL)
		return CANNOT_RUN;
	rc = git_reference_lookup(&ref, repo, "refs/heads/main/sub");
	git_rc = system("git update-ref -d refs/heads/main/sub 2>&1");
	printf("libgit2: lookup %d (absent: nothing to delete); git update-ref -d: status %d\n", rc, git_rc);
	return rc == GIT_ENOTFOUND && git_rc != 0 ? 1 : 0;
}
