/* Engine "cpu": a perf_events cpu-clock counter per thread whose overflow signal is routed to that
 * thread (F_SETOWN_EX / F_OWNER_TID); when kernel mode is sampled, a small ring buffer per thread
 * carries each sample's kernel callchain (read by the handler through perf_ring.c).
 * Start/stop and thread coverage; never in a signal handler. */
#include "engine.h"
#include "sampler.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "log.h"
#include "perf_ring.h"
#include "thread_set.h"

struct perf_event_def {
	const char *name;
	uint32_t type;
	uint64_t config;
	int64_t default_period; /* events between samples when interval= is not given */
};

#define HW_CACHE(cache, op, result) \
	((uint64_t)(cache) | ((uint64_t)(op) << 8) | ((uint64_t)(result) << 16))

static const struct perf_event_def events[] = {
	{"cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, 10000000},
	{"task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, 10000000},
	{"page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, 1},
	{"minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN, 1},
	{"major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ, 1},
	{"context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, 1},
	{"cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, 1},
	{"alignment-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS, 1},
	{"emulation-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS, 1},
	{"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, 1000000},
	{"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, 1000000},
	{"cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES, 1000000},
	{"cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, 1000},
	{"branch-instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, 1000000},
	{"branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, 1000000},
	{"branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, 1000},
	{"bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES, 1000000},
	{"ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES, 1000000},
	{"stalled-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND, 1000000},
	{"stalled-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND, 1000000},
	{"L1-dcache-load-misses", PERF_TYPE_HW_CACHE,
	 HW_CACHE(PERF_COUNT_HW_CACHE_L1D, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS), 1000},
	{"L1-icache-load-misses", PERF_TYPE_HW_CACHE,
	 HW_CACHE(PERF_COUNT_HW_CACHE_L1I, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS), 1000},
	{"LLC-load-misses", PERF_TYPE_HW_CACHE,
	 HW_CACHE(PERF_COUNT_HW_CACHE_LL, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS), 1000},
	{"LLC-store-misses", PERF_TYPE_HW_CACHE,
	 HW_CACHE(PERF_COUNT_HW_CACHE_LL, PERF_COUNT_HW_CACHE_OP_WRITE, PERF_COUNT_HW_CACHE_RESULT_MISS), 1000},
	{"dTLB-load-misses", PERF_TYPE_HW_CACHE,
	 HW_CACHE(PERF_COUNT_HW_CACHE_DTLB, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS), 1000},
	{"iTLB-load-misses", PERF_TYPE_HW_CACHE,
	 HW_CACHE(PERF_COUNT_HW_CACHE_ITLB, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS), 1000},
	{"branch-load-misses", PERF_TYPE_HW_CACHE,
	 HW_CACHE(PERF_COUNT_HW_CACHE_BPU, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS), 1000},
};

static const struct perf_event_def *find_event(const char *name)
{
	if (!name[0] || strcmp(name, "cpu") == 0)
		return &events[0];
	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++)
		if (strcmp(events[i].name, name) == 0)
			return &events[i];
	return NULL;
}

int perf_note_user_only;
int perf_note_no_callchain;

int engine_perf_known(const char *name, int64_t *default_period, int *is_time)
{
	const struct perf_event_def *e = find_event(name);
	if (!e)
		return 0;
	if (default_period)
		*default_period = e->default_period;
	if (is_time)
		*is_time = e->type == PERF_TYPE_SOFTWARE &&
			   (e->config == PERF_COUNT_SW_CPU_CLOCK || e->config == PERF_COUNT_SW_TASK_CLOCK);
	return 1;
}

/* The reason perf_event_open refused event e (errno en), for messages. */
static void explain(const struct perf_event_def *e, int en, char *err, size_t errlen)
{
	if (e->type != PERF_TYPE_SOFTWARE && (en == ENOENT || en == EOPNOTSUPP || en == ENODEV))
		snprintf(err, errlen,
			 "this machine has no hardware counter for %s (perf_event_open: %s); virtual machines without "
			 "a virtual PMU have none: use event=cpu, or a software event such as page-faults",
			 e->name, strerror(en));
	else
		snprintf(err, errlen, "perf_event_open refused: %s%s", strerror(en),
			 en == EACCES || en == EPERM ? " (kernel.perf_event_paranoid or a seccomp profile)" : "");
}

static const struct perf_event_def *current = &events[0];
static struct engine_config cfg;
/* perf_event_paranoid 2 lets an unprivileged process count itself in user mode only */
static int user_only;
/* kernel callchains into a ring per thread (kernel mode sampled and cstack is not no) */
static int callchain;
static size_t ring_bytes;     /* metadata page + data pages, per thread */
static int ring_warned;       /* a ring could not be mapped (this session) */
static intptr_t perf_open(int tid);
static void perf_close(intptr_t fd);
static struct thread_set set = {.lock = PTHREAD_MUTEX_INITIALIZER, .open = perf_open, .close = perf_close};

/* Maps and publishes fd's ring. A failure (RLIMIT_MEMLOCK / kernel.perf_event_mlock_kb for
 * unprivileged users, fd beyond the table) leaves the thread sampled without kernel frames. */
static void map_ring(int fd)
{
	void *base = mmap(NULL, ring_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	int rc = base == MAP_FAILED ? -errno : perf_ring_register(fd, base, ring_bytes - (size_t)getpagesize());
	if (rc == 0)
		return;
	if (base != MAP_FAILED)
		munmap(base, ring_bytes);
	if (!ring_warned) {
		ring_warned = 1;
		log_warn("event=%s: cannot map a perf ring buffer (%zu bytes per thread): %s; some threads have no "
			 "kernel frames (raise ulimit -l or kernel.perf_event_mlock_kb, or run as root)",
			 cfg.event, ring_bytes, strerror(-rc));
	}
}

static intptr_t perf_open(int tid)
{
	struct perf_event_attr attr;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = current->type;
	attr.config = current->config;
	attr.sample_period = (uint64_t)cfg.interval;
	attr.disabled = 1;
	/* with a ring, every sample record wakes the fd too; the signal comes per overflow either way
	 * because fasync is set (perf_event_wakeup from __perf_event_overflow) */
	attr.wakeup_events = 1;
	attr.exclude_idle = 1;
	attr.exclude_kernel = (unsigned)user_only;
	attr.exclude_hv = (unsigned)user_only;
	if (callchain) {
		attr.sample_type = PERF_SAMPLE_CALLCHAIN;
		attr.exclude_callchain_user = 1; /* the handler walks user space itself */
		attr.sample_max_stack = PERF_RING_MAX_KERNEL;
	}
	int fd = (int)syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -1;
	if (callchain)
		map_ring(fd);
	struct f_owner_ex owner = {F_OWNER_TID, tid};
	/* every overflow queues a signal to the owner thread once fasync is set (ring buffer or not) */
	if (fcntl(fd, F_SETFL, O_ASYNC) < 0 || fcntl(fd, F_SETSIG, cfg.signo) < 0 ||
	    fcntl(fd, F_SETOWN_EX, &owner) < 0 || ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) < 0) {
		int e = errno;
		perf_close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

static void perf_close(intptr_t fd)
{
	ioctl((int)fd, PERF_EVENT_IOC_DISABLE, 0);
	void *ring = perf_ring_unregister((int)fd);
	if (ring)
		munmap(ring, ring_bytes);
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
	current = find_event(cfg.event);
	if (!current) {
		snprintf(err, errlen, "unknown perf event '%s' (see the list action)", cfg.event);
		current = &events[0];
		return -EINVAL;
	}
	raise_fd_limit();
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur > (1u << 20))
		rl.rlim_cur = 1u << 20;
	ring_bytes = (size_t)(1 + PERF_RING_DATA_PAGES) * (size_t)getpagesize();
	ring_warned = 0;
	/* probe on this thread first so a refusal (perf_event_paranoid, seccomp, no PMU) is reported clearly */
	user_only = 0;
	callchain = cfg.kernel_stack && perf_ring_init((unsigned)rl.rlim_cur, (uint64_t)getpagesize()) == 0;
	intptr_t probe = perf_open((int)syscall(SYS_gettid));
	if (probe == -1 && (errno == EACCES || errno == EPERM)) {
		/* kernel mode refused: user mode has no kernel frames to collect */
		user_only = 1;
		callchain = 0;
		probe = perf_open((int)syscall(SYS_gettid));
		if (probe != -1)
			perf_note_user_only = 1;
	} else if (probe == -1 && callchain) {
		/* a kernel that refuses callchain sampling (sample_max_stack above kernel.perf_event_max_stack,
		 * ...): sample without kernel frames */
		int e = errno;
		callchain = 0;
		probe = perf_open((int)syscall(SYS_gettid));
		if (probe != -1)
			perf_note_no_callchain = e;
	}
	if (probe == -1) {
		int e = errno;
		explain(current, e, err, errlen);
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

int engine_perf_probe(const char *name, char *err, size_t errlen)
{
	const struct perf_event_def *e = find_event(name);
	if (!e) {
		snprintf(err, errlen, "unknown perf event '%s' (see the list action)", name);
		return -EINVAL;
	}
	struct perf_event_attr attr;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = e->type;
	attr.config = e->config;
	attr.sample_period = (uint64_t)e->default_period;
	attr.disabled = 1;
	int fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	int en = errno;
	explain(e, en, err, errlen);
	return -en;
}

const char *engine_perf_event_name(void)
{
	return current->name;
}

int engine_perf_list(char *out, size_t outlen)
{
	size_t k = 0;
	int n = 0;
	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
		struct perf_event_attr attr;
		memset(&attr, 0, sizeof(attr));
		attr.size = sizeof(attr);
		attr.type = events[i].type;
		attr.config = events[i].config;
		attr.sample_period = (uint64_t)events[i].default_period;
		attr.disabled = 1;
		int fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
		int w = snprintf(out + k, k < outlen ? outlen - k : 0, "  %-24s %s\n", events[i].name,
				 fd >= 0 ? "" : strerror(errno));
		if (fd >= 0) {
			close(fd);
			n++;
		}
		if (w > 0)
			k += (size_t)w;
	}
	return n;
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
