/*
 * A reflog message with a newline inside makes every logged ref write fail with
 * "failed writing update table: misuse of the reftable API" (GIT_EINVALID): the reftable
 * backend hands the message to the reftable writer as given, which refuses multi-line
 * messages; git (refs.c, normalize_reflog_message) and libgit2's own files backend
 * (serialize_reflog_entry) turn newlines into spaces. git update-ref -m $'multi\n\nline'
 * writes "multi line".
 */
#include "common.h"

int main(void)
{
	git_repository *repo = repro_repo(NULL);
	git_reference *ref = NULL;
	git_oid id;
	int rc;

	if (repo == NULL || git_reference_name_to_id(&id, repo, "refs/heads/main") < 0)
		return CANNOT_RUN;
	rc = git_reference_create(&ref, repo, "refs/heads/b", &id, 0, "multi\n\nline\n");
	printf("git_reference_create with a multi-line message: %d %s\n", rc, rc < 0 ? repro_err() : "");
	git_reference_free(ref);
	return rc == 0 ? 0 : 1;
}
