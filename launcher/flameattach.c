/* flameattach: profiles a running JVM by pid. Attaches through the HotSpot attach protocol (also into
 * containers: namespace pid, files reached through /proc/<pid>/root, the agent copied where the target can
 * see it), drives the agent, waits, and brings the result back to the caller. Also runs as `asprof`. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "attach.h"
#include "flameagent.h"
#include "proc.h"

static const char *prog = "flameattach";
static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s [action] [options] <pid>      (the pid may also come first)\n"
		"Profiles a running JVM. Default action with -d: start, wait, stop and write.\n"
		"actions: start resume stop dump status list version collect\n"
		"  -e EVENT        cpu (default), ctimer, itimer, wall, alloc, lock, or a perf event (page-faults, ...)\n"
		"  -i INTERVAL     sampling interval: 10ms, 1ms, 500us; bytes for alloc (512k)\n"
		"  -d SECONDS      profile this long (Ctrl-C stops early and still writes)\n"
		"  -f FILE         output file (format from its extension); without it the result goes to stdout\n"
		"  -o FORMAT       collapsed, flamegraph (html), svg, tree, flat[=N], traces[=N], summary\n"
		"  -j DEPTH        maximum Java stack depth\n"
		"  -t              a root frame per thread     -s  simple class names     -a  frame kind suffixes\n"
		"  -I GLOB, -X GLOB   include / exclude stacks with a matching frame (repeatable)\n"
		"  --total --reverse --inverted --minwidth PCT --title TEXT --width PX --height PX --cstack MODE\n"
		"  --libpath PATH  the agent library (default: ../lib/libflameagent.so next to this program)\n"
		"  -v              version        -h  this help\n"
		"exit codes: 0 ok, 1 usage, 2 cannot attach, 3 the agent reported an error, 4 cannot write the output\n",
		prog);
}

struct args {
	int pid;
	const char *action;
	char start_opts[4096]; /* event, interval, depth, filters ... for start */
	char render_opts[2048]; /* format and rendering options for stop/dump */
	const char *file;
	const char *format;
	const char *libpath;
	int duration_s;
};

/* Appends ",key=value" (or "key" when value is NULL) to an option string. */
static void add(char *buf, size_t len, const char *key, const char *val)
{
	size_t n = strlen(buf);
	snprintf(buf + n, len - n, "%s%s%s%s", n ? "," : "", key, val ? "=" : "", val ? val : "");
}

static int is_number(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return 0;
	return 1;
}

static int parse_args(int argc, char **argv, struct args *a)
{
	static const char *actions[] = {"start", "resume", "stop", "dump", "status", "list", "version", "collect"};
	memset(a, 0, sizeof(*a));
	a->duration_s = -1;
	for (int i = 1; i < argc; i++) {
		const char *s = argv[i];
		const char *next = i + 1 < argc ? argv[i + 1] : NULL;
#define NEED_VALUE()                                                                                 \
	do {                                                                                         \
		if (!next) {                                                                         \
			fprintf(stderr, "%s: option %s needs a value\n", prog, s);                   \
			return -1;                                                                   \
		}                                                                                    \
		i++;                                                                                 \
	} while (0)
		if (is_number(s) && !a->pid) {
			a->pid = atoi(s);
			continue;
		}
		int is_action = 0;
		for (size_t k = 0; k < sizeof(actions) / sizeof(actions[0]); k++)
			if (strcmp(s, actions[k]) == 0) {
				a->action = actions[k];
				is_action = 1;
			}
		if (is_action)
			continue;
		if (!strcmp(s, "-e")) { NEED_VALUE(); add(a->start_opts, sizeof(a->start_opts), "event", next); }
		else if (!strcmp(s, "-i")) { NEED_VALUE(); add(a->start_opts, sizeof(a->start_opts), "interval", next); }
		else if (!strcmp(s, "-j")) { NEED_VALUE(); add(a->start_opts, sizeof(a->start_opts), "jstackdepth", next); }
		else if (!strcmp(s, "-d")) {
			NEED_VALUE();
			if (!is_number(next)) {
				fprintf(stderr, "%s: -d %s: expected a whole number of seconds\n", prog, next);
				return -1;
			}
			a->duration_s = atoi(next);
		} else if (!strcmp(s, "-f")) { NEED_VALUE(); a->file = next; }
		else if (!strcmp(s, "-o")) { NEED_VALUE(); a->format = next; }
		else if (!strcmp(s, "-t")) add(a->start_opts, sizeof(a->start_opts), "threads", NULL);
		else if (!strcmp(s, "-s")) add(a->render_opts, sizeof(a->render_opts), "simple", NULL);
		else if (!strcmp(s, "-a")) add(a->render_opts, sizeof(a->render_opts), "ann", NULL);
		else if (!strcmp(s, "-I")) { NEED_VALUE(); add(a->render_opts, sizeof(a->render_opts), "include", next); }
		else if (!strcmp(s, "-X")) { NEED_VALUE(); add(a->render_opts, sizeof(a->render_opts), "exclude", next); }
		else if (!strcmp(s, "--total")) add(a->render_opts, sizeof(a->render_opts), "total", NULL);
		else if (!strcmp(s, "--reverse")) add(a->render_opts, sizeof(a->render_opts), "reverse", NULL);
		else if (!strcmp(s, "--inverted")) add(a->render_opts, sizeof(a->render_opts), "inverted", NULL);
		else if (!strcmp(s, "--minwidth")) { NEED_VALUE(); add(a->render_opts, sizeof(a->render_opts), "minwidth", next); }
		else if (!strcmp(s, "--title")) { NEED_VALUE(); add(a->render_opts, sizeof(a->render_opts), "title", next); }
		else if (!strcmp(s, "--width")) { NEED_VALUE(); add(a->render_opts, sizeof(a->render_opts), "width", next); }
		else if (!strcmp(s, "--height")) { NEED_VALUE(); add(a->render_opts, sizeof(a->render_opts), "height", next); }
		else if (!strcmp(s, "--cstack")) { NEED_VALUE(); add(a->start_opts, sizeof(a->start_opts), "cstack", next); }
		else if (!strcmp(s, "--libpath")) { NEED_VALUE(); a->libpath = next; }
		else if (!strcmp(s, "-b")) {
			NEED_VALUE();
			fprintf(stderr, "%s: note: -b %s (buffer size) is not needed by flameagent and is ignored\n", prog, next);
		} else if (!strcmp(s, "--all-user") || !strcmp(s, "--fdtransfer")) {
			/* async-profiler options with no meaning here */
		} else if (!strcmp(s, "-v") || !strcmp(s, "--version")) {
			a->action = "version-local";
		} else if (!strcmp(s, "-h") || !strcmp(s, "--help")) {
			usage(stdout);
			exit(FA_EXIT_OK);
		} else {
			fprintf(stderr, "%s: unknown option '%s'\n  hint: %s -h lists the options\n", prog, s, prog);
			return -1;
		}
		if (strchr(next ? next : "", ',') && (!strcmp(s, "-I") || !strcmp(s, "-X") || !strcmp(s, "--title"))) {
			fprintf(stderr, "%s: %s %s: the value may not contain ','\n", prog, s, next);
			return -1;
		}
	}
	if (!a->action)
		a->action = a->duration_s >= 0 ? "collect" : "start";
	return 0;
}

/* The agent's path as the target sees it: the library the JVM already maps, else ours, copied into the
 * target's /tmp when our path does not reach the same file there. */
static int agent_path(const struct proc_info *pi, const char *ours, char *out, size_t len)
{
	char maps[64], line[PATH_MAX + 256];
	snprintf(maps, sizeof(maps), "/proc/%d/maps", pi->pid);
	FILE *f = fopen(maps, "r");
	while (f && fgets(line, sizeof(line), f)) {
		char *p = strchr(line, '/');
		if (p && strstr(p, "/libflameagent.so")) {
			p[strcspn(p, "\n")] = 0;
			snprintf(out, len, "%s", p);
			fclose(f);
			return 0;
		}
	}
	if (f)
		fclose(f);
	struct stat a, b;
	char there[PATH_MAX + 64];
	if (stat(ours, &a) != 0) {
		fprintf(stderr, "%s: cannot find the agent library %s: %s\n  hint: use --libpath\n", prog, ours,
			strerror(errno));
		return -1;
	}
	snprintf(there, sizeof(there), "%s%s", pi->root, ours);
	if (stat(there, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
		snprintf(out, len, "%s", ours);
		return 0;
	}
	/* not visible inside the target (another mount namespace, a private /tmp ...): copy it over */
	char name[128], dst[PATH_MAX + 128], tmp[PATH_MAX + 160];
	snprintf(name, sizeof(name), "/tmp/libflameagent-%lx-%lx.so", (unsigned long)a.st_ino, (unsigned long)a.st_size);
	snprintf(dst, sizeof(dst), "%s%s", pi->root, name);
	if (stat(dst, &b) == 0 && b.st_size == a.st_size) {
		snprintf(out, len, "%s", name);
		return 0;
	}
	snprintf(tmp, sizeof(tmp), "%s.%d", dst, (int)getpid());
	int in = open(ours, O_RDONLY | O_CLOEXEC), fd = open(tmp, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
	int ok = in >= 0 && fd >= 0;
	char buf[65536];
	ssize_t n;
	while (ok && (n = read(in, buf, sizeof(buf))) > 0)
		ok = write(fd, buf, (size_t)n) == n;
	if (in >= 0)
		close(in);
	if (fd >= 0) {
		if (fchown(fd, pi->uid, pi->gid) != 0) { /* readable by all anyway (0644) */ }
		close(fd);
	}
	if (!ok || rename(tmp, dst) != 0) {
		fprintf(stderr, "%s: cannot copy the agent into pid %d's /tmp (%s): %s\n", prog, pi->pid, dst, strerror(errno));
		unlink(tmp);
		return -1;
	}
	snprintf(out, len, "%s", name);
	return 0;
}

struct session {
	struct proc_info pi;
	char lib[PATH_MAX];
	char log_t[128];  /* the agent's log file, as the target sees it */
	char out_t[160];  /* the agent's output file, as the target sees it */
	long long samples;
};

static void reach(const struct session *s, const char *tpath, char *out, size_t len)
{
	snprintf(out, len, "%s%s", s->pi.root, tpath);
}

/* Shows the agent's messages (its log file) on stderr; remembers the sample count it reported. */
static void relay_log(struct session *s, int quiet_info)
{
	char path[256], line[4096];
	reach(s, s->log_t, path, sizeof(path));
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *samples = strstr(line, " samples");
		if (strncmp(line, "flameagent: Wrote ", 18) == 0 || strncmp(line, "flameagent: Profiling stopped: ", 31) == 0) {
			char *colon = strrchr(line, ':');
			if (samples && colon)
				s->samples = atoll(colon + 1);
			continue;
		}
		if (quiet_info && strncmp(line, "flameagent: Profiling started", 29) == 0)
			continue;
		fputs(line, stderr);
	}
	fclose(f);
	unlink(path);
}

static int command(struct session *s, const char *opts)
{
	char full[8192], text[4096], err[1024];
	snprintf(full, sizeof(full), "%s%slog=%s", opts, opts[0] ? "," : "", s->log_t);
	int agent_rc = 0;
	int rc = attach_load(&s->pi, s->lib, full, &agent_rc, text, sizeof(text), err, sizeof(err));
	relay_log(s, 1);
	if (rc != ATTACH_OK) {
		fprintf(stderr, "%s: %s\n", prog, err);
		return FA_EXIT_ATTACH;
	}
	if (agent_rc != 0) {
		if (text[0])
			fprintf(stderr, "%s: %s\n", prog, text);
		fprintf(stderr, "%s: the agent in pid %d reported an error (code %d)\n", prog, s->pi.pid, agent_rc);
		return FA_EXIT_AGENT;
	}
	return FA_EXIT_OK;
}

/* Copies the agent's output (reached through /proc/<pid>/root) to the caller's file or stdout. */
static int fetch(struct session *s, const char *file)
{
	char src[256];
	reach(s, s->out_t, src, sizeof(src));
	int in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0) {
		fprintf(stderr, "%s: the agent wrote no output (%s): %s\n", prog, src, strerror(errno));
		return FA_EXIT_OUTPUT;
	}
	int out = 1;
	char tmp[PATH_MAX + 32];
	if (file) {
		snprintf(tmp, sizeof(tmp), "%s.tmp.%d", file, (int)getpid());
		out = open(tmp, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
		if (out < 0) {
			fprintf(stderr, "%s: cannot write %s: %s\n", prog, file, strerror(errno));
			close(in);
			unlink(src);
			return FA_EXIT_OUTPUT;
		}
	}
	char buf[65536];
	ssize_t n;
	int ok = 1;
	while (ok && (n = read(in, buf, sizeof(buf))) > 0)
		ok = write(out, buf, (size_t)n) == n;
	close(in);
	unlink(src);
	if (file) {
		ok = close(out) == 0 && ok;
		if (!ok || rename(tmp, file) != 0) {
			fprintf(stderr, "%s: cannot write %s: %s\n", prog, file, strerror(errno));
			unlink(tmp);
			return FA_EXIT_OUTPUT;
		}
	}
	return ok ? FA_EXIT_OK : FA_EXIT_OUTPUT;
}

static const char *agent_format(const char *fmt)
{
	if (!fmt)
		return NULL;
	if (!strcmp(fmt, "html"))
		return "flamegraph";
	return fmt;
}

static const char *phrase(const char *fmt, const char *file)
{
	const char *f = fmt ? fmt : "";
	if (!fmt && file) {
		const char *dot = strrchr(file, '.');
		f = dot && (!strcmp(dot, ".html") || !strcmp(dot, ".htm")) ? "flamegraph" : dot && !strcmp(dot, ".svg") ? "svg"
			: dot && !strcmp(dot, ".jfr") ? "jfr" : "collapsed";
	}
	if (!strcmp(f, "flamegraph") || !strcmp(f, "html"))
		return "flame graph";
	if (!strcmp(f, "svg"))
		return "SVG flame graph";
	if (!strcmp(f, "tree"))
		return "call tree";
	if (!strcmp(f, "collapsed"))
		return "collapsed stacks";
	if (!strcmp(f, "jfr"))
		return "JFR recording";
	return "profile";
}

static int write_result(struct session *s, const struct args *a, const char *verb)
{
	const char *fmt = agent_format(a->format);
	const char *ext = a->file && strrchr(a->file, '.') ? strrchr(a->file, '.') : ".txt";
	snprintf(s->out_t, sizeof(s->out_t), "/tmp/flameagent-%d-%ld%s", s->pi.nspid, (long)getpid(), ext);
	char opts[4096] = "";
	snprintf(opts, sizeof(opts), "%s,file=%s", verb, s->out_t);
	if (fmt)
		add(opts, sizeof(opts), fmt, NULL);
	else if (!a->file)
		add(opts, sizeof(opts), "summary,traces=200,flat=200", NULL);
	if (a->render_opts[0])
		add(opts, sizeof(opts), a->render_opts, NULL);
	int rc = command(s, opts);
	if (rc)
		return rc;
	rc = fetch(s, a->file);
	if (rc == FA_EXIT_OK && a->file)
		fprintf(stderr, "Wrote %s to %s: %lld samples\n", phrase(a->format, a->file), a->file, s->samples);
	return rc;
}

static void progress(int left, int total)
{
	if (isatty(2))
		fprintf(stderr, "\r  %ds left of %ds ", left, total);
}

int main(int argc, char **argv)
{
	const char *base = strrchr(argv[0], '/');
	base = base ? base + 1 : argv[0];
	if (!strcmp(base, "asprof"))
		prog = "asprof";
	struct args a;
	if (parse_args(argc, argv, &a) != 0)
		return FA_EXIT_USAGE;
	if (!strcmp(a.action, "version-local")) {
		printf("flameattach %s\n", FLAMEAGENT_VERSION);
		return FA_EXIT_OK;
	}
	if (a.pid <= 0) {
		fprintf(stderr, "%s: no pid given\n", prog);
		usage(stderr);
		return FA_EXIT_USAGE;
	}
	struct session s;
	memset(&s, 0, sizeof(s));
	int rc = proc_info(a.pid, &s.pi);
	if (rc == -ESRCH) {
		fprintf(stderr, "%s: no process with pid %d\n", prog, a.pid);
		return FA_EXIT_ATTACH;
	}
	if (rc < 0) {
		fprintf(stderr, "%s: cannot read /proc/%d: %s\n", prog, a.pid, strerror(-rc));
		return FA_EXIT_ATTACH;
	}
	if (proc_is_jvm(a.pid) == 0) {
		fprintf(stderr, "%s: pid %d is not a Java process (no libjvm.so mapped)\n", prog, a.pid);
		return FA_EXIT_ATTACH;
	}
	if (geteuid() != 0 && geteuid() != s.pi.uid) {
		fprintf(stderr, "%s: permission denied: pid %d runs as uid %u and you are uid %u\n"
				"  hint: run flameattach as that user (sudo -u) or as root\n",
			prog, a.pid, (unsigned)s.pi.uid, (unsigned)geteuid());
		return FA_EXIT_ATTACH;
	}
	char ours[PATH_MAX];
	if (a.libpath) {
		if (!realpath(a.libpath, ours)) {
			fprintf(stderr, "%s: --libpath %s: %s\n", prog, a.libpath, strerror(errno));
			return FA_EXIT_USAGE;
		}
	} else {
		char self[PATH_MAX];
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		self[n > 0 ? n : 0] = 0;
		snprintf(ours, sizeof(ours), "%s/../lib/libflameagent.so", dirname(self));
		char resolved[PATH_MAX];
		if (realpath(ours, resolved))
			snprintf(ours, sizeof(ours), "%s", resolved);
	}
	if (agent_path(&s.pi, ours, s.lib, sizeof(s.lib)) != 0)
		return FA_EXIT_USAGE;
	snprintf(s.log_t, sizeof(s.log_t), "/tmp/flameagent-%d-%ld.log", s.pi.nspid, (long)getpid());
	char err[1024];
	rc = attach_wake(&s.pi, 10000, err, sizeof(err));
	if (rc != ATTACH_OK) {
		fprintf(stderr, "%s: %s\n", prog, err);
		return FA_EXIT_ATTACH;
	}

	if (!strcmp(a.action, "status") || !strcmp(a.action, "list") || !strcmp(a.action, "version")) {
		snprintf(s.out_t, sizeof(s.out_t), "/tmp/flameagent-%d-%ld.txt", s.pi.nspid, (long)getpid());
		char opts[512];
		snprintf(opts, sizeof(opts), "%s,file=%s", a.action, s.out_t);
		rc = command(&s, opts);
		return rc ? rc : fetch(&s, NULL);
	}
	if (!strcmp(a.action, "stop") || !strcmp(a.action, "dump"))
		return write_result(&s, &a, a.action);

	char opts[8192];
	snprintf(opts, sizeof(opts), "%s%s%s", !strcmp(a.action, "resume") ? "resume" : "start",
		 a.start_opts[0] ? "," : "", a.start_opts);
	if (a.render_opts[0]) {
		/* include/exclude/naming apply at dump time; the agent takes them with start too */
		size_t n = strlen(opts);
		snprintf(opts + n, sizeof(opts) - n, ",%s", a.render_opts);
	}
	rc = command(&s, opts);
	if (rc)
		return rc;
	if (strcmp(a.action, "collect") != 0) {
		fprintf(stderr, "Profiling pid %d started. Stop it with: %s stop -f FILE %d\n", a.pid, prog, a.pid);
		return FA_EXIT_OK;
	}
	const char *event = strstr(a.start_opts, "event=") ? strstr(a.start_opts, "event=") + 6 : "cpu";
	const char *interval = strstr(a.start_opts, "interval=") ? strstr(a.start_opts, "interval=") + 9 : NULL;
	fprintf(stderr, "Profiling pid %d (%.*s%s%.*s) for %ds. Ctrl-C stops early.\n", a.pid, (int)strcspn(event, ","),
		event, interval ? ", every " : "", interval ? (int)strcspn(interval, ",") : 0, interval ? interval : "",
		a.duration_s);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	for (int t = 0; t < a.duration_s * 10 && !interrupted; t++) {
		if (t % 10 == 0)
			progress(a.duration_s - t / 10, a.duration_s);
		if (!proc_alive(a.pid)) {
			if (isatty(2))
				fputc('\n', stderr);
			fprintf(stderr, "%s: pid %d ended during profiling; its profile was lost unless the agent wrote it "
					"at exit\n", prog, a.pid);
			return FA_EXIT_ATTACH;
		}
		struct timespec ts = {0, 100000000};
		nanosleep(&ts, NULL);
	}
	if (isatty(2))
		fputc('\n', stderr);
	if (interrupted)
		fprintf(stderr, "Stopping early.\n");
	return write_result(&s, &a, "stop");
}
