/* JFR recordings: the data the agent (or flameconv) hands to the JFR writer, and the reader that turns
 * recordings (ours and the JDK's) into stacks. Dump time / flameconv only; pure C, no JVM calls. */
#ifndef JFR_H
#define JFR_H

#include <stdint.h>
#include <stdio.h>

#include "model.h"

enum jfr_frame_type { JFR_FRAME_INTERPRETED = 0, JFR_FRAME_JIT = 1, JFR_FRAME_INLINED = 2, JFR_FRAME_NATIVE = 3,
		      JFR_FRAME_CPP = 4, JFR_FRAME_KERNEL = 5, JFR_FRAME_C1 = 6 };

struct jfr_frame {
	const char *class_name;  /* internal form "java/lang/String"; "" for native/kernel frames */
	const char *method;      /* "split"; native frames: the symbol; error frames: "[unknown_Java]" */
	const char *signature;   /* "(Ljava/lang/String;)[Ljava/lang/String;" or "" */
	int line;                /* source line, -1 unknown */
	int bci;                 /* -1 unknown */
	enum jfr_frame_type type;
};

struct jfr_stack {
	int n;                   /* frames, LEAF FIRST (JFR order) */
	const struct jfr_frame *frames;
	int truncated;
};

struct jfr_thread {
	int tid;                 /* OS thread id */
	int64_t key;             /* pool key events use in their tid field; 0 = the tid (a renamed thread
	                          * is one entry per name, same tid, different keys) */
	const char *name;
	int is_java;
	int64_t java_id;         /* java.lang.Thread id, or tid when unknown */
};

enum jfr_event_kind {
	JFR_EXECUTION_SAMPLE = 0, /* jdk.ExecutionSample (cpu, itimer, ctimer) */
	JFR_WALL_SAMPLE,          /* jdk.ExecutionSample with state, or jdk.NativeMethodSample when not running */
	JFR_ALLOC_SAMPLE,         /* jdk.ObjectAllocationSample: weight = bytes, class = allocated class */
	JFR_MONITOR_ENTER,        /* jdk.JavaMonitorEnter: weight = duration ns, class = monitor class */
	JFR_THREAD_PARK,          /* jdk.ThreadPark: weight = duration ns, class = parkedClass */
};

struct jfr_event {
	enum jfr_event_kind kind;
	int64_t time_ns;         /* wall-clock epoch nanoseconds of the event (start) */
	int tid;                 /* the thread's key (jfr_thread.key, or its tid when keys are 0) */
	uint32_t stack;          /* index into recording.stacks */
	uint64_t weight;         /* bytes or ns, per kind; 1 for samples */
	const char *class_name;  /* alloc / lock: internal form, "" if none */
	int state;               /* thread state for samples: 0 running (STATE_RUNNABLE), 1 sleeping */
};

struct jfr_recording {
	int64_t start_ns, duration_ns;  /* epoch ns */
	int64_t start_ticks;            /* ticks at start (we use ns ticks: ticks_per_second 1e9) */
	const struct jfr_thread *threads;
	int n_threads;
	const struct jfr_stack *stacks;
	uint32_t n_stacks;
	const struct jfr_event *events;
	uint64_t n_events;
	int pid;
};

/* Writes one complete chunk (header patched with sizes) that `jfr summary` / `jfr print` / JMC read.
 * Returns 0 or -errno. */
int out_jfr(const struct jfr_recording *rec, FILE *f);

/* Reads every chunk of a JFR file (ours or the JDK's; concatenated files too) and adds each stack-bearing
 * event (jdk.ExecutionSample, jdk.NativeMethodSample, jdk.ObjectAllocationSample,
 * jdk.ObjectAllocationInNewTLAB/OutsideTLAB, jdk.JavaMonitorEnter, jdk.ThreadPark) of the selected kind to
 * the model (root first; thread root frames "[name tid=N]" when threads; weights per kind).
 * kind_filter: -1 = execution samples only (default), or an enum jfr_event_kind. Returns 0 or -EINVAL
 * with a message in err naming the file, offset and problem. */
struct jfr_read_opts {
	int threads, simple, dot, ann;
	int kind_filter;            /* -1: execution samples; JFR_ALLOC_SAMPLE; JFR_MONITOR_ENTER (+ parks) */
	char (*include)[256];
	int n_include;
	char (*exclude)[256];
	int n_exclude;
	const char *label;          /* an extra root frame (flameconv --label-by-file) */
	int group_threads;          /* flameconv --group-threads: READ_GROUP_* of launcher/read.h */
};
int jfr_read_file(const char *path, const struct jfr_read_opts *o, struct model *m, char *err, size_t errlen);
/* The same, counting the events added in *samples. */
int jfr_read_counted(const char *path, const struct jfr_read_opts *o, struct model *m, uint64_t *samples, char *err,
		     size_t errlen);

#endif
