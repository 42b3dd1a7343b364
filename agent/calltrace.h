/* The trace table: raw call traces (frames -> id) with sample count and total weight, in mmap'd memory.
 * Signal-safe: calltrace_put may run inside a signal handler; everything else runs outside it. */
#ifndef CALLTRACE_H
#define CALLTRACE_H

#include <stddef.h>
#include <stdint.h>

/* What a raw frame's id means. Stored in the padding word of AsyncGetCallTrace's ASGCT_CallFrame so a
 * buffer AGCT filled becomes raw frames by setting kind (layout: bci at 0, kind at 4, id at 8). */
enum raw_kind {
	RAW_JAVA = 0,    /* id = jmethodID, bci = bytecode index (AGCT lineno) */
	RAW_JAVA_INLINED,     /* same, known inlined (issue 3) */
	RAW_JAVA_INTERPRETED, /* same, known interpreted */
	RAW_JAVA_C1,          /* same, known C1-compiled */
	RAW_NATIVE,      /* id = instruction pointer in user space */
	RAW_KERNEL,      /* id = kernel instruction pointer */
	RAW_ERROR,       /* id = enum trace_error */
	RAW_THREAD,      /* id = thread serial << 32 | OS thread id (root frame when `threads`) */
	RAW_CLASS,       /* id = class handle (alloc / lock leaf), bci = 1 for arrays etc.; later issues */
	RAW_STATE,       /* id = thread state (wall clock) */
	RAW_STUB,        /* id = pc inside a JIT stub or frameless code whose caller's stack was recovered */
	RAW_EVENT,       /* id = enum sampler_kind: root frame telling the events of a multi-event session apart */
};

struct raw_frame {
	int32_t bci;
	int32_t kind; /* enum raw_kind */
	uint64_t id;
};

/* Explicit failure frames. The first 11 mirror AsyncGetCallTrace's error codes: index = -code. */
enum trace_error {
	ERR_NO_JAVA_FRAME = 0,      /* AGCT 0  */
	ERR_NO_CLASS_LOAD = 1,      /* AGCT -1 */
	ERR_GC_ACTIVE = 2,          /* AGCT -2 */
	ERR_UNKNOWN_NOT_JAVA = 3,   /* AGCT -3 */
	ERR_NOT_WALKABLE_NOT_JAVA = 4,
	ERR_UNKNOWN_JAVA = 5,
	ERR_NOT_WALKABLE_JAVA = 6,
	ERR_UNKNOWN_STATE = 7,
	ERR_THREAD_EXIT = 8,
	ERR_DEOPT = 9,
	ERR_SAFEPOINT = 10,         /* AGCT -10 */
	ERR_TRUNCATED = 11,         /* jstackdepth cut the stack */
	ERR_STORAGE_OVERFLOW = 12,  /* trace table full (memlimit) */
	ERR_NO_JAVA_ENV = 13,       /* thread has no JNIEnv known to the agent */
	ERR_UNKNOWN = 14,           /* anything else */
	ERR_COUNT
};

/* "[unknown_Java]", "[GC_active]", "[truncated]", "[storage_overflow]", ... */
const char *calltrace_error_frame(enum trace_error e);
/* A short phrase for reports: "unknown Java state", ... */
const char *calltrace_error_reason(enum trace_error e);

#define CALLTRACE_MAX_FRAMES 4300 /* jstackdepth max + kernel (48) + native frames (128) + thread/state/event/stub/truncated frames */

struct calltrace_table;

/* Creates a table using at most memlimit bytes of mmap'd memory (hash slots + frame arena). NULL on
 * failure (errno set). Not signal-safe. */
struct calltrace_table *calltrace_create(size_t memlimit);
void calltrace_destroy(struct calltrace_table *t);

/* Signal-safe, lock-free. Adds one sample of weight to the trace frames[0..n) (order is the caller's;
 * the sampler stores leaf first). When the table or arena is full the sample is added to the
 * [storage_overflow] trace instead and -ENOSPC returned; 0 otherwise. A trace may occasionally be stored
 * twice (two threads inserting it at once); readers merge by frames. n must be 1..CALLTRACE_MAX_FRAMES. */
int calltrace_put(struct calltrace_table *t, const struct raw_frame *frames, int n, uint64_t weight);

/* Signal-safe. Like calltrace_put, but returns a reference to the trace (>= 0) that calltrace_add_ref
 * can count again without its frames (the wall-clock engine's batching of idle threads); the overflow
 * trace's reference when full. Negative only for bad arguments (-EINVAL). */
int64_t calltrace_put_ref(struct calltrace_table *t, const struct raw_frame *frames, int n, uint64_t weight);
/* Signal-safe. Adds samples and weight to the trace ref refers to (from calltrace_put_ref on this table
 * since its last clear). */
void calltrace_add_ref(struct calltrace_table *t, int64_t ref, uint64_t samples, uint64_t weight);

/* The frames of the trace ref refers to; 0, or -EINVAL for a ref not (yet) published. Outside handlers. */
int calltrace_get_ref(const struct calltrace_table *t, int64_t ref, const struct raw_frame **frames, int *n);

/* Signal-safe. Whether ref is the [storage_overflow] trace's. */
int calltrace_is_overflow_ref(const struct calltrace_table *t, int64_t ref);

/* Visits every stored trace with its sample count and total weight. Call only when no calltrace_put
 * runs (after the stop protocol). Stops early and returns cb's value when cb returns non-zero. */
typedef int (*calltrace_visit_fn)(const struct raw_frame *frames, int n, uint64_t samples, uint64_t weight,
				  void *arg);
int calltrace_foreach(const struct calltrace_table *t, calltrace_visit_fn cb, void *arg);

/* Empties the table (counts too). Not signal-safe; only when no calltrace_put runs. */
void calltrace_clear(struct calltrace_table *t);

struct calltrace_stats {
	uint64_t traces;        /* distinct stored traces */
	uint64_t overflow;      /* samples that went to [storage_overflow] */
	size_t bytes_used, bytes_limit;
};
void calltrace_stats(const struct calltrace_table *t, struct calltrace_stats *st);

#endif
