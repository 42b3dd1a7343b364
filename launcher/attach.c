/* The HotSpot dynamic attach protocol (launcher side). Launcher only. */
#include "attach.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static void socket_path(const struct proc_info *pi, char *out, size_t len)
{
	snprintf(out, len, "%s/tmp/.java_pid%d", pi->root, pi->nspid);
}

static int socket_ready(const struct proc_info *pi)
{
	char path[128];
	struct stat st;
	socket_path(pi, path, sizeof(path));
	return stat(path, &st) == 0 && S_ISSOCK(st.st_mode);
}

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

int attach_wake(const struct proc_info *pi, int timeout_ms, char *err, size_t errlen)
{
	if (socket_ready(pi))
		return ATTACH_OK;
	if (pi->sigquit_ignored) {
		snprintf(err, errlen, "pid %d ignores SIGQUIT, so its JVM never starts the attach listener\n"
				      "  hint: the JVM was started in the background of a non-interactive shell or with -Xrs; "
				      "start it with `env --default-signal=QUIT java ...`, or load the agent with -agentpath",
			 pi->pid);
		return ATTACH_DISABLED;
	}
	/* the trigger file: in the JVM's working directory, else its /tmp */
	char trigger[160];
	snprintf(trigger, sizeof(trigger), "/proc/%d/cwd/.attach_pid%d", pi->pid, pi->nspid);
	int fd = open(trigger, O_CREAT | O_WRONLY | O_CLOEXEC, 0660);
	if (fd < 0) {
		snprintf(trigger, sizeof(trigger), "%s/tmp/.attach_pid%d", pi->root, pi->nspid);
		fd = open(trigger, O_CREAT | O_WRONLY | O_CLOEXEC, 0660);
	}
	if (fd < 0) {
		snprintf(err, errlen, "cannot create the attach trigger file for pid %d: %s", pi->pid, strerror(errno));
		return errno == EACCES ? ATTACH_PERMISSION : ATTACH_IO;
	}
	if (fchown(fd, pi->uid, pi->gid) != 0) {
		/* not root: the file is ours, which is what the JVM wants when we run as its user */
	}
	close(fd);
	int result = ATTACH_TIMEOUT;
	if (kill(pi->pid, SIGQUIT) != 0) {
		snprintf(err, errlen, "cannot signal pid %d: %s", pi->pid, strerror(errno));
		result = errno == EPERM ? ATTACH_PERMISSION : ATTACH_NO_PROCESS;
		goto out;
	}
	for (int waited = 0; waited < timeout_ms; waited += 20) {
		if (socket_ready(pi)) {
			result = ATTACH_OK;
			goto out;
		}
		if (!proc_alive(pi->pid)) {
			snprintf(err, errlen, "pid %d ended while waiting for its attach listener", pi->pid);
			result = ATTACH_DIED;
			goto out;
		}
		sleep_ms(20);
	}
	snprintf(err, errlen,
		 "pid %d did not open its attach socket within %d s\n"
		 "  hint: the JVM may run with -XX:+DisableAttachMechanism, be stuck before a safepoint, or a tmp "
		 "cleaner removed %s/tmp/.java_pid%d; -agentpath at start avoids attach altogether",
		 pi->pid, timeout_ms / 1000, pi->root, pi->nspid);
out:
	unlink(trigger);
	return result;
}

int attach_parse_reply(const char *reply, int *cmd_rc, int *agent_rc, char *text, size_t textlen)
{
	*agent_rc = -1;
	if (textlen)
		text[0] = 0;
	char *end;
	long rc = strtol(reply, &end, 10);
	if (end == reply)
		return -1;
	*cmd_rc = (int)rc;
	const char *rest = end;
	while (*rest == '\n' || *rest == '\r')
		rest++;
	if (strncmp(rest, "return code: ", 13) == 0) {
		*agent_rc = atoi(rest + 13);
		rest = strchr(rest, '\n') ? strchr(rest, '\n') + 1 : rest + strlen(rest);
	} else if (*rest == '-' || (*rest >= '0' && *rest <= '9')) {
		*agent_rc = (int)strtol(rest, &end, 10);
		rest = end;
		while (*rest == '\n')
			rest++;
	}
	snprintf(text, textlen, "%s", rest);
	size_t n = strlen(text);
	while (n && (text[n - 1] == '\n' || text[n - 1] == ' '))
		text[--n] = 0;
	return 0;
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);
		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			return -1;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

int attach_load(const struct proc_info *pi, const char *lib, const char *options, int *agent_rc, char *text,
		size_t textlen, char *err, size_t errlen)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	socket_path(pi, addr.sun_path, sizeof(addr.sun_path));
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return ATTACH_IO;
	}
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0) {
		int e = errno;
		close(fd);
		snprintf(err, errlen, "cannot connect to %s: %s%s", addr.sun_path, strerror(e),
			 e == EACCES || e == EPERM ? "\n  hint: run flameattach as the JVM's user or as root" : "");
		return e == EACCES || e == EPERM ? ATTACH_PERMISSION : ATTACH_IO;
	}
	/* protocol 1: "1\0" then the command and exactly three arguments, each NUL-terminated */
	char req[8192];
	int n = snprintf(req, sizeof(req), "1%cload%c%s%ctrue%c%s%c", 0, 0, lib, 0, 0, options, 0);
	if (n <= 0 || (size_t)n >= sizeof(req) || write_all(fd, req, (size_t)n) != 0) {
		close(fd);
		snprintf(err, errlen, "cannot send the load command to pid %d: %s", pi->pid,
			 n >= (int)sizeof(req) ? "options too long" : strerror(errno));
		return ATTACH_IO;
	}
	char reply[8192];
	size_t got = 0;
	for (;;) {
		ssize_t r = read(fd, reply + got, sizeof(reply) - 1 - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
		if (got == sizeof(reply) - 1)
			break;
	}
	reply[got] = 0;
	close(fd);
	int cmd_rc;
	if (attach_parse_reply(reply, &cmd_rc, agent_rc, text, textlen) != 0) {
		snprintf(err, errlen, "pid %d sent an unreadable attach reply: %.100s", pi->pid, reply);
		return ATTACH_IO;
	}
	if (cmd_rc != 0) {
		snprintf(err, errlen, "pid %d refused to load the agent (attach code %d): %s", pi->pid, cmd_rc,
			 text[0] ? text : "no details");
		return ATTACH_IO;
	}
	return ATTACH_OK;
}
