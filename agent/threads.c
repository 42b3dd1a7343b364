/* Thread registry: tid -> JNIEnv table for the signal handler, tid -> name for output. Runs in JVMTI
 * callbacks, the engines' thread scanner and at dump time; never in a signal handler (threads_env in
 * the header is the only signal-path part). */
#include "threads.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>



struct name_entry {
	int tid;
	uint32_t serial;
	uint32_t version;
	unsigned prev; /* index + 1 of an older entry in the same hash chain, 0 = none */
	int is_java;
	char *name;
};

static pthread_mutex_t names_lock = PTHREAD_MUTEX_INITIALIZER;
static struct name_entry *names;
static unsigned n_names, cap_names;

int threads_gettid(void)
{
	return (int)syscall(SYS_gettid);
}

int threads_init(void)
{
	if (threads_env_table)
		return 0;
	void *p = mmap(NULL, sizeof(struct threads_env_slot) * THREADS_ENV_SLOTS, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	threads_env_table = p;
	return 0;
}

static _Atomic uint32_t next_serial = 1;

uint32_t threads_set_env(int tid, void *env, int new_life)
{
	struct threads_env_slot *t = threads_env_table;
	if (!t || tid <= 0)
		return 0;
	unsigned h = ((unsigned)tid * 2654435761u) & (THREADS_ENV_SLOTS - 1);
	for (int i = 0; i < 64; i++) {
		int cur = atomic_load(&t[h].tid);
		if (cur == 0) {
			int expected = 0;
			if (!atomic_compare_exchange_strong(&t[h].tid, &expected, tid) && expected != tid) {
				h = (h + 1) & (THREADS_ENV_SLOTS - 1);
				continue;
			}
			cur = tid;
		}
		if (cur == tid) {
			uint32_t serial = atomic_load(&t[h].serial);
			if (new_life || serial == 0) {
				serial = atomic_fetch_add(&next_serial, 1);
				atomic_store(&t[h].serial, serial);
			}
			atomic_store(&t[h].env, env);
			return serial;
		}
		h = (h + 1) & (THREADS_ENV_SLOTS - 1);
	}
	return 0;
}

/* tid -> index + 1 of its newest name entry; entries of one tid chain through prev */
#define NAME_INDEX 65536
static unsigned name_index[NAME_INDEX];

static struct name_entry *find_any(int tid)
{
	unsigned h = (unsigned)tid & (NAME_INDEX - 1);
	for (unsigned i = name_index[h]; i; i = names[i - 1].prev)
		if (names[i - 1].tid == tid)
			return &names[i - 1];
	return NULL;
}

static struct name_entry *find_name(int tid, uint32_t serial)
{
	/* the newest version of (tid, serial): entries chain newest first */
	unsigned h = (unsigned)tid & (NAME_INDEX - 1);
	for (unsigned i = name_index[h]; i; i = names[i - 1].prev)
		if (names[i - 1].tid == tid && names[i - 1].serial == serial)
			return &names[i - 1];
	return NULL;
}

static void publish_version(int tid, uint32_t serial, uint32_t version)
{
	struct threads_env_slot *t = threads_env_table;
	if (!t)
		return;
	unsigned h = ((unsigned)tid * 2654435761u) & (THREADS_ENV_SLOTS - 1);
	for (int i = 0; i < 64; i++) {
		int cur = atomic_load(&t[h].tid);
		if (cur == tid) {
			if (atomic_load(&t[h].serial) == serial)
				atomic_store(&t[h].version, version);
			return;
		}
		if (cur == 0)
			return;
		h = (h + 1) & (THREADS_ENV_SLOTS - 1);
	}
}

/* A new name entry for (tid, serial, version), indexed and published; NULL on ENOMEM. Lock held. */
static struct name_entry *new_entry(int tid, uint32_t serial, uint32_t version)
{
	if (n_names == cap_names) {
		unsigned cap = cap_names ? cap_names * 2 : 256;
		struct name_entry *grown = realloc(names, cap * sizeof(*names));
		if (!grown)
			return NULL;
		names = grown;
		cap_names = cap;
	}
	struct name_entry *e = &names[n_names++];
	unsigned h = (unsigned)tid & (NAME_INDEX - 1);
	e->prev = name_index[h];
	name_index[h] = n_names;
	e->tid = tid;
	e->serial = serial;
	e->version = version;
	e->name = NULL;
	e->is_java = 0;
	publish_version(tid, serial, version);
	return e;
}

void threads_set_name(int tid, uint32_t serial, const char *name, int is_java)
{
	if (tid <= 0 || !name)
		return;
	pthread_mutex_lock(&names_lock);
	struct name_entry *e = find_name(tid, serial);
	if (e && e->name && strcmp(e->name, name) != 0) {
		/* a rename: keep the old name for the samples taken under it */
		uint32_t version = e->version + 1;
		e = new_entry(tid, serial, version);
		if (!e)
			goto out;
	}
	if (!e) {
		e = new_entry(tid, serial, 0);
		if (!e)
			goto out;
	}
	if (!e->name || strcmp(e->name, name) != 0) {
		char *copy = strdup(name);
		if (copy) {
			free(e->name);
			e->name = copy;
		}
	}
	e->is_java |= is_java;
out:
	pthread_mutex_unlock(&names_lock);
}

const char *threads_name(int tid, uint32_t serial, uint32_t version, char *buf, unsigned buflen)
{
	pthread_mutex_lock(&names_lock);
	struct name_entry *e = NULL;
	unsigned h = (unsigned)tid & (NAME_INDEX - 1);
	for (unsigned i = name_index[h]; i && !e; i = names[i - 1].prev)
		if (names[i - 1].tid == tid && names[i - 1].serial == serial && names[i - 1].version == version)
			e = &names[i - 1];
	if (!e || !e->name)
		e = find_name(tid, serial);
	if (!e || !e->name)
		e = find_any(tid);
	snprintf(buf, buflen, "%s", e && e->name ? e->name : "");
	pthread_mutex_unlock(&names_lock);
	return buf;
}

unsigned threads_count(void)
{
	pthread_mutex_lock(&names_lock);
	unsigned n = n_names;
	pthread_mutex_unlock(&names_lock);
	return n;
}

static int has_name(int tid)
{
	pthread_mutex_lock(&names_lock);
	struct name_entry *e = find_any(tid);
	int r = e && e->name;
	pthread_mutex_unlock(&names_lock);
	return r;
}

int threads_scan(void (*cb)(int tid, void *arg), void *arg)
{
	DIR *d = opendir("/proc/self/task");
	if (!d)
		return -errno;
	int n = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		int tid = atoi(de->d_name);
		if (tid <= 0)
			continue;
		if (!has_name(tid)) {
			char path[64], comm[64] = "";
			snprintf(path, sizeof(path), "/proc/self/task/%d/comm", tid);
			FILE *f = fopen(path, "r");
			if (f) {
				if (fgets(comm, sizeof(comm), f))
					comm[strcspn(comm, "\n")] = 0;
				fclose(f);
				threads_set_name(tid, 0, comm, 0);
			}
		}
		if (cb)
			cb(tid, arg);
		n++;
	}
	closedir(d);
	return n;
}
