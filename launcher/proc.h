/* What the launcher needs to know of a target process from /proc: owner, namespace pid, whether it
 * lives in another mount namespace, and paths as the launcher can reach them. Launcher only. */
#ifndef PROC_H
#define PROC_H

#include <stddef.h>
#include <sys/types.h>

struct proc_info {
	int pid;          /* as the launcher sees it */
	int nspid;        /* in the target's own pid namespace (NStgid) */
	uid_t uid;        /* effective */
	gid_t gid;
	int other_mnt_ns; /* lives in another mount namespace (a container) */
	char root[64];    /* "/proc/<pid>/root": the target's filesystem as we reach it */
	int sigquit_ignored; /* SIGQUIT is ignored: the JVM will never start its attach listener */
};

/* Fills *pi. 0, -ESRCH (no such process) or -errno. */
int proc_info(int pid, struct proc_info *pi);

/* Whether the process is alive. */
int proc_alive(int pid);

/* Whether the process looks like a HotSpot JVM (maps libjvm.so). */
int proc_is_jvm(int pid);

#endif
