/* The one signal handler body: gate, stripe try-lock, AsyncGetCallTrace, store, counters.
 * Signal-safe: every function here may run inside a signal handler. */
#include "sampler.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <time.h>
#include <unistd.h>

#include "hotspot.h"
#include "perf_ring.h"
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

static _Atomic uint64_t last_process_cpu;

static uint64_t process_cpu_ns(void)
{
	struct timespec ts;
	if (syscall(SYS_clock_gettime, CLOCK_PROCESS_CPUTIME_ID, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int sampler_setup(const struct sampler_config *cfg)
{
	atomic_store(&last_process_cpu, process_cpu_ns());
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

static int java_walk(struct raw_frame *frames, void *ucontext, void *env, const struct stackwalk_end *end);
static void type_frames(struct raw_frame *frames, int n, struct hs_frame f, uintptr_t stack_hi);

static int in_code(uintptr_t pc)
{
	return pc >= config.code_lo && pc < config.code_hi;
}

static void set_context(ucontext_t *copy, const ucontext_t *uc, const struct hs_frame *f)
{
	for (int i = 0; i < NGREG; i++)
		copy->uc_mcontext.gregs[i] = uc->uc_mcontext.gregs[i];
	copy->uc_mcontext.fpregs = uc->uc_mcontext.fpregs;
	copy->uc_mcontext.gregs[REG_RIP] = (greg_t)f->pc;
	copy->uc_mcontext.gregs[REG_RSP] = (greg_t)f->sp;
	copy->uc_mcontext.gregs[REG_RBP] = (greg_t)f->fp;
}

/* AsyncGetCallTrace gives up when the thread is inside code that has no frame of its own: vtable and
 * itable stubs, arraycopy and other runtime stubs. Unwind one such frame by its known shapes and ask
 * again from the caller:
 *   1. frameless: the return address is at sp (stubs that jump on);
 *   2. rbp frame: the stub pushed rbp (enter), return address at rbp+8.
 * Compiled methods (prologues, epilogues, callers in the interpreter) are left to deep_recover.
 * Only the word at sp and the two words rbp points to are read, within the thread's stack (below its
 * base, or sp + 64 KiB when the base is unknown); each candidate return address must lie in the code
 * cache, and AGCT checks the rest. */
static int recover(struct raw_frame *frames, int depth, void *ucontext, void *env, uint64_t *stub_pc)
{
	ucontext_t *uc = ucontext;
	uintptr_t pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
	uintptr_t sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
	uintptr_t fp = (uintptr_t)uc->uc_mcontext.gregs[REG_RBP];
	if (!config.code_lo || !in_code(pc) || (sp & 7) != 0)
		return 0;
	uintptr_t stack_hi = hotspot_layout.ok ? hotspot_stack_base(env) : 0;
	if (stack_hi && (stack_hi <= sp + 8 || stack_hi - sp > (64u << 20)))
		return 0;
	uintptr_t limit = stack_hi ? stack_hi : sp + 65536;
	ucontext_t copy;
	for (int attempt = 0; attempt < 2; attempt++) {
		struct hs_frame f;
		if (attempt == 0) {
			f = (struct hs_frame){*(const uintptr_t *)sp, sp + 8, fp};
		} else {
			if (fp < sp || fp + 16 > limit || fp - sp > 65536 || (fp & 7) != 0)
				break;
			f = (struct hs_frame){((const uintptr_t *)fp)[1], fp + 16, ((const uintptr_t *)fp)[0]};
		}
		if (!in_code(f.pc))
			continue;
		set_context(&copy, uc, &f);
		sampler_agct_trace trace = {env, 0, (sampler_agct_frame *)frames};
		config.agct(&trace, depth, &copy);
		if (trace.num_frames > 0) {
			*stub_pc = pc;
			for (int i = 0; i < trace.num_frames; i++)
				frames[i].kind = RAW_JAVA;
			if (config.typed && stack_hi)
				type_frames(frames, trace.num_frames, f, stack_hi);
			return trace.num_frames;
		}
	}
	return 0;
}

#define DEEP_STEPS 8
#define SLACK_WORDS 4

/* AsyncGetCallTrace from frame f: in Java code through a copy of the interrupted context; in VM or
 * native code (where it reads the thread's last-Java-frame anchor, not the context) by pointing the
 * anchor at f for the call and restoring it after. The thread is inside its own signal handler, so
 * nothing else of this thread runs meanwhile; the VM writes the same fields only on this thread. */
static int agct_from(struct raw_frame *frames, int depth, const struct hs_frame *f, void *ucontext, void *env,
		     uintptr_t *anchor_pc)
{
	sampler_agct_trace trace = {env, 0, (sampler_agct_frame *)frames};
	if (anchor_pc) {
		/* the anchor is { sp, pc, fp } as hotspot_anchor reads them */
		uintptr_t *sp_slot = (uintptr_t *)((char *)anchor_pc - hotspot_layout.jt_anchor_pc +
						   hotspot_layout.jt_anchor_sp);
		uintptr_t *fp_slot = (uintptr_t *)((char *)anchor_pc - hotspot_layout.jt_anchor_pc +
						   hotspot_layout.jt_anchor_fp);
		uintptr_t sp0 = *sp_slot, pc0 = *anchor_pc, fp0 = *fp_slot;
		__atomic_store_n(sp_slot, 0, __ATOMIC_RELAXED);
		__atomic_store_n(fp_slot, f->fp, __ATOMIC_RELAXED);
		__atomic_store_n(anchor_pc, f->pc, __ATOMIC_RELAXED);
		__atomic_store_n(sp_slot, f->sp, __ATOMIC_RELEASE);
		config.agct(&trace, depth, ucontext);
		__atomic_store_n(sp_slot, 0, __ATOMIC_RELAXED);
		__atomic_store_n(fp_slot, fp0, __ATOMIC_RELAXED);
		__atomic_store_n(anchor_pc, pc0, __ATOMIC_RELAXED);
		__atomic_store_n(sp_slot, sp0, __ATOMIC_RELEASE);
	} else {
		ucontext_t copy;
		set_context(&copy, ucontext, f);
		config.agct(&trace, depth, &copy);
	}
	return trace.num_frames;
}

/* When unwinding one stub is not enough (a compiled method in its prologue or epilogue, entered from
 * the interpreter, an allocation slow path in the VM), walk HotSpot's physical frames ourselves from f:
 * each compiled frame gives its method (from the nmethod; frames the JIT inlined into it are not
 * recovered), each interpreted frame its method and bytecode index, stubs nothing; after every step
 * AsyncGetCallTrace is asked again from the caller, and the first answer completes the stack.
 * anchor_pc: f is the thread's anchor (VM or native code), else the interrupted context. Returns the
 * frame count, or 0. */
static int deep_recover(struct raw_frame *frames, int depth, struct hs_frame f, int top, void *ucontext, void *env,
			uintptr_t *anchor_pc)
{
	uintptr_t stack_hi = hotspot_stack_base(env);
	if (!stack_hi || f.sp >= stack_hi || stack_hi - f.sp > (64u << 20))
		return 0;
	int n = 0;
	for (int step = 0; step < DEEP_STEPS && n < depth - 1; step++, top = 0) {
		struct hs_blob b;
		if (!in_code(f.pc) || !hotspot_find(f.pc, &b))
			return 0;
		if (b.kind == HS_NMETHOD) {
			uint64_t id = hotspot_jmethod(b.method);
			if (!id)
				return 0;
			frames[n].bci = 0;
			frames[n].kind = b.level >= 1 && b.level <= 3 ? RAW_JAVA_C1 : RAW_JAVA;
			frames[n].id = id;
			n++;
		} else if (b.kind == HS_INTERPRETER) {
			uintptr_t m;
			int bci;
			if (top || hotspot_interpreted(&f, stack_hi, &m, &bci) != 0)
				return 0;
			uint64_t id = hotspot_jmethod(m);
			if (!id)
				return 0;
			frames[n].bci = bci < 0 ? 0 : bci;
			frames[n].kind = RAW_JAVA_INTERPRETED;
			frames[n].id = id;
			n++;
		} else {
			/* a runtime stub or intrinsic: named at dump time from DynamicCodeGenerated, if known */
			frames[n].bci = 0;
			frames[n].kind = RAW_STUB;
			frames[n].id = f.pc;
			n++;
		}
		struct hs_frame here = f;
		int got = 0;
		if (hotspot_sender(&f, &b, top, stack_hi) == 0 && in_code(f.pc))
			got = agct_from(frames + n, depth - n, &f, ucontext, env, anchor_pc);
		/* inside a JIT intrinsic that pushed scratch registers (string and array intrinsics do), the
		 * frame sits a few words higher than the method's frame size says. Ask AsyncGetCallTrace from
		 * the same pc with sp raised by those words: it then finds the caller, and keeps the frames
		 * the JIT inlined at pc (the method's own frame written above is replaced) */
		for (int k = 1; got <= 0 && k <= SLACK_WORDS && top && b.kind == HS_NMETHOD && b.frame_size > 0 &&
				b.frame_complete && here.pc >= b.frame_complete;
		     k++) {
			uintptr_t nsp = here.sp + (uintptr_t)b.frame_size + 8u * (uintptr_t)k;
			if (nsp + 8 > stack_hi || !in_code(*(const uintptr_t *)(nsp - 8)))
				continue;
			struct hs_frame raised = {here.pc, here.sp + 8u * (uintptr_t)k, here.fp};
			got = agct_from(frames + n - 1, depth - n + 1, &raised, ucontext, env, anchor_pc);
			if (got > 0) {
				n--;
				f = raised;
			}
		}
		if (got > 0) {
			for (int i = n; i < n + got; i++)
				frames[i].kind = RAW_JAVA;
			if (config.typed)
				type_frames(frames + n, got, f, stack_hi);
			return n + got;
		}
		if (f.pc == here.pc || !in_code(f.pc))
			return 0;
	}
	return 0;
}

/* Marks the kind of each Java frame AsyncGetCallTrace returned (it reports all as compiled) by walking
 * the physical frames from where it started: a compiled frame holds its method and, before it in the
 * trace, the methods the JIT inlined into it; an interpreted frame holds one. Stops at the first frame
 * that does not match (the remaining frames keep RAW_JAVA). */
static void type_frames(struct raw_frame *frames, int n, struct hs_frame f, uintptr_t stack_hi)
{
	int i = 0;
	for (int step = 0; i < n && step < 1024; step++) {
		struct hs_blob b;
		if (!in_code(f.pc) || !hotspot_find(f.pc, &b))
			return;
		int top = step == 0;
		if (b.kind == HS_NMETHOD) {
			int lim = n < i + 128 ? n : i + 128, j = i;
			while (j < lim && hotspot_method_of(frames[j].id) != b.method)
				j++;
			if (j == lim)
				return;
			for (int k = i; k < j; k++)
				frames[k].kind = RAW_JAVA_INLINED;
			if (b.level >= 1 && b.level <= 3)
				frames[j].kind = RAW_JAVA_C1;
			i = j + 1;
		} else if (b.kind == HS_INTERPRETER) {
			uintptr_t m;
			if (hotspot_interpreted(&f, stack_hi, &m, NULL) != 0 || hotspot_method_of(frames[i].id) != m)
				return;
			frames[i].kind = RAW_JAVA_INTERPRETED;
			i++;
			top = 0; /* its own method is in place: the frame is set up */
		}
		if (hotspot_sender(&f, &b, top, stack_hi) != 0)
			return;
	}
}

/* Where AsyncGetCallTrace started: the last Java frame anchor when the thread has one (VM or native
 * code), else the interrupted context. */
static int walk_start(void *ucontext, void *env, struct hs_frame *f)
{
	uintptr_t *pc_slot;
	if (hotspot_anchor(env, f, &pc_slot)) {
		if (!f->pc)
			f->pc = f->sp >= 8 ? *(const uintptr_t *)(f->sp - 8) : 0;
		return f->pc != 0;
	}
	if (!ucontext)
		return 0;
	const ucontext_t *uc = ucontext;
	f->pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
	f->sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
	f->fp = (uintptr_t)uc->uc_mcontext.gregs[REG_RBP];
	return 1;
}

/* AsyncGetCallTrace refuses a thread in VM code whose anchor has a last Java sp but no pc yet (a
 * runtime call from compiled code, e.g. an allocation slow path): HotSpot itself fills the pc in from
 * sp[-1] when it needs the frame (make_walkable). Try that, then walk on from the anchor's frame.
 * Only in state _thread_in_vm: no other thread walks the stack of a thread in the VM (safepoints,
 * handshakes and GC wait for it), whereas a thread in native or blocked code may be walked meanwhile,
 * so its anchor is never touched. */
static int anchor_recover(struct raw_frame *frames, int depth, void *ucontext, void *env)
{
	struct hs_frame f;
	uintptr_t *pc_slot;
	if (hotspot_thread_state(env) != HS_THREAD_IN_VM)
		return 0;
	if (!hotspot_anchor(env, &f, &pc_slot) || f.sp < 4096 || (f.sp & 7) != 0)
		return 0;
	uintptr_t stack_hi = hotspot_stack_base(env);
	if (!stack_hi || f.sp >= stack_hi)
		return 0;
	if (!f.pc)
		f.pc = *(const uintptr_t *)(f.sp - 8);
	if (!in_code(f.pc))
		return 0;
	int got = agct_from(frames, depth, &f, ucontext, env, pc_slot);
	if (got > 0) {
		for (int i = 0; i < got; i++)
			frames[i].kind = RAW_JAVA;
		if (config.typed)
			type_frames(frames, got, f, stack_hi);
		return got;
	}
	return deep_recover(frames, depth, f, 0, ucontext, env, pc_slot);
}

#define MAX_NATIVE 128

/* Native frames above the Java ones (leaf first) into frames; returns how many. */
static int native_frames(struct raw_frame *frames, void *ucontext, struct stackwalk_end *end)
{
	uint64_t pcs[MAX_NATIVE];
	end->reached_java = 0;
	if (config.native == SAMPLER_NATIVE_NO || !config.code_lo)
		return 0;
	/* the stripe we hold makes sampler_quiesce wait for us only if we saw enabled after taking it:
	 * otherwise the session may be over and dwarf_stop freeing tables this walk would read */
	if (config.native == SAMPLER_NATIVE_DWARF && !atomic_load_explicit(&enabled, memory_order_acquire))
		return 0;
	int n = config.native == SAMPLER_NATIVE_DWARF
			? stackwalk_dwarf(ucontext, config.code_lo, config.code_hi, pcs, MAX_NATIVE, end)
			: stackwalk_fp(ucontext, config.code_lo, config.code_hi, pcs, MAX_NATIVE, end);
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
		struct stackwalk_end end;
		int n = native_frames(frames, ucontext, &end);
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
	struct stackwalk_end end;
	int nn = native_frames(frames, ucontext, &end);
	if (nn > 0) {
		int rest = java_walk(frames + nn, ucontext, env, &end);
		return nn + rest;
	}
	return java_walk(frames, ucontext, env, NULL);
}

/* The Java frames (AsyncGetCallTrace, recovery, jstackdepth) into frames; returns the count (>= 1). */
static int java_walk(struct raw_frame *frames, void *ucontext, void *env, const struct stackwalk_end *end)
{
	int cut = config.depth_root > 0 ? 4096 + 1 : config.depth + 1;
	sampler_agct_trace trace = {env, 0, (sampler_agct_frame *)frames};
	config.agct(&trace, cut, ucontext);
	int n = trace.num_frames;
	uint64_t stub_pc = 0;
	int java_state = n == -ERR_UNKNOWN_JAVA || n == -ERR_NOT_WALKABLE_JAVA;
	int vm_state = n == -ERR_UNKNOWN_NOT_JAVA || n == -ERR_NOT_WALKABLE_NOT_JAVA;
	if (n <= 0 && ucontext && (java_state || vm_state)) {
		/* leave frames[0] for the stub: the recovered Java frames go after it */
		int e = -n;
		/* a compiled method in its prologue or epilogue: the frame walker keeps the method's frame */
		struct hs_blob top;
		int in_method = hotspot_layout.ok && in_code(context_pc(ucontext)) &&
				hotspot_find(context_pc(ucontext), &top) && top.kind == HS_NMETHOD;
		int got = in_method ? 0 : recover(frames + 1, cut - 1, ucontext, env, &stub_pc);
		if (got > 0) {
			atomic_fetch_add_explicit(&sampler_counters.recovered[e], 1, memory_order_relaxed);
			atomic_fetch_add_explicit(&sampler_counters.errors[e], 1, memory_order_relaxed);
			frames[0].bci = 0;
			frames[0].kind = RAW_STUB;
			frames[0].id = stub_pc;
			n = got + 1;
			goto cut_check;
		}
		if (hotspot_layout.ok) {
			if (vm_state) {
				got = anchor_recover(frames, cut, ucontext, env);
			} else if (in_code(context_pc(ucontext))) {
				const ucontext_t *uc = ucontext;
				struct hs_frame f = {(uintptr_t)uc->uc_mcontext.gregs[REG_RIP],
						     (uintptr_t)uc->uc_mcontext.gregs[REG_RSP],
						     (uintptr_t)uc->uc_mcontext.gregs[REG_RBP]};
				got = deep_recover(frames, cut, f, 1, ucontext, env, NULL);
			} else if (end && end->reached_java) {
				/* VM code called from compiled Java without a state change (runtime leaf calls,
				 * barriers, the tail of a runtime call): the native walk found where the Java frames
				 * begin. A runtime stub's anchor may still be set, and AGCT prefers it to any
				 * context: then the anchor is pointed at the frames (the thread is in Java, where
				 * nobody else walks its stack) */
				struct hs_frame f = {end->pc, end->sp, end->fp}, a;
				uintptr_t *pc_slot = NULL;
				int state = hotspot_thread_state(env);
				if ((state == HS_THREAD_IN_JAVA || state == HS_THREAD_IN_VM) && hotspot_anchor(env, &a, &pc_slot) &&
				    !(a.sp >= f.sp && a.sp - f.sp < (1u << 20)))
					pc_slot = NULL;
				got = agct_from(frames, cut, &f, ucontext, env, pc_slot);
				if (got > 0) {
					for (int i = 0; i < got; i++)
						frames[i].kind = RAW_JAVA;
					uintptr_t stack_hi = config.typed ? hotspot_stack_base(env) : 0;
					if (stack_hi)
						type_frames(frames, got, f, stack_hi);
				} else {
					got = deep_recover(frames, cut, f, 0, ucontext, env, pc_slot);
				}
			}
			if (got > 0) {
				atomic_fetch_add_explicit(&sampler_counters.recovered[e], 1, memory_order_relaxed);
				atomic_fetch_add_explicit(&sampler_counters.errors[e], 1, memory_order_relaxed);
				n = got;
				goto cut_check;
			}
		}
	}
	if (n <= 0) {
		int e = -n;
		return error_frame(frames, e >= 0 && e <= ERR_SAFEPOINT ? (enum trace_error)e : ERR_UNKNOWN);
	}
	for (int i = 0; i < n; i++)
		frames[i].kind = RAW_JAVA;
	if (config.typed && hotspot_layout.ok) {
		struct hs_frame f;
		uintptr_t stack_hi = hotspot_stack_base(env);
		if (stack_hi && walk_start(ucontext, env, &f))
			type_frames(frames, n, f, stack_hi);
	}
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

static int64_t record(void *ucontext, uint64_t weight, int state, const siginfo_t *si)
{
	uint64_t t0 = rdtsc();
	/* read (and consume) the perf ring even when the sample is dropped, so it never fills */
	uint64_t kips[PERF_RING_MAX_KERNEL];
	int nk = config.kernel ? perf_ring_kernel_frames(si, kips, PERF_RING_MAX_KERNEL) : 0;
	int tid = (int)syscall(SYS_gettid);
	struct stripe *s = lock_stripe(tid);
	if (!s) {
		atomic_fetch_add_explicit(&sampler_counters.dropped, 1, memory_order_relaxed);
		return -1;
	}
	struct raw_frame *frames = s->frames;
	for (int i = 0; i < nk; i++) {
		frames[i].bci = 0;
		frames[i].kind = RAW_KERNEL;
		frames[i].id = kips[i];
	}
	uint32_t serial;
	int n = nk + walk(frames + nk, ucontext, tid, &serial);
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
	record(ucontext, weight, -1, NULL);
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
			record(ucontext, config.wall_weight ? config.wall_weight : config.weight, v & 0xff, NULL);
		goto out;
	}
	if (si && si->si_code <= 0 && si->si_code != SI_TIMER)
		goto out;
	/* CPU timers are checked at the scheduler tick: below the tick period one signal stands for several
	 * expirations, which the kernel counts as overruns */
	uint64_t weight = config.weight;
	if (si && si->si_code == SI_TIMER && si->si_overrun > 0 && si->si_overrun < 1000000)
		weight *= 1 + (uint64_t)si->si_overrun;
	/* setitimer(ITIMER_PROF) counts no overruns: the process's CPU time since the previous sample is
	 * what this one stands for (cheap: the kernel keeps a group timer while ITIMER_PROF is armed) */
	if (config.process_cpu && si && si->si_code == SI_KERNEL) {
		uint64_t now = process_cpu_ns();
		uint64_t prev = now ? atomic_exchange_explicit(&last_process_cpu, now, memory_order_relaxed) : 0;
		if (prev && now > prev && now - prev < 100 * weight)
			weight = now - prev;
	}
	record(ucontext, weight, -1, si);
	rearm(si);
out:
	errno = saved;
}
