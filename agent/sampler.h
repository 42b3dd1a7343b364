/* The one signal handler body: gate -> try-lock a stripe -> walk (AsyncGetCallTrace) -> store -> count.
 * Signal-safe: every function marked [SIG] may run inside a signal handler. */
#ifndef SAMPLER_H
#define SAMPLER_H

#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>

#include "calltrace.h"

#define SAMPLER_STRIPES 16

typedef struct {
	int32_t lineno;
	void *method_id;
} sampler_agct_frame;

typedef struct {
	void *env_id;
	int32_t num_frames;
	sampler_agct_frame *frames;
} sampler_agct_trace;

typedef void (*sampler_agct_fn)(sampler_agct_trace *trace, int32_t depth, void *ucontext);

/* How the handler re-arms the engine with a jittered next interval, so sampling never locks onto a
 * workload's own period (aliasing); the mean interval stays the configured one. Only perf_events
 * needs it: its hrtimer periods are exact, while CPU timers fire on scheduler ticks (already jittered,
 * and re-arming them from "now" would lose the time between expiry and tick). */
enum sampler_rearm { REARM_NONE = 0, REARM_PERF };

/* What produced a sample (multi-event sessions log each with its kind; JFR writes them as such). */
enum sampler_kind { SK_EXEC = 0, SK_WALL = 1, SK_ALLOC = 2, SK_LOCK = 3 };

/* cstack=: no native frames, frame pointers (the default), DWARF unwind tables (dwarf.h). */
enum sampler_native { SAMPLER_NATIVE_NO = 0, SAMPLER_NATIVE_FP, SAMPLER_NATIVE_DWARF };

struct sampler_config {
	struct calltrace_table *table;
	sampler_agct_fn agct;  /* NULL: no Java stacks */
	int depth;             /* jstackdepth N */
	int depth_root;        /* M of N/M */
	int threads;           /* add the thread root frame */
	uint64_t weight;       /* per sample: the interval in ns */
	double tsc_per_ns;     /* for cost accounting; 0 = do not measure */
	enum sampler_rearm rearm;
	int64_t interval;      /* mean interval (ns, or events for perf counters) for re-arming */
	int wall_state;        /* wall samples get a root frame [running] / [sleeping] */
	uintptr_t code_lo, code_hi; /* HotSpot's code cache; 0 = unknown (no recovery of failed walks) */
	uint64_t wall_weight;  /* weight of a wall-clock sample (its interval) */
	enum sampler_native native; /* how native frames are walked (cstack=) */
	int mark_kind;         /* several events: add a RAW_EVENT root frame to every trace */
	int typed;             /* tell interpreted, inlined and C1 frames apart (hotspot.h walker) */
	int kernel;            /* kernel frames from the perf engine's rings (cstack is not no) */
	int process_cpu;       /* itimer: a sample weighs the process's CPU time since the previous one */
};

/* The event log (for JFR): one entry per sample with its time, thread and trace, in mmap'd memory. */
struct sampler_event {
	uint64_t tsc;      /* rdtsc at the sample; sampler_tsc_to_ns converts */
	int64_t ref;       /* calltrace ref */
	uint64_t weight;
	int32_t tid;
	uint32_t serial;
	uint8_t state;     /* wall: SAMPLER_STATE_* */
	uint8_t published;
	uint8_t kind;      /* enum sampler_kind */
	uint8_t pad;
	uint32_t version;  /* the thread's name version */
};

/* Allocates (or clears) a log of capacity entries; 0 disables logging. Not signal-safe. 0 or -errno. */
int sampler_log_setup(uint64_t capacity);
/* Entries written so far (up to the capacity) and entries lost to a full log. */
uint64_t sampler_log_count(void);
uint64_t sampler_log_lost(void);
const struct sampler_event *sampler_log_entries(void);
/* [SIG] Appends one entry (lock-free); counts it lost when full. */
void sampler_log_event(uint64_t tsc, int64_t ref, int tid, uint32_t serial, uint32_t version, uint64_t weight,
		       int state, int kind);
/* [SIG] The current rdtsc value. */
uint64_t sampler_tsc(void);

/* Wall-clock samples arrive as SI_QUEUE signals whose value is SAMPLER_WALL_COOKIE | state. */
#define SAMPLER_WALL_COOKIE 0x57A11000
#define SAMPLER_STATE_RUNNING 0
#define SAMPLER_STATE_SLEEPING 1

/* The reference of the last wall sample recorded for tid (calltrace_put_ref), or -1. Not signal-safe
 * callers only read it; the handler writes it. */
int64_t sampler_wall_last_ref(int tid);
/* The table wall samples go to (for calltrace_add_ref by the wall engine's batching). */
struct calltrace_table *sampler_table(void);

/* Sets how the running engine is re-armed (engines call it at start). */
void sampler_set_rearm(enum sampler_rearm mode, int64_t interval);
/* [SIG] A jittered interval in [interval/2, 3*interval/2). */
int64_t sampler_jitter(int64_t interval);

struct sampler_counters {
	_Atomic uint64_t samples;
	_Atomic uint64_t dropped;
	_Atomic uint64_t overflow;
	_Atomic uint64_t cost_tsc;
	_Atomic uint64_t errors[ERR_COUNT];
	_Atomic uint64_t recovered[ERR_COUNT]; /* AGCT failures whose stack was recovered by unwinding a stub */
};

extern struct sampler_counters sampler_counters;

/* Prepares stripe buffers (mmap) and the config; resets counters. Not signal-safe. 0 or -errno. */
int sampler_setup(const struct sampler_config *cfg);

/* Gate: samples are taken only while enabled (release store / acquire load). */
void sampler_enable(int on);

/* Stop protocol's last step: waits until no handler holds a stripe (after sampler_enable(0) and the
 * engines stopped). Not signal-safe. */
void sampler_quiesce(void);

/* [SIG] The SA_SIGINFO handler engines install. Ignores signals sent by other processes. */
void sampler_signal_handler(int sig, siginfo_t *si, void *ucontext);

/* Records a sample whose frames the caller collected (JVMTI callbacks: alloc, lock), leaf first, with
 * room for 2 more frames after n (thread and event roots). Counts like a signal sample. Not for signal handlers
 * (it may run on any thread, concurrently); sampler_quiesce waits for it too. */
void sampler_record_frames(struct raw_frame *frames, int n, uint64_t weight, int kind);

/* [SIG] Records one sample for the current thread with the given ucontext (may be NULL). */
void sampler_record(void *ucontext, uint64_t weight);

#endif
