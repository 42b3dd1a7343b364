/* The agent's messages: to the log= file (appended, so flameattach can show them) or the JVM's stderr.
 * Runs outside signal handlers only. */
#ifndef LOG_H
#define LOG_H

#include "options.h"

/* Sets where messages go and which levels show; path "" = stderr. Copies the path. */
void log_configure(const char *path, enum log_level level, int quiet);

/* "flameagent: <message>" plus newline. LOG_INFO is suppressed by quiet; hint lines follow as
 * "  hint: ...". */
void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

#endif
