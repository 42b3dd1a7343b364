/* The one signal handler body: gate, stripe try-lock, AsyncGetCallTrace, store, counters.
 * Signal-safe: every function here may run inside a signal handler. */
#include "sampler.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "stackwalk.h"
#include "threads.h"

struct stripe {
	_Atomic int lock;
	struct raw_frame *frames; /* CALLTRACE_MAX_FRAMES */
};

struct sampler_counters sampler_counters;
/* defined here so the signal path owns the table it reads (threads.c fills it) */
struct threads_env_slot *threads_env_table;
__thread uint32_t threads_last_version __attribute__((tls_model("initial-exec")));
static struct sampler_config config;
static struct stripe stripes[SAMPLER_STRIPES];

#define WALL_SLOTS 65536
struct wall_slot {
	_Atomic int tid;
	_Atomic int64_t ref;
};
static struct wall_slot wall_slots[WALL_SLOTS];

int64_t sampler_wall_last_ref(int tid)
{
	struct wall_slot *w = &wall_slots[(unsigned)tid & (WALL_SLOTS - 1)];
	int64_t ref = atomic_load_explicit(&w->ref, memory_order_acquire);
	return atomic_load_explicit(&w->tid, memory_order_acquire) == tid ? ref : -1;
}

struct calltrace_table *sampler_table(void)
{
	return config.table;
}
static _Atomic int enabled;

static inline uint64_t rdtsc(void)
{
	return __builtin_ia32_rdtsc();
}

uint64_t sampler_tsc(void)
{
	return rdtsc();
}

static struct sampler_event *log_entries;
static uint64_t log_capacity;
static size_t log_map_size;
static _Atomic uint64_t log_next, log_lost;

int sampler_log_setup(uint64_t capacity)
{
	atomic_store(&log_next, 0);
	atomic_store(&log_lost, 0);
	if (log_entries && capacity <= log_capacity) {
		log_capacity = capacity;
		return 0;
	}
	if (log_entries)
		syscall(SYS_munmap, log_entries, log_map_size);
	log_entries = NULL;
	log_capacity = 0;
	if (!capacity)
		return 0;
	size_t size = (size_t)capacity * sizeof(struct sampler_event);
	long p = syscall(SYS_mmap, NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p < 0 && p > -4096)
		return (int)p;
	log_entries = (struct sampler_event *)p;
	log_map_size = size;
	log_capacity = capacity;
	return 0;
}

uint64_t sampler_log_count(void)
{
	uint64_t n = atomic_load(&log_next);
	return n < log_capacity ? n : log_capacity;
}

uint64_t sampler_log_lost(void)
{
	return atomic_load(&log_lost);
}

const struct sampler_event *sampler_log_entries(void)
{
	return log_entries;
}

void sampler_log_event(uint64_t tsc, int64_t ref, int tid, uint32_t serial, uint32_t version, uint64_t weight,
		       int state, int kind)
{
	if (!log_capacity)
		return;
	uint64_t i = atomic_fetch_add_explicit(&log_next, 1, memory_order_relaxed);
	if (i >= log_capacity) {
		atomic_fetch_add_explicit(&log_lost, 1, memory_order_relaxed);
		return;
	}
	struct sampler_event *e = &log_entries[i];
	e->tsc = tsc;
	e->ref = ref;
	e->weight = weight;
	e->tid = tid;
	e->serial = serial;
	e->state = (uint8_t)(state < 0 ? 0 : state);
	e->version = version;
	e->kind = (uint8_t)kind;
	__atomic_store_n(&e->published, 1, __ATOMIC_RELEASE);
}

int sampler_setup(const struct sampler_config *cfg)
{
	for (int i = 0; i < SAMPLER_STRIPES; i++) {
		if (!stripes[i].frames) {
			long p = syscall(SYS_mmap, NULL, sizeof(struct raw_frame) * CALLTRACE_MAX_FRAMES,
					 PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (p < 0 && p > -4096)
				return (int)p;
			if (p == -1)
				return -errno;
			stripes[i].frames = (struct raw_frame *)p;
		}
	}
	config = *cfg;
	if (config.depth < 1)
		config.depth = 1;
	if (config.depth > CALLTRACE_MAX_FRAMES - 4)
		config.depth = CALLTRACE_MAX_FRAMES - 4;
	atomic_store(&sampler_counters.samples, 0);
	atomic_store(&sampler_counters.dropped, 0);
	atomic_store(&sampler_counters.overflow, 0);
	atomic_store(&sampler_counters.cost_tsc, 0);
	for (int i = 0; i < ERR_COUNT; i++)
		atomic_store(&sampler_counters.errors[i], 0);
	return 0;
}

static _Atomic int rearm_mode;
static _Atomic int64_t rearm_interval;
static _Atomic uint64_t jitter_seq;

void sampler_set_rearm(enum sampler_rearm mode, int64_t interval)
{
	atomic_store(&rearm_interval, interval);
	atomic_store(&rearm_mode, (int)mode);
}

int64_t sampler_jitter(int64_t interval)
{
	/* splitmix64 over a shared counter: cheap, lock-free, good enough to break aliasing */
	uint64_t z = atomic_fetch_add_explicit(&jitter_seq, 0x9E3779B97F4A7C15ull, memory_order_relaxed);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	z ^= z >> 31;
	if (interval < 2)
		return interval;
	return interval / 2 + (int64_t)(z % (uint64_t)interval);
}

static void rearm(siginfo_t *si)
{
	int mode = atomic_load_explicit(&rearm_mode, memory_order_relaxed);
	int64_t interval = atomic_load_explicit(&rearm_interval, memory_order_relaxed);
	if (!si || interval <= 0)
		return;
	int64_t next = sampler_jitter(interval);
	if (mode == REARM_PERF && si->si_code == POLL_IN) {
		uint64_t period = (uint64_t)next;
		syscall(SYS_ioctl, si->si_fd, PERF_EVENT_IOC_PERIOD, &period);
	}
}

void sampler_enable(int on)
{
	atomic_store_explicit(&enabled, on, memory_order_release);
}

static _Atomic int inflight;

static int mark(struct raw_frame *frames, int n, int kind)
{
	if (!config.mark_kind)
		return n;
	frames[n].bci = 0;
	frames[n].kind = RAW_EVENT;
	frames[n].id = (uint64_t)kind;
	return n + 1;
}

void sampler_record_frames(struct raw_frame *frames, int n, uint64_t weight, int kind)
{
	atomic_fetch_add(&inflight, 1);
	if (!atomic_load_explicit(&enabled, memory_order_acquire)) {
		atomic_fetch_sub(&inflight, 1);
		return;
	}
	int tid = (int)syscall(SYS_gettid);
	uint32_t serial;
	threads_lookup(tid, &serial);
	if (config.threads) {
		frames[n].bci = (int32_t)threads_last_version;
		frames[n].kind = RAW_THREAD;
		frames[n].id = (uint64_t)serial << 32 | (uint32_t)tid;
		n++;
	}
	n = mark(frames, n, kind);
	int64_t ref = calltrace_put_ref(config.table, frames, n, weight);
	sampler_log_event(rdtsc(), ref, tid, serial, threads_last_version, weight, -1, kind);
	if (ref >= 0 && calltrace_is_overflow_ref(config.table, ref))
		atomic_fetch_add_explicit(&sampler_counters.overflow, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&sampler_counters.samples, 1, memory_order_relaxed);
	atomic_fetch_sub(&inflight, 1);
}

void sampler_quiesce(void)
{
	while (atomic_load(&inflight) > 0) {
		struct timespec ts = {0, 100000};
		syscall(SYS_nanosleep, &ts, NULL);
	}
	for (int i = 0; i < SAMPLER_STRIPES; i++) {
		int expected = 0;
		while (!atomic_compare_exchange_weak(&stripes[i].lock, &expected, 1)) {
			expected = 0;
			struct timespec ts = {0, 100000};
			syscall(SYS_nanosleep, &ts, NULL);
		}
		atomic_store_explicit(&stripes[i].lock, 0, memory_order_release);
	}
}

static struct stripe *lock_stripe(int tid)
{
	for (int i = 0; i < SAMPLER_STRIPES; i++) {
		struct stripe *s = &stripes[(tid + i) & (SAMPLER_STRIPES - 1)];
		int expected = 0;
		if (atomic_compare_exchange_strong_explicit(&s->lock, &expected, 1, memory_order_acquire,
							    memory_order_relaxed))
			return s;
	}
	return NULL;
}

static int error_frame(struct raw_frame *f, enum trace_error e)
{
	f->bci = 0;
	f->kind = RAW_ERROR;
	f->id = (uint64_t)e;
	atomic_fetch_add_explicit(&sampler_counters.errors[e], 1, memory_order_relaxed);
	return 1;
}

static uint64_t context_pc(void *ucontext)
{
	if (!ucontext)
		return 0;
	return (uint64_t)((ucontext_t *)ucontext)->uc_mcontext.gregs[REG_RIP];
}

static int java_walk(struct raw_frame *frames, void *ucontext, void *env);

static int in_code(uintptr_t pc)
{
	return pc >= config.code_lo && pc < config.code_hi;
}

/* AsyncGetCallTrace gives up when the thread is inside code that has no frame of its own: vtable and
 * itable stubs, arraycopy and other runtime stubs, a method's prologue. Unwind one such frame by its
 * known shapes and ask again from the caller:
 *   1. frameless: the return address is at sp (stubs that jump on, the first instruction of a method);
 *   2. rbp frame: the stub pushed rbp (enter), return address at rbp+8.
 * Not yet recovered: a compiled method entered from the interpreter (return address into the
 * interpreter; AGCT refuses that frame) - see docs/NOTES.md.
 * Only the word at sp and words of a frame between sp and sp+64 KiB that rbp points to are read, each
 * candidate return address must lie in the code cache, and AGCT checks the rest. */
static int recover(struct raw_frame *frames, int depth, void *ucontext, void *env, uint64_t *stub_pc)
{
	ucontext_t *uc = ucontext;
	uintptr_t pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
	uintptr_t sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
	uintptr_t fp = (uintptr_t)uc->uc_mcontext.gregs[REG_RBP];
	if (!config.code_lo || !in_code(pc) || (sp & 7) != 0)
		return 0;
	ucontext_t copy;
	for (int i = 0; i < NGREG; i++)
		copy.uc_mcontext.gregs[i] = uc->uc_mcontext.gregs[i];
	copy.uc_mcontext.fpregs = uc->uc_mcontext.fpregs;
	for (int attempt = 0; attempt < 2; attempt++) {
		uintptr_t npc, nsp, nfp = fp;
		if (attempt == 0) {
			npc = *(const uintptr_t *)sp;
			nsp = sp + 8;
		} else {
			if (fp <= sp || fp - sp > 65536 || (fp & 7) != 0)
				break;
			npc = ((const uintptr_t *)fp)[1];
			nsp = fp + 16;
			nfp = ((const uintptr_t *)fp)[0];
		}
		if (!in_code(npc))
			continue;
		copy.uc_mcontext.gregs[REG_RIP] = (greg_t)npc;
		copy.uc_mcontext.gregs[REG_RSP] = (greg_t)nsp;
		copy.uc_mcontext.gregs[REG_RBP] = (greg_t)nfp;
		sampler_agct_trace trace = {env, 0, (sampler_agct_frame *)frames};
		config.agct(&trace, depth, &copy);
		if (trace.num_frames > 0) {
			*stub_pc = pc;
			return trace.num_frames;
		}
	}
	return 0;
}

#define MAX_NATIVE 128

/* Native frames above the Java ones (leaf first) into frames; returns how many. */
static int native_frames(struct raw_frame *frames, void *ucontext, int *reached_java)
{
	uint64_t pcs[MAX_NATIVE];
	*reached_java = 0;
	if (config.native == SAMPLER_NATIVE_NO || !config.code_lo)
		return 0;
	/* the stripe we hold makes sampler_quiesce wait for us only if we saw enabled after taking it:
	 * otherwise the session may be over and dwarf_stop freeing tables this walk would read */
	if (config.native == SAMPLER_NATIVE_DWARF && !atomic_load_explicit(&enabled, memory_order_acquire))
		return 0;
	int n = config.native == SAMPLER_NATIVE_DWARF
			? stackwalk_dwarf(ucontext, config.code_lo, config.code_hi, pcs, MAX_NATIVE, reached_java)
			: stackwalk_fp(ucontext, config.code_lo, config.code_hi, pcs, MAX_NATIVE, reached_java);
	for (int i = 0; i < n; i++) {
		frames[i].bci = 0;
		frames[i].kind = RAW_NATIVE;
		frames[i].id = pcs[i];
	}
	return n;
}

/* Fills frames leaf first; returns the count (>= 1). */
static int walk(struct raw_frame *frames, void *ucontext, int tid, uint32_t *serial)
{
	void *env = threads_lookup(tid, serial);
	if (!env || !config.agct) {
		/* not a Java thread (GC, JIT, VM threads) or one the agent has no JNIEnv for: its native stack */
		int reached;
		int n = native_frames(frames, ucontext, &reached);
		if (n > 0)
			return n;
		uint64_t pc = context_pc(ucontext);
		if (!env && pc) {
			frames[0].bci = 0;
			frames[0].kind = RAW_NATIVE;
			frames[0].id = pc;
			return 1;
		}
		return error_frame(frames, env ? ERR_UNKNOWN : ERR_NO_JAVA_ENV);
	}
	/* in native or VM code: those frames first, then the Java stack from AsyncGetCallTrace */
	int reached_java = 0;
	int nn = native_frames(frames, ucontext, &reached_java);
	if (nn > 0) {
		int rest = java_walk(frames + nn, ucontext, env);
		return nn + rest;
	}
	return java_walk(frames, ucontext, env);
}

/* The Java frames (AsyncGetCallTrace, recovery, jstackdepth) into frames; returns the count (>= 1). */
static int java_walk(struct raw_frame *frames, void *ucontext, void *env)
{
	int cut = config.depth_root > 0 ? 4096 + 1 : config.depth + 1;
	sampler_agct_trace trace = {env, 0, (sampler_agct_frame *)frames};
	config.agct(&trace, cut, ucontext);
	int n = trace.num_frames;
	uint64_t stub_pc = 0;
	if (n <= 0 && ucontext && (n == -ERR_UNKNOWN_JAVA || n == -ERR_NOT_WALKABLE_JAVA ||
				   n == -ERR_UNKNOWN_NOT_JAVA || n == -ERR_NOT_WALKABLE_NOT_JAVA)) {
		/* leave frames[0] for the stub: the recovered Java frames go after it */
		int e = -n;
		int got = recover(frames + 1, cut - 1, ucontext, env, &stub_pc);
		if (got > 0) {
			atomic_fetch_add_explicit(&sampler_counters.recovered[e], 1, memory_order_relaxed);
			atomic_fetch_add_explicit(&sampler_counters.errors[e], 1, memory_order_relaxed);
			for (int i = 1; i <= got; i++)
				frames[i].kind = RAW_JAVA;
			frames[0].bci = 0;
			frames[0].kind = RAW_STUB;
			frames[0].id = stub_pc;
			n = got + 1;
			goto cut_check;
		}
	}
	if (n <= 0) {
		int e = -n;
		return error_frame(frames, e >= 0 && e <= ERR_SAFEPOINT ? (enum trace_error)e : ERR_UNKNOWN);
	}
	for (int i = 0; i < n; i++)
		frames[i].kind = RAW_JAVA;
cut_check:
	if (n > config.depth) {
		int root = config.depth_root;
		int leaf = config.depth - root;
		/* keep leaf-most frames, then [truncated], then the root-most ones */
		if (root > 0) {
			for (int i = 0; i < root; i++)
				frames[leaf + 1 + i] = frames[n - root + i];
		}
		error_frame(&frames[leaf], ERR_TRUNCATED);
		n = config.depth + 1;
	}
	return n;
}

static int64_t record(void *ucontext, uint64_t weight, int state)
{
	uint64_t t0 = rdtsc();
	int tid = (int)syscall(SYS_gettid);
	struct stripe *s = lock_stripe(tid);
	if (!s) {
		atomic_fetch_add_explicit(&sampler_counters.dropped, 1, memory_order_relaxed);
		return -1;
	}
	struct raw_frame *frames = s->frames;
	uint32_t serial;
	int n = walk(frames, ucontext, tid, &serial);
	uint32_t version = threads_last_version;
	if (state >= 0 && config.wall_state) {
		frames[n].bci = 0;
		frames[n].kind = RAW_STATE;
		frames[n].id = (uint64_t)state;
		n++;
	}
	if (config.threads) {
		frames[n].bci = (int32_t)version;
		frames[n].kind = RAW_THREAD;
		frames[n].id = (uint64_t)serial << 32 | (uint32_t)tid;
		n++;
	}
	int kind = state >= 0 ? SK_WALL : SK_EXEC;
	n = mark(frames, n, kind);
	int64_t ref = calltrace_put_ref(config.table, frames, n, weight);
	sampler_log_event(t0, ref, tid, serial, version, weight, state, kind);
	if (ref >= 0 && calltrace_is_overflow_ref(config.table, ref))
		atomic_fetch_add_explicit(&sampler_counters.overflow, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&sampler_counters.samples, 1, memory_order_relaxed);
	atomic_store_explicit(&s->lock, 0, memory_order_release);
	atomic_fetch_add_explicit(&sampler_counters.cost_tsc, rdtsc() - t0, memory_order_relaxed);
	if (state >= 0) {
		struct wall_slot *w = &wall_slots[(unsigned)tid & (WALL_SLOTS - 1)];
		atomic_store_explicit(&w->ref, ref, memory_order_release);
		atomic_store_explicit(&w->tid, tid, memory_order_release);
	}
	return ref;
}

void sampler_record(void *ucontext, uint64_t weight)
{
	record(ucontext, weight, -1);
}

void sampler_signal_handler(int sig, siginfo_t *si, void *ucontext)
{
	(void)sig;
	int saved = errno;
	if (!atomic_load_explicit(&enabled, memory_order_acquire))
		goto out;
	/* kill()/tgkill() from elsewhere has si_code <= 0; our timers send SI_TIMER (-2), perf sends
	 * POLL_IN, ITIMER_PROF sends SI_KERNEL */
	if (si && si->si_code == SI_QUEUE) {
		/* the wall-clock engine's own signals carry a cookie; anything else queued is not ours */
		int v = si->si_value.sival_int;
		if ((v & ~0xff) == SAMPLER_WALL_COOKIE && si->si_pid == (pid_t)syscall(SYS_getpid))
			record(ucontext, config.wall_weight ? config.wall_weight : config.weight, v & 0xff);
		goto out;
	}
	if (si && si->si_code <= 0 && si->si_code != SI_TIMER)
		goto out;
	sampler_record(ucontext, config.weight);
	rearm(si);
out:
	errno = saved;
}
