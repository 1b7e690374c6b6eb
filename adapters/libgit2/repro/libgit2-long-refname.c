/*
 * A ref whose name is 1024 bytes or longer cannot be looked up, written or deleted by name:
 * git_reference_lookup (and every call that normalizes the name) fails with "the provided
 * buffer is too short to hold the normalization of ..." (GIT_EINVALIDSPEC), because
 * refs.c normalizes into a git_refname_t of GIT_REFNAME_MAX (1024, refs.h) bytes.
 * git_reference_name_is_valid says the name is valid, the iterator lists the ref, and git
 * (no length limit in the reftable backend) reads and writes it.
 */
#include "common.h"

int main(void)
{
	char name[1200], cmd[1400];
	git_repository *repo;
	git_reference *ref = NULL;
	int rc, valid = 0;

	strcpy(name, "refs/heads/");
	memset(name + strlen(name), 'l', 1100);
	name[11 + 1100] = '\0';
	snprintf(cmd, sizeof(cmd), "git update-ref %s HEAD", name);
	if ((repo = repro_repo(cmd)) == NULL)
		return CANNOT_RUN;
	git_reference_name_is_valid(&valid, name);
	rc = git_reference_lookup(&ref, repo, name);
	printf("name of %zu bytes: valid %d, git_reference_lookup %d %s\n", strlen(name), valid, rc,
	       rc < 0 ? repro_err() : "");
	git_reference_free(ref);
	return rc == 0 ? 0 : 1;
}
