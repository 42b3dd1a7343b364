/* The HotSpot dynamic attach protocol: wake the attach listener (.attach_pid file + SIGQUIT), connect to
 * /tmp/.java_pid<nspid> as the target sees it, send one command, read the reply. Launcher only. */
#ifndef ATTACH_H
#define ATTACH_H

#include <stddef.h>

#include "proc.h"

enum attach_error {
	ATTACH_OK = 0,
	ATTACH_NO_PROCESS,     /* the pid does not exist */
	ATTACH_NOT_JVM,        /* not a HotSpot JVM */
	ATTACH_DISABLED,       /* no listener: -XX:+DisableAttachMechanism or SIGQUIT ignored */
	ATTACH_TIMEOUT,        /* the listener did not come up in time */
	ATTACH_PERMISSION,     /* not allowed to connect or signal */
	ATTACH_IO,             /* connection or protocol failure */
	ATTACH_DIED,           /* the process ended while we waited */
};

/* Makes sure the target's attach listener runs (starting it if needed, waiting at most timeout_ms).
 * Returns ATTACH_OK or an error with a message in err. */
int attach_wake(const struct proc_info *pi, int timeout_ms, char *err, size_t errlen);

/* Sends "load <lib> true <options>" and parses the reply. *agent_rc gets Agent_OnAttach's return code.
 * The reply's text (beyond the codes) goes to text. Returns ATTACH_OK when the command was delivered and
 * answered (check *agent_rc), else an error with a message. */
int attach_load(const struct proc_info *pi, const char *lib, const char *options, int *agent_rc, char *text,
		size_t textlen, char *err, size_t errlen);

/* Parses an attach reply (exposed for unit tests): the command result on the first line, then for load
 * the agent's code as "return code: N" (JDK 9+) or a bare number (JDK 8); JDK 21+ may put an error text
 * after a 0. Returns 0 when parsed, with *cmd_rc, *agent_rc (-1 when absent) and the remaining text. */
int attach_parse_reply(const char *reply, int *cmd_rc, int *agent_rc, char *text, size_t textlen);

#endif
