/* /proc/<pid> facts for the launcher: owner, namespace pid, mount namespace, signal dispositions,
 * whether libjvm is mapped. Launcher only. */
#include "proc.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int proc_alive(int pid)
{
	return kill(pid, 0) == 0 || errno == EPERM;
}

int proc_info(int pid, struct proc_info *pi)
{
	memset(pi, 0, sizeof(*pi));
	pi->pid = pid;
	pi->nspid = pid;
	char path[64], line[512];
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned a, b;
		if (sscanf(line, "Uid:\t%u\t%u", &a, &b) == 2)
			pi->uid = b;
		else if (sscanf(line, "Gid:\t%u\t%u", &a, &b) == 2)
			pi->gid = b;
		else if (strncmp(line, "NStgid:", 7) == 0) {
			/* the last number is the pid inside the innermost namespace */
			char *last = strrchr(line, '\t');
			if (last)
				pi->nspid = atoi(last + 1);
		} else if (strncmp(line, "SigIgn:", 7) == 0) {
			unsigned long long mask = strtoull(line + 7, NULL, 16);
			pi->sigquit_ignored = (mask >> (SIGQUIT - 1)) & 1;
		}
	}
	fclose(f);
	char mine[128] = "", theirs[128] = "";
	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", pid);
	ssize_t n1 = readlink("/proc/self/ns/mnt", mine, sizeof(mine) - 1);
	ssize_t n2 = readlink(path, theirs, sizeof(theirs) - 1);
	pi->other_mnt_ns = n1 > 0 && n2 > 0 && strcmp(mine, theirs) != 0;
	snprintf(pi->root, sizeof(pi->root), "/proc/%d/root", pid);
	return 0;
}

int proc_is_jvm(int pid)
{
	char path[64], line[1024];
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1; /* cannot tell (permission) */
	int found = 0;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, "/libjvm.so") != NULL;
	fclose(f);
	return found;
}
