/*
 * libgit2 adapter for the reftable conformance protocol, version 1 (adapters/PROTOCOL.md).
 *
 * Reads one JSON request a line on stdin and writes one JSON answer a line on stdout until
 * EOF or `quit`, then exits 0. Uses libgit2's public API only: the repository is opened with
 * git_repository_open_ext, and libgit2 picks its reftable refdb from the repository's
 * extensions.refStorage. Built by build.sh against a libgit2 checkout.
 *
 * What libgit2 cannot express is answered `unsupported` (never a finding):
 *  - transactions of more than one update when the refdb cannot lock refs: libgit2's
 *    git_transaction_* API locks each ref through the refdb backend, and the reftable
 *    backend has no lock/unlock (its constructor says "TODO: transaction API"), so an
 *    atomic multi-ref update cannot be made there;
 *  - an object-id write whose old value is a symref target (git_reference_create_matching
 *    takes an expected id only), a symref write whose old value is an id or "present"
 *    (git_reference_symbolic_create_matching takes an expected target only), a deletion
 *    whose old value is "absent" (git's update-ref has no such command either);
 *  - `create_reflog` inside a multi-ref transaction; compaction mode "auto"; the reflog list
 *    (libgit2 has no call that lists reflogs), rename/copy, reflog expiry, verify;
 *  - deleting HEAD itself (git_reference_delete refuses HEAD by design: "cannot delete HEAD").
 * A multi-ref transaction on a refdb without locking is answered `unsupported` before any
 * of its updates is checked, so no refusal is answered for a transaction never tried.
 *
 * Reflog identity: libgit2's ref-update calls sign reflog entries with
 * git_reference__log_signature, which takes the name and email set by
 * git_repository_set_ident but always the current time (git_signature_now: time(), and the
 * zone from mktime). The adapter passes the committer's zone through TZ (set, then tzset)
 * and the committer's time through its own time() below, which libgit2's shared library
 * resolves to (the executable's definition comes first in symbol lookup); outside a
 * transaction time() is the real clock.
 */
#include <git2.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "json.h"

#ifndef ADAPTER_LIBGIT2_COMMIT
#define ADAPTER_LIBGIT2_COMMIT "unknown"
#endif

#define OID_HEX 40 /* libgit2 builds without the experimental SHA-256 support read SHA-1 */
#define MAX_SYMREF_DEPTH 5

static const char *const VERBS[] = {
	"hello", "open", "refs", "ref", "reflog", "transaction", "compact", "reload", "close",
	"quit", NULL
};

/* The root refs looked up by name: libgit2's iterator lists refs/ only. */
static const char *const ROOT_REFS[] = {
	"HEAD", "AUTO_MERGE", "BISECT_EXPECTED_REV", "BISECT_HEAD", "CHERRY_PICK_HEAD",
	"MERGE_AUTOSTASH", "NOTES_MERGE_PARTIAL", "NOTES_MERGE_REF", "ORIG_HEAD", "REBASE_HEAD",
	"REVERT_HEAD", NULL
};

/* -- the committer's clock --------------------------------------------------------------- */

static time_t fixed_now = (time_t)-1;

/* libgit2 dates reflog entries with time(): during a write it is the committer's time. */
time_t time(time_t *out)
{
	time_t now = fixed_now;

	if (now == (time_t)-1) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		now = ts.tv_sec;
	}
	if (out != NULL)
		*out = now;
	return now;
}

/* tz is git's +-HHMM read as an integer; POSIX TZ counts hours west, hence the sign flip. */
static void set_zone(long long tz)
{
	char spec[32];
	long long a = tz < 0 ? -tz : tz;

	snprintf(spec, sizeof(spec), "ADP%c%02lld:%02lld", tz < 0 ? '+' : '-', a / 100, a % 100);
	setenv("TZ", spec, 1);
	tzset();
}

/* -- answers ----------------------------------------------------------------------------- */

typedef struct {
	const char *kind;       /* done, refused, unsupported, error */
	const char *reason;     /* refused only */
	const char *detail;
	char ref[8192];          /* ref names git writes reach several thousand bytes */
	char message[16384];
	json_buf *out;          /* a done answer's fields are written here as they come */
} reply;

static void say(reply *r, const char *kind, const char *fmt, va_list ap)
{
	if (strcmp(r->kind, "done") != 0)
		return; /* the first failure is the answer */
	r->kind = kind;
	vsnprintf(r->message, sizeof(r->message), fmt, ap);
}

static void answer_error(reply *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(r, "error", fmt, ap);
	va_end(ap);
}

static void answer_unsupported(reply *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(r, "unsupported", fmt, ap);
	va_end(ap);
}

static void answer_refused(reply *r, const char *reason, const char *detail, const char *ref,
			   const char *fmt, ...)
{
	va_list ap;

	if (strcmp(r->kind, "done") != 0)
		return;
	r->reason = reason;
	r->detail = detail;
	snprintf(r->ref, sizeof(r->ref), "%s", ref ? ref : "");
	va_start(ap, fmt);
	say(r, "refused", fmt, ap);
	va_end(ap);
}

static const char *lg2_message(void)
{
	const git_error *e = git_error_last();

	return e != NULL && e->message != NULL ? e->message : "(libgit2 gave no message)";
}

static int failed(const reply *r)
{
	return strcmp(r->kind, "done") != 0;
}

/* -- the session ------------------------------------------------------------------------- */

typedef struct {
	git_repository *repo;
	char *gitdir;
	int quit;
} session;

static git_repository *need_repo(session *s, reply *r)
{
	if (s->repo == NULL)
		answer_error(r, "no repository is open");
	return s->repo;
}

static void close_repo(session *s)
{
	git_repository_free(s->repo);
	s->repo = NULL;
}

static void open_repo(session *s, reply *r)
{
	close_repo(s);
	if (git_repository_open_ext(&s->repo, s->gitdir, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0) {
		s->repo = NULL;
		answer_error(r, "git_repository_open_ext %s: %s", s->gitdir, lg2_message());
	}
}

static void verb_open(session *s, const json_value *req, reply *r)
{
	const char *gitdir = json_get_string(req, "gitdir");

	if (gitdir == NULL) {
		answer_error(r, "open needs a gitdir");
		return;
	}
	free(s->gitdir);
	s->gitdir = strdup(gitdir);
	open_repo(s, r);
	if (!failed(r)) {
		json_key(r->out, "hash");
		json_string(r->out, "sha1");
	}
}

/* libgit2 keeps the stack it loaded; a fresh repository object reads it anew. */
static void verb_reload(session *s, const json_value *req, reply *r)
{
	(void)req;
	if (need_repo(s, r) != NULL)
		open_repo(s, r);
}

static void verb_close(session *s, const json_value *req, reply *r)
{
	(void)req;
	(void)r;
	close_repo(s);
}

static void verb_quit(session *s, const json_value *req, reply *r)
{
	(void)req;
	(void)r;
	s->quit = 1;
}

static void verb_hello(session *s, const json_value *req, reply *r)
{
	const json_value *protocol = json_get(req, "protocol");
	int major = 0, minor = 0, rev = 0;
	char version[160];
	size_t i;

	(void)s;
	if (protocol != NULL && (protocol->type != JSON_INT || protocol->integer != 1)) {
		answer_unsupported(r, "this adapter speaks protocol 1 only");
		return;
	}
	git_libgit2_version(&major, &minor, &rev);
	snprintf(version, sizeof(version), "%d.%d.%d (commit %s)", major, minor, rev,
		 ADAPTER_LIBGIT2_COMMIT);
	json_key(r->out, "protocol");
	json_int(r->out, 1);
	json_key(r->out, "implementation");
	json_string(r->out, "libgit2");
	json_key(r->out, "version");
	json_string(r->out, version);
	json_key(r->out, "verbs");
	json_raw(r->out, "[");
	for (i = 0; VERBS[i] != NULL; i++) {
		json_raw(r->out, i ? "," : "");
		json_string(r->out, VERBS[i]);
	}
	json_raw(r->out, "],\"claims\":[\"peeled\",\"reflogs_written\"],\"hashes\":[\"sha1\"]");
}

/* -- reads ------------------------------------------------------------------------------- */

static void write_oid(json_buf *out, const git_oid *id)
{
	char hex[OID_HEX + 1];

	if (id == NULL) {
		json_raw(out, "null");
		return;
	}
	git_oid_tostr(hex, sizeof(hex), id);
	json_string(out, hex);
}

/* A symref's oid: what the chain resolves to, null when it does not resolve. */
static void write_resolved(json_buf *out, git_reference *ref)
{
	git_reference *resolved = NULL;

	if (git_reference_resolve(&resolved, ref) < 0)
		write_oid(out, NULL);
	else
		write_oid(out, git_reference_target(resolved));
	git_reference_free(resolved);
}

static void write_ref(json_buf *out, git_reference *ref)
{
	int symbolic = git_reference_type(ref) == GIT_REFERENCE_SYMBOLIC;

	json_raw(out, "{");
	json_key(out, "name");
	json_string(out, git_reference_name(ref));
	json_key(out, "oid");
	if (symbolic)
		write_resolved(out, ref);
	else
		write_oid(out, git_reference_target(ref));
	json_key(out, "symref");
	json_string(out, symbolic ? git_reference_symbolic_target(ref) : NULL);
	json_key(out, "peeled");
	write_oid(out, symbolic ? NULL : git_reference_target_peel(ref));
	json_raw(out, "}");
}

/* Whether libgit2's iterator lists a ref of this name: 1 yes, 0 no, -1 failed. */
static int iterator_lists(git_repository *repo, const char *name)
{
	git_reference_iterator *it = NULL;
	const char *n;
	int rc, found = 0;

	if (git_reference_iterator_new(&it, repo) < 0)
		return -1;
	while (!found && (rc = git_reference_next_name(&n, it)) == 0)
		found = strcmp(n, name) == 0;
	git_reference_iterator_free(it);
	return found;
}

/*
 * Looks a ref up: 0 found, 1 absent (*out NULL), -1 failed (answered). A name libgit2
 * calls invalid (GIT_EINVALIDSPEC) is absent when libgit2's iterator does not list it
 * either (no such ref can exist for libgit2); one the iterator lists but the lookup
 * refuses is libgit2's failure, answered as an error.
 */
static int lookup(git_repository *repo, const char *name, git_reference **out, reply *r)
{
	int rc = git_reference_lookup(out, repo, name);

	if (rc == GIT_ENOTFOUND || (rc == GIT_EINVALIDSPEC && iterator_lists(repo, name) == 0)) {
		*out = NULL;
		return 1;
	}
	if (rc < 0) {
		*out = NULL;
		answer_error(r, "git_reference_lookup %s: %s", name, lg2_message());
		return -1;
	}
	return 0;
}

static void verb_ref(session *s, const json_value *req, reply *r)
{
	const char *name = json_get_string(req, "name");
	git_repository *repo = need_repo(s, r);
	git_reference *ref = NULL;
	int rc;

	if (repo == NULL)
		return;
	if (name == NULL) {
		answer_error(r, "ref needs a name");
		return;
	}
	if ((rc = lookup(repo, name, &ref, r)) < 0)
		return;
	json_key(r->out, "ref");
	if (rc == 1)
		json_raw(r->out, "null");
	else
		write_ref(r->out, ref);
	git_reference_free(ref);
}

typedef struct {
	git_reference **items;
	size_t count, cap;
} ref_list;

static int ref_list_add(ref_list *list, git_reference *ref)
{
	if (list->count == list->cap) {
		size_t cap = list->cap ? list->cap * 2 : 64;
		git_reference **items = realloc(list->items, cap * sizeof(*items));

		if (items == NULL)
			return -1;
		list->items = items;
		list->cap = cap;
	}
	list->items[list->count++] = ref;
	return 0;
}

static void ref_list_free(ref_list *list)
{
	size_t i;

	for (i = 0; i < list->count; i++)
		git_reference_free(list->items[i]);
	free(list->items);
}

static int by_name(const void *a, const void *b)
{
	git_reference *const *x = a, *const *y = b;

	return strcmp(git_reference_name(*x), git_reference_name(*y));
}

static void collect_iterated(git_repository *repo, ref_list *list, reply *r)
{
	git_reference_iterator *it = NULL;
	git_reference *ref;
	int rc;

	if (git_reference_iterator_new(&it, repo) < 0) {
		answer_error(r, "git_reference_iterator_new: %s", lg2_message());
		return;
	}
	while ((rc = git_reference_next(&ref, it)) == 0) {
		if (ref_list_add(list, ref) < 0) {
			git_reference_free(ref);
			answer_error(r, "out of memory");
			break;
		}
	}
	if (rc < 0 && rc != GIT_ITEROVER)
		answer_error(r, "git_reference_next: %s", lg2_message());
	git_reference_iterator_free(it);
}

static void collect_root_refs(git_repository *repo, ref_list *list, reply *r)
{
	size_t i;

	for (i = 0; ROOT_REFS[i] != NULL && !failed(r); i++) {
		git_reference *ref;

		if (lookup(repo, ROOT_REFS[i], &ref, r) == 0 && ref_list_add(list, ref) < 0) {
			git_reference_free(ref);
			answer_error(r, "out of memory");
		}
	}
}

static void verb_refs(session *s, const json_value *req, reply *r)
{
	git_repository *repo = need_repo(s, r);
	ref_list list = { NULL, 0, 0 };
	size_t i;

	(void)req;
	if (repo == NULL)
		return;
	collect_iterated(repo, &list, r);
	collect_root_refs(repo, &list, r);
	if (!failed(r)) {
		qsort(list.items, list.count, sizeof(*list.items), by_name);
		json_key(r->out, "refs");
		json_raw(r->out, "[");
		for (i = 0; i < list.count; i++) {
			json_raw(r->out, i ? "," : "");
			write_ref(r->out, list.items[i]);
		}
		json_raw(r->out, "]");
	}
	ref_list_free(&list);
}

static long long tz_hhmm(int minutes)
{
	int a = minutes < 0 ? -minutes : minutes;
	long long hhmm = (a / 60) * 100 + a % 60;

	return minutes < 0 ? -hhmm : hhmm;
}

static void write_entry(json_buf *out, const git_reflog_entry *e)
{
	const git_signature *who = git_reflog_entry_committer(e);
	const char *msg = git_reflog_entry_message(e);
	char *text = strdup(msg ? msg : "");
	size_t n = text ? strlen(text) : 0;

	if (n > 0 && text[n - 1] == '\n')
		text[n - 1] = '\0'; /* the protocol drops the one newline git stores */
	json_raw(out, "{");
	json_key(out, "old");
	write_oid(out, git_reflog_entry_id_old(e));
	json_key(out, "new");
	write_oid(out, git_reflog_entry_id_new(e));
	json_key(out, "name");
	json_string(out, who->name);
	json_key(out, "email");
	json_string(out, who->email);
	json_key(out, "time");
	json_int(out, (long long)who->when.time);
	json_key(out, "tz");
	json_int(out, tz_hhmm(who->when.offset));
	json_key(out, "message");
	json_string(out, text ? text : "");
	json_raw(out, "}");
	free(text);
}

static void verb_reflog(session *s, const json_value *req, reply *r)
{
	const char *name = json_get_string(req, "name");
	git_repository *repo = need_repo(s, r);
	git_reflog *log = NULL;
	size_t i, n;
	int has;

	if (repo == NULL || name == NULL) {
		answer_error(r, "reflog needs an open repository and a name");
		return;
	}
	if ((has = git_reference_has_log(repo, name)) < 0 || git_reflog_read(&log, repo, name) < 0) {
		answer_error(r, "reading the reflog of %s: %s", name, lg2_message());
		return;
	}
	json_key(r->out, "exists");
	json_raw(r->out, has ? "true" : "false");
	json_key(r->out, "entries");
	json_raw(r->out, "[");
	n = git_reflog_entrycount(log);
	for (i = 0; i < n; i++) { /* index 0 is the newest entry */
		json_raw(r->out, i ? "," : "");
		write_entry(r->out, git_reflog_entry_byindex(log, i));
	}
	json_raw(r->out, "]");
	git_reflog_free(log);
}

/* -- compaction -------------------------------------------------------------------------- */

static long count_tables(const char *gitdir)
{
	char path[4096];
	FILE *f;
	long lines = 0;
	int c;

	snprintf(path, sizeof(path), "%s/reftable/tables.list", gitdir);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while ((c = fgetc(f)) != EOF)
		lines += (c == '\n');
	fclose(f);
	return lines;
}

static void verb_compact(session *s, const json_value *req, reply *r)
{
	const char *mode = json_get_string(req, "mode");
	git_repository *repo = need_repo(s, r);
	git_refdb *db = NULL;
	int error;

	if (repo == NULL)
		return;
	if (mode == NULL || strcmp(mode, "all") != 0) {
		answer_unsupported(r, "compaction mode %s (libgit2 offers git_refdb_compress only)",
				   mode ? mode : "(none)");
		return;
	}
	if ((error = git_repository_refdb(&db, repo)) < 0 || (error = git_refdb_compress(db)) < 0) {
		/* A stack another writer holds or changed: git's pack-refs gives up the same way. */
		if (error == GIT_ELOCKED || error == GIT_EMODIFIED)
			answer_refused(r, "lock", NULL, NULL, "git_refdb_compress: %s", lg2_message());
		else
			answer_error(r, "git_refdb_compress: %s", lg2_message());
	}
	git_refdb_free(db);
	if (!failed(r)) {
		json_key(r->out, "tables");
		json_int(r->out, count_tables(s->gitdir));
	}
}

/* -- transactions: parsing ---------------------------------------------------------------- */

typedef enum { NEW_NONE, NEW_OID, NEW_SYMREF, NEW_DELETE } new_kind;
typedef enum { OLD_ANY, OLD_ABSENT, OLD_PRESENT, OLD_OID, OLD_SYMREF } old_kind;

typedef struct {
	const char *name, *message;
	new_kind new_kind;
	git_oid new_oid;
	const char *new_target;
	old_kind old_kind;
	git_oid old_oid;
	const char *old_target;
	int no_deref, create_reflog;
	char *target;           /* the ref written: name, or the ref name resolves to */
} update;

typedef struct {
	const char *name, *email;
	long long time, tz;
} ident;

/* A hex id: 0 parsed, 1 parsed and null, -1 bad (answered). */
static int parse_oid(const char *hex, git_oid *out, reply *r)
{
	size_t i, n = strlen(hex);
	int zero = 1;

	for (i = 0; i < n; i++)
		zero &= (hex[i] == '0');
	if (n == 64) {
		answer_unsupported(r, "SHA-256 ids (this libgit2 build reads SHA-1)");
		return -1;
	}
	if (n != OID_HEX || git_oid_fromstr(out, hex) < 0) {
		answer_error(r, "bad object id '%s'", hex);
		return -1;
	}
	return zero;
}

static const char *symref_of(const json_value *v)
{
	const char *target = json_get_string(v, "symref");

	return v != NULL && v->type == JSON_OBJECT ? target : NULL;
}

static int parse_new(const json_value *v, update *u, reply *r)
{
	int rc;

	if (v == NULL) {
		u->new_kind = NEW_NONE;
	} else if (v->type == JSON_NULL) {
		u->new_kind = NEW_DELETE;
	} else if (v->type == JSON_STRING) {
		if ((rc = parse_oid(v->string, &u->new_oid, r)) < 0)
			return -1;
		u->new_kind = rc == 1 ? NEW_DELETE : NEW_OID;
	} else if ((u->new_target = symref_of(v)) != NULL) {
		u->new_kind = NEW_SYMREF;
	} else {
		answer_error(r, "bad new value for %s", u->name);
		return -1;
	}
	return 0;
}

static int parse_old(const json_value *v, update *u, reply *r)
{
	int rc;

	if (v == NULL || v->type == JSON_NULL || (v->type == JSON_STRING && !strcmp(v->string, "any"))) {
		u->old_kind = OLD_ANY;
	} else if (v->type == JSON_STRING && !strcmp(v->string, "absent")) {
		u->old_kind = OLD_ABSENT;
	} else if (v->type == JSON_STRING && !strcmp(v->string, "present")) {
		u->old_kind = OLD_PRESENT;
	} else if (v->type == JSON_STRING) {
		if ((rc = parse_oid(v->string, &u->old_oid, r)) < 0)
			return -1;
		u->old_kind = rc == 1 ? OLD_ABSENT : OLD_OID;
	} else if ((u->old_target = symref_of(v)) != NULL) {
		u->old_kind = OLD_SYMREF;
	} else {
		answer_error(r, "bad old value for %s", u->name);
		return -1;
	}
	return 0;
}

static int parse_update(const json_value *v, update *u, reply *r)
{
	memset(u, 0, sizeof(*u));
	if ((u->name = json_get_string(v, "name")) == NULL) {
		answer_error(r, "an update needs a name");
		return -1;
	}
	u->message = json_get_string(v, "message");
	if (u->message == NULL)
		u->message = "";
	u->no_deref = json_get_bool(v, "no_deref");
	u->create_reflog = json_get_bool(v, "create_reflog");
	if (parse_new(json_get(v, "new"), u, r) < 0 || parse_old(json_get(v, "old"), u, r) < 0)
		return -1;
	return 0;
}

static int parse_ident(const json_value *v, ident *c, reply *r)
{
	const json_value *t = json_get(v, "time"), *tz = json_get(v, "tz");

	c->name = json_get_string(v, "name");
	c->email = json_get_string(v, "email");
	if (c->name == NULL || c->email == NULL || t == NULL || t->type != JSON_INT ||
	    tz == NULL || tz->type != JSON_INT) {
		answer_error(r, "a transaction needs a committer {name, email, time, tz}");
		return -1;
	}
	c->time = t->integer;
	c->tz = tz->integer;
	return 0;
}

/* -- transactions: checks ----------------------------------------------------------------- */

/*
 * The ref an update writes: the name itself for no_deref; otherwise the end of name's
 * symref chain (which need not exist), for symref values and symref old values too: git's
 * `update-ref --stdin` carries a symref-update without no-deref, and its old target, to
 * the ref the symref points to (split_symref_update), as it does an id update.
 */
static int resolve_target(git_repository *repo, update *u, reply *r)
{
	char *name;
	int depth, valid = 0;

	if (git_reference_name_is_valid(&valid, u->name) < 0 || !valid) {
		answer_refused(r, "name", NULL, u->name, "invalid ref name '%s'", u->name);
		return -1;
	}
	name = strdup(u->name);
	if (!u->no_deref) {
		for (depth = 0; name != NULL && depth < MAX_SYMREF_DEPTH; depth++) {
			git_reference *ref;
			int rc = lookup(repo, name, &ref, r);

			if (rc != 0)
				break;
			if (git_reference_type(ref) == GIT_REFERENCE_SYMBOLIC) {
				free(name);
				name = strdup(git_reference_symbolic_target(ref));
			} else {
				depth = MAX_SYMREF_DEPTH;
			}
			git_reference_free(ref);
		}
	}
	if (name == NULL)
		answer_error(r, "out of memory");
	u->target = name;
	return failed(r) ? -1 : 0;
}

/* The id a ref stands for (through symrefs): 0 found, -1 when it does not resolve. */
static int resolved_id(git_reference *ref, git_oid *out)
{
	git_reference *resolved = NULL;
	int rc = git_reference_resolve(&resolved, ref);

	if (rc == 0)
		git_oid_cpy(out, git_reference_target(resolved));
	git_reference_free(resolved);
	return rc < 0 ? -1 : 0;
}

/* Whether the current ref (NULL: absent) is what the update expects. */
static int old_matches(const update *u, git_reference *cur)
{
	git_oid id;

	switch (u->old_kind) {
	case OLD_ANY:
		return 1;
	case OLD_ABSENT:
		return cur == NULL;
	case OLD_PRESENT:
		return cur != NULL;
	case OLD_OID:
		return cur != NULL && resolved_id(cur, &id) == 0 && git_oid_equal(&id, &u->old_oid);
	default:
		return cur != NULL && git_reference_type(cur) == GIT_REFERENCE_SYMBOLIC &&
		       strcmp(git_reference_symbolic_target(cur), u->old_target) == 0;
	}
}

/* Looks the target up and checks the old value: 0 matches (*cur may be NULL), -1 answered. */
static int check_old(git_repository *repo, const update *u, git_reference **cur, reply *r)
{
	if (lookup(repo, u->target, cur, r) < 0)
		return -1;
	if (!old_matches(u, *cur)) {
		answer_refused(r, "old-value", NULL, u->name, "%s is not at the expected old value",
			       u->target);
		git_reference_free(*cur);
		*cur = NULL;
		return -1;
	}
	return 0;
}

/* Maps a libgit2 error of a write onto the protocol's refusal reasons (or an error). */
static void answer_lg2(reply *r, int rc, const update *u, const char *call)
{
	const char *why = lg2_message();

	switch (rc) {
	case GIT_EMODIFIED:
		answer_refused(r, "old-value", NULL, u->name, "%s: %s", call, why);
		break;
	case GIT_EEXISTS:
		if (u->old_kind == OLD_ABSENT)
			answer_refused(r, "old-value", NULL, u->name, "%s: %s", call, why);
		else
			answer_refused(r, "other", "exists", u->name, "%s: %s", call, why);
		break;
	case GIT_ENOTFOUND: /* the expected old value's ref is missing; anything else failed */
		if (u->old_kind == OLD_OID || u->old_kind == OLD_PRESENT || u->old_kind == OLD_SYMREF)
			answer_refused(r, "old-value", NULL, u->name, "%s: %s", call, why);
		else
			answer_error(r, "%s: %s", call, why);
		break;
	case GIT_EINVALIDSPEC:
		answer_refused(r, "name", NULL, u->name, "%s: %s", call, why);
		break;
	case GIT_ELOCKED:
		answer_refused(r, "lock", NULL, u->name, "%s: %s", call, why);
		break;
	case GIT_EDIRECTORY:
		answer_refused(r, "df-conflict", NULL, u->name, "%s: %s", call, why);
		break;
	default: /* libgit2 reports other refusals (a ref above the name) as plain errors */
		answer_error(r, "%s (%d): %s", call, rc, why);
		break;
	}
}

/* Two updates of one ref: git refuses them as "multiple updates". */
static int check_duplicates(const update *us, size_t n, reply *r)
{
	size_t i, j;

	for (i = 0; i < n; i++)
		for (j = 0; j < i; j++)
			if (strcmp(us[i].target, us[j].target) == 0) {
				answer_refused(r, "name", "duplicate", us[i].name,
					       "multiple updates for %s", us[i].target);
				return -1;
			}
	return 0;
}

/* What libgit2 cannot express for a single update, answered before anything is written. */
static int check_expressible(const update *u, reply *r)
{
	if (u->new_kind == NEW_OID && u->old_kind == OLD_SYMREF)
		answer_unsupported(r, "an id write with a symref old value "
				   "(git_reference_create_matching takes an expected id only)");
	else if (u->new_kind == NEW_SYMREF && (u->old_kind == OLD_OID || u->old_kind == OLD_PRESENT))
		answer_unsupported(r, "a symref write with an id or \"present\" old value "
				   "(git_reference_symbolic_create_matching takes an expected target only)");
	else if (u->new_kind == NEW_DELETE && u->old_kind == OLD_ABSENT)
		answer_unsupported(r, "a deletion of a ref that must not exist");
	return failed(r) ? -1 : 0;
}

/* -- transactions: one update through the ref calls -------------------------------------- */

static void verify_only(git_repository *repo, const update *u, reply *r)
{
	git_reference *cur = NULL;

	if (check_old(repo, u, &cur, r) == 0)
		git_reference_free(cur);
}

/* git_reference_delete checks the ref is still what was looked up (atomically). */
static void delete_one(git_repository *repo, const update *u, reply *r)
{
	git_reference *cur = NULL;
	int rc;

	if (check_old(repo, u, &cur, r) < 0 || cur == NULL)
		return; /* refused, or nothing to delete */
	if (strcmp(git_reference_name(cur), "HEAD") == 0) {
		/* git_reference_delete refuses HEAD by design ("cannot delete HEAD") */
		answer_unsupported(r, "deleting HEAD (git_reference_delete refuses HEAD by design)");
		git_reference_free(cur);
		return;
	}
	if ((rc = git_reference_delete(cur)) < 0)
		answer_lg2(r, rc, u, "git_reference_delete");
	git_reference_free(cur);
}

/*
 * The expected id handed to git_reference_create_matching: the old id, or for "present"
 * the id the ref has now (so a concurrent change is refused rather than overwritten; a
 * symref found there under no_deref has no expected id to give, and is checked only here).
 */
static int expected_id(git_repository *repo, const update *u, git_oid *out, const git_oid **exp,
		       reply *r)
{
	git_reference *cur = NULL;

	*exp = NULL;
	if (u->old_kind == OLD_OID) {
		*exp = &u->old_oid;
	} else if (u->old_kind == OLD_PRESENT) {
		if (check_old(repo, u, &cur, r) < 0)
			return -1;
		if (git_reference_type(cur) == GIT_REFERENCE_DIRECT) {
			git_oid_cpy(out, git_reference_target(cur));
			*exp = out;
		}
		git_reference_free(cur);
	}
	return 0;
}

static void write_one(git_repository *repo, const update *u, reply *r)
{
	git_reference *written = NULL;
	const git_oid *exp;
	git_oid now;
	int force = u->old_kind != OLD_ABSENT, rc;

	if (u->new_kind == NEW_OID) {
		if (expected_id(repo, u, &now, &exp, r) < 0)
			return;
		/*
		 * "absent" on a symref written itself (no_deref) whose chain does not resolve:
		 * git reads it as the null id and replaces it. create_matching takes no expected
		 * target, so here the check is the adapter's (not atomic against other writers).
		 */
		if (u->old_kind == OLD_ABSENT && u->no_deref) {
			git_reference *cur = NULL;
			git_oid id;

			if (lookup(repo, u->target, &cur, r) < 0)
				return;
			if (cur != NULL && git_reference_type(cur) == GIT_REFERENCE_SYMBOLIC &&
			    resolved_id(cur, &id) < 0)
				force = 1;
			git_reference_free(cur);
		}
		rc = git_reference_create_matching(&written, repo, u->target, &u->new_oid, force, exp,
						   u->message);
		if (rc < 0)
			answer_lg2(r, rc, u, "git_reference_create_matching");
	} else {
		const char *old_target = u->old_target;
		git_reference *cur = NULL;
		git_oid id;

		/*
		 * "absent" is git's null old id: a symref whose chain does not resolve reads as
		 * the null id, so it may be replaced; its current target is passed as the
		 * expected one, so a concurrent change is still refused.
		 */
		if (u->old_kind == OLD_ABSENT) {
			if (lookup(repo, u->target, &cur, r) < 0)
				return;
			if (cur != NULL && git_reference_type(cur) == GIT_REFERENCE_SYMBOLIC &&
			    resolved_id(cur, &id) < 0) {
				force = 1;
				old_target = git_reference_symbolic_target(cur);
			}
		}
		rc = git_reference_symbolic_create_matching(&written, repo, u->target, u->new_target,
							    force, old_target, u->message);
		git_reference_free(cur);
		if (rc < 0)
			answer_lg2(r, rc, u, "git_reference_symbolic_create_matching");
	}
	git_reference_free(written);
}

/*
 * create_reflog: an existence marker written before the update (libgit2 writes an entry
 * only into a reflog that exists), removed again when the update is refused.
 */
static void apply_one(git_repository *repo, const update *u, reply *r)
{
	int made = 0, rc;

	if (u->create_reflog && (u->new_kind == NEW_OID || u->new_kind == NEW_SYMREF) &&
	    git_reference_has_log(repo, u->target) == 0) {
		if ((rc = git_reference_ensure_log(repo, u->target)) < 0) {
			answer_error(r, "git_reference_ensure_log %s: %s", u->target, lg2_message());
			return;
		}
		/* only a marker that is there is removed again (git_reflog_delete crashes on a
		 * ref without reflog records, and ensure_log may have written none: F3, F5) */
		made = git_reference_has_log(repo, u->target) == 1;
	}
	if (u->new_kind == NEW_NONE)
		verify_only(repo, u, r);
	else if (u->new_kind == NEW_DELETE)
		delete_one(repo, u, r);
	else
		write_one(repo, u, r);
	if (made && failed(r) && git_reflog_delete(repo, u->target) < 0)
		fprintf(stderr, "libgit2-adapter: could not remove the reflog marker of %s: %s\n",
			u->target, lg2_message());
}

/* -- transactions: several updates through git_transaction -------------------------------- */

static int lock_all(git_transaction *tx, update *us, size_t n, reply *r)
{
	size_t i;
	int rc;

	for (i = 0; i < n; i++) {
		if (us[i].create_reflog) {
			answer_unsupported(r, "create_reflog in a multi-ref transaction "
					   "(git_transaction_* cannot create a reflog)");
			return -1;
		}
		if ((rc = git_transaction_lock_ref(tx, us[i].target)) < 0) {
			if (rc == GIT_ERROR && strstr(lg2_message(), "does not support locking"))
				answer_unsupported(r, "an atomic multi-ref transaction: this refdb has "
						   "no locking (git_transaction_lock_ref: %s)", lg2_message());
			else
				answer_lg2(r, rc, &us[i], "git_transaction_lock_ref");
			return -1;
		}
	}
	return 0;
}

/* Under the locks, the refs stay as checked until the commit. */
static int stage_all(git_repository *repo, git_transaction *tx, update *us, size_t n,
		     const git_signature *sig, reply *r)
{
	size_t i;

	for (i = 0; i < n; i++) {
		update *u = &us[i];
		git_reference *cur = NULL;
		int rc = 0;

		if (check_old(repo, u, &cur, r) < 0)
			return -1;
		git_reference_free(cur);
		if (u->new_kind == NEW_OID)
			rc = git_transaction_set_target(tx, u->target, &u->new_oid, sig, u->message);
		else if (u->new_kind == NEW_SYMREF)
			rc = git_transaction_set_symbolic_target(tx, u->target, u->new_target, sig,
								 u->message);
		else if (u->new_kind == NEW_DELETE)
			rc = git_transaction_remove(tx, u->target);
		if (rc < 0) {
			answer_lg2(r, rc, u, "git_transaction_set");
			return -1;
		}
	}
	return 0;
}

static void apply_many(git_repository *repo, update *us, size_t n, const ident *c, reply *r)
{
	git_transaction *tx = NULL;
	git_signature *sig = NULL;
	int rc;

	/* Here the committer's time and zone go in directly, through the signature. */
	if (git_signature_new(&sig, c->name, c->email, (git_time_t)c->time,
			      (int)((c->tz / 100) * 60 + c->tz % 100)) < 0 ||
	    git_transaction_new(&tx, repo) < 0) {
		answer_error(r, "starting a transaction: %s", lg2_message());
	} else if (lock_all(tx, us, n, r) == 0 && stage_all(repo, tx, us, n, sig, r) == 0 &&
		   (rc = git_transaction_commit(tx)) < 0) {
		answer_lg2(r, rc, &us[0], "git_transaction_commit");
	}
	git_transaction_free(tx);
	git_signature_free(sig);
}

/* -- transactions: the verb --------------------------------------------------------------- */

/* Whether the refdb can lock refs for git_transaction_*: 0 (answered unsupported) when not. */
static int can_lock(git_repository *repo, reply *r)
{
	git_transaction *tx = NULL;
	int ok = 1;

	if (git_transaction_new(&tx, repo) < 0) {
		answer_error(r, "git_transaction_new: %s", lg2_message());
		return 0;
	}
	if (git_transaction_lock_ref(tx, "HEAD") < 0 && strstr(lg2_message(), "does not support locking")) {
		answer_unsupported(r, "an atomic multi-ref transaction: this refdb has no locking "
				   "(git_transaction_lock_ref: %s)", lg2_message());
		ok = 0;
	}
	git_transaction_free(tx);
	return ok;
}

static int parse_updates(git_repository *repo, const json_value *list, update *us, reply *r)
{
	size_t i;

	for (i = 0; i < list->count; i++)
		if (parse_update(&list->items[i], &us[i], r) < 0 ||
		    resolve_target(repo, &us[i], r) < 0 || check_expressible(&us[i], r) < 0)
			return -1;
	return check_duplicates(us, list->count, r);
}

static void run_updates(git_repository *repo, update *us, size_t n, const ident *c, reply *r)
{
	char *saved_tz = getenv("TZ") ? strdup(getenv("TZ")) : NULL;

	if (git_repository_set_ident(repo, c->name, c->email) < 0) {
		answer_error(r, "git_repository_set_ident: %s", lg2_message());
	} else if (n == 1) {
		set_zone(c->tz);
		fixed_now = (time_t)c->time;
		apply_one(repo, &us[0], r);
		fixed_now = (time_t)-1;
	} else if (n > 1) {
		apply_many(repo, us, n, c, r);
	}
	if (saved_tz)
		setenv("TZ", saved_tz, 1);
	else
		unsetenv("TZ");
	tzset();
	free(saved_tz);
}

static void verb_transaction(session *s, const json_value *req, reply *r)
{
	const json_value *list = json_get(req, "updates");
	git_repository *repo = need_repo(s, r);
	update *us;
	ident c;
	size_t i;

	if (repo == NULL)
		return;
	if (list == NULL || list->type != JSON_ARRAY) {
		answer_error(r, "a transaction needs updates");
		return;
	}
	if (parse_ident(json_get(req, "committer"), &c, r) < 0)
		return;
	if ((us = calloc(list->count + 1, sizeof(*us))) == NULL) {
		answer_error(r, "out of memory");
		return;
	}
	/* a multi-ref transaction this refdb cannot lock is not tried at all: no refusal of
	 * one of its updates is answered for a transaction libgit2 cannot make */
	if ((list->count < 2 || can_lock(repo, r)) && parse_updates(repo, list, us, r) == 0)
		run_updates(repo, us, list->count, &c, r);
	for (i = 0; i < list->count; i++)
		free(us[i].target);
	free(us);
}

/* -- the loop ---------------------------------------------------------------------------- */

typedef void (*verb_fn)(session *, const json_value *, reply *);

static const struct {
	const char *name;
	verb_fn fn;
} HANDLERS[] = {
	{ "hello", verb_hello }, { "open", verb_open }, { "refs", verb_refs },
	{ "ref", verb_ref }, { "reflog", verb_reflog }, { "transaction", verb_transaction },
	{ "compact", verb_compact }, { "reload", verb_reload }, { "close", verb_close },
	{ "quit", verb_quit },
};

static void dispatch(session *s, const json_value *req, reply *r)
{
	const char *verb = json_get_string(req, "verb");
	size_t i;

	for (i = 0; verb != NULL && i < sizeof(HANDLERS) / sizeof(HANDLERS[0]); i++)
		if (strcmp(HANDLERS[i].name, verb) == 0) {
			HANDLERS[i].fn(s, req, r);
			return;
		}
	answer_unsupported(r, "verb %s", verb ? verb : "(none)");
}

static void write_failure(json_buf *out, const reply *r)
{
	json_key(out, "answer");
	json_string(out, r->kind);
	if (r->reason != NULL) {
		json_key(out, "reason");
		json_string(out, r->reason);
		if (r->detail != NULL) {
			json_key(out, "detail");
			json_string(out, r->detail);
		}
		if (r->ref[0] != '\0') {
			json_key(out, "ref");
			json_string(out, r->ref);
		}
	}
	json_key(out, "message");
	json_string(out, r->message);
}

/* One request line in, one answer line out. */
static void serve_line(session *s, const char *line)
{
	json_value req;
	json_buf out = { NULL, 0, 0, 0 };
	reply r;
	size_t mark;

	memset(&r, 0, sizeof(r));
	r.kind = "done";
	r.out = &out;
	json_raw(&out, "{");
	if (json_parse(line, &req, r.message, sizeof(r.message)) < 0) {
		r.kind = "error";
	} else {
		if (json_get(&req, "id") != NULL) {
			json_key(&out, "id");
			json_value_write(&out, json_get(&req, "id"));
		}
		mark = out.len;
		if (req.type != JSON_OBJECT)
			answer_error(&r, "a request must be a JSON object");
		else
			dispatch(s, &req, &r);
		json_free(&req);
		if (failed(&r) && out.data != NULL)
			out.data[out.len = mark] = '\0'; /* drop a failed verb's partial fields */
	}
	if (failed(&r)) {
		write_failure(&out, &r);
	} else {
		json_key(&out, "answer");
		json_string(&out, "done");
	}
	json_raw(&out, "}\n");
	if (out.failed)
		fputs("{\"answer\":\"error\",\"message\":\"out of memory\"}\n", stdout);
	else
		fputs(out.data, stdout);
	fflush(stdout);
	json_buf_free(&out);
}

static int blank(const char *line)
{
	return line[strspn(line, " \t\r\n")] == '\0';
}

int main(void)
{
	session s = { NULL, NULL, 0 };
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	if (git_libgit2_init() < 0) {
		fprintf(stderr, "git_libgit2_init failed\n");
		return 1;
	}
	while (!s.quit && (n = getline(&line, &cap, stdin)) >= 0) {
		if (n > 0 && line[n - 1] == '\n')
			line[n - 1] = '\0';
		if (!blank(line))
			serve_line(&s, line);
	}
	close_repo(&s);
	free(s.gitdir);
	free(line);
	git_libgit2_shutdown();
	return 0;
}
