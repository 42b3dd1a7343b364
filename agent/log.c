/* The agent's messages: formatting and destination (log= file or stderr). Outside signal handlers. */
#include "log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char log_path[OPTIONS_MAX_STR];
static enum log_level log_level = LOG_INFO;
static int log_quiet;

void log_configure(const char *path, enum log_level level, int quiet)
{
	pthread_mutex_lock(&log_lock);
	snprintf(log_path, sizeof(log_path), "%s", path ? path : "");
	log_level = level;
	log_quiet = quiet;
	pthread_mutex_unlock(&log_lock);
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	if (level < log_level || (level == LOG_INFO && log_quiet))
		return;
	char buf[2048];
	const char *prefix = level == LOG_ERROR ? "" : level == LOG_WARN ? "warning: " : "";
	va_list ap;
	va_start(ap, fmt);
	int n = snprintf(buf, sizeof(buf), "flameagent: %s", prefix);
	vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
	va_end(ap);

	pthread_mutex_lock(&log_lock);
	FILE *f = log_path[0] ? fopen(log_path, "a") : NULL;
	fprintf(f ? f : stderr, "%s\n", buf);
	if (f)
		fclose(f);
	else
		fflush(stderr);
	pthread_mutex_unlock(&log_lock);
}
