/* Engine "itimer": setitimer(ITIMER_PROF), process-wide CPU time; the kernel picks the thread.
 * Start/stop only; never in a signal handler. */
#include "engine.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

static int itimer_start(const struct engine_config *c, char *err, unsigned errlen)
{
	if (c->signo != SIGPROF) {
		snprintf(err, errlen, "event=itimer always uses SIGPROF (signal=%d is not possible)", c->signo);
		return -EINVAL;
	}
	int rc = engine_install_handler(SIGPROF);
	if (rc < 0) {
		snprintf(err, errlen, "cannot install the signal handler: %s", strerror(-rc));
		return rc;
	}
	int64_t us = c->interval / 1000;
	if (us < 1)
		us = 1;
	struct itimerval tv = {{us / 1000000, us % 1000000}, {us / 1000000, us % 1000000}};
	if (setitimer(ITIMER_PROF, &tv, NULL) != 0) {
		int e = errno;
		snprintf(err, errlen, "setitimer(ITIMER_PROF) failed: %s", strerror(e));
		return -e;
	}
	return 0;
}

static void itimer_stop(void)
{
	struct itimerval tv = {{0, 0}, {0, 0}};
	setitimer(ITIMER_PROF, &tv, NULL);
}

const struct engine engine_itimer = {
	.name = "itimer",
	.description = "setitimer(ITIMER_PROF), process-wide",
	.start = itimer_start,
	.stop = itimer_stop,
	.thread_started = NULL,
};
