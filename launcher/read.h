/* Readers of profile files for flameconv: collapsed stacks (plain or gzip) into the shared model.
 * flameconv only; not part of the agent. */
#ifndef READ_H
#define READ_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

struct read_opts {
	int threads;          /* keep "[name tid=N]" root frames */
	int simple;           /* strip Java packages */
	char include[16][256];
	int n_include;
	char exclude[16][256];
	int n_exclude;
	const char *label;    /* when set: an extra root frame with this text ("[file]" per input) */
	int base;             /* 1: counts go to the model's base (diff); they add no new frames */
	int group_threads;    /* READ_GROUP_*: fold per-task thread names */
};

enum { READ_GROUP_NONE = 0, READ_GROUP_STAGE, READ_GROUP_POOL };

/* Folds a thread root frame's text (without brackets' tid): Spark's "Executor task launch worker for task
 * 12.0 in stage 3.0 (TID 45)" -> "Executor task launch worker (stage 3.0)" by stage, or
 * "Executor task launch worker" by pool; other names lose their numbers by pool ("pool-3-thread-7" ->
 * "pool-N-thread-N") and only their tid by stage. Writes into out. */
void read_group_thread(const char *name, int mode, char *out, size_t outlen);

/* Adds every stack of a collapsed file ("-" = stdin; gzip read transparently) to m. Malformed lines are
 * skipped and counted in *ignored, with the first one described in warn ("line 3: ..."). Returns 0, or
 * -errno / -EINVAL (a binary file) with a message in err naming the file. *samples gets the total count
 * read. */
int read_collapsed(const char *path, const struct read_opts *o, struct model *m, uint64_t *samples,
		   uint64_t *ignored, char *warn, size_t warnlen, char *err, size_t errlen);

/* Whether a file looks like JFR (magic "FLR\0", also inside gzip). */
int read_is_jfr(const char *path);

#endif
