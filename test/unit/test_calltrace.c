/* Unit tests: the trace table (merging, distinct traces, overflow, clear, concurrent and re-entrant
 * inserts with exact totals). */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <time.h>

#include "calltrace.h"
#include "check.h"

#define N_TRACES 300

static struct raw_frame traces[N_TRACES][40];
static int lens[N_TRACES];

static void make_traces(void)
{
	for (int t = 0; t < N_TRACES; t++) {
		lens[t] = 1 + (t * 7) % 37;
		for (int i = 0; i < lens[t]; i++) {
			traces[t][i].bci = i;
			traces[t][i].kind = RAW_JAVA;
			traces[t][i].id = 0x7f0000000000ull + (uint64_t)t * 1000 + (uint64_t)i;
		}
	}
}

/* index of a trace in traces[] by its frames, or -1 */
static int which(const struct raw_frame *f, int n)
{
	for (int t = 0; t < N_TRACES; t++)
		if (lens[t] == n && memcmp(traces[t], f, sizeof(*f) * (size_t)n) == 0)
			return t;
	if (n == 1 && f[0].kind == RAW_ERROR && f[0].id == ERR_STORAGE_OVERFLOW)
		return N_TRACES;
	return -2;
}

static uint64_t got_samples[N_TRACES + 1], got_weight[N_TRACES + 1];
static int unknown_traces, visits;

static int collect(const struct raw_frame *f, int n, uint64_t samples, uint64_t weight, void *arg)
{
	(void)arg;
	int t = which(f, n);
	visits++;
	if (t < 0) {
		unknown_traces++;
		return 0;
	}
	got_samples[t] += samples;
	got_weight[t] += weight;
	return 0;
}

static void gather(struct calltrace_table *tab)
{
	memset(got_samples, 0, sizeof(got_samples));
	memset(got_weight, 0, sizeof(got_weight));
	unknown_traces = visits = 0;
	calltrace_foreach(tab, collect, NULL);
}

static void test_basic(void)
{
	struct calltrace_table *t = calltrace_create(4 << 20);
	CHECK(t != NULL);
	CHECK_INT(0, calltrace_put(t, traces[0], lens[0], 10));
	CHECK_INT(0, calltrace_put(t, traces[0], lens[0], 5));
	CHECK_INT(0, calltrace_put(t, traces[1], lens[1], 7));
	gather(t);
	CHECK_INT(2, visits);
	CHECK_INT(2, got_samples[0]);
	CHECK_INT(15, got_weight[0]);
	CHECK_INT(1, got_samples[1]);
	CHECK_INT(0, got_samples[N_TRACES]);
	struct calltrace_stats st;
	calltrace_stats(t, &st);
	CHECK_INT(2, st.traces);
	CHECK_INT(0, st.overflow);
	/* a frame differing only in kind or bci is another trace */
	struct raw_frame f = traces[0][0];
	f.kind = RAW_NATIVE;
	CHECK_INT(0, calltrace_put(t, &f, 1, 1));
	f = traces[0][0];
	f.bci = 99;
	CHECK_INT(0, calltrace_put(t, &f, 1, 1));
	calltrace_stats(t, &st);
	CHECK_INT(4, st.traces);
	CHECK_INT(-EINVAL, calltrace_put(t, traces[0], 0, 1));
	calltrace_clear(t);
	gather(t);
	CHECK_INT(0, visits);
	calltrace_destroy(t);
}

/* pages of [p, p+len) in memory (mincore) */
static int resident_pages(const void *p, size_t len)
{
	static unsigned char vec[(4 << 20) / 4096];
	if (len > sizeof(vec) * 4096 || mincore((void *)p, len, vec) != 0)
		return -1;
	int n = 0;
	for (size_t i = 0; i < len / 4096; i++)
		n += vec[i] & 1;
	return n;
}

/* a cleared table (its pages dropped) takes every trace again with exact counts, over several rounds */
static void test_clear_reuse(void)
{
	struct calltrace_table *t = calltrace_create(4 << 20);
	CHECK(t != NULL);
	for (int round = 1; round <= 3; round++) {
		int put_ok = 1;
		for (int k = 0; k < N_TRACES; k++)
			for (int r = 0; r < round + k % 3; r++)
				put_ok &= calltrace_put(t, traces[k], lens[k], 10) == 0;
		CHECK(put_ok);
		gather(t);
		CHECK_INT(N_TRACES, visits);
		CHECK_INT(0, unknown_traces);
		int exact = 1;
		for (int k = 0; k < N_TRACES; k++)
			exact &= got_samples[k] == (uint64_t)(round + k % 3) && got_weight[k] == 10 * got_samples[k];
		CHECK(exact);
		int before = resident_pages(t, 4 << 20);
		calltrace_clear(t);
		/* the pages are dropped, not scanned (a scan would leave them mapped, zeroed or the zero
		 * page): only the header and the overflow trace's pages stay */
		int after = resident_pages(t, 4 << 20);
		CHECK(before > 20);
		CHECK(after <= 3);
		if (after > 3)
			fprintf(stderr, "  %d of the table's pages resident after clear (%d before)\n", after, before);
		gather(t);
		CHECK_INT(0, visits);
		struct calltrace_stats st;
		calltrace_stats(t, &st);
		CHECK_INT(0, st.traces);
	}
	calltrace_destroy(t);
}

static void test_long(void)
{
	struct calltrace_table *t = calltrace_create(8 << 20);
	struct raw_frame *big = calloc(CALLTRACE_MAX_FRAMES, sizeof(*big));
	for (int i = 0; i < CALLTRACE_MAX_FRAMES; i++) {
		big[i].id = (uint64_t)i + 1;
		big[i].kind = RAW_JAVA;
	}
	CHECK_INT(0, calltrace_put(t, big, CALLTRACE_MAX_FRAMES, 1));
	CHECK_INT(0, calltrace_put(t, big, CALLTRACE_MAX_FRAMES, 1));
	CHECK_INT(-EINVAL, calltrace_put(t, big, CALLTRACE_MAX_FRAMES + 1, 1));
	struct calltrace_stats st;
	calltrace_stats(t, &st);
	CHECK_INT(1, st.traces);
	free(big);
	calltrace_destroy(t);
}

static void test_overflow(void)
{
	/* 1 MiB holds far fewer than 100000 distinct 30-frame traces */
	struct calltrace_table *t = calltrace_create(1 << 20);
	struct raw_frame f[30];
	int full = 0, stored = 0;
	for (int i = 0; i < 100000; i++) {
		for (int k = 0; k < 30; k++) {
			f[k].id = (uint64_t)i * 31 + (uint64_t)k;
			f[k].kind = RAW_NATIVE;
			f[k].bci = 0;
		}
		int rc = calltrace_put(t, f, 30, 3);
		if (rc == -ENOSPC)
			full++;
		else if (rc == 0)
			stored++;
	}
	CHECK(full > 0);
	CHECK_INT(100000, full + stored);
	uint64_t total = 0, overflow_samples = 0, overflow_weight = 0;
	struct calltrace_stats st;
	calltrace_stats(t, &st);
	CHECK_INT(full, st.overflow);
	gather(t);
	for (int i = 0; i <= N_TRACES; i++)
		total += got_samples[i];
	overflow_samples = got_samples[N_TRACES];
	overflow_weight = got_weight[N_TRACES];
	CHECK_INT(full, overflow_samples);
	CHECK_INT(3 * (uint64_t)full, overflow_weight);
	CHECK_INT(stored, unknown_traces); /* each stored trace visited once */
	CHECK(st.bytes_used <= st.bytes_limit);
	(void)total;
	calltrace_destroy(t);
}

#define THREADS 8
#define PUTS 200000

static struct calltrace_table *shared;

static void *hammer(void *arg)
{
	long id = (long)arg;
	for (int i = 0; i < PUTS; i++) {
		/* half the traces shared by all threads, half private to this thread */
		int t = (i & 1) ? (i / 2) % 150 : 150 + (int)id * 18 + (i / 2) % 18;
		calltrace_put(shared, traces[t], lens[t], (uint64_t)t + 1);
	}
	return NULL;
}

static void test_concurrent(void)
{
	shared = calltrace_create(16 << 20);
	pthread_t th[THREADS];
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < THREADS; i++)
		pthread_create(&th[i], NULL, hammer, (void *)i);
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	clock_gettime(CLOCK_MONOTONIC, &b);
	gather(shared);
	uint64_t expect[N_TRACES] = {0};
	for (long id = 0; id < THREADS; id++)
		for (int i = 0; i < PUTS; i++)
			expect[(i & 1) ? (i / 2) % 150 : 150 + (int)id * 18 + (i / 2) % 18]++;
	uint64_t total = 0;
	int exact = 1;
	for (int t = 0; t < N_TRACES; t++) {
		total += got_samples[t];
		if (got_samples[t] != expect[t] || got_weight[t] != expect[t] * (uint64_t)(t + 1))
			exact = 0;
	}
	CHECK(exact);
	CHECK_INT(0, unknown_traces);
	CHECK_INT((uint64_t)THREADS * PUTS, total);
	double ns = ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / (THREADS * PUTS);
	printf("info: %.0f ns per put (8 threads, wall time / puts)\n", ns);
	calltrace_destroy(shared);
}

static struct calltrace_table *reentrant;
static volatile sig_atomic_t in_handler_puts;

static void on_prof(int sig)
{
	(void)sig;
	calltrace_put(reentrant, traces[5], lens[5], 1);
	in_handler_puts++;
}

static void test_reentrant(void)
{
	reentrant = calltrace_create(4 << 20);
	signal(SIGPROF, on_prof);
	struct itimerval tv = {{0, 200}, {0, 200}};
	setitimer(ITIMER_PROF, &tv, NULL);
	long main_puts = 0;
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		for (int i = 0; i < 1000; i++, main_puts++)
			calltrace_put(reentrant, traces[i % 10], lens[i % 10], 1);
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while (b.tv_sec - a.tv_sec < 1 && in_handler_puts < 200);
	struct itimerval off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_PROF, &off, NULL);
	signal(SIGPROF, SIG_DFL);
	gather(reentrant);
	uint64_t total = 0;
	for (int t = 0; t < N_TRACES; t++)
		total += got_samples[t];
	CHECK(in_handler_puts > 0);
	CHECK_INT((uint64_t)main_puts + (uint64_t)in_handler_puts, total);
	CHECK_INT(0, unknown_traces);
	calltrace_destroy(reentrant);
}

static void test_names(void)
{
	CHECK_STR("[unknown_Java]", calltrace_error_frame(ERR_UNKNOWN_JAVA));
	CHECK_STR("[GC_active]", calltrace_error_frame(ERR_GC_ACTIVE));
	CHECK_STR("[truncated]", calltrace_error_frame(ERR_TRUNCATED));
	CHECK_STR("[storage_overflow]", calltrace_error_frame(ERR_STORAGE_OVERFLOW));
	CHECK_STR("[unknown]", calltrace_error_frame((enum trace_error)99));
	CHECK_STR("GC active", calltrace_error_reason(ERR_GC_ACTIVE));
	for (int e = 0; e < ERR_COUNT; e++)
		CHECK(calltrace_error_frame((enum trace_error)e)[0] == '[');
}

int main(void)
{
	make_traces();
	test_basic();
	test_clear_reuse();
	test_long();
	test_overflow();
	test_concurrent();
	test_reentrant();
	test_names();
	return check_report();
}
