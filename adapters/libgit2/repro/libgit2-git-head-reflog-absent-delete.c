/*
 * Not libgit2's defect (git's behaviour, the reference): `git update-ref -d HEAD` when HEAD
 * points to an unborn branch deletes nothing but creates an empty HEAD reflog in git
 * 2.47.3; libgit2 has nothing to delete and writes nothing. Exits 1 while git does so.
 */
#include "common.h"

int main(void)
{
	/* a fresh repository: HEAD -> main, unborn, and no reflog yet */
	git_repository *repo = repro_repo("cd .. && rm -rf r && git init -q --ref-format=reftable -b main r");
	int before, after;

	if (repo == NULL || (before = git_reference_has_log(repo, "HEAD")) != 0)
		return CANNOT_RUN;
	if (system("git update-ref -m 'update by test' -d HEAD") != 0)
		return CANNOT_RUN;
	git_repository_free(repo);
	if (git_repository_open(&repo, ".git") < 0)
		return CANNOT_RUN;
	after = git_reference_has_log(repo, "HEAD");
	printf("HEAD -> unborn main, no HEAD reflog; after git update-ref -d HEAD: HEAD has a reflog: %d\n",
	       after);
	return after == 1 ? 1 : 0;
}
