/* struct engine: all that profiler.c knows of a sampling engine. */
#ifndef ENGINE_H
#define ENGINE_H

#include <stddef.h>
#include <stdint.h>

struct engine_config {
	int64_t interval;  /* ns (time engines) or event count (perf events) */
	int signo;         /* signal to deliver (SIGPROF by default) */
	char event[64];    /* the event name asked for */
	char filter[256];  /* wall: thread ids "12;15-20" ("" = all) */
	int depth;         /* alloc, lock: Java frames to record */
	double tsc_per_ns; /* wall: to time batched samples in the event log */
	int kernel_stack;  /* perf: record kernel callchains when kernel mode is sampled (cstack is not no) */
};

struct engine {
	const char *name;        /* "cpu", "ctimer", "itimer" */
	const char *description; /* for the summary: "perf_events cpu-clock per thread" */
	/* Starts sampling; 0 or -errno with a message in err (one line, names the cause). */
	int (*start)(const struct engine_config *cfg, char *err, unsigned errlen);
	/* Stops delivering signals (may be called when start failed). */
	void (*stop)(void);
	/* A thread the agent just learned of (JVMTI ThreadStart); NULL if the engine is process-wide. */
	void (*thread_started)(int tid);
};

extern const struct engine engine_perf;
extern const struct engine engine_ctimer;
extern const struct engine engine_itimer;
extern const struct engine engine_wall;
extern const struct engine engine_alloc;
extern const struct engine engine_lock;

/* Whether name is a perf event the cpu engine can count ("cpu", "page-faults", "cycles", ...); gives its
 * default period and whether the period is time (ns) rather than an event count. */
int engine_perf_known(const char *name, int64_t *default_period, int *is_time);
/* Checks that perf_event_open accepts the event on this machine; 0, or -errno with the reason in err. */
int engine_perf_probe(const char *name, char *err, size_t errlen);
/* Set by the cpu engine's start when perf_event_paranoid allowed user-mode counting only (time in the
 * kernel is then not sampled). */
extern int perf_note_user_only;
/* Set by the cpu engine's start when it samples kernel mode but perf_event_open refused kernel
 * callchains (errno): samples then have no kernel frames. */
extern int perf_note_no_callchain;
/* The perf event the running cpu engine counts ("cpu-clock", "page-faults", ...). */
const char *engine_perf_event_name(void);
/* Lists the perf events with what perf_event_open says of each on this machine; returns how many work. */
int engine_perf_list(char *out, size_t outlen);

/* Installs the sampler's handler for signo (SA_SIGINFO | SA_RESTART). 0 or -errno. */
int engine_install_handler(int signo);

/* Per-thread engines share this: a background thread that covers threads the JVM did not announce
 * (GC, JIT and other VM threads, native threads) by rescanning /proc/self/task every 200 ms.
 * on_thread is called for each live tid (already-covered ones too; the engine keeps track), then once
 * with tid 0 when a pass is complete, so the engine can release threads that were not seen. */
int engine_scanner_start(void (*on_thread)(int tid, void *arg));
void engine_scanner_stop(void);

#endif
