/* The agent's option string <-> struct options: keys, units, output inference, file name patterns.
 * Pure C, no JVM: load/attach time in the agent, and the launchers. */
#include "options.h"

#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

static int fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

void options_init(struct options *o)
{
	memset(o, 0, sizeof(*o));
	o->jstackdepth = OPTIONS_DEFAULT_JSTACKDEPTH;
	o->alloc_bytes = -1;
	o->lock_ns = -1;
	o->wall_ns = -1;
	o->memlimit = OPTIONS_DEFAULT_MEMLIMIT;
	o->loglevel = LOG_INFO;
	o->flat_n = OPTIONS_DEFAULT_FLAT;
	o->traces_n = OPTIONS_DEFAULT_TRACES;
}

/* Parses a non-negative integer prefix; returns chars consumed, 0 if none, -1 on overflow. */
static int parse_number(const char *s, int64_t *out)
{
	int64_t v = 0;
	int i = 0;
	while (isdigit((unsigned char)s[i])) {
		if (v > (INT64_MAX - 9) / 10)
			return -1;
		v = v * 10 + (s[i] - '0');
		i++;
	}
	*out = v;
	return i;
}

static int scale(int64_t v, int64_t mul, int64_t *out)
{
	if (mul && v > INT64_MAX / mul)
		return -EINVAL;
	*out = v * mul;
	return 0;
}

int options_parse_duration(const char *s, int64_t default_unit_ns, int64_t *out_ns)
{
	int64_t v;
	int n = parse_number(s, &v);
	if (n <= 0)
		return -EINVAL;
	const char *u = s + n;
	int64_t mul;
	if (!*u)
		mul = default_unit_ns;
	else if (!strcasecmp(u, "ns"))
		mul = 1;
	else if (!strcasecmp(u, "us"))
		mul = 1000;
	else if (!strcasecmp(u, "ms"))
		mul = 1000000;
	else if (!strcasecmp(u, "s"))
		mul = 1000000000LL;
	else if (!strcasecmp(u, "m") || !strcasecmp(u, "min"))
		mul = 60 * 1000000000LL;
	else if (!strcasecmp(u, "h"))
		mul = 3600 * 1000000000LL;
	else
		return -EINVAL;
	return scale(v, mul, out_ns);
}

int options_parse_size(const char *s, int64_t *out_bytes)
{
	int64_t v;
	int n = parse_number(s, &v);
	if (n <= 0)
		return -EINVAL;
	const char *u = s + n;
	int64_t mul = 1;
	if (*u) {
		switch (tolower((unsigned char)*u)) {
		case 'b': mul = 1; break;
		case 'k': mul = 1024; break;
		case 'm': mul = 1024 * 1024; break;
		case 'g': mul = 1024 * 1024 * 1024LL; break;
		default: return -EINVAL;
		}
		u++;
		if (*u && !(tolower((unsigned char)*u) == 'b' && !u[1] && mul > 1))
			return -EINVAL;
	}
	return scale(v, mul, out_bytes);
}

static int is_time_unit(const char *u)
{
	return !strcasecmp(u, "ns") || !strcasecmp(u, "us") || !strcasecmp(u, "ms") || !strcasecmp(u, "s");
}

static int parse_interval(struct options *o, const char *v, char *err, size_t errlen)
{
	const char *form = "expected a positive number with ns, us, ms or s, or with k, m or g bytes for alloc";
	if (v[0] == '-')
		return fail(err, errlen, "interval=%s: must be positive (%s)", v, form);
	int64_t num;
	int n = parse_number(v, &num);
	if (n < 0)
		return fail(err, errlen, "interval=%s: number too large", v);
	if (n == 0)
		return fail(err, errlen, "interval=%s: not a number (%s)", v, form);
	const char *u = v + n;
	o->interval_has_byte_unit = o->interval_has_time_unit = 0;
	if (!*u || is_time_unit(u)) {
		if (options_parse_duration(v, 1, &o->interval) < 0)
			return fail(err, errlen, "interval=%s: number too large", v);
		o->interval_has_time_unit = *u != 0;
	} else if (options_parse_size(v, &o->interval) == 0) {
		o->interval_has_byte_unit = 1;
	} else {
		return fail(err, errlen, "interval=%s: unknown unit '%s' (%s)", v, u, form);
	}
	if (o->interval <= 0)
		return fail(err, errlen, "interval=%s: must be positive (%s)", v, form);
	return 0;
}

static int valid_event(const char *v)
{
	if (!*v || strlen(v) >= sizeof(((struct options *)0)->event))
		return 0;
	for (const char *p = v; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("_-:.", *p))
			return 0;
	return 1;
}

static int parse_int_range(const char *key, const char *v, long lo, long hi, int *out, char *err, size_t errlen)
{
	char *end;
	errno = 0;
	long x = strtol(v, &end, 10);
	if (!*v || *end || errno || x < lo || x > hi)
		return fail(err, errlen, "%s=%s: expected a whole number from %ld to %ld", key, v, lo, hi);
	*out = (int)x;
	return 0;
}

static int parse_seconds(const char *key, const char *v, int64_t *out, char *err, size_t errlen)
{
	int64_t ns;
	if (v[0] == '-' || options_parse_duration(v, 1000000000LL, &ns) < 0 || ns <= 0)
		return fail(err, errlen, "%s=%s: expected a positive duration such as 30s, 5m or 1h (bare number: seconds)",
			    key, v);
	*out = (ns + 999999999) / 1000000000;
	return 0;
}

static int parse_signal(const char *v, int *out, char *err, size_t errlen)
{
	static const struct { const char *name; int sig; } names[] = {
		{"PROF", SIGPROF}, {"VTALRM", SIGVTALRM}, {"ALRM", SIGALRM}, {"USR1", SIGUSR1}, {"USR2", SIGUSR2},
		{"URG", SIGURG}, {"WINCH", SIGWINCH}, {"IO", SIGIO}, {"POLL", SIGPOLL}, {"TRAP", SIGTRAP},
	};
	if (isdigit((unsigned char)v[0]))
		return parse_int_range("signal", v, 1, 64, out, err, errlen);
	const char *n = strncasecmp(v, "SIG", 3) == 0 ? v + 3 : v;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcasecmp(n, names[i].name)) {
			*out = names[i].sig;
			return 0;
		}
	return fail(err, errlen, "signal=%s: expected a signal number (1-64) or a name such as SIGPROF or SIGUSR2", v);
}

static int copy_str(const char *key, const char *v, char *dst, size_t cap, char *err, size_t errlen)
{
	if (strlen(v) >= cap)
		return fail(err, errlen, "%s=...: value longer than %zu characters", key, cap - 1);
	memcpy(dst, v, strlen(v) + 1);
	return 0;
}

static const struct { const char *name; enum action a; } actions[] = {
	{"start", ACTION_START}, {"resume", ACTION_RESUME}, {"stop", ACTION_STOP}, {"dump", ACTION_DUMP},
	{"status", ACTION_STATUS}, {"list", ACTION_LIST}, {"version", ACTION_VERSION},
};

const char *options_action_name(enum action a)
{
	for (size_t i = 0; i < sizeof(actions) / sizeof(actions[0]); i++)
		if (actions[i].a == a)
			return actions[i].name;
	return "start";
}

/* Output formats by name, in the order messages name them ("html" is flamegraph's alias; flat and
 * traces take an optional count and are parsed apart). */
static const struct { const char *name; unsigned bit; } outs[] = {
	{"collapsed", OUT_COLLAPSED}, {"flamegraph", OUT_FLAMEGRAPH}, {"html", OUT_FLAMEGRAPH}, {"svg", OUT_SVG},
	{"tree", OUT_TREE}, {"jfr", OUT_JFR}, {"flat", OUT_FLAT}, {"traces", OUT_TRACES}, {"summary", OUT_SUMMARY},
};

static int parse_item(struct options *o, char *key, char *v, char *err, size_t errlen)
{
	for (size_t i = 0; i < sizeof(actions) / sizeof(actions[0]); i++)
		if (!strcmp(key, actions[i].name)) {
			if (v)
				return fail(err, errlen, "%s=%s: the action %s takes no value", key, v, key);
			o->action = actions[i].a;
			return 0;
		}
	static const struct { const char *name; size_t off; } flags[] = {
		{"threads", offsetof(struct options, threads)}, {"simple", offsetof(struct options, simple)},
		{"dot", offsetof(struct options, dot)},	{"sig", offsetof(struct options, sig)},
		{"ann", offsetof(struct options, ann)},	{"lib", offsetof(struct options, lib)},
		{"total", offsetof(struct options, total)}, {"reverse", offsetof(struct options, reverse)},
		{"inverted", offsetof(struct options, inverted)}, {"quiet", offsetof(struct options, quiet)},
	};
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		if (!strcmp(key, flags[i].name)) {
			if (v)
				return fail(err, errlen, "%s=%s: %s is a flag and takes no value", key, v, key);
			*(int *)((char *)o + flags[i].off) = 1;
			return 0;
		}
	for (size_t i = 0; i < sizeof(outs) / sizeof(outs[0]); i++)
		if (!(outs[i].bit & (OUT_FLAT | OUT_TRACES)) && !strcmp(key, outs[i].name)) {
			if (v)
				return fail(err, errlen, "%s=%s: the output format %s takes no value", key, v, key);
			o->outputs |= outs[i].bit;
			return 0;
		}
	if (!strcmp(key, "flat") || !strcmp(key, "traces")) {
		int is_flat = key[0] == 'f';
		int n = is_flat ? OPTIONS_DEFAULT_FLAT : OPTIONS_DEFAULT_TRACES;
		if (v && parse_int_range(key, v, 1, 1000000, &n, err, errlen))
			return -EINVAL;
		if (is_flat) {
			o->outputs |= OUT_FLAT;
			o->flat_n = n;
		} else {
			o->outputs |= OUT_TRACES;
			o->traces_n = n;
		}
		return 0;
	}
	if (!strcmp(key, "alloc") || !strcmp(key, "lock") || !strcmp(key, "wall")) {
		int64_t *dst = key[0] == 'a' ? &o->alloc_bytes : key[0] == 'l' ? &o->lock_ns : &o->wall_ns;
		if (!v || !*v) {
			*dst = 0;
			return 0;
		}
		int rc = key[0] == 'a' ? options_parse_size(v, dst) : options_parse_duration(v, 1, dst);
		if (v[0] == '-' || rc < 0)
			return fail(err, errlen, key[0] == 'a' ? "alloc=%s: expected a size in bytes such as 512k or 2m"
								: "%s=%s: expected a duration such as 10us, 10ms or 1s",
				    key[0] == 'a' ? v : key, v);
		return 0;
	}
	if (!v)
		return fail(err, errlen, "unknown option '%s' (see the option list in the README)", key);
	if (!strcmp(key, "event")) {
		if (!valid_event(v))
			return fail(err, errlen, "event=%s: not an event name (expected cpu, ctimer, itimer, wall, alloc, lock or a perf event such as page-faults)", v);
		return copy_str(key, v, o->event, sizeof(o->event), err, errlen);
	}
	if (!strcmp(key, "interval"))
		return parse_interval(o, v, err, errlen);
	if (!strcmp(key, "jstackdepth")) {
		char *slash = strchr(v, '/');
		int n, m = 0;
		if (slash)
			*slash = 0;
		int rc = parse_int_range(key, v, 1, OPTIONS_MAX_JSTACKDEPTH, &n, err, errlen);
		if (slash)
			*slash = '/';
		if (rc == 0 && slash && parse_int_range(key, slash + 1, 0, n - 1, &m, err, errlen))
			rc = -EINVAL;
		if (rc)
			return fail(err, errlen, "jstackdepth=%s: expected a number from 1 to %d, optionally /M with M below it (root frames kept)", v, OPTIONS_MAX_JSTACKDEPTH);
		o->jstackdepth = n;
		o->jstackdepth_root = m;
		return 0;
	}
	if (!strcmp(key, "cstack")) {
		if (!strcmp(v, "fp"))
			o->cstack = CSTACK_FP;
		else if (!strcmp(v, "dwarf"))
			o->cstack = CSTACK_DWARF;
		else if (!strcmp(v, "no"))
			o->cstack = CSTACK_NO;
		else
			return fail(err, errlen, "cstack=%s: expected fp, dwarf or no", v);
		return 0;
	}
	if (!strcmp(key, "title"))
		return copy_str(key, v, o->title, sizeof(o->title), err, errlen);
	if (!strcmp(key, "minwidth")) {
		char *end;
		double d = strtod(v, &end);
		if (!*v || *end || d < 0 || d > 100)
			return fail(err, errlen, "minwidth=%s: expected a percentage from 0 to 100", v);
		o->minwidth = d;
		return 0;
	}
	if (!strcmp(key, "width"))
		return parse_int_range(key, v, 100, 100000, &o->width, err, errlen);
	if (!strcmp(key, "height"))
		return parse_int_range(key, v, 4, 200, &o->height, err, errlen);
	if (!strcmp(key, "include") || !strcmp(key, "exclude")) {
		int inc = key[0] == 'i';
		int *n = inc ? &o->n_include : &o->n_exclude;
		if (*n >= OPTIONS_MAX_FILTERS)
			return fail(err, errlen, "%s=%s: at most %d %s patterns", key, v, OPTIONS_MAX_FILTERS, key);
		if (copy_str(key, v, inc ? o->include[*n] : o->exclude[*n], 256, err, errlen))
			return -EINVAL;
		(*n)++;
		return 0;
	}
	if (!strcmp(key, "file"))
		return copy_str(key, v, o->file, sizeof(o->file), err, errlen);
	if (!strcmp(key, "log"))
		return copy_str(key, v, o->log, sizeof(o->log), err, errlen);
	if (!strcmp(key, "filter")) {
		for (const char *p = v; *p; p++)
			if (!isdigit((unsigned char)*p) && *p != ';' && *p != '-')
				return fail(err, errlen, "filter=%s: expected thread ids such as 12;15-20", v);
		return copy_str(key, v, o->filter, sizeof(o->filter), err, errlen);
	}
	if (!strcmp(key, "timeout"))
		return parse_seconds(key, v, &o->timeout_s, err, errlen);
	if (!strcmp(key, "loop"))
		return parse_seconds(key, v, &o->loop_s, err, errlen);
	if (!strcmp(key, "chunktime"))
		return parse_seconds(key, v, &o->chunktime_s, err, errlen);
	if (!strcmp(key, "memlimit")) {
		if (v[0] == '-' || options_parse_size(v, &o->memlimit) < 0 || o->memlimit < (1 << 20))
			return fail(err, errlen, "memlimit=%s: expected a size of at least 1m, such as 64m or 1g", v);
		return 0;
	}
	if (!strcmp(key, "signal"))
		return parse_signal(v, &o->signal, err, errlen);
	if (!strcmp(key, "loglevel")) {
		static const char *levels[] = {"debug", "info", "warn", "error", "none"};
		for (int i = 0; i < 5; i++)
			if (!strcasecmp(v, levels[i])) {
				o->loglevel = (enum log_level)i;
				return 0;
			}
		return fail(err, errlen, "loglevel=%s: expected debug, info, warn, error or none", v);
	}
	return fail(err, errlen, "unknown option '%s' (see the option list in the README)", key);
}

int options_parse(struct options *o, const char *str, char *err, size_t errlen)
{
	if (err && errlen)
		err[0] = 0;
	if (!str)
		return 0;
	size_t len = strlen(str);
	char *copy = malloc(len + 1);
	if (!copy)
		return fail(err, errlen, "out of memory parsing options");
	memcpy(copy, str, len + 1);
	int rc = 0;
	char *save = NULL;
	for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(item, '=');
		if (eq)
			*eq = 0;
		if (!*item) {
			rc = fail(err, errlen, "option '=%s' has no name", eq ? eq + 1 : "");
			break;
		}
		rc = parse_item(o, item, eq ? eq + 1 : NULL, err, errlen);
		if (rc)
			break;
	}
	free(copy);
	return rc ? rc : options_validate(o, err, errlen);
}

int options_validate(const struct options *o, char *err, size_t errlen)
{
	int is_alloc = !strcmp(o->event, "alloc");
	if (o->interval && o->interval_has_byte_unit && !is_alloc)
		return fail(err, errlen, "interval: a size (k, m, g) is only valid with event=alloc; use ns, us, ms or s for event=%s",
			    o->event[0] ? o->event : "cpu");
	if (o->interval && o->interval_has_time_unit && is_alloc)
		return fail(err, errlen, "interval: event=alloc samples every N bytes; use a size such as 512k");
	unsigned one_file = o->outputs & ~(unsigned)OUT_TEXT_MASK;
	if ((one_file & (one_file - 1)) || (one_file && (o->outputs & OUT_TEXT_MASK))) {
		const char *a = NULL, *b = NULL;
		unsigned seen = 0;
		for (size_t i = 0; i < sizeof(outs) / sizeof(outs[0]); i++)
			if ((o->outputs & outs[i].bit) && !(seen & outs[i].bit)) {
				seen |= outs[i].bit;
				if (!a)
					a = outs[i].name;
				else if (!b)
					b = outs[i].name;
			}
		return fail(err, errlen,
			    "%s and %s: one file holds one output format (only flat, traces and summary combine); "
			    "write one and render the others from it with flameconv, e.g. 'flameconv -o summary out.jfr'",
			    a, b);
	}
	return 0;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && !strcasecmp(s + n - m, suffix);
}

unsigned options_outputs(const struct options *o)
{
	if (o->outputs)
		return o->outputs;
	const char *f = o->file;
	if (ends_with(f, ".html") || ends_with(f, ".htm"))
		return OUT_FLAMEGRAPH;
	if (ends_with(f, ".svg"))
		return OUT_SVG;
	if (ends_with(f, ".jfr"))
		return OUT_JFR;
	return OUT_COLLAPSED;
}

int options_expand_file(const char *pattern, int pid, int64_t now_s, int seq, char *out, size_t outlen,
			char *warn, size_t warnlen)
{
	size_t k = 0;
	if (warn && warnlen)
		warn[0] = 0;
#define EMIT(str)                                                                                  \
	do {                                                                                       \
		const char *s_ = (str);                                                            \
		size_t l_ = strlen(s_);                                                            \
		if (k + l_ + 1 > outlen)                                                           \
			return -ENAMETOOLONG;                                                      \
		memcpy(out + k, s_, l_);                                                           \
		k += l_;                                                                           \
	} while (0)
	for (const char *p = pattern; *p; p++) {
		char tmp[64];
		if (*p != '%') {
			tmp[0] = *p;
			tmp[1] = 0;
			EMIT(tmp);
			continue;
		}
		p++;
		if (*p == '%') {
			EMIT("%");
		} else if (*p == 'p') {
			snprintf(tmp, sizeof(tmp), "%d", pid);
			EMIT(tmp);
		} else if (*p == 't') {
			time_t t = (time_t)now_s;
			struct tm tm;
			localtime_r(&t, &tm);
			strftime(tmp, sizeof(tmp), "%Y%m%d-%H%M%S", &tm);
			EMIT(tmp);
		} else if (*p == 'n') {
			long long v = seq;
			if (p[1] == '{') {
				char *end;
				long max = strtol(p + 2, &end, 10);
				if (*end != '}' || max <= 0) {
					fail(warn, warnlen, "file=%s: %%n{MAX} needs a positive number, e.g. %%n{10}", pattern);
					return -EINVAL;
				}
				v = seq % max;
				p = end;
			}
			snprintf(tmp, sizeof(tmp), "%lld", v);
			EMIT(tmp);
		} else if (*p == '{') {
			const char *end = strchr(p, '}');
			if (!end || end == p + 1 || end - p > 200) {
				fail(warn, warnlen, "file=%s: %%{ needs an environment variable name and a closing }, e.g. %%{HOSTNAME}", pattern);
				return -EINVAL;
			}
			char name[256];
			memcpy(name, p + 1, (size_t)(end - p - 1));
			name[end - p - 1] = 0;
			const char *val = getenv(name);
			if (val && *val) {
				EMIT(val);
			} else {
				char fallback[300];
				snprintf(fallback, sizeof(fallback), "%s-unset", name);
				if (warn && warnlen)
					snprintf(warn, warnlen, "file=%s: environment variable %s is not set; using '%s'", pattern,
						 name, fallback);
				EMIT(fallback);
			}
			p = end;
		} else {
			fail(warn, warnlen, "file=%s: unknown pattern '%%%c' (expected %%p, %%t, %%n{MAX}, %%{ENV} or %%%%)",
			     pattern, *p ? *p : ' ');
			return -EINVAL;
		}
	}
	if (k + 1 > outlen)
		return -ENAMETOOLONG;
	out[k] = 0;
	return 0;
#undef EMIT
}
