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
	_Atomic(void *) env;
};

extern struct threads_env_slot *threads_env_table; /* mmap'd at threads_init */

/* Signal-safe: the JNIEnv registered for tid, or NULL. */
static inline void *threads_env(int tid)
{
	struct threads_env_slot *t = threads_env_table;
	if (!t)
		return NULL;
	unsigned h = ((unsigned)tid * 2654435761u) & (THREADS_ENV_SLOTS - 1);
	for (int i = 0; i < 64; i++) {
		int cur = atomic_load_explicit(&t[h].tid, memory_order_acquire);
		if (cur == tid)
			return atomic_load_explicit(&t[h].env, memory_order_acquire);
		if (cur == 0)
			return NULL;
		h = (h + 1) & (THREADS_ENV_SLOTS - 1);
	}
	return NULL;
}

/* Allocates the tables. 0 or -errno. Idempotent. */
int threads_init(void);

/* Records env for tid (NULL when the thread ends). Not signal-safe (callbacks, scanner). */
void threads_set_env(int tid, void *env);

/* Records or updates a thread's name (copied). is_java marks JVMTI-known threads. */
void threads_set_name(int tid, const char *name, int is_java);

/* Name of tid ("" if never seen); the last name seen wins, and survives the thread's end.
 * Returns a pointer valid until the next threads_* call that changes names; copy it. Dump time. */
const char *threads_name(int tid, char *buf, unsigned buflen);

/* Number of distinct threads ever registered. */
unsigned threads_count(void);

/* Reads /proc/self/task/<tid>/comm for threads not yet named; calls cb(tid) for every live thread
 * (returns how many). Used by per-thread engines to cover JVM-internal threads. */
int threads_scan(void (*cb)(int tid, void *arg), void *arg);

/* This thread's OS id. */
int threads_gettid(void);

#endif
