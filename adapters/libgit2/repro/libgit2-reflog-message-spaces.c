/*
 * Reflog messages are stored as given: git collapses each run of whitespace into one space
 * and trims both ends (refs.c: normalize_reflog_message / copy_reflog_msg) before any
 * backend writes, so `git update-ref -m '  tabs\tand   spaces  '` stores "tabs and spaces";
 * libgit2 stores "  tabs\tand   spaces  ".
 */
#include "common.h"

int main(void)
{
	git_repository *repo = repro_repo(NULL);
	git_reference *ref = NULL;
	git_reflog *log = NULL;
	const char *msg;
	git_oid id;

	if (repo == NULL || git_reference_name_to_id(&id, repo, "refs/heads/main") < 0 ||
	    git_reference_create(&ref, repo, "refs/heads/b", &id, 0, "  tabs\tand   spaces  ") < 0 ||
	    git_reflog_read(&log, repo, "refs/heads/b") < 0 || git_reflog_entrycount(log) < 1)
		return CANNOT_RUN;
	msg = git_reflog_entry_message(git_reflog_entry_byindex(log, 0));
	printf("stored message: \"%s\" (git stores \"tabs and spaces\")\n", msg ? msg : "(null)");
	return msg && (!strcmp(msg, "tabs and spaces") || !strcmp(msg, "tabs and spaces\n")) ? 0 : 1;
}
