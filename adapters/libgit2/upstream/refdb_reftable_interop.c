/*
 * refs::reftable::interop -- the reftable refdb against C git on one repository.
 *
 * Meant for tests/libgit2/refs/reftable_interop.c; clar's generator names the suite
 * refs::reftable::interop (libgit2_tests -srefs::reftable::interop). Every test lets C git
 * make a reftable repository in the clar sandbox, then does one thing through libgit2's
 * public API and checks the result against what git does on the same repository. Each test fails on main at 0551dfd4ad;
 * the comment above it names the cause.
 *
 * The tests skip (cl_skip) when no `git` on PATH can make reftable repositories (git 2.45
 * or newer). They run git through the process API of src/util/process.h, in the shell, with
 * a hermetic environment (no system or global configuration, fixed identities and dates).
 *
 * Two tests crash the runner while their defect is there (a SIGSEGV inside libgit2, not an
 * assertion): iterator_on_missing_table_fails, which is therefore last, and the second half
 * of reflog_delete_removes_log (reached only once its first half passes).
 */

#include "clar_libgit2.h"
#include "futils.h"
#include "process.h"

#define INTEROP_REPO "reftable_interop"

static git_repository *g_repo;
static git_oid g_main, g_topic;

static const char *interop_env[] = {
	"GIT_CONFIG_NOSYSTEM=1",
	"GIT_CONFIG_GLOBAL=/dev/null",
	"GIT_AUTHOR_NAME=A U Thor",
	"GIT_AUTHOR_EMAIL=author@example.com",
	"GIT_AUTHOR_DATE=1700000000 +0200",
	"GIT_COMMITTER_NAME=C O Mitter",
	"GIT_COMMITTER_EMAIL=committer@example.com",
	"GIT_COMMITTER_DATE=1700000000 +0200",
	"GIT_TEST_REFTABLE_AUTOCOMPACTION=false",
	"LC_ALL=C",
};

/* Runs `git <args>` (a shell command line) in `dir`; returns git's exit code. */
static int run_git_in(const char *dir, const char *args)
{
	git_process_options opts = GIT_PROCESS_OPTIONS_INIT;
	git_process_result result = GIT_PROCESS_RESULT_INIT;
	git_process *process;
	git_str cmdline = GIT_STR_INIT, cwd = GIT_STR_INIT;

	cl_git_pass(git_str_printf(&cmdline, "git %s", args));
	if (dir) {
		cl_git_pass(git_fs_path_prettify_dir(&cwd, dir, NULL));
		opts.cwd = cwd.ptr;
	}

	cl_git_pass(git_process_new_from_cmdline(&process, cmdline.ptr,
		interop_env, ARRAY_SIZE(interop_env), &opts));
	cl_git_pass(git_process_start(process));
	cl_git_pass(git_process_wait(&result, process));
	git_process_free(process);

	git_str_dispose(&cmdline);
	git_str_dispose(&cwd);

	if (result.status != GIT_PROCESS_STATUS_NORMAL)
		return -1;
	return result.exitcode;
}

/* `git <args>` in the test repository, which must succeed. */
static void git_pass(const char *args)
{
	int code = run_git_in(INTEROP_REPO, args);

	cl_assert_(code == 0, args);
}

/* (Re)opens the repository, after git changed it behind libgit2's back. */
static void reopen_repo(void)
{
	git_repository_free(g_repo);
	g_repo = NULL;
	cl_git_pass(git_repository_open(&g_repo, INTEROP_REPO));
}

/*
 * main with two commits, topic at the first one (both with a reflog git wrote at +0200),
 * an annotated tag v1 (no reflog), HEAD -> main.
 */
void test_refs_reftable_interop__initialize(void)
{
	g_repo = NULL;

	if (run_git_in(NULL, "init -q --ref-format=reftable -b main " INTEROP_REPO) != 0)
		cl_skip();

	git_pass("commit -q --allow-empty -m first");
	git_pass("commit -q --allow-empty -m second");
	git_pass("update-ref -m 'start topic' refs/heads/topic HEAD~1");
	git_pass("tag -a -m annotated v1");
	git_pass("config user.name 'C O Mitter'");
	git_pass("config user.email committer@example.com");

	reopen_repo();
	cl_git_pass(git_reference_name_to_id(&g_main, g_repo, "refs/heads/main"));
	cl_git_pass(git_reference_name_to_id(&g_topic, g_repo, "refs/heads/topic"));
}

void test_refs_reftable_interop__cleanup(void)
{
	git_repository_free(g_repo);
	g_repo = NULL;
	cl_fixture_cleanup(INTEROP_REPO);
}

/* Message of the newest reflog entry of `refname`, as libgit2 reads it; caller frees. */
static char *newest_reflog_message(const char *refname)
{
	git_reflog *reflog;
	const git_reflog_entry *entry;
	char *message;

	cl_git_pass(git_reflog_read(&reflog, g_repo, refname));
	cl_assert(git_reflog_entrycount(reflog) > 0);
	entry = git_reflog_entry_byindex(reflog, 0);
	message = git__strdup(git_reflog_entry_message(entry) ? git_reflog_entry_message(entry) : "");
	git_reflog_free(reflog);
	return message;
}

/*
 * The zone of a reflog entry git wrote. git (every release with reftable support, up to
 * at least 2.47.3) stores the zone in a reftable log record as the +-HHMM number
 * (refs/reftable-backend.c: fill_reftable_log_record); refdb_reftable_reflog_read hands
 * that number to git_signature_new as minutes, so +0200 reads as 200 minutes (+0320).
 * refdb_reftable_log_fill writes minutes, which git shows as a wrong zone.
 */
void test_refs_reftable_interop__reflog_timezone_read_as_git_wrote_it(void)
{
	git_reflog *reflog;
	const git_signature *committer;

	cl_git_pass(git_reflog_read(&reflog, g_repo, "refs/heads/main"));
	cl_assert_equal_sz(2, git_reflog_entrycount(reflog));

	committer = git_reflog_entry_committer(git_reflog_entry_byindex(reflog, 0));
	cl_assert_equal_i(1700000000, committer->when.time);
	cl_assert_equal_i('+', committer->when.sign);
	cl_assert_equal_i(120, committer->when.offset);

	git_reflog_free(reflog);
}

/*
 * `git symbolic-ref -m MSG` writes a reflog entry for the symref it creates;
 * refdb_reftable_write_table skips the entry for every symbolic ref but HEAD.
 */
void test_refs_reftable_interop__symref_create_writes_reflog_entry(void)
{
	git_reference *ref;
	git_reflog *reflog;

	git_pass("symbolic-ref -m 'by git' refs/heads/sym-git refs/heads/main");
	reopen_repo();
	cl_git_pass(git_reflog_read(&reflog, g_repo, "refs/heads/sym-git"));
	cl_assert_equal_sz(1, git_reflog_entrycount(reflog));
	git_reflog_free(reflog);

	cl_git_pass(git_reference_symbolic_create(&ref, g_repo,
		"refs/heads/sym", "refs/heads/main", 0, "by libgit2"));
	git_reference_free(ref);

	cl_git_pass(git_reflog_read(&reflog, g_repo, "refs/heads/sym"));
	cl_assert_equal_sz(1, git_reflog_entrycount(reflog));
	cl_assert_equal_s("by libgit2",
		git_reflog_entry_message(git_reflog_entry_byindex(reflog, 0)));
	git_reflog_free(reflog);
}

/*
 * refs/heads/main exists, so refs/heads/main/sub cannot (git: "'refs/heads/main' exists;
 * cannot create 'refs/heads/main/sub'"). The reverse conflict is GIT_EDIRECTORY; this one
 * is a bare -1 from the parent loop of refdb_reftable_check_refname_available, which a
 * caller cannot tell from an I/O failure.
 */
void test_refs_reftable_interop__conflict_with_existing_parent_is_edirectory(void)
{
	git_reference *ref;

	cl_assert(run_git_in(INTEROP_REPO, "update-ref refs/heads/main/sub HEAD 2>/dev/null") != 0);

	cl_git_pass(git_reference_create(&ref, g_repo, "refs/heads/dir/file", &g_main, 0, NULL));
	git_reference_free(ref);
	cl_git_fail_with(GIT_EDIRECTORY,
		git_reference_create(&ref, g_repo, "refs/heads/dir", &g_main, 0, NULL));

	cl_git_fail_with(GIT_EDIRECTORY,
		git_reference_create(&ref, g_repo, "refs/heads/main/sub", &g_main, 0, NULL));
}

/*
 * `git update-ref --create-reflog` makes a tag's reflog exist. In
 * refdb_reftable_write_log_existence_table a positive return of reftable_stack_read_log
 * ("no such record") is taken for "the log exists", so the marker is never written when
 * it is needed.
 */
void test_refs_reftable_interop__ensure_log_creates_reflog(void)
{
	git_pass("update-ref --create-reflog refs/tags/by-git v1");
	cl_assert_equal_i(0, run_git_in(INTEROP_REPO, "reflog exists refs/tags/by-git"));

	cl_assert_equal_i(0, git_reference_has_log(g_repo, "refs/tags/v1"));
	cl_git_pass(git_reference_ensure_log(g_repo, "refs/tags/v1"));
	cl_assert_equal_i(1, git_reference_has_log(g_repo, "refs/tags/v1"));
	cl_assert_equal_i(0, run_git_in(INTEROP_REPO, "reflog exists refs/tags/v1"));
}

/*
 * refdb_reftable_reflog_write_delete_table sets the new table's update-index limits to
 * the deleted records' own index, below the stack's next one, so reftable_addition_add
 * refuses the table; for a ref without records it reads the first element of an empty
 * list (SIGSEGV), hence the order below.
 */
void test_refs_reftable_interop__reflog_delete_removes_log(void)
{
	cl_assert_equal_i(1, git_reference_has_log(g_repo, "refs/heads/topic"));
	cl_git_pass(git_reflog_delete(g_repo, "refs/heads/topic"));
	cl_assert_equal_i(0, git_reference_has_log(g_repo, "refs/heads/topic"));
	cl_assert(run_git_in(INTEROP_REPO, "reflog exists refs/heads/topic") != 0);
	cl_assert_equal_i(0, run_git_in(INTEROP_REPO, "rev-parse -q --verify refs/heads/topic >/dev/null"));

	cl_assert_equal_i(0, git_reference_has_log(g_repo, "refs/tags/v1"));
	cl_git_pass(git_reflog_delete(g_repo, "refs/tags/v1"));
}

/*
 * git normalizes a reflog message before any backend sees it (refs.c,
 * normalize_reflog_message); so does libgit2's files backend for newlines. The reftable
 * backend passes the message through (refdb_reftable_log_fill), and the reftable writer
 * refuses one with a newline inside: the ref write fails.
 */
void test_refs_reftable_interop__multiline_reflog_message_is_flattened(void)
{
	git_reference *ref;
	char *by_git, *by_libgit2;

	git_pass("update-ref -m \"$(printf 'multi\\n\\nline\\n')\" refs/heads/by-git HEAD");
	reopen_repo();
	by_git = newest_reflog_message("refs/heads/by-git");
	cl_assert(strchr(by_git, '\n') == NULL || strchr(by_git, '\n')[1] == '\0');

	cl_git_pass(git_reference_create(&ref, g_repo, "refs/heads/by-libgit2", &g_main, 0,
		"multi\n\nline\n"));
	git_reference_free(ref);
	by_libgit2 = newest_reflog_message("refs/heads/by-libgit2");
	cl_assert_equal_s(by_git, by_libgit2);

	git__free(by_git);
	git__free(by_libgit2);
}

/* Same normalization: whitespace runs collapse to one space, both ends are trimmed. */
void test_refs_reftable_interop__reflog_message_whitespace_is_normalized(void)
{
	git_reference *ref;
	char *by_git, *by_libgit2;

	git_pass("update-ref -m \"$(printf '  tabs\\tand   spaces  ')\" refs/heads/by-git HEAD");
	reopen_repo();
	by_git = newest_reflog_message("refs/heads/by-git");
	cl_assert(strncmp(by_git, "tabs and spaces", 15) == 0);

	cl_git_pass(git_reference_create(&ref, g_repo, "refs/heads/by-libgit2", &g_main, 0,
		"  tabs\tand   spaces  "));
	git_reference_free(ref);
	by_libgit2 = newest_reflog_message("refs/heads/by-libgit2");
	cl_assert_equal_s(by_git, by_libgit2);

	git__free(by_git);
	git__free(by_libgit2);
}

/*
 * With HEAD gone (git update-ref -d --no-deref HEAD) git still writes refs.
 * refdb_reftable_write_table asks git_refdb_should_write_head_reflog (refdb.c), which
 * returns the GIT_ENOTFOUND of looking HEAD up instead of "no HEAD entry to write".
 */
void test_refs_reftable_interop__write_without_head(void)
{
	git_reference *ref;
	git_oid id;

	git_pass("update-ref -d --no-deref HEAD");
	git_pass("update-ref -m 'by git' refs/heads/by-git refs/heads/main");
	reopen_repo();

	cl_git_pass(git_reference_create(&ref, g_repo, "refs/heads/by-libgit2", &g_main, 0,
		"by libgit2"));
	git_reference_free(ref);
	cl_git_pass(git_reference_name_to_id(&id, g_repo, "refs/heads/by-libgit2"));
	cl_assert_equal_oid(&g_main, &id);
}

/*
 * git has no length limit on ref names in the reftable backend; libgit2 says such a name
 * is valid and its iterator lists the ref, but git_reference_lookup_resolved normalizes
 * into a git_refname_t of GIT_REFNAME_MAX (1024) bytes and fails.
 */
void test_refs_reftable_interop__long_refname_lookup(void)
{
	git_str name = GIT_STR_INIT, args = GIT_STR_INIT;
	git_reference *ref;
	int valid = 0;

	cl_git_pass(git_str_puts(&name, "refs/heads/"));
	cl_git_pass(git_str_putc(&name, 'l'));
	while (name.size < 1100)
		cl_git_pass(git_str_putc(&name, 'l'));
	cl_git_pass(git_str_printf(&args, "update-ref %s refs/heads/main", name.ptr));
	git_pass(args.ptr);
	reopen_repo();

	cl_git_pass(git_reference_name_is_valid(&valid, name.ptr));
	cl_assert_equal_i(1, valid);
	cl_git_pass(git_reference_lookup(&ref, g_repo, name.ptr));
	cl_assert_equal_oid(&g_main, git_reference_target(ref));
	git_reference_free(ref);

	git_str_dispose(&name);
	git_str_dispose(&args);
}

/*
 * reftable.blockSize is git's setting for the block size of new tables (git refuses a
 * record that does not fit). The constructor git_refdb_backend_reftable fills only
 * write_opts.lock_timeout_ms, so libgit2's tables always have the library's 4096.
 */
void test_refs_reftable_interop__honours_configured_block_size(void)
{
	git_str list = GIT_STR_INIT, path = GIT_STR_INIT, table = GIT_STR_INIT;
	git_reference *ref;
	const unsigned char *header;
	const char *last;
	size_t len;

	git_pass("config reftable.blockSize 1024");
	reopen_repo();

	cl_git_pass(git_reference_create(&ref, g_repo, "refs/heads/new", &g_main, 0, "new"));
	git_reference_free(ref);

	/* the table just written is the last one of the stack */
	cl_git_pass(git_futils_readbuffer(&list, INTEROP_REPO "/.git/reftable/tables.list"));
	git_str_rtrim(&list);
	last = strrchr(list.ptr, '\n');
	last = last ? last + 1 : list.ptr;
	len = strlen(last);
	cl_assert(len > 0);
	cl_git_pass(git_str_printf(&path, INTEROP_REPO "/.git/reftable/%s", last));
	cl_git_pass(git_futils_readbuffer(&table, path.ptr));
	cl_assert(table.size >= 24);

	/* header: "REFT", version byte, 24-bit big-endian block size */
	header = (const unsigned char *)table.ptr;
	cl_assert_equal_i(0, memcmp(header, "REFT", 4));
	cl_assert_equal_i(1024, (header[5] << 16) | (header[6] << 8) | header[7]);

	git_str_dispose(&list);
	git_str_dispose(&path);
	git_str_dispose(&table);
}

/*
 * A stack whose tables.list names a table that is not there cannot be loaded: listing
 * refs must fail. refdb_reftable_iterator_new frees its iterator on error but returns 0
 * without setting *out, and git_refdb_iterator (refdb.c) then writes through it: SIGSEGV.
 * Kept last because it takes the runner down while the defect is there.
 */
void test_refs_reftable_interop__iterator_on_missing_table_fails(void)
{
	git_reference_iterator *iter = NULL;

	cl_git_append2file(INTEROP_REPO "/.git/reftable/tables.list",
		"0x000000000099-0x000000000099-deadbeef.ref\n");
	reopen_repo();

	cl_git_fail(git_reference_iterator_new(&iter, g_repo));
	cl_assert(iter == NULL);
}
