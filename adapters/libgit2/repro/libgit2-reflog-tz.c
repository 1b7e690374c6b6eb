/*
 * Reflog time zones: libgit2 stores and reads the zone as minutes, as the reftable format
 * says (refdb_reftable_log_fill stores who->when.offset; refdb_reftable_reflog_read hands
 * tz_offset to git_signature_new as minutes); every released git (2.45 to 2.47.3 at least)
 * stores the +-HHMM number (fill_reftable_log_record: tz_offset = sign * atoi(tz)). So an
 * entry git wrote at +0200 reads as +0320 in libgit2 (offset 200 minutes), and one libgit2
 * writes at -0700 (-420) reads as -0420 in git. git is the reference: an interop defect
 * against every released git, however the format's text reads.
 */
#include "common.h"

int main(void)
{
	git_repository *repo = repro_repo(NULL);
	git_reflog *log = NULL;
	const git_signature *who;

	if (repo == NULL || git_reflog_read(&log, repo, "refs/heads/main") < 0 ||
	    git_reflog_entrycount(log) < 1)
		return CANNOT_RUN;
	who = git_reflog_entry_committer(git_reflog_entry_byindex(log, 0));
	printf("git wrote the entry at +0200; libgit2 reads offset %d minutes (+0200 is 120)\n",
	       who->when.offset);
	return who->when.offset == 120 ? 0 : 1;
}
