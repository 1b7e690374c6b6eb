/*
 * reftable.blockSize is not honoured: the reftable backend's write options
 * (git_refdb_backend_reftable sets write_opts.lock_timeout_ms only) leave the block size at
 * the library default, 4096, so with `reftable.blockSize = 1024` libgit2 writes tables of
 * 4096-byte blocks, and accepts records git refuses as "entry too large" (a ref name or
 * reflog message that does not fit a 1024-byte block).
 */
#include "common.h"

int main(void)
{
	git_repository *repo = repro_repo("git config reftable.blockSize 1024");
	git_reference *ref = NULL;
	char line[512], path[1024];
	unsigned char h[8];
	unsigned size;
	git_oid id;
	FILE *f;

	if (repo == NULL || git_reference_name_to_id(&id, repo, "refs/heads/main") < 0 ||
	    git_reference_create(&ref, repo, "refs/heads/b", &id, 0, "make b") < 0)
		return CANNOT_RUN;
	git_reference_free(ref);
	if ((f = fopen(".git/reftable/tables.list", "r")) == NULL)
		return CANNOT_RUN;
	while (fgets(line, sizeof(line), f)) /* the newest table: the last line */
		line[strcspn(line, "\n")] = '\0', snprintf(path, sizeof(path), ".git/reftable/%s", line);
	fclose(f);
	if ((f = fopen(path, "rb")) == NULL || fread(h, 1, 8, f) != 8)
		return CANNOT_RUN;
	fclose(f);
	size = (unsigned)h[5] << 16 | (unsigned)h[6] << 8 | h[7]; /* header: "REFT", version, be24 */
	printf("reftable.blockSize = 1024; the table libgit2 wrote has block size %u\n", size);
	return size == 1024 ? 0 : 1;
}
