/* Engine "wall": a sampler thread signals every thread once per interval whatever its state. A thread
 * whose CPU time has not moved since it was last seen sleeping is not signalled again: its last stack
 * is counted once more instead (batching), so thousands of idle threads stay cheap. Sampler thread
 * and start/stop; never in a signal handler. */
#include "engine.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "calltrace.h"
#include "sampler.h"
#include "threads.h"

struct wall_thread {
	int tid;
	int sleeping;      /* state at its last sample */
	int64_t cpu_ns;    /* its CPU time at its last sample or check; -1 unknown */
	uint32_t pending;  /* idle ticks not yet counted (checks of long-idle threads are spaced out) */
	uint32_t skip;     /* ticks left before its CPU time is read again */
	uint32_t backoff;  /* current spacing of checks, 1..MAX_BACKOFF ticks */
};

/* A thread idle for a while has its CPU time read every 2nd, 4th, then 8th tick only; the skipped ticks
 * are counted on its last stack when the next read confirms it stayed idle. */
#define MAX_BACKOFF 8

static struct engine_config cfg;
static int64_t idle_slack_ns;
static double tsc_per_ns;
static pthread_t sampler_thread;
static int running;
static _Atomic int stop_flag;
static int self_tid;
static struct wall_thread *list;
static size_t n_list, cap_list;
static pthread_mutex_t new_lock = PTHREAD_MUTEX_INITIALIZER;
static int new_tids[256];
static unsigned n_new;
static int *filter_ids;
static size_t n_filter;

static clockid_t thread_cpu_clock(int tid)
{
	return (clockid_t)((~(unsigned)tid) << 3) | 4 | 2;
}

static int64_t cpu_time(int tid)
{
	struct timespec ts;
	if (syscall(SYS_clock_gettime, thread_cpu_clock(tid), &ts) != 0)
		return -1;
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int by_tid(const void *a, const void *b)
{
	return ((const struct wall_thread *)a)->tid - ((const struct wall_thread *)b)->tid;
}

static int selected(int tid)
{
	if (tid == self_tid)
		return 0;
	if (!n_filter)
		return 1;
	for (size_t i = 0; i < n_filter; i++)
		if (filter_ids[i] == tid)
			return 1;
	return 0;
}

static struct wall_thread *fresh;
static size_t n_fresh, cap_fresh;

static void add_fresh(int tid, void *arg)
{
	(void)arg;
	if (tid <= 0 || !selected(tid))
		return;
	if (n_fresh == cap_fresh) {
		size_t cap = cap_fresh ? cap_fresh * 2 : 256;
		struct wall_thread *grown = realloc(fresh, cap * sizeof(*grown));
		if (!grown)
			return;
		fresh = grown;
		cap_fresh = cap;
	}
	fresh[n_fresh++] = (struct wall_thread){tid, 0, -1, 0, 0, 1};
}

/* Rebuilds the thread list from /proc/self/task (naming new threads), keeping what is known of threads
 * still alive. */
static void refresh(void)
{
	fresh = NULL;
	n_fresh = cap_fresh = 0;
	threads_scan(add_fresh, NULL);
	size_t n = n_fresh, cap = cap_fresh;
	qsort(fresh, n, sizeof(*fresh), by_tid);
	size_t j = 0;
	for (size_t i = 0; i < n; i++) {
		while (j < n_list && list[j].tid < fresh[i].tid)
			j++;
		if (j < n_list && list[j].tid == fresh[i].tid)
			fresh[i] = list[j];
	}
	free(list);
	list = fresh;
	n_list = n;
	cap_list = cap;
}

/* Counts `ticks` idle samples of tid on its last stack: the latest at now, the others one interval
 * apart before it (the ticks at which it was skipped). */
static void credit(struct calltrace_table *table, int64_t ref, uint32_t ticks, int tid)
{
	calltrace_add_ref(table, ref, ticks, (uint64_t)cfg.interval * ticks);
	atomic_fetch_add_explicit(&sampler_counters.samples, ticks, memory_order_relaxed);
	uint64_t now = sampler_tsc(), step = (uint64_t)((double)cfg.interval * tsc_per_ns);
	uint32_t serial;
	threads_lookup(tid, &serial);
	for (uint32_t k = 0; k < ticks; k++)
		sampler_log_event(now - (uint64_t)(ticks - 1 - k) * step, ref, tid, serial, threads_last_version,
				  (uint64_t)cfg.interval, SAMPLER_STATE_SLEEPING, SK_WALL);
}

/* Java threads announced by JVMTI since the last tick join at once; others at the next rescan. */
static void merge_new(void)
{
	pthread_mutex_lock(&new_lock);
	for (unsigned i = 0; i < n_new; i++) {
		if (!selected(new_tids[i]))
			continue;
		if (n_list == cap_list) {
			size_t cap = cap_list ? cap_list * 2 : 256;
			struct wall_thread *grown = realloc(list, cap * sizeof(*grown));
			if (!grown)
				break;
			list = grown;
			cap_list = cap;
		}
		list[n_list++] = (struct wall_thread){new_tids[i], 0, -1, 0, 0, 1};
	}
	n_new = 0;
	pthread_mutex_unlock(&new_lock);
	qsort(list, n_list, sizeof(*list), by_tid);
}

static void wall_thread_started(int tid)
{
	pthread_mutex_lock(&new_lock);
	if (n_new < sizeof(new_tids) / sizeof(new_tids[0]))
		new_tids[n_new++] = tid;
	pthread_mutex_unlock(&new_lock);
}

static void sample_all(pid_t pid)
{
	struct calltrace_table *table = sampler_table();
	for (size_t i = 0; i < n_list; i++) {
		struct wall_thread *t = &list[i];
		if (t->skip > 0) {
			t->skip--;
			t->pending++;
			continue;
		}
		int64_t now = cpu_time(t->tid);
		if (now < 0)
			continue; /* ended since the last refresh */
		int64_t ref = sampler_wall_last_ref(t->tid);
		/* the signal itself costs the thread a little CPU: below the slack it did not really run */
		int sleeping = t->cpu_ns >= 0 && now - t->cpu_ns <= idle_slack_ns;
		if (sleeping && t->sleeping && ref >= 0) {
			/* idle since its last (sleeping) sample: the same stack, without waking it */
			credit(table, ref, t->pending + 1, t->tid);
			t->pending = 0;
			t->cpu_ns = now;
			t->backoff = t->backoff < MAX_BACKOFF ? t->backoff * 2 : MAX_BACKOFF;
			t->skip = t->backoff - 1;
			continue;
		}
		if (t->pending && ref >= 0)
			credit(table, ref, t->pending, t->tid); /* it woke at some point in those ticks */
		t->pending = 0;
		t->backoff = 1;
		siginfo_t si;
		memset(&si, 0, sizeof(si));
		si.si_signo = cfg.signo;
		si.si_code = SI_QUEUE;
		si.si_pid = pid;
		si.si_uid = getuid();
		si.si_value.sival_int = SAMPLER_WALL_COOKIE | (sleeping ? SAMPLER_STATE_SLEEPING : SAMPLER_STATE_RUNNING);
		if (syscall(SYS_rt_tgsigqueueinfo, pid, t->tid, cfg.signo, &si) != 0)
			continue;
		t->sleeping = sleeping;
		t->cpu_ns = now;
	}
}

static void *wall_main(void *arg)
{
	(void)arg;
	sigset_t set;
	sigfillset(&set);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	self_tid = threads_gettid();
	pid_t pid = getpid();
	struct timespec next;
	clock_gettime(CLOCK_MONOTONIC, &next);
	int64_t since_refresh = INT64_MAX / 2;
	while (!atomic_load(&stop_flag)) {
		/* a rescan of /proc/self/task costs more than a thousand idle threads' checks: once a second */
		if (since_refresh >= 1000000000LL) {
			pthread_mutex_lock(&new_lock);
			n_new = 0;
			pthread_mutex_unlock(&new_lock);
			refresh();
			since_refresh = 0;
		} else if (n_new) {
			merge_new();
		}
		sample_all(pid);
		next.tv_nsec += cfg.interval % 1000000000;
		next.tv_sec += cfg.interval / 1000000000 + next.tv_nsec / 1000000000;
		next.tv_nsec %= 1000000000;
		since_refresh += cfg.interval;
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
	}
	return NULL;
}

static void parse_filter(const char *f)
{
	free(filter_ids);
	filter_ids = NULL;
	n_filter = 0;
	if (!f || !*f)
		return;
	size_t cap = 0;
	const char *p = f;
	while (*p) {
		char *end;
		long lo = strtol(p, &end, 10), hi = lo;
		if (*end == '-')
			hi = strtol(end + 1, &end, 10);
		for (long t = lo; t <= hi && hi - lo < 100000; t++) {
			if (n_filter == cap) {
				cap = cap ? cap * 2 : 64;
				int *grown = realloc(filter_ids, cap * sizeof(int));
				if (!grown)
					return;
				filter_ids = grown;
			}
			filter_ids[n_filter++] = (int)t;
		}
		p = *end ? end + 1 : end;
	}
}

static int wall_start(const struct engine_config *c, char *err, unsigned errlen)
{
	cfg = *c;
	tsc_per_ns = c->tsc_per_ns > 0 ? c->tsc_per_ns : 1;
	idle_slack_ns = cfg.interval / 100 > 100000 ? cfg.interval / 100 : 100000;
	parse_filter(cfg.filter);
	int rc = engine_install_handler(cfg.signo);
	if (rc < 0) {
		snprintf(err, errlen, "cannot install the signal handler: %s", strerror(-rc));
		return rc;
	}
	free(list);
	list = NULL;
	n_list = cap_list = 0;
	atomic_store(&stop_flag, 0);
	rc = pthread_create(&sampler_thread, NULL, wall_main, NULL);
	if (rc != 0) {
		snprintf(err, errlen, "cannot start the wall-clock sampler thread: %s", strerror(rc));
		return -rc;
	}
	pthread_setname_np(sampler_thread, "flameagent wall");
	running = 1;
	return 0;
}

static void wall_stop(void)
{
	if (!running)
		return;
	atomic_store(&stop_flag, 1);
	pthread_join(sampler_thread, NULL);
	running = 0;
	/* ticks skipped for idle threads since their last check: they were idle as far as we know */
	for (size_t i = 0; i < n_list; i++) {
		int64_t ref = sampler_wall_last_ref(list[i].tid);
		if (list[i].pending && ref >= 0)
			credit(sampler_table(), ref, list[i].pending, list[i].tid);
		list[i].pending = 0;
	}
}

const struct engine engine_wall = {
	.name = "wall",
	.description = "wall clock, every thread",
	.start = wall_start,
	.stop = wall_stop,
	.thread_started = wall_thread_started,
};
