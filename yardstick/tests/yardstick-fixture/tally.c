/*
 * The yardsticks' self-test program (yardstick/tests/yardstick.rs): small functions whose
 * mutants land in every class. gate.sh checks count_below, has_above and spin; tests.sh
 * checks first_index and spin; counters.sh compares the steps has_above takes; nothing
 * checks twice; the case labels of name make unviable mutants, the #if 0 block equivalent
 * ones, and the loop of spin hangs when its increment is mutated.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int count_below(const int *v, int n, int limit)
{
	int k = 0;
	for (int i = 0; i < n; i++)
		if (v[i] < limit)
			k++;
#if 0
	k += 2;
#endif
	return k;
}

static int first_index(const int *v, int n, int want)
{
	for (int i = 0; i < n; i++)
		if (v[i] == want)
			return i;
	return -1;
}

static int has_above(const int *v, int n, int limit, long *steps)
{
	int found = 0;
	for (int i = 0; i < n && !found; i++) {
		(*steps)++;
		if (v[i] > limit)
			found = 1;
	}
	return found;
}

static long long spin(long long n)
{
	long long i = 0;
	while (i < n)
		i++;
	return i;
}

static const char *name(int k)
{
	switch (k) {
	case 0:
		return "zero";
	case 1:
		return "one";
	}
	return "many";
}

static int twice(int x)
{
	return x + x;
}

static void note_pid(void)
{
	const char *dir = getenv("TALLY_PIDDIR");
	char path[4096];
	FILE *f;

	if (!dir)
		return;
	snprintf(path, sizeof(path), "%s/%d", dir, (int)getpid());
	f = fopen(path, "w");
	if (f)
		fclose(f);
}

int main(int argc, char **argv)
{
	static const int v[] = { 4, 8, 15, 16, 23, 42 };
	long steps = 0;
	int arg = argc > 2 ? atoi(argv[2]) : 0;

	note_pid();
	if (argc < 2)
		return 2;
	if (!strcmp(argv[1], "below"))
		printf("%d\n", count_below(v, 6, arg));
	else if (!strcmp(argv[1], "find"))
		printf("%d\n", first_index(v, 6, arg));
	else if (!strcmp(argv[1], "above"))
		printf("%d\n", has_above(v, 6, arg, &steps));
	else if (!strcmp(argv[1], "steps"))
		printf("%ld\n", (has_above(v, 6, arg, &steps), steps));
	else if (!strcmp(argv[1], "spin"))
		printf("%lld\n", spin(arg));
	else if (!strcmp(argv[1], "name"))
		printf("%s\n", name(arg));
	else if (!strcmp(argv[1], "twice"))
		printf("%d\n", twice(arg));
	return 0;
}
