/*
 * Shared by the reproducers: a repository git makes in a temporary directory (two commits
 * on main, topic at the first, an annotated tag v1, the symref refs/heads/alias -> topic,
 * reflogs), opened with libgit2. Each reproducer exits 1 while its defect shows, 0 when
 * not, 2 when it cannot run (no git, the repository cannot be made or opened).
 */
#include <git2.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define CANNOT_RUN 2

/* Makes the repository (then runs `extra`, shell commands inside it) and opens it. */
static inline git_repository *repro_repo(const char *extra)
{
	static char dir[1024];
	const char *tmp = getenv("TMPDIR");
	char cmd[16384];
	git_repository *repo = NULL;

	snprintf(dir, sizeof(dir), "%s/lg2-repro-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (mkdtemp(dir) == NULL)
		return NULL;
	snprintf(cmd, sizeof(cmd),
		 "set -e; cd '%s'; export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null HOME='%s'\n"
		 "export GIT_AUTHOR_NAME='A U Thor' GIT_AUTHOR_EMAIL=author@example.com"
		 " GIT_AUTHOR_DATE='1700000000 +0200'\n"
		 "export GIT_COMMITTER_NAME='C O Mitter' GIT_COMMITTER_EMAIL=committer@example.com"
		 " GIT_COMMITTER_DATE='1700000000 +0200'\n"
		 "git init -q --ref-format=reftable -b main r && cd r\n"
		 "git commit -q --allow-empty -m one && git commit -q --allow-empty -m two\n"
		 "git update-ref -m 'make topic' refs/heads/topic HEAD~1\n"
		 "git tag -a -m ann v1 && git symbolic-ref -m 'alias it' refs/heads/alias refs/heads/topic\n"
		 "%s\n",
		 dir, dir, extra ? extra : "");
	if (system(cmd) != 0) {
		fprintf(stderr, "repro: git could not make the repository in %s\n", dir);
		return NULL;
	}
	snprintf(cmd, sizeof(cmd), "%s/r/.git", dir);
	git_libgit2_init();
	if (git_repository_open(&repo, cmd) < 0) {
		fprintf(stderr, "repro: git_repository_open %s: %s\n", cmd,
			git_error_last() ? git_error_last()->message : "?");
		return NULL;
	}
	if (chdir(dir) < 0 || chdir("r") < 0)
		return NULL;
	return repo;
}

static inline const char *repro_err(void)
{
	const git_error *e = git_error_last();

	return e && e->message ? e->message : "(no message)";
}
