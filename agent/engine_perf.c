/* Engine "cpu": a perf_events cpu-clock counter per thread whose overflow signal is routed to that
 * thread (F_SETOWN_EX / F_OWNER_TID). Start/stop and thread coverage; never in a signal handler. */
#include "engine.h"
#include "sampler.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "thread_set.h"

static struct engine_config cfg;
static intptr_t perf_open(int tid);
static void perf_close(intptr_t fd);
static struct thread_set set = {.lock = PTHREAD_MUTEX_INITIALIZER, .open = perf_open, .close = perf_close};

static intptr_t perf_open(int tid)
{
	struct perf_event_attr attr;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.sample_period = (uint64_t)cfg.interval;
	attr.disabled = 1;
	attr.wakeup_events = 1;
	attr.exclude_idle = 1;
	int fd = (int)syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -1;
	struct f_owner_ex owner = {F_OWNER_TID, tid};
	/* every overflow queues a signal to the owner thread once fasync is set (no ring buffer needed) */
	if (fcntl(fd, F_SETFL, O_ASYNC) < 0 || fcntl(fd, F_SETSIG, cfg.signo) < 0 ||
	    fcntl(fd, F_SETOWN_EX, &owner) < 0 || ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

static void perf_close(intptr_t fd)
{
	ioctl((int)fd, PERF_EVENT_IOC_DISABLE, 0);
	close((int)fd);
}

static void on_thread(int tid, void *arg)
{
	(void)arg;
	thread_set_scan_cb(&set, tid);
}

static void raise_fd_limit(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static int perf_start(const struct engine_config *c, char *err, unsigned errlen)
{
	cfg = *c;
	raise_fd_limit();
	/* probe on this thread first so a refusal (perf_event_paranoid, seccomp) is reported clearly */
	intptr_t probe = perf_open((int)syscall(SYS_gettid));
	if (probe == -1) {
		int e = errno;
		snprintf(err, errlen, "perf_event_open refused: %s%s", strerror(e),
			 e == EACCES || e == EPERM ? " (kernel.perf_event_paranoid or a seccomp profile)" : "");
		return -e;
	}
	perf_close(probe);
	sampler_set_rearm(REARM_PERF, cfg.interval);
	int rc = engine_install_handler(cfg.signo);
	if (rc < 0) {
		snprintf(err, errlen, "cannot install the signal handler: %s", strerror(-rc));
		return rc;
	}
	rc = engine_scanner_start(on_thread);
	if (rc < 0) {
		snprintf(err, errlen, "cannot start the thread scanner: %s", strerror(-rc));
		thread_set_clear(&set);
		return rc;
	}
	return 0;
}

static void perf_stop(void)
{
	sampler_set_rearm(REARM_NONE, 0);
	engine_scanner_stop();
	thread_set_clear(&set);
}

static void perf_thread_started(int tid)
{
	thread_set_add(&set, tid, 1);
}

const struct engine engine_perf = {
	.name = "cpu",
	.description = "perf_events cpu-clock per thread",
	.start = perf_start,
	.stop = perf_stop,
	.thread_started = perf_thread_started,
};
