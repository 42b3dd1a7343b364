/* A small tid -> per-thread engine handle map with scan generations, shared by per-thread engines
 * (perf fds, CPU timers). Runs on JVMTI callback threads and the scanner; never in a signal handler. */
#ifndef THREAD_SET_H
#define THREAD_SET_H

#include <pthread.h>
#include <stdint.h>

struct thread_set_entry {
	int tid;
	unsigned gen;
	intptr_t handle;
};

struct thread_set {
	pthread_mutex_t lock;
	struct thread_set_entry *e;
	unsigned n, cap;
	unsigned gen;
	intptr_t (*open)(int tid);      /* returns a handle or -1 */
	void (*close)(intptr_t handle);
	unsigned open_failures;
	int last_errno;
};

/* Covers tid if not covered yet (or again when force, for a reused tid). */
void thread_set_add(struct thread_set *s, int tid, int force);
/* Marks tid seen in this pass; tid 0 ends the pass and closes entries not seen in it. */
void thread_set_scan_cb(struct thread_set *s, int tid);
/* Closes everything. */
void thread_set_clear(struct thread_set *s);

#endif
