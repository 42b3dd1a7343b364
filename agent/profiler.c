/* The session state machine: start / resume / stop / dump / status, engine choice with fallback, storage,
 * name resolution at dump time and output. JVMTI callback and attach threads; never in a handler. */
#include "profiler.h"

#include <dlfcn.h>
#include <errno.h>
#include <libgen.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "calltrace.h"
#include "dwarf.h"
#include "engine.h"
#include "flameagent.h"
#include "frames.h"
#include "jfr.h"
#include "kallsyms.h"
#include "log.h"
#include "model.h"
#include "out.h"
#include "sampler.h"
#include "stackwalk.h"
#include "symbols.h"
#include "threads.h"
#include "vm.h"

enum state { IDLE, RUNNING };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static enum state state = IDLE;
static struct options session;  /* options of the running (or last) session */
static int have_profile;        /* storage holds a profile that can be written */
static int pending_start;       /* start requested at load time: begin at VMInit */
static struct calltrace_table *table;
/* events running beside the primary one (several events in one session) */
struct extra_event {
	const char *name;
	int64_t interval;
	int kind;
};
static struct extra_event extras[3];
static int n_extras;
static int primary_kind;
static const struct engine *engine;
static const struct engine *running_extras[3];
static int n_running_extras;
static char engine_desc[128];
static int64_t interval_ns;
static struct timespec started_at;
static uint64_t duration_ns;    /* accumulated over start/resume */
static double tsc_per_ns;
static int file_seq;
static int64_t session_start_ns; /* CLOCK_REALTIME at start, for JFR times */
static uint64_t session_start_tsc;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void calibrate_tsc(void)
{
	if (tsc_per_ns > 0)
		return;
	uint64_t t0 = now_ns(), c0 = __builtin_ia32_rdtsc();
	struct timespec ts = {0, 5 * 1000 * 1000};
	nanosleep(&ts, NULL);
	uint64_t t1 = now_ns(), c1 = __builtin_ia32_rdtsc();
	tsc_per_ns = t1 > t0 ? (double)(c1 - c0) / (double)(t1 - t0) : 1.0;
}

/* Checks that the output file can be created, before profiling starts. */
static int check_output_path(const char *pattern, int seq)
{
	if (!pattern[0] || strcmp(pattern, "-") == 0)
		return 0;
	char path[FA_MAX_PATH], warn[512] = "";
	int rc = options_expand_file(pattern, (int)getpid(), (int64_t)time(NULL), seq, path, sizeof(path), warn,
				     sizeof(warn));
	if (rc < 0) {
		log_error("file=%s: %s", pattern, warn[0] ? warn : strerror(-rc));
		return -1;
	}
	char dir[FA_MAX_PATH];
	snprintf(dir, sizeof(dir), "%s", path);
	const char *d = dirname(dir);
	if (access(d, F_OK) != 0) {
		log_error("file=%s: directory %s does not exist", pattern, d);
		return -1;
	}
	if (access(d, W_OK) != 0) {
		log_error("file=%s: directory %s is not writable: %s", pattern, d, strerror(errno));
		return -1;
	}
	return 0;
}

static const struct engine *engine_for(const char *event)
{
	if (strcmp(event, "ctimer") == 0)
		return &engine_ctimer;
	if (strcmp(event, "itimer") == 0)
		return &engine_itimer;
	if (strcmp(event, "wall") == 0)
		return &engine_wall;
	if (strcmp(event, "alloc") == 0)
		return &engine_alloc;
	if (strcmp(event, "lock") == 0)
		return &engine_lock;
	if (engine_perf_known(event, NULL, NULL))
		return &engine_perf;
	return NULL;
}

/* Default interval and the unit of weights for an event. */
static int64_t default_interval(const char *event, const char **unit)
{
	int64_t period = OPTIONS_DEFAULT_INTERVAL_NS;
	int is_time = 1;
	if (strcmp(event, "wall") == 0) {
		period = OPTIONS_DEFAULT_WALL_NS;
	} else if (strcmp(event, "alloc") == 0) {
		*unit = "bytes";
		return OPTIONS_DEFAULT_ALLOC_BYTES;
	} else if (strcmp(event, "lock") == 0) {
		*unit = "ns";
		return OPTIONS_DEFAULT_LOCK_NS;
	} else if (strcmp(event, "ctimer") && strcmp(event, "itimer"))
		engine_perf_known(event, &period, &is_time);
	*unit = is_time ? "ns" : "events";
	return period;
}

static const char *session_unit = "ns";
static void forget_kernel_symbols(void);

static int start_engine(const struct options *o)
{
	const struct engine *e = engine_for(o->event);
	if (!e) {
		log_error("event=%s: not available in this version (supported: cpu, ctimer, itimer and the perf "
			  "events the list action shows)", o->event);
		return FA_RC_BAD_OPTION;
	}
	struct engine_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.interval = interval_ns;
	cfg.signo = o->signal > 0 ? o->signal : SIGPROF;
	snprintf(cfg.event, sizeof(cfg.event), "%s", o->event[0] ? o->event : "cpu");
	snprintf(cfg.filter, sizeof(cfg.filter), "%s", o->filter);
	cfg.depth = o->jstackdepth;
	cfg.tsc_per_ns = tsc_per_ns;
	cfg.kernel_stack = o->cstack != CSTACK_NO;
	char err[512] = "";
	int rc = e->start(&cfg, err, sizeof(err));
	if (rc < 0 && e == &engine_perf && (!o->event[0] || strcmp(o->event, "cpu") == 0)) {
		log_warn("event=cpu: %s; falling back to event=ctimer (per-thread CPU timers)", err);
		e->stop();
		e = &engine_ctimer;
		err[0] = 0;
		rc = e->start(&cfg, err, sizeof(err));
	}
	if (rc < 0) {
		log_error("cannot start event=%s: %s", cfg.event, err);
		e->stop();
		return FA_RC_ENGINE;
	}
	engine = e;
	if (e == &engine_perf && perf_note_user_only) {
		log_warn("event=%s: kernel.perf_event_paranoid allows user-mode sampling only: time spent in the kernel "
			 "is not sampled (event=ctimer includes it, or run as root / lower perf_event_paranoid to 1)",
			 cfg.event);
		perf_note_user_only = 0;
	}
	if (e == &engine_perf && perf_note_no_callchain) {
		log_warn("event=%s: perf_event_open refused kernel callchains (%s): samples have no kernel frames",
			 cfg.event, strerror(perf_note_no_callchain));
		perf_note_no_callchain = 0;
	}
	if (e == &engine_perf)
		snprintf(engine_desc, sizeof(engine_desc), "perf_events %s per thread", engine_perf_event_name());
	else
		snprintf(engine_desc, sizeof(engine_desc), "%s", e->description);
	n_running_extras = 0;
	for (int i = 0; i < n_extras; i++) {
		const struct engine *x = engine_for(extras[i].name);
		struct engine_config xc = cfg;
		const char *unit;
		xc.interval = extras[i].interval > 0 ? extras[i].interval : default_interval(extras[i].name, &unit);
		snprintf(xc.event, sizeof(xc.event), "%s", extras[i].name);
		err[0] = 0;
		if (x->start(&xc, err, sizeof(err)) < 0) {
			log_error("cannot start %s= beside event=%s: %s", extras[i].name, cfg.event, err);
			x->stop();
			for (int k = 0; k < n_running_extras; k++)
				running_extras[k]->stop();
			e->stop();
			engine = NULL;
			return FA_RC_ENGINE;
		}
		running_extras[n_running_extras++] = x;
		size_t len = strlen(engine_desc);
		snprintf(engine_desc + len, sizeof(engine_desc) - len, " + %s", extras[i].name);
	}
	return FA_RC_OK;
}

/* Events of a session: the primary one (event=, or the first of alloc= / lock= / wall= when event= is
 * absent) and the others beside it. Several events need JFR to be told apart; the other outputs show
 * the primary event. */

static int kind_of(const char *event)
{
	return !strcmp(event, "wall") ? SK_WALL : !strcmp(event, "alloc") ? SK_ALLOC : !strcmp(event, "lock") ? SK_LOCK
												   : SK_EXEC;
}

/* Fills eff (a copy of o with the primary event and its interval) and the extras. */
static int effective_event(const struct options *o, struct options *eff)
{
	*eff = *o;
	const char *names[3] = {"alloc", "lock", "wall"};
	int64_t vals[3] = {o->alloc_bytes, o->lock_ns, o->wall_ns};
	n_extras = 0;
	for (int i = 0; i < 3; i++) {
		if (vals[i] < 0)
			continue;
		if (!eff->event[0]) {
			snprintf(eff->event, sizeof(eff->event), "%s", names[i]);
			if (vals[i] > 0 && !o->interval)
				eff->interval = vals[i];
			continue;
		}
		if (!strcmp(eff->event, names[i])) {
			if (!strcmp(names[i], "wall")) {
				log_error("event=wall and wall= both ask for the wall clock: use event=wall,interval=TIME, or "
					  "wall=TIME beside another event (event=cpu,wall=50ms)");
				return -1;
			}
			if (vals[i] > 0 && !o->interval)
				eff->interval = vals[i];
			continue;
		}
		if (!strcmp(names[i], "wall") && strcmp(eff->event, "cpu") && strcmp(eff->event, "ctimer") &&
		    strcmp(eff->event, "itimer") && strcmp(eff->event, "alloc") && strcmp(eff->event, "lock")) {
			log_error("wall= beside event=%s: the wall clock runs beside cpu, ctimer, itimer, alloc or lock", eff->event);
			return -1;
		}
		extras[n_extras++] = (struct extra_event){names[i], vals[i], kind_of(names[i])};
	}
	primary_kind = kind_of(eff->event[0] ? eff->event : "cpu");
	return 0;
}

/* ---- with `threads`: a daemon thread attached to the JVM re-reads Java thread names every 100 ms, so
 * samples carry the name the thread had when they were taken (Spark renames task threads per task) ---- */

static pthread_t names_thread;
static _Atomic int names_running;

static void *names_main(void *arg)
{
	(void)arg;
	if (vm_attach_current_thread("flameagent names") != 0)
		return NULL;
	while (atomic_load(&names_running)) {
		vm_register_java_threads();
		struct timespec ts = {0, 100 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	vm_detach_current_thread();
	return NULL;
}

static void start_names(const struct options *o)
{
	if (!o->threads || atomic_load(&names_running))
		return;
	atomic_store(&names_running, 1);
	if (pthread_create(&names_thread, NULL, names_main, NULL) != 0)
		atomic_store(&names_running, 0);
}

static void stop_names(void)
{
	if (!atomic_exchange(&names_running, 0))
		return;
	pthread_join(names_thread, NULL);
}

/* ---- loop= and timeout=: a daemon thread attached to the JVM that ends or rotates the session ---- */

static pthread_t timer_thread;
static int timer_running;
static pthread_cond_t timer_cond = PTHREAD_COND_INITIALIZER;
static int timer_cancel;
static int restart_engine(void);
static void reset_counters(void);
static void reset_walk_stats(void);
static void reset_event_log(const struct options *o);
static void pause_sampling(void);
static void start_dwarf(int report);
static int write_profile(const struct options *o);

static void *timer_main(void *arg)
{
	(void)arg;
	if (vm_attach_current_thread("flameagent timer") != 0)
		return NULL;
	pthread_mutex_lock(&lock);
	struct timespec started;
	clock_gettime(CLOCK_REALTIME, &started);
	int64_t loop_s = session.loop_s, timeout_s = session.timeout_s;
	struct timespec next = started;
	while (!timer_cancel && state == RUNNING) {
		int64_t step = loop_s ? loop_s : timeout_s;
		next.tv_sec += step;
		if (timeout_s && next.tv_sec > started.tv_sec + timeout_s)
			next.tv_sec = started.tv_sec + timeout_s;
		int rc = 0;
		while (!timer_cancel && rc != ETIMEDOUT)
			rc = pthread_cond_timedwait(&timer_cond, &lock, &next);
		if (timer_cancel || state != RUNNING)
			break;
		int at_timeout = timeout_s && next.tv_sec >= started.tv_sec + timeout_s;
		pause_sampling();
		state = IDLE;
		struct options o = session;
		write_profile(&o);
		if (at_timeout) {
			log_info("Profiling ended: timeout=%llds reached", (long long)timeout_s);
			break;
		}
		/* loop: the next interval starts afresh, into the next file name */
		calltrace_clear(table);
		duration_ns = 0;
		reset_event_log(&session);
		reset_counters();
		if (restart_engine() != FA_RC_OK)
			break;
	}
	timer_running = 0;
	pthread_mutex_unlock(&lock);
	vm_detach_current_thread();
	return NULL;
}

static void start_timer(void)
{
	if (!session.loop_s && !session.timeout_s)
		return;
	timer_cancel = 0;
	if (pthread_create(&timer_thread, NULL, timer_main, NULL) == 0) {
		pthread_detach(timer_thread);
		timer_running = 1;
	} else {
		log_warn("cannot start the loop/timeout thread: profiling runs until stopped");
	}
}

/* Called with lock held when a session ends by command. */
static void cancel_timer(void)
{
	timer_cancel = 1;
	pthread_cond_broadcast(&timer_cond);
}

/* A fresh event log (it feeds JFR output: one entry per sample, about 1/8 of memlimit) and the wall
 * clock time it counts from. */
static void reset_event_log(const struct options *o)
{
	if (sampler_log_setup((uint64_t)o->memlimit / 8 / sizeof(struct sampler_event)) != 0)
		log_warn("cannot allocate the event log: JFR output will hold no events");
	struct timespec rt;
	clock_gettime(CLOCK_REALTIME, &rt);
	session_start_ns = (int64_t)rt.tv_sec * 1000000000LL + rt.tv_nsec;
	session_start_tsc = __builtin_ia32_rdtsc();
}

/* The smallest interval each engine honours: the kernel clamps cpu-clock periods to 10 us, the wall-clock
 * sampler thread cannot usefully wake more often than every millisecond, ITIMER_PROF fires on scheduler
 * ticks. 0 = no minimum. */
static int64_t min_interval(const char *event)
{
	if (!event[0] || !strcmp(event, "cpu") || !strcmp(event, "ctimer") || !strcmp(event, "cpu-clock") ||
	    !strcmp(event, "task-clock"))
		return 10000;
	if (!strcmp(event, "wall") || !strcmp(event, "itimer"))
		return 1000000;
	return 0;
}

static int check_intervals(const struct options *o)
{
	int64_t min = min_interval(o->event);
	if (o->interval > 0 && o->interval < min) {
		log_error("interval=%lldns is below what event=%s can honour: the minimum is %lld%s", (long long)o->interval,
			  o->event[0] ? o->event : "cpu", (long long)(min >= 1000000 ? min / 1000000 : min / 1000),
			  min >= 1000000 ? "ms" : "us");
		return -1;
	}
	for (int i = 0; i < n_extras; i++)
		if (extras[i].kind == SK_WALL && extras[i].interval > 0 && extras[i].interval < 1000000) {
			log_error("wall=%lldns is below what the wall clock can honour: the minimum is 1ms",
				  (long long)extras[i].interval);
			return -1;
		}
	return 0;
}

/* CPU timers are checked at the scheduler tick (CLOCK_MONOTONIC_COARSE's resolution): below it ctimer
 * gets one signal per tick carrying the missed expirations and itimer one signal per tick; the handler
 * weights them by the time they stand for (sampler.c). Says so once. */
static void tick_limit(const char *event, uint64_t weight)
{
	struct timespec res;
	if ((strcmp(event, "ctimer") && strcmp(event, "itimer")) || clock_getres(CLOCK_MONOTONIC_COARSE, &res) != 0)
		return;
	uint64_t tick = (uint64_t)res.tv_sec * 1000000000ull + (uint64_t)res.tv_nsec;
	if (tick <= weight || tick > 100000000ull)
		return;
	log_warn("event=%s,interval=%lluus: the kernel checks CPU timers at its tick (%llu us here), so samples "
		 "come at most once per tick; each is weighted by the time it stands for "
		 "(event=cpu samples at finer intervals)",
		 event, (unsigned long long)(weight / 1000), (unsigned long long)(tick / 1000));
}

static int do_start(const struct options *given, int resume)
{
	struct options eff;
	if (effective_event(given, &eff) != 0 || check_intervals(&eff) != 0)
		return FA_RC_BAD_OPTION;
	const struct options *o = &eff;
	if (state == RUNNING) {
		log_error("profiling is already running (event=%s): stop it first", session.event[0] ? session.event : "cpu");
		return FA_RC_STATE;
	}
	if (!engine_for(o->event)) {
		log_error("event=%s: not available in this version (supported: cpu, ctimer, itimer and the perf "
			  "events the list action shows)", o->event);
		return FA_RC_BAD_OPTION;
	}
	if (check_output_path(o->file, file_seq) != 0)
		return FA_RC_OUTPUT;
	if (!table) {
		table = calltrace_create((size_t)o->memlimit);
		if (!table) {
			log_error("cannot allocate %lld bytes of trace storage (memlimit=): %s", (long long)o->memlimit,
				  strerror(errno));
			return FA_RC_ENGINE;
		}
	}
	int keep = resume && have_profile;
	if (!keep) {
		reset_walk_stats();
		calltrace_clear(table);
		duration_ns = 0;
		vm_forget_names();
		forget_kernel_symbols();
	}
	session = *o;
	interval_ns = o->interval > 0 ? o->interval : default_interval(o->event, &session_unit);
	default_interval(o->event, &session_unit);
	calibrate_tsc();
	struct sampler_config sc = {
		.table = table,
		.agct = vm_agct(),
		.depth = o->jstackdepth,
		.depth_root = o->jstackdepth_root,
		.threads = o->threads,
		.weight = (uint64_t)interval_ns,
		.tsc_per_ns = tsc_per_ns,
		.wall_state = o->threads && (strcmp(o->event, "wall") == 0 || o->wall_ns >= 0),
		.mark_kind = n_extras > 0,
		.native = o->cstack == CSTACK_NO ? SAMPLER_NATIVE_NO
			  : o->cstack == CSTACK_DWARF ? SAMPLER_NATIVE_DWARF : SAMPLER_NATIVE_FP,
		.typed = 1,
		.kernel = o->cstack != CSTACK_NO,
		.process_cpu = !strcmp(o->event, "itimer"),
	};
	tick_limit(o->event, sc.weight);
	if (sc.native == SAMPLER_NATIVE_DWARF)
		start_dwarf(1);
	for (int i = 0; i < n_extras; i++)
		if (extras[i].kind == SK_WALL)
			sc.wall_weight = (uint64_t)(extras[i].interval > 0 ? extras[i].interval : OPTIONS_DEFAULT_WALL_NS);
	vm_code_cache(&sc.code_lo, &sc.code_hi);
	vm_hotspot_setup();
	if (keep) {
		/* resume adds to the counters of the last session */
		struct sampler_counters saved = sampler_counters;
		sampler_setup(&sc);
		sampler_counters = saved;
	} else if (sampler_setup(&sc) != 0) {
		log_error("cannot allocate the sampler's buffers");
		return FA_RC_ENGINE;
	}
	if (!keep)
		reset_event_log(o);
	vm_register_java_threads();
	sampler_enable(1);
	int rc = start_engine(o);
	if (rc != FA_RC_OK) {
		sampler_enable(0);
		sampler_quiesce();
		dwarf_stop();
		return rc;
	}
	state = RUNNING;
	have_profile = 1;
	clock_gettime(CLOCK_MONOTONIC, &started_at);
	start_timer();
	start_names(o);
	log_info("Profiling started: event=%s (%s), interval %lld %s", o->event[0] ? o->event : "cpu", engine_desc,
		 (long long)interval_ns, session_unit);
	return FA_RC_OK;
}

static void reset_walk_stats(void)
{
	atomic_store(&stackwalk_stats.walks, 0);
	atomic_store(&stackwalk_stats.failed, 0);
	atomic_store(&stackwalk_stats.fp_steps, 0);
}

static void reset_counters(void)
{
	atomic_store(&sampler_counters.samples, 0);
	atomic_store(&sampler_counters.dropped, 0);
	atomic_store(&sampler_counters.overflow, 0);
	atomic_store(&sampler_counters.cost_tsc, 0);
	for (int i = 0; i < ERR_COUNT; i++) {
		atomic_store(&sampler_counters.errors[i], 0);
		atomic_store(&sampler_counters.recovered[i], 0);
	}
	reset_walk_stats();
}

static int restart_engine(void)
{
	if (session.cstack == CSTACK_DWARF)
		start_dwarf(0);
	sampler_enable(1);
	int rc = start_engine(&session);
	if (rc != FA_RC_OK) {
		sampler_enable(0);
		sampler_quiesce();
		dwarf_stop();
		return rc;
	}
	state = RUNNING;
	clock_gettime(CLOCK_MONOTONIC, &started_at);
	start_names(&session);
	return FA_RC_OK;
}

/* cstack=dwarf: unwind tables for every loaded object, kept current by a background thread. Without
 * them the walker steps by frame pointers, so a failure is a warning, not an error. */
static void start_dwarf(int report)
{
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int rc = dwarf_start();
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (rc < 0) {
		log_warn("cstack=dwarf: cannot build unwind tables: %s; native frames are walked by frame pointers",
			 strerror(-rc));
		return;
	}
	if (!report)
		return;
	struct dwarf_stats st;
	dwarf_get_stats(&st);
	log_debug("cstack=dwarf: unwind tables for %u objects (%llu FDEs): %llu rows, %.1f MiB (largest: %s, %.1f MiB), "
		  "built in %lld ms", st.objects, (unsigned long long)st.fdes, (unsigned long long)st.rows,
		  (double)st.bytes / 1048576.0, st.largest, (double)st.largest_bytes / 1048576.0,
		  (long long)((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000));
}

/* Stop protocol: clear the flag, stop the engine, wait out running handlers. */
static void pause_sampling(void)
{
	stop_names();
	sampler_enable(0);
	if (engine)
		engine->stop();
	for (int i = 0; i < n_running_extras; i++)
		running_extras[i]->stop();
	n_running_extras = 0;
	sampler_quiesce();
	/* after the quiesce: no handler reads the tables dwarf_stop frees */
	dwarf_stop();
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	duration_ns += (uint64_t)(now.tv_sec - started_at.tv_sec) * 1000000000ull +
		       (uint64_t)(now.tv_nsec - started_at.tv_nsec);
}

/* ---- resolution: raw frames -> model ---- */

/* Kernel symbols of the session, read at the first kernel frame of a dump (modules loaded later are
 * not named). */
static struct kallsyms *ksyms;
static int ksyms_loaded, ksyms_warned;

static void forget_kernel_symbols(void)
{
	kallsyms_free(ksyms);
	ksyms = NULL;
	ksyms_loaded = 0;
	ksyms_warned = 0;
}

/* The kallsyms name of kernel address pc, or "[kernel]" when it has none or kernel symbols are hidden
 * (said once per session). */
static const char *kernel_name(uint64_t pc)
{
	if (!ksyms_loaded) {
		ksyms_loaded = 1;
		ksyms = kallsyms_load("/proc/kallsyms");
		int e = errno;
		if (kallsyms_hidden(ksyms) && !ksyms_warned) {
			ksyms_warned = 1;
			log_warn("kernel symbols are hidden (/proc/kallsyms: %s): kernel frames are shown as [kernel]_[k]; "
				 "to name them, run the JVM as root or set sysctl kernel.kptr_restrict=0 (a non-root JVM "
				 "also needs kernel.perf_event_paranoid <= 1)",
				 ksyms ? "only zero addresses" : strerror(e));
		}
	}
	const char *name = kallsyms_find(ksyms, pc);
	return name ? name : "[kernel]";
}

struct resolve_ctx {
	struct model *m;
	const struct options *o;
	unsigned flags;
	struct model_frame *frames;
	char (*names)[512];
	uint64_t selected_samples;
};

static const char *native_name(uint64_t pc, char *out, size_t outlen)
{
	symbols_name(pc, 0, out, outlen);
	return out;
}

static int resolve_trace(const struct raw_frame *raw, int n, uint64_t samples, uint64_t weight, void *arg)
{
	struct resolve_ctx *c = arg;
	/* raw frames are leaf first; the model wants root first */
	int out = 0;
	for (int k = 0; k < n; k++) {
		const struct raw_frame *f = &raw[n - 1 - k];
		int i = out++;
		struct model_frame *mf = &c->frames[i];
		char *buf = c->names[i];
		mf->name = buf;
		switch (f->kind) {
		case RAW_JAVA:
		case RAW_JAVA_INLINED:
		case RAW_JAVA_INTERPRETED:
		case RAW_JAVA_C1:
			vm_method_name((jmethodID)(uintptr_t)f->id, c->flags, buf, sizeof(c->names[0]));
			/* without ann the kinds are not shown: one node per method name, as before typing */
			mf->kind = !c->o->ann			       ? FK_JAVA
				   : f->kind == RAW_JAVA_INLINED	       ? FK_INLINED
				   : f->kind == RAW_JAVA_INTERPRETED ? FK_INTERPRETED
				   : f->kind == RAW_JAVA_C1	       ? FK_C1
								       : FK_JAVA;
			if (buf[0] == '[')
				mf->kind = FK_ERROR;
			break;
		case RAW_NATIVE:
			mf->kind = symbols_name(f->id, c->o->lib, buf, sizeof(c->names[0]));
			break;
		case RAW_KERNEL: {
			/* kernel frames always carry their suffix (ARCHITECTURE.md section 4); a run of unnamed
			 * ones (hidden symbols) is one [kernel] frame */
			const char *kn = kernel_name(f->id);
			if (kn[0] == '[' && i > 0 && c->frames[i - 1].kind == FK_KERNEL && c->frames[i - 1].name[0] == '[') {
				out--;
				continue;
			}
			snprintf(buf, sizeof(c->names[0]), "%s%s", kn, MODEL_KERNEL_SUFFIX);
			mf->kind = FK_KERNEL;
			break;
		}
		case RAW_ERROR:
			snprintf(buf, sizeof(c->names[0]), "%s", calltrace_error_frame((enum trace_error)f->id));
			mf->kind = FK_ERROR;
			break;
		case RAW_STUB: {
			/* a recovered sample: name the stub; code inside a compiled method adds no frame */
			const char *stub = vm_stub_name((uintptr_t)f->id);
			if (!stub) {
				out--;
				continue;
			}
			snprintf(buf, sizeof(c->names[0]), "%s", stub);
			mf->kind = FK_NATIVE;
			break;
		}
		case RAW_CLASS:
			snprintf(buf, sizeof(c->names[0]), "%s", vm_class_name(f->id));
			mf->kind = FK_CLASS;
			break;
		case RAW_EVENT:
			/* several events: the trie outputs show the primary one */
			if ((int)f->id != primary_kind)
				return 0;
			out--;
			continue;
		case RAW_STATE:
			snprintf(buf, sizeof(c->names[0]), "%s", f->id ? "[sleeping]" : "[running]");
			mf->kind = FK_STATE;
			break;
		case RAW_THREAD: {
			char name[256];
			int tid = (int)(uint32_t)f->id;
			threads_name(tid, (uint32_t)(f->id >> 32), (uint32_t)f->bci, name, sizeof(name));
			snprintf(buf, sizeof(c->names[0]), "[%s tid=%d]", name[0] ? name : "thread", tid);
			mf->kind = FK_THREAD;
			break;
		}
		default:
			snprintf(buf, sizeof(c->names[0]), "[unknown]");
			mf->kind = FK_ERROR;
		}
	}
	n = out;
	/* unnamed libc frames at the bottom of native stacks (start_thread, clone) add nothing: drop them */
	int first = 0;
	while (first < n && (c->frames[first].kind == FK_THREAD || c->frames[first].kind == FK_STATE))
		first++;
	int drop = 0;
	/* ...but keep the last user frame under kernel frames */
	while (first + drop + 1 < n && c->frames[first + drop + 1].kind != FK_KERNEL &&
	       c->frames[first + drop].kind == FK_NATIVE &&
	       c->frames[first + drop].name[0] == '[' && strstr(c->frames[first + drop].name, "+0x"))
		drop++;
	if (drop) {
		for (int i = first; i + drop < n; i++)
			c->frames[i] = c->frames[i + drop];
		n -= drop;
	}
	if (!model_trace_selected(c->frames, n, (char(*)[256])c->o->include, c->o->n_include,
				  (char(*)[256])c->o->exclude, c->o->n_exclude))
		return 0;
	c->selected_samples += samples;
	return model_add(c->m, c->frames, n, samples, weight) == 0 ? 0 : -ENOMEM;
}

static struct model *build_model(const struct options *o, int reverse)
{
	struct resolve_ctx c = {.o = o};
	c.flags = (o->dot ? FRAMES_DOT : 0) | (o->simple ? FRAMES_SIMPLE : 0) | (o->sig ? FRAMES_SIG : 0);
	c.m = model_create(reverse);
	c.frames = calloc(CALLTRACE_MAX_FRAMES, sizeof(*c.frames));
	c.names = calloc(CALLTRACE_MAX_FRAMES, sizeof(*c.names));
	if (!c.m || !c.frames || !c.names) {
		model_destroy(c.m);
		c.m = NULL;
		goto out;
	}
	vm_refresh_thread_names();
	if (calltrace_foreach(table, resolve_trace, &c) != 0) {
		model_destroy(c.m);
		c.m = NULL;
	}
out:
	free(c.frames);
	free(c.names);
	return c.m;
}

static void fill_stats(struct profile_stats *st, const struct options *o)
{
	memset(st, 0, sizeof(*st));
	st->samples = atomic_load(&sampler_counters.samples);
	st->dropped = atomic_load(&sampler_counters.dropped);
	st->overflow = atomic_load(&sampler_counters.overflow);
	for (int i = 0; i < ERR_COUNT; i++) {
		st->errors[i] = atomic_load(&sampler_counters.errors[i]);
		st->recovered[i] = atomic_load(&sampler_counters.recovered[i]);
	}
	st->errors[ERR_STORAGE_OVERFLOW] = st->overflow;
	st->cost_ns = (uint64_t)((double)atomic_load(&sampler_counters.cost_tsc) / (tsc_per_ns > 0 ? tsc_per_ns : 1));
	st->cost_samples = st->samples;
	st->weight = st->samples * (uint64_t)interval_ns;
	st->duration_ns = duration_ns;
	if (state == RUNNING) {
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		st->duration_ns += (uint64_t)(now.tv_sec - started_at.tv_sec) * 1000000000ull +
				   (uint64_t)(now.tv_nsec - started_at.tv_nsec);
	}
	st->threads_seen = threads_count();
	if (session.cstack == CSTACK_DWARF) {
		struct dwarf_stats ds;
		dwarf_get_stats(&ds);
		st->dwarf_walks = atomic_load(&stackwalk_stats.walks);
		st->dwarf_failed = atomic_load(&stackwalk_stats.failed);
		st->dwarf_fp_steps = atomic_load(&stackwalk_stats.fp_steps);
		st->dwarf_bytes = ds.bytes;
		st->dwarf_objects = ds.objects;
	}
	snprintf(st->event, sizeof(st->event), "%s", o->event[0] ? o->event : "cpu");
	snprintf(st->engine, sizeof(st->engine), "%s", engine_desc);
	st->interval = interval_ns;
}

/* ---- JFR: events from the event log, stacks from the trace table ---- */

struct jfr_build {
	struct jfr_stack *stacks;
	struct jfr_frame **frames;   /* per stack, owned */
	const char **stack_class;    /* alloc/lock leaf class per stack */
	int *stack_is_park;
	uint32_t n_stacks, cap_stacks;
	int64_t *ref_keys;           /* open addressing ref -> stack index + 1 */
	uint32_t *ref_vals;
	size_t ref_cap;
	struct jfr_thread *threads;
	uint32_t *thread_serial, *thread_version;
	int n_threads, cap_threads;
	char **strings;              /* everything malloc'd for frames and threads */
	size_t n_strings, cap_strings;
};

static char *keep_str(struct jfr_build *b, char *s)
{
	if (!s)
		return NULL;
	if (b->n_strings == b->cap_strings) {
		size_t cap = b->cap_strings ? b->cap_strings * 2 : 1024;
		char **g = realloc(b->strings, cap * sizeof(*g));
		if (!g)
			return s;
		b->strings = g;
		b->cap_strings = cap;
	}
	b->strings[b->n_strings++] = s;
	return s;
}

static int jfr_stack_of(struct jfr_build *b, int64_t ref, uint32_t *out)
{
	if ((b->n_stacks + 1) * 2 > b->ref_cap) {
		size_t cap = b->ref_cap ? b->ref_cap * 2 : 1024;
		int64_t *keys = malloc(cap * sizeof(*keys));
		uint32_t *vals = calloc(cap, sizeof(*vals));
		if (!keys || !vals) {
			free(keys);
			free(vals);
			return -ENOMEM;
		}
		for (size_t i = 0; i < b->ref_cap; i++)
			if (b->ref_vals[i]) {
				size_t h = (size_t)((uint64_t)b->ref_keys[i] * 0x9E3779B97F4A7C15ull >> 17) & (cap - 1);
				while (vals[h])
					h = (h + 1) & (cap - 1);
				keys[h] = b->ref_keys[i];
				vals[h] = b->ref_vals[i];
			}
		free(b->ref_keys);
		free(b->ref_vals);
		b->ref_keys = keys;
		b->ref_vals = vals;
		b->ref_cap = cap;
	}
	size_t h = (size_t)((uint64_t)ref * 0x9E3779B97F4A7C15ull >> 17) & (b->ref_cap - 1);
	while (b->ref_vals[h]) {
		if (b->ref_keys[h] == ref) {
			*out = b->ref_vals[h] - 1;
			return 0;
		}
		h = (h + 1) & (b->ref_cap - 1);
	}
	const struct raw_frame *raw;
	int n;
	if (calltrace_get_ref(table, ref, &raw, &n) != 0)
		return -EINVAL;
	if (b->n_stacks == b->cap_stacks) {
		uint32_t cap = b->cap_stacks ? b->cap_stacks * 2 : 256;
		b->stacks = realloc(b->stacks, cap * sizeof(*b->stacks));
		b->frames = realloc(b->frames, cap * sizeof(*b->frames));
		b->stack_class = realloc(b->stack_class, cap * sizeof(*b->stack_class));
		b->stack_is_park = realloc(b->stack_is_park, cap * sizeof(*b->stack_is_park));
		if (!b->stacks || !b->frames || !b->stack_class || !b->stack_is_park)
			return -ENOMEM;
		b->cap_stacks = cap;
	}
	struct jfr_frame *fr = calloc((size_t)n + 1, sizeof(*fr));
	if (!fr)
		return -ENOMEM;
	uint32_t idx = b->n_stacks++;
	int k = 0, first_java = 1;
	b->stack_class[idx] = "";
	b->stack_is_park[idx] = 0;
	for (int i = 0; i < n; i++) {
		const struct raw_frame *f = &raw[i];
		struct jfr_frame *j = &fr[k];
		j->line = -1;
		j->bci = -1;
		j->class_name = "";
		j->signature = "";
		char buf[512];
		switch (f->kind) {
		case RAW_THREAD:
		case RAW_STATE:
		case RAW_EVENT:
			continue;
		case RAW_CLASS:
			b->stack_class[idx] = keep_str(b, strdup(vm_class_name(f->id)));
			continue;
		case RAW_JAVA:
		case RAW_JAVA_INLINED:
		case RAW_JAVA_INTERPRETED:
		case RAW_JAVA_C1: {
			char *cls, *name, *desc;
			int line;
			if (vm_method_parts((jmethodID)(uintptr_t)f->id, f->bci, &cls, &name, &desc, &line) != 0) {
				j->method = "[unknown_method]";
				j->type = JFR_FRAME_NATIVE;
				break;
			}
			j->class_name = keep_str(b, cls);
			j->method = keep_str(b, name);
			j->signature = keep_str(b, desc);
			j->line = line;
			j->bci = f->bci;
			j->type = f->kind == RAW_JAVA_INLINED ? JFR_FRAME_INLINED
				  : f->kind == RAW_JAVA_INTERPRETED ? JFR_FRAME_INTERPRETED
				  : f->kind == RAW_JAVA_C1 ? JFR_FRAME_C1 : JFR_FRAME_JIT;
			if (first_java && name && cls && !strcmp(name, "park") && !strcmp(cls, "jdk/internal/misc/Unsafe"))
				b->stack_is_park[idx] = 1;
			first_java = 0;
			break;
		}
		case RAW_ERROR:
			j->method = calltrace_error_frame((enum trace_error)f->id);
			j->type = JFR_FRAME_NATIVE;
			break;
		case RAW_STUB: {
			const char *stub = vm_stub_name((uintptr_t)f->id);
			if (!stub)
				continue;
			j->method = keep_str(b, strdup(stub));
			j->type = JFR_FRAME_NATIVE;
			break;
		}
		case RAW_KERNEL: {
			/* JFR has a frame type for it: the method is the bare kallsyms name */
			const char *kn = kernel_name(f->id);
			if (kn[0] == '[' && k > 0 && fr[k - 1].type == JFR_FRAME_KERNEL && fr[k - 1].method[0] == '[')
				continue;
			j->method = keep_str(b, strdup(kn));
			j->type = JFR_FRAME_KERNEL;
			break;
		}
		default:
			native_name(f->id, buf, sizeof(buf));
			j->method = keep_str(b, strdup(buf));
			j->type = strstr(buf, "::") ? JFR_FRAME_CPP : JFR_FRAME_NATIVE;
		}
		k++;
	}
	b->frames[idx] = fr;
	b->stacks[idx] = (struct jfr_stack){k, fr, 0};
	h = (size_t)((uint64_t)ref * 0x9E3779B97F4A7C15ull >> 17) & (b->ref_cap - 1);
	while (b->ref_vals[h])
		h = (h + 1) & (b->ref_cap - 1);
	b->ref_keys[h] = ref;
	b->ref_vals[h] = idx + 1;
	*out = idx;
	return 0;
}

/* One JFR thread per (tid, serial, name version): a renamed thread keeps each name on its samples.
 * Returns the thread's pool key. */
static int jfr_thread_of(struct jfr_build *b, int tid, uint32_t serial, uint32_t version)
{
	for (int i = 0; i < b->n_threads; i++)
		if (b->threads[i].tid == tid && b->thread_serial[i] == serial && b->thread_version[i] == version)
			return (int)b->threads[i].key;
	if (b->n_threads == b->cap_threads) {
		int cap = b->cap_threads ? b->cap_threads * 2 : 64;
		struct jfr_thread *g = realloc(b->threads, (size_t)cap * sizeof(*g));
		uint32_t *gs = realloc(b->thread_serial, (size_t)cap * sizeof(*gs));
		uint32_t *gv = gs ? realloc(b->thread_version, (size_t)cap * sizeof(*gv)) : NULL;
		if (g)
			b->threads = g;
		if (gs)
			b->thread_serial = gs;
		if (gv)
			b->thread_version = gv;
		if (!g || !gs || !gv)
			return 0;
		b->cap_threads = cap;
	}
	char name[256];
	threads_name(tid, serial, version, name, sizeof(name));
	int key = b->n_threads + 1;
	b->thread_serial[b->n_threads] = serial;
	b->thread_version[b->n_threads] = version;
	b->threads[b->n_threads++] = (struct jfr_thread){tid, key, keep_str(b, strdup(name[0] ? name : "thread")),
							 serial != 0, tid};
	return key;
}

static int write_jfr(const struct options *o, FILE *f)
{
	struct jfr_build b;
	memset(&b, 0, sizeof(b));
	uint64_t n = sampler_log_count();
	const struct sampler_event *log = sampler_log_entries();
	struct jfr_event *events = calloc(n ? n : 1, sizeof(*events));
	if (!events)
		return -ENOMEM;
	const char *ev = session.event;
	(void)o;
	enum jfr_event_kind kind = !strcmp(ev, "wall") ? JFR_WALL_SAMPLE : !strcmp(ev, "alloc") ? JFR_ALLOC_SAMPLE
				   : !strcmp(ev, "lock") ? JFR_MONITOR_ENTER : JFR_EXECUTION_SAMPLE;
	uint64_t m = 0;
	double per_ns = tsc_per_ns > 0 ? tsc_per_ns : 1;
	for (uint64_t i = 0; i < n; i++) {
		const struct sampler_event *e = &log[i];
		uint32_t s;
		if (!__atomic_load_n(&e->published, __ATOMIC_ACQUIRE) || jfr_stack_of(&b, e->ref, &s) != 0)
			continue;
		int key = jfr_thread_of(&b, e->tid, e->serial, e->version);
		struct jfr_event *je = &events[m++];
		enum jfr_event_kind k = n_extras == 0 ? kind
					: e->kind == SK_WALL ? JFR_WALL_SAMPLE : e->kind == SK_ALLOC ? JFR_ALLOC_SAMPLE
					: e->kind == SK_LOCK ? JFR_MONITOR_ENTER : JFR_EXECUTION_SAMPLE;
		je->kind = k == JFR_MONITOR_ENTER && b.stack_is_park[s] ? JFR_THREAD_PARK : k;
		je->time_ns = session_start_ns + (int64_t)((double)(int64_t)(e->tsc - session_start_tsc) / per_ns);
		je->tid = key;
		je->stack = s;
		je->weight = e->weight;
		je->class_name = b.stack_class[s];
		je->state = e->state;
	}
	struct jfr_recording rec = {
		.start_ns = session_start_ns,
		.duration_ns = (int64_t)duration_ns,
		.start_ticks = 0,
		.threads = b.threads,
		.n_threads = b.n_threads,
		.stacks = b.stacks,
		.n_stacks = b.n_stacks,
		.events = events,
		.n_events = m,
		.pid = (int)getpid(),
	};
	int rc = out_jfr(&rec, f);
	if (sampler_log_lost())
		log_warn("the JFR recording holds %llu of %llu samples: the event log was full (raise memlimit)",
			 (unsigned long long)m, (unsigned long long)(m + sampler_log_lost()));
	for (uint32_t i = 0; i < b.n_stacks; i++)
		free(b.frames[i]);
	for (size_t i = 0; i < b.n_strings; i++)
		free(b.strings[i]);
	free(b.strings);
	free(b.stacks);
	free(b.frames);
	free(b.stack_class);
	free(b.stack_is_park);
	free(b.ref_keys);
	free(b.ref_vals);
	free(b.threads);
	free(b.thread_serial);
	free(b.thread_version);
	free(events);
	return rc;
}

static const char *format_phrase(unsigned bits)
{
	if (bits & OUT_TEXT_MASK)
		return "text profile";
	if (bits & OUT_FLAMEGRAPH)
		return "flame graph";
	if (bits & OUT_SVG)
		return "SVG flame graph";
	if (bits & OUT_TREE)
		return "call tree";
	if (bits & OUT_JFR)
		return "JFR recording";
	return "collapsed stacks";
}

/* Writes the profile in storage per o (file, format); rendering options come from o. */
static int write_profile(const struct options *o)
{
	unsigned bits = options_outputs(o);
	char path[FA_MAX_PATH] = "-", warn[512] = "";
	if (o->file[0] && strcmp(o->file, "-") != 0) {
		int rc = options_expand_file(o->file, (int)getpid(), (int64_t)time(NULL), file_seq, path,
					     sizeof(path), warn, sizeof(warn));
		if (rc < 0) {
			log_error("file=%s: %s", o->file, warn[0] ? warn : strerror(-rc));
			return FA_RC_OUTPUT;
		}
		if (warn[0])
			log_warn("%s", warn);
	}
	/* the HTML page reverses the tree itself (a button), so it always gets the normal tree */
	struct model *m = build_model(o, o->reverse && !(bits & OUT_FLAMEGRAPH));
	if (!m) {
		log_error("out of memory while building the profile");
		return FA_RC_OUTPUT;
	}
	struct profile_stats st;
	fill_stats(&st, o);
	struct render_opts r;
	out_render_init(&r, o, session_unit);
	struct out_file of;
	char err[FA_MAX_PATH + 256];
	int rc = out_open(&of, path, err, sizeof(err));
	if (rc == 0) {
		rc = bits & OUT_JFR ? write_jfr(o, of.f) : out_write(m, &r, &st, bits, of.f);
		if (rc != 0) {
			snprintf(err, sizeof(err), "cannot write %s: %s", path, strerror(-rc));
			out_abort(&of);
		} else {
			rc = out_commit(&of, err, sizeof(err));
		}
	}
	model_destroy(m);
	if (rc != 0) {
		log_error("%s", err);
		return FA_RC_OUTPUT;
	}
	if (strcmp(path, "-") != 0)
		log_info("Wrote %s to %s: %llu samples, %llu dropped%s", format_phrase(bits), path,
			 (unsigned long long)st.samples, (unsigned long long)(st.dropped + st.overflow),
			 st.overflow ? " (storage full: raise memlimit)" : "");
	file_seq++;
	return FA_RC_OK;
}

static int do_stop(const struct options *o, int write)
{
	cancel_timer();
	if (state == RUNNING) {
		pause_sampling();
		state = IDLE;
		log_info("Profiling stopped: %llu samples", (unsigned long long)atomic_load(&sampler_counters.samples));
	} else if (!have_profile) {
		log_error("profiling is not running and there is no profile to write");
		return FA_RC_STATE;
	}
	if (!write)
		return FA_RC_OK;
	/* rendering options of this command win; filters/naming too */
	return write_profile(o);
}

static int do_dump(const struct options *o)
{
	if (!have_profile) {
		log_error("there is no profile to dump: profiling was never started");
		return FA_RC_STATE;
	}
	int was_running = state == RUNNING;
	if (was_running) {
		sampler_enable(0);
		sampler_quiesce();
	}
	int rc = write_profile(o);
	if (was_running)
		sampler_enable(1);
	return rc;
}

static int write_text(const struct options *o, const char *text)
{
	if (!o->file[0] || strcmp(o->file, "-") == 0) {
		fputs(text, stdout);
		fflush(stdout);
		return FA_RC_OK;
	}
	struct out_file of;
	char err[FA_MAX_PATH + 256];
	if (out_open(&of, o->file, err, sizeof(err)) != 0 || fputs(text, of.f) < 0 || out_commit(&of, err, sizeof(err)) != 0) {
		log_error("%s", err);
		return FA_RC_OUTPUT;
	}
	return FA_RC_OK;
}

static int do_status(const struct options *o)
{
	char text[1024];
	struct profile_stats st;
	fill_stats(&st, state == RUNNING ? &session : o);
	snprintf(text, sizeof(text),
		 "state: %s\nevent: %s\nengine: %s\ninterval_ns: %lld\nsamples: %llu\ndropped: %llu\nduration_ms: %llu\n",
		 state == RUNNING ? "running" : "idle", session.event[0] ? session.event : "cpu",
		 engine_desc[0] ? engine_desc : "-", (long long)interval_ns, (unsigned long long)st.samples,
		 (unsigned long long)(st.dropped + st.overflow), (unsigned long long)(st.duration_ns / 1000000));
	return write_text(o, text);
}

int profiler_command(const struct options *o, int at_load)
{
	pthread_mutex_lock(&lock);
	int rc = FA_RC_OK;
	switch (o->action) {
	case ACTION_NONE:
	case ACTION_START:
	case ACTION_RESUME:
		struct options eff;
		if (at_load) {
			session = *o;
			pending_start = 1;
			if (effective_event(o, &eff) != 0 || check_intervals(&eff) != 0)
				rc = FA_RC_BAD_OPTION;
			else if (check_output_path(o->file, 0) != 0)
				rc = FA_RC_OUTPUT;
			else if (!engine_for(o->event)) {
				log_error("event=%s: not available in this version (supported: cpu, ctimer, itimer and "
					  "the perf events the list action shows)", o->event);
				rc = FA_RC_BAD_OPTION;
			} else if (engine_for(eff.event) == &engine_perf && eff.event[0] && strcmp(eff.event, "cpu") != 0) {
				/* a counter this machine lacks must stop the JVM now, not be found at VMInit */
				char err[512];
				if (engine_perf_probe(eff.event, err, sizeof(err)) != 0) {
					log_error("cannot profile event=%s: %s", eff.event, err);
					rc = FA_RC_ENGINE;
				}
			}
		} else {
			rc = do_start(o, o->action == ACTION_RESUME);
		}
		break;
	case ACTION_STOP:
		rc = do_stop(o, o->file[0] || o->outputs);
		break;
	case ACTION_DUMP:
		rc = do_dump(o);
		break;
	case ACTION_STATUS:
		rc = do_status(o);
		break;
	case ACTION_VERSION:
		rc = write_text(o, "flameagent " FLAMEAGENT_VERSION "\n");
		break;
	case ACTION_LIST: {
		char text[4096], perf[3072];
		engine_perf_list(perf, sizeof(perf));
		snprintf(text, sizeof(text),
			 "Basic events:\n  cpu      (perf_events cpu-clock per thread; falls back to ctimer)\n"
			 "  ctimer   (CPU-time timer per thread)\n  itimer   (setitimer, process-wide)\n"
			 "  wall     (wall clock: every thread, running or not; default interval 50ms)\n"
			 "  alloc    (sampled heap allocations, weight in bytes; default every 512k)\n"
			 "  lock     (contended monitors and j.u.c parking, weight in ns; default over 10us)\n"
			 "Perf events (with what perf_event_open answers here):\n%s",
			 perf);
		rc = write_text(o, text);
		break;
	}
	}
	pthread_mutex_unlock(&lock);
	return rc;
}

void profiler_vm_init(jvmtiEnv *jvmti, JNIEnv *jni)
{
	(void)jvmti, (void)jni;
	pthread_mutex_lock(&lock);
	if (pending_start) {
		pending_start = 0;
		struct options o = session;
		if (do_start(&o, 0) != FA_RC_OK)
			log_error("profiling did not start; the JVM runs on without it");
	}
	pthread_mutex_unlock(&lock);
}

void profiler_vm_death(jvmtiEnv *jvmti, JNIEnv *jni)
{
	(void)jvmti, (void)jni;
	pthread_mutex_lock(&lock);
	cancel_timer();
	if (state == RUNNING) {
		pause_sampling();
		state = IDLE;
		struct options o = session;
		write_profile(&o);
	}
	pthread_mutex_unlock(&lock);
}

void profiler_thread_start(int tid)
{
	const struct engine *e = engine;
	if (state == RUNNING && e && e->thread_started)
		e->thread_started(tid);
}
