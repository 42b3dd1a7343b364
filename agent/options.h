/* The agent's option string <-> struct options: keys, units, output inference, file name patterns.
 * Pure C, no JVM: used by the agent, flameattach and flameconv; runs at load/attach time only. */
#ifndef OPTIONS_H
#define OPTIONS_H

#include <stddef.h>
#include <stdint.h>

enum action {
	ACTION_NONE = 0, /* only options given: at -agentpath time this means start */
	ACTION_START,
	ACTION_RESUME,
	ACTION_STOP,
	ACTION_DUMP,
	ACTION_STATUS,
	ACTION_LIST,
	ACTION_VERSION,
};

/* Output formats; flat, traces and summary are text and combine into one text file. */
enum output_bit {
	OUT_COLLAPSED = 1u << 0,
	OUT_FLAMEGRAPH = 1u << 1, /* html */
	OUT_SVG = 1u << 2,
	OUT_TREE = 1u << 3,
	OUT_JFR = 1u << 4,
	OUT_FLAT = 1u << 5,
	OUT_TRACES = 1u << 6,
	OUT_SUMMARY = 1u << 7,
};
#define OUT_TEXT_MASK (OUT_FLAT | OUT_TRACES | OUT_SUMMARY)

enum cstack_mode { CSTACK_DEFAULT = 0, CSTACK_FP, CSTACK_DWARF, CSTACK_NO };
enum log_level { LOG_DEBUG = 0, LOG_INFO, LOG_WARN, LOG_ERROR, LOG_NONE };

#define OPTIONS_MAX_FILTERS 16
#define OPTIONS_MAX_STR 1024

#define OPTIONS_DEFAULT_INTERVAL_NS 10000000LL /* 10 ms for cpu, ctimer, itimer */
#define OPTIONS_DEFAULT_WALL_NS 50000000LL     /* 50 ms for event=wall */
#define OPTIONS_DEFAULT_ALLOC_BYTES (512 * 1024LL)
#define OPTIONS_DEFAULT_LOCK_NS 10000LL
#define OPTIONS_DEFAULT_JSTACKDEPTH 2048
#define OPTIONS_MAX_JSTACKDEPTH 4096
#define OPTIONS_DEFAULT_MEMLIMIT (256LL * 1024 * 1024)
#define OPTIONS_DEFAULT_FLAT 200
#define OPTIONS_DEFAULT_TRACES 200

struct options {
	enum action action;

	/* event=: "cpu", "ctimer", "itimer", "wall", "alloc", "lock" or a perf event name; "" = not given */
	char event[64];
	/* interval= converted: nanoseconds for time events, bytes for alloc; 0 = not given (use default).
	 * interval_has_byte_unit records whether k/m/g was used, so a byte unit on a time event is refused
	 * once the event is known (options_validate). */
	int64_t interval;
	int interval_has_byte_unit;
	int interval_has_time_unit;

	int jstackdepth;      /* N: at most N frames per stack; default OPTIONS_DEFAULT_JSTACKDEPTH */
	int jstackdepth_root; /* M of N/M: keep the M root-most frames too when cutting; 0 = leaf-most N only */
	enum cstack_mode cstack;

	/* naming and shape */
	int threads, simple, dot, sig, ann, lib, total, reverse, inverted;
	char title[256];
	double minwidth; /* percent */
	int width, height; /* svg width in px, frame height in px; 0 = default */

	char include[OPTIONS_MAX_FILTERS][256];
	int n_include;
	char exclude[OPTIONS_MAX_FILTERS][256];
	int n_exclude;

	/* output */
	char file[OPTIONS_MAX_STR]; /* raw pattern as given; "" = none */
	unsigned outputs;           /* enum output_bit mask; 0 = infer from file extension */
	int flat_n, traces_n;       /* defaults OPTIONS_DEFAULT_FLAT / _TRACES when the keyword has no =N */

	/* secondary events beside event= ; -1 = off, 0 = on with default, >0 = given */
	int64_t alloc_bytes;
	int64_t lock_ns;
	int64_t wall_ns;
	char filter[256]; /* filter=: thread ids, "12,15-20" style with ';' or '-' ; "" = all */

	/* session control */
	int64_t timeout_s;   /* 0 = none */
	int64_t loop_s;      /* 0 = none */
	int64_t chunktime_s; /* 0 = default */
	int64_t memlimit;    /* bytes; default OPTIONS_DEFAULT_MEMLIMIT */
	int signal;          /* 0 = default (SIGPROF) */

	/* messages */
	char log[OPTIONS_MAX_STR]; /* "" = stderr of the JVM */
	enum log_level loglevel;   /* default LOG_INFO */
	int quiet;                 /* no informational messages (warnings and errors still shown) */
};

/* Fills *o with defaults (every field as documented above). */
void options_init(struct options *o);

/* Parses a comma-separated option string into *o (which options_init prepared; keys given later win).
 * NULL or "" is fine. Returns 0, or -EINVAL with a one-line message in err (no trailing newline) that
 * names the key or value and the expected form, e.g.
 *   "interval=10xs: unknown unit 'xs' (expected a number with ns, us, ms or s)".
 * Keys (ARCHITECTURE.md section 4): start resume stop dump status list version, event= interval=
 * jstackdepth=N[/M] cstack= threads simple dot sig ann lib total reverse inverted title= minwidth= width=
 * height= include= exclude= file= collapsed flamegraph html svg tree jfr flat[=N] traces[=N] summary
 * alloc[=bytes] lock[=time] wall[=time] filter= timeout= loop= chunktime= memlimit= signal= log=
 * loglevel= quiet. A value may not contain ','. Also runs options_validate. */
int options_parse(struct options *o, const char *str, char *err, size_t errlen);

/* Cross-field checks after parsing (unit kind vs event, ranges). Same return/err contract. */
int options_validate(const struct options *o, char *err, size_t errlen);

/* Output bits to write: o->outputs if set, else inferred from the extension of file:
 * .html/.htm -> FLAMEGRAPH, .svg -> SVG, .jfr -> JFR, .collapsed/.folded/.txt -> COLLAPSED,
 * anything else or no file -> COLLAPSED. */
unsigned options_outputs(const struct options *o);

/* Parses a duration ("10ms", "2s", "500us", "100ns", "1m" = minute, bare number = default_unit_ns
 * multiples) into *out_ns. Returns 0 or -EINVAL. */
int options_parse_duration(const char *s, int64_t default_unit_ns, int64_t *out_ns);
/* Parses a size ("512k", "2m", "1g", bare = bytes; case-insensitive, optional trailing 'b') into bytes. */
int options_parse_size(const char *s, int64_t *out_bytes);

/* Expands a file name pattern: %p pid, %t local timestamp YYYYMMDD-HHMMSS (from now_s), %n{MAX} seq % MAX
 * (%n alone: seq), %{ENV} the environment variable (unset or empty: the text "ENV-unset" and a
 * warning line in warn, if warn is not NULL), %% a percent sign. Writes at most outlen-1 bytes + NUL.
 * Returns 0, -ENAMETOOLONG, or -EINVAL with a message in warn for a malformed pattern. */
int options_expand_file(const char *pattern, int pid, int64_t now_s, int seq, char *out, size_t outlen,
			char *warn, size_t warnlen);

/* Name of an action for messages ("start", ...). */
const char *options_action_name(enum action a);

#endif
