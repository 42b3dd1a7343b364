/* Engine "ctimer": a POSIX timer on each thread's CPU clock (timer_create, SIGEV_THREAD_ID), the first
 * expiry at a random point of the interval so short-lived threads are sampled in proportion to their
 * CPU time. Start/stop and thread coverage; never in a signal handler. */
#include "engine.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "thread_set.h"

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

static struct engine_config cfg;
static intptr_t ctimer_open(int tid);
static void ctimer_close(intptr_t h);
static struct thread_set set = {.lock = PTHREAD_MUTEX_INITIALIZER, .open = ctimer_open, .close = ctimer_close};
static unsigned seed = 12345;

static clockid_t thread_cpu_clock(int tid)
{
	/* the kernel's encoding of a per-thread CPUCLOCK_SCHED clock id (see clock_getcpuclockid(3)) */
	return (clockid_t)((~(unsigned)tid) << 3) | 4 | 2;
}

static intptr_t ctimer_open(int tid)
{
	struct sigevent sev;
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = cfg.signo;
	sev.sigev_notify_thread_id = tid;
	timer_t t;
	if (syscall(SYS_timer_create, thread_cpu_clock(tid), &sev, &t) != 0)
		return -1;
	int64_t first = 1 + (int64_t)(rand_r(&seed) % (unsigned)(cfg.interval > 1 ? cfg.interval : 1));
	struct itimerspec its = {
		.it_interval = {cfg.interval / 1000000000, cfg.interval % 1000000000},
		.it_value = {first / 1000000000, first % 1000000000},
	};
	if (syscall(SYS_timer_settime, t, 0, &its, NULL) != 0) {
		int e = errno;
		syscall(SYS_timer_delete, t);
		errno = e;
		return -1;
	}
	return (intptr_t)t;
}

static void ctimer_close(intptr_t h)
{
	syscall(SYS_timer_delete, (timer_t)h);
}

static void on_thread(int tid, void *arg)
{
	(void)arg;
	thread_set_scan_cb(&set, tid);
}

static int ctimer_start(const struct engine_config *c, char *err, unsigned errlen)
{
	cfg = *c;
	int rc = engine_install_handler(cfg.signo);
	if (rc < 0) {
		snprintf(err, errlen, "cannot install the signal handler: %s", strerror(-rc));
		return rc;
	}
	intptr_t probe = ctimer_open((int)syscall(SYS_gettid));
	if (probe == -1) {
		int e = errno;
		snprintf(err, errlen, "timer_create on the thread CPU clock failed: %s", strerror(e));
		return -e;
	}
	ctimer_close(probe);
	rc = engine_scanner_start(on_thread);
	if (rc < 0) {
		snprintf(err, errlen, "cannot start the thread scanner: %s", strerror(-rc));
		return rc;
	}
	return 0;
}

static void ctimer_stop(void)
{
	engine_scanner_stop();
	thread_set_clear(&set);
}

static void ctimer_thread_started(int tid)
{
	thread_set_add(&set, tid, 1);
}

const struct engine engine_ctimer = {
	.name = "ctimer",
	.description = "CPU-time timer per thread (timer_create)",
	.start = ctimer_start,
	.stop = ctimer_stop,
	.thread_started = ctimer_thread_started,
};
