/* Unit tests: option string parsing, units, errors, output inference, file name patterns. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "options.h"

static char err[512];

static int parse(struct options *o, const char *s)
{
	options_init(o);
	return options_parse(o, s, err, sizeof(err));
}

static void expect_error(const char *s, const char *needle)
{
	struct options o;
	int rc = parse(&o, s);
	CHECK(rc != 0);
	if (!strstr(err, needle)) {
		check_failed++;
		fprintf(stderr, "option '%s': message '%s' lacks '%s'\n", s, err, needle);
	} else {
		check_passed++;
	}
}

static void test_defaults(void)
{
	struct options o;
	CHECK_INT(0, parse(&o, NULL));
	CHECK_INT(ACTION_NONE, o.action);
	CHECK_INT(OPTIONS_DEFAULT_JSTACKDEPTH, o.jstackdepth);
	CHECK_INT(OPTIONS_DEFAULT_MEMLIMIT, o.memlimit);
	CHECK_INT(-1, o.alloc_bytes);
	CHECK_INT(LOG_INFO, o.loglevel);
	CHECK_INT(OUT_COLLAPSED, options_outputs(&o));
	CHECK_INT(0, parse(&o, ""));
	CHECK_INT(0, parse(&o, ",,start,,"));
	CHECK_INT(ACTION_START, o.action);
}

static void test_keys(void)
{
	struct options o;
	CHECK_INT(0, parse(&o, "start,event=ctimer,interval=5ms,jstackdepth=100/10,threads,simple,dot,sig,ann,lib,"
			       "total,reverse,inverted,title=My title,minwidth=0.5,width=1600,height=20,"
			       "include=*burn*,include=a/b.c,exclude=x*,file=/tmp/p-%p.txt,flat=7,traces,summary,"
			       "memlimit=64m,signal=SIGUSR2,log=/tmp/l,loglevel=warn,quiet,cstack=dwarf,"
			       "alloc=2m,lock=10us,wall=50ms,timeout=30s,loop=2m,chunktime=5,filter=12;15-20"));
	CHECK_STR("err", err[0] ? err : "err");
	CHECK_INT(ACTION_START, o.action);
	CHECK_STR("ctimer", o.event);
	CHECK_INT(5000000, o.interval);
	CHECK_INT(100, o.jstackdepth);
	CHECK_INT(10, o.jstackdepth_root);
	CHECK(o.threads && o.simple && o.dot && o.sig && o.ann && o.lib && o.total && o.reverse && o.inverted);
	CHECK_STR("My title", o.title);
	CHECK(o.minwidth > 0.49 && o.minwidth < 0.51);
	CHECK_INT(1600, o.width);
	CHECK_INT(20, o.height);
	CHECK_INT(2, o.n_include);
	CHECK_STR("a/b.c", o.include[1]);
	CHECK_INT(1, o.n_exclude);
	CHECK_STR("/tmp/p-%p.txt", o.file);
	CHECK_INT(OUT_FLAT | OUT_TRACES | OUT_SUMMARY, o.outputs);
	CHECK_INT(7, o.flat_n);
	CHECK_INT(OPTIONS_DEFAULT_TRACES, o.traces_n);
	CHECK_INT(64 << 20, o.memlimit);
	CHECK_INT(12, o.signal); /* SIGUSR2 */
	CHECK_STR("/tmp/l", o.log);
	CHECK_INT(LOG_WARN, o.loglevel);
	CHECK_INT(1, o.quiet);
	CHECK_INT(CSTACK_DWARF, o.cstack);
	CHECK_INT(2 << 20, o.alloc_bytes);
	CHECK_INT(10000, o.lock_ns);
	CHECK_INT(50000000, o.wall_ns);
	CHECK_INT(30, o.timeout_s);
	CHECK_INT(120, o.loop_s);
	CHECK_INT(5, o.chunktime_s);
	CHECK_STR("12;15-20", o.filter);

	CHECK_INT(0, parse(&o, "alloc,lock,wall"));
	CHECK_INT(0, o.alloc_bytes);
	CHECK_INT(0, o.lock_ns);
	CHECK_INT(0, o.wall_ns);
	CHECK_INT(0, parse(&o, "stop,status"));
	CHECK_INT(ACTION_STATUS, o.action);
	CHECK_INT(0, parse(&o, "event=page-faults"));
	CHECK_STR("page-faults", o.event);
	CHECK_INT(0, parse(&o, "signal=27"));
	CHECK_INT(27, o.signal);
}

static void test_units(void)
{
	struct options o;
	const struct { const char *s; long long ns; } cases[] = {
		{"interval=100", 100}, {"interval=100ns", 100}, {"interval=7us", 7000},
		{"interval=10ms", 10000000}, {"interval=2s", 2000000000LL}, {"interval=1MS", 1000000},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		CHECK_INT(0, parse(&o, cases[i].s));
		CHECK_INT(cases[i].ns, o.interval);
	}
	CHECK_INT(0, parse(&o, "event=alloc,interval=512k"));
	CHECK_INT(512 * 1024, o.interval);
	CHECK_INT(0, parse(&o, "interval=1m,event=alloc"));
	CHECK_INT(1 << 20, o.interval);
	int64_t v;
	CHECK_INT(0, options_parse_size("1g", &v));
	CHECK_INT(1LL << 30, v);
	CHECK_INT(0, options_parse_size("64MB", &v));
	CHECK_INT(64LL << 20, v);
	CHECK(options_parse_size("12x", &v) != 0);
	CHECK_INT(0, options_parse_duration("3", 1000000000LL, &v));
	CHECK_INT(3000000000LL, v);
	CHECK_INT(0, options_parse_duration("2m", 1, &v));
	CHECK_INT(120000000000LL, v);
	CHECK(options_parse_duration("ms", 1, &v) != 0);
}

static void test_errors(void)
{
	expect_error("interval=10xs", "interval=10xs");
	expect_error("interval=10xs", "unknown unit 'xs'");
	expect_error("interval=-5ms", "interval=-5ms");
	expect_error("interval=0", "positive");
	expect_error("interval=ms", "not a number");
	expect_error("interval=99999999999999999999", "too large");
	expect_error("interval=5m", "only valid with event=alloc");
	expect_error("event=alloc,interval=5ms", "event=alloc samples every N bytes");
	expect_error("evnt=cpu", "unknown option 'evnt'");
	expect_error("bogus", "unknown option 'bogus'");
	expect_error("event=cpu;rm", "event=cpu;rm");
	expect_error("jstackdepth=0", "jstackdepth=0");
	expect_error("jstackdepth=5000", "from 1 to 4096");
	expect_error("jstackdepth=10/10", "jstackdepth=10/10");
	expect_error("jstackdepth=abc", "jstackdepth=abc");
	expect_error("cstack=lbr", "cstack=lbr");
	expect_error("minwidth=200", "minwidth=200");
	expect_error("width=-3", "width=-3");
	expect_error("memlimit=10k", "memlimit=10k");
	expect_error("signal=SIGFOO", "signal=SIGFOO");
	expect_error("signal=99", "signal=99");
	expect_error("loglevel=loud", "loglevel=loud");
	expect_error("timeout=-1", "timeout=-1");
	expect_error("loop=abc", "loop=abc");
	expect_error("filter=a,b", "filter=a");
	expect_error("threads=1", "threads=1");
	expect_error("start=now", "start=now");
	expect_error("alloc=lots", "alloc=lots");
	expect_error("lock=-1", "lock=-1");
	expect_error("=x", "no name");
	expect_error("collapsed,summary", "collapsed and summary: one file holds one output format");
	expect_error("html,svg", "flamegraph and svg");
	expect_error("jfr,flat", "jfr and flat");
	char many[4096] = "";
	for (int i = 0; i <= OPTIONS_MAX_FILTERS; i++)
		strcat(many, "include=a,");
	expect_error(many, "at most 16");
}

static void test_outputs(void)
{
	struct options o;
	const struct { const char *s; unsigned bits; } cases[] = {
		{"file=a.html", OUT_FLAMEGRAPH}, {"file=a.HTM", OUT_FLAMEGRAPH}, {"file=a.svg", OUT_SVG},
		{"file=a.jfr", OUT_JFR}, {"file=a.collapsed", OUT_COLLAPSED}, {"file=a.folded", OUT_COLLAPSED},
		{"file=a.txt", OUT_COLLAPSED}, {"file=noext", OUT_COLLAPSED}, {"file=a.html,collapsed", OUT_COLLAPSED},
		{"svg", OUT_SVG}, {"tree", OUT_TREE}, {"jfr", OUT_JFR}, {"html", OUT_FLAMEGRAPH},
		{"flamegraph", OUT_FLAMEGRAPH}, {"flat,summary", OUT_FLAT | OUT_SUMMARY},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		CHECK_INT(0, parse(&o, cases[i].s));
		CHECK_INT(cases[i].bits, options_outputs(&o));
	}
	CHECK_STR("stop", options_action_name(ACTION_STOP));
}

static void test_patterns(void)
{
	char out[256], warn[512];
	setenv("TZ", "UTC", 1);
	tzset();
	int64_t now = 1764036000; /* 2025-11-25 02:00:00 UTC */
	CHECK_INT(0, options_expand_file("/tmp/p-%p-%t.html", 4242, now, 0, out, sizeof(out), warn, sizeof(warn)));
	CHECK_STR("/tmp/p-4242-20251125-020000.html", out);
	CHECK_INT(0, options_expand_file("x-%n{3}-%n.jfr", 1, now, 7, out, sizeof(out), warn, sizeof(warn)));
	CHECK_STR("x-1-7.jfr", out);
	CHECK_INT(0, options_expand_file("100%%.txt", 1, now, 0, out, sizeof(out), warn, sizeof(warn)));
	CHECK_STR("100%.txt", out);
	setenv("FA_TEST_EXEC", "exec-3", 1);
	CHECK_INT(0, options_expand_file("e-%{FA_TEST_EXEC}.jfr", 1, now, 0, out, sizeof(out), warn, sizeof(warn)));
	CHECK_STR("e-exec-3.jfr", out);
	CHECK_STR("", warn);
	unsetenv("FA_TEST_UNSET");
	CHECK_INT(0, options_expand_file("e-%{FA_TEST_UNSET}.jfr", 1, now, 0, out, sizeof(out), warn, sizeof(warn)));
	CHECK_STR("e-FA_TEST_UNSET-unset.jfr", out);
	CHECK(strstr(warn, "FA_TEST_UNSET is not set") != NULL);
	CHECK(options_expand_file("a-%{NOPE", 1, now, 0, out, sizeof(out), warn, sizeof(warn)) == -EINVAL);
	CHECK(strstr(warn, "closing }") != NULL);
	CHECK(options_expand_file("a-%q", 1, now, 0, out, sizeof(out), warn, sizeof(warn)) == -EINVAL);
	CHECK(strstr(warn, "'%q'") != NULL);
	CHECK(options_expand_file("a-%n{0}", 1, now, 0, out, sizeof(out), warn, sizeof(warn)) == -EINVAL);
	CHECK(options_expand_file("abcdefgh", 1, now, 0, out, 4, warn, sizeof(warn)) == -ENAMETOOLONG);
}

int main(void)
{
	test_defaults();
	test_keys();
	test_units();
	test_errors();
	test_outputs();
	test_patterns();
	return check_report();
}
