/*
 * hotpaths-c: the workloads of perf/src/bin/hotpaths.rs run through git's C reftable
 * library, for a side-by-side in one process model (thread CPU time, same reps, same
 * checksums, same output lines).
 *
 *   hotpaths-c DIR [REPS] [LOOKUPS]
 *
 * DIR is a stack directory (.git/reftable) holding refs/tags/t-%07d. Workloads:
 *   iterate          a stack ref iterator sought to "" and read to its end, as git's
 *                    reftable backend iterates for for-each-ref: per record the name's
 *                    length and the value's first byte folded into the checksum
 *                    h = h * 31 + len + id[0] (wrapping, 64 bits);
 *   lookup-existing  LOOKUPS reads of existing names (reftable_stack_read_ref), name
 *                    number (k * 7919 + 13) % N; the checksum counts the names found plus
 *                    the sum of their first id bytes;
 *   lookup-missing   the same names with "x" appended.
 * HOTPATHS_ONLY=iterate,lookup-missing runs only the named workloads (iterate always
 * runs: it counts N).
 *
 * Written against git's public reftable headers (reftable/reftable-*.h) of git master
 * v2.55 and linked with the libgit.a of a built checkout: see build.sh. Our code, not git's.
 */

#include "reftable/reftable-error.h"
#include "reftable/reftable-iterator.h"
#include "reftable/reftable-record.h"
#include "reftable/reftable-stack.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct result {
	uint64_t ops;
	uint64_t sum;
};

static uint64_t thread_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void fail(const char *what, int err)
{
	fprintf(stderr, "hotpaths-c: %s: %s\n", what, reftable_error_str(err));
	exit(2);
}

/* The first byte of a record's object id; 0 for symrefs and deletions. */
static uint64_t first_byte(const struct reftable_ref_record *ref)
{
	switch (ref->value_type) {
	case REFTABLE_REF_VAL1:
		return ref->value.val1[0];
	case REFTABLE_REF_VAL2:
		return ref->value.val2.value[0];
	default:
		return 0;
	}
}

static struct result iterate(struct reftable_stack *st)
{
	struct reftable_iterator it = { 0 };
	struct reftable_ref_record ref = { 0 };
	struct result r = { 0, 0 };
	int err;

	err = reftable_stack_init_ref_iterator(st, &it);
	if (err < 0)
		fail("init iterator", err);
	err = reftable_iterator_seek_ref(&it, "");
	if (err < 0)
		fail("seek", err);
	while ((err = reftable_iterator_next_ref(&it, &ref)) == 0) {
		r.ops++;
		r.sum = r.sum * 31 + strlen(ref.refname) + first_byte(&ref);
	}
	if (err < 0)
		fail("next", err);
	reftable_ref_record_release(&ref);
	reftable_iterator_destroy(&it);
	return r;
}

static struct result lookup(struct reftable_stack *st, char **names, size_t n)
{
	struct reftable_ref_record ref = { 0 };
	struct result r = { n, 0 };

	for (size_t i = 0; i < n; i++) {
		int err = reftable_stack_read_ref(st, names[i], &ref);
		if (err < 0)
			fail("read_ref", err);
		if (!err)
			r.sum += 1 + first_byte(&ref);
	}
	reftable_ref_record_release(&ref);
	return r;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Print "name first steady ops checksum" over reps runs of one workload. */
static void report(const char *name, int reps, struct result (*work)(void *), void *arg)
{
	double times[64];
	struct result first = { 0, 0 };

	if (reps < 2)
		reps = 2;
	if (reps > 64)
		reps = 64;
	for (int i = 0; i < reps; i++) {
		uint64_t t = thread_ns();
		struct result r = work(arg);
		uint64_t spent = thread_ns() - t;
		if (!i) {
			first = r;
		} else if (r.ops != first.ops || r.sum != first.sum) {
			fprintf(stderr, "hotpaths-c: %s: checksum changed between reps\n", name);
			exit(2);
		}
		times[i] = (double)spent / (double)(r.ops ? r.ops : 1);
	}
	qsort(times + 1, reps - 1, sizeof(double), by_value);
	printf("%s %.1f %.1f %llu %llu\n", name, times[0], times[1 + (reps - 1) / 2],
	       (unsigned long long)first.ops, (unsigned long long)first.sum);
	fflush(stdout);
}

struct lookups {
	struct reftable_stack *st;
	char **names;
	size_t n;
};

static struct result iterate_work(void *arg)
{
	return iterate(arg);
}

static struct result lookup_work(void *arg)
{
	struct lookups *l = arg;
	return lookup(l->st, l->names, l->n);
}

static int wanted(const char *name)
{
	const char *only = getenv("HOTPATHS_ONLY");
	size_t len = strlen(name);

	if (!only)
		return 1;
	for (const char *p = only; *p;) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		if (n == len && !strncmp(p, name, n))
			return 1;
		p += n + (end ? 1 : 0);
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct reftable_stack_options opts = { 0 };
	struct reftable_stack *st = NULL;
	int reps = argc > 2 ? atoi(argv[2]) : 4;
	size_t lookups = argc > 3 ? strtoul(argv[3], NULL, 10) : 10000;
	const char *suffixes[2] = { "", "x" };
	const char *labels[2] = { "lookup-existing", "lookup-missing" };
	struct result all;
	int err;

	if (argc < 2) {
		fprintf(stderr, "usage: hotpaths-c DIR [REPS] [LOOKUPS]\n");
		return 2;
	}
	err = reftable_new_stack(&st, argv[1], &opts);
	if (err < 0)
		fail(argv[1], err);

	report("iterate", reps, iterate_work, st);
	all = iterate(st);

	for (int w = 0; w < 2; w++) {
		struct lookups l = { st, calloc(lookups, sizeof(char *)), lookups };
		if (!wanted(labels[w]))
			continue;
		for (size_t k = 0; k < lookups; k++) {
			char buf[64];
			snprintf(buf, sizeof(buf), "refs/tags/t-%07llu%s",
				 (unsigned long long)((k * 7919 + 13) % (all.ops ? all.ops : 1)),
				 suffixes[w]);
			l.names[k] = strdup(buf);
		}
		report(labels[w], reps, lookup_work, &l);
		for (size_t k = 0; k < lookups; k++)
			free(l.names[k]);
		free(l.names);
	}
	reftable_stack_destroy(st);
	return 0;
}
