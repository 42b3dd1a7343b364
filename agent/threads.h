/* Thread registry: OS tid -> JNIEnv (read by the signal handler through threads_env) and tid -> name
 * (kept after the thread ends, updated on renames; dump time). Registration runs in JVMTI callbacks and
 * the agent's thread scanner. */
#ifndef THREADS_H
#define THREADS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define THREADS_ENV_SLOTS 32768 /* power of two; open addressing by tid */

struct threads_env_slot {
	_Atomic int tid; /* 0 = empty; a slot once taken keeps its tid (ended threads keep env NULL) */
	_Atomic uint32_t serial; /* which life of this tid: a new Java thread on a reused tid gets a new one */
	_Atomic uint32_t version; /* which of its names (renames take a new version) */
	_Atomic(void *) env;
};

extern struct threads_env_slot *threads_env_table; /* mmap'd at threads_init */
/* The name version threads_lookup found, for the caller on this thread (initial-exec TLS: no
 * allocation or lock on first use, safe in a signal handler). */
extern __thread uint32_t threads_last_version __attribute__((tls_model("initial-exec")));

/* Signal-safe: the JNIEnv registered for tid, or NULL; *serial gets the thread's serial (0 if unknown). */
static inline void *threads_lookup(int tid, uint32_t *serial)
{
	struct threads_env_slot *t = threads_env_table;
	if (!t)
		return NULL;
	unsigned h = ((unsigned)tid * 2654435761u) & (THREADS_ENV_SLOTS - 1);
	for (int i = 0; i < 64; i++) {
		int cur = atomic_load_explicit(&t[h].tid, memory_order_acquire);
		if (cur == tid) {
			*serial = atomic_load_explicit(&t[h].serial, memory_order_relaxed);
			threads_last_version = atomic_load_explicit(&t[h].version, memory_order_relaxed);
			return atomic_load_explicit(&t[h].env, memory_order_acquire);
		}
		if (cur == 0)
			break;
		h = (h + 1) & (THREADS_ENV_SLOTS - 1);
	}
	*serial = 0;
	threads_last_version = 0;
	return NULL;
}

static inline void *threads_env(int tid)
{
	uint32_t serial;
	return threads_lookup(tid, &serial);
}

/* Allocates the tables. 0 or -errno. Idempotent. */
int threads_init(void);

/* Records env for tid (NULL when the thread ends). new_life: a thread just began on this tid (JVMTI
 * ThreadStart, VMInit): it gets a new serial, so samples of an earlier thread with the same tid keep
 * that thread's name. Returns the serial. Not signal-safe (callbacks, scanner). */
uint32_t threads_set_env(int tid, void *env, int new_life);

/* Records the name of thread (tid, serial) (copied); serial 0 = a thread the env table does not know
 * (JVM-internal or native threads, named from /proc). A rename takes a new version, published to the
 * signal handler so samples keep the name the thread had when they were taken (Spark renames its task
 * threads per task). */
void threads_set_name(int tid, uint32_t serial, const char *name, int is_java);

/* Name of (tid, serial, version), else the newest of (tid, serial), else of tid, else "". Copies into
 * buf and returns it. Dump time. */
const char *threads_name(int tid, uint32_t serial, uint32_t version, char *buf, unsigned buflen);

/* Number of distinct threads ever registered. */
unsigned threads_count(void);

/* Reads /proc/self/task/<tid>/comm for threads not yet named; calls cb(tid) for every live thread
 * (returns how many). Used by per-thread engines to cover JVM-internal threads. */
int threads_scan(void (*cb)(int tid, void *arg), void *arg);

/* This thread's OS id. */
int threads_gettid(void);

#endif
