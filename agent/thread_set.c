/* tid -> engine handle map with scan generations for per-thread engines. Outside signal handlers. */
#include "thread_set.h"

#include <errno.h>
#include <stdlib.h>

static struct thread_set_entry *find(struct thread_set *s, int tid)
{
	for (unsigned i = 0; i < s->n; i++)
		if (s->e[i].tid == tid)
			return &s->e[i];
	return NULL;
}

void thread_set_add(struct thread_set *s, int tid, int force)
{
	pthread_mutex_lock(&s->lock);
	struct thread_set_entry *e = find(s, tid);
	if (e) {
		e->gen = s->gen;
		if (force) {
			s->close(e->handle);
			e->handle = s->open(tid);
			if (e->handle == -1) {
				s->open_failures++;
				s->last_errno = errno;
				*e = s->e[--s->n];
			}
		}
		goto out;
	}
	if (s->n == s->cap) {
		unsigned cap = s->cap ? s->cap * 2 : 256;
		struct thread_set_entry *grown = realloc(s->e, cap * sizeof(*grown));
		if (!grown)
			goto out;
		s->e = grown;
		s->cap = cap;
	}
	intptr_t h = s->open(tid);
	if (h == -1) {
		s->open_failures++;
		s->last_errno = errno;
		goto out;
	}
	s->e[s->n++] = (struct thread_set_entry){tid, s->gen, h};
out:
	pthread_mutex_unlock(&s->lock);
}

void thread_set_scan_cb(struct thread_set *s, int tid)
{
	if (tid != 0) {
		thread_set_add(s, tid, 0);
		return;
	}
	pthread_mutex_lock(&s->lock);
	for (unsigned i = 0; i < s->n;) {
		if (s->e[i].gen != s->gen) {
			s->close(s->e[i].handle);
			s->e[i] = s->e[--s->n];
		} else {
			i++;
		}
	}
	s->gen++; /* every entry must be seen again in the next pass */
	pthread_mutex_unlock(&s->lock);
}

void thread_set_clear(struct thread_set *s)
{
	pthread_mutex_lock(&s->lock);
	for (unsigned i = 0; i < s->n; i++)
		s->close(s->e[i].handle);
	s->n = 0;
	pthread_mutex_unlock(&s->lock);
}
