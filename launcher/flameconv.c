/* flameconv: the render stage alone. Collapsed stacks in (one or many files, gzip too; two with --diff),
 * HTML / SVG flame graph, call tree, collapsed or text out, with the agent's own writers. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flameagent.h"
#include "jfr.h"
#include "model.h"
#include "out.h"
#include "read.h"

static void usage(FILE *f)
{
	fputs("usage: flameconv [options] INPUT... OUTPUT\n"
	      "       flameconv --diff [options] BASE NEW OUTPUT\n"
	      "Converts collapsed stacks (the agent's collapsed output, FlameGraph's folded files) and JFR recordings\n"
	      "(the agent's and the JDK's own) to a flame graph, call tree, collapsed or text; gzip is read\n"
	      "transparently; '-' is standard input. Several inputs, mixed, are merged. OUTPUT '-' is stdout.\n"
	      "  -o FORMAT          html (flamegraph), svg, tree, collapsed, flat, traces, summary;\n"
	      "                     default: from OUTPUT's extension (.html .svg .collapsed .folded .txt)\n"
	      "  --title TEXT       title of the graph\n"
	      "  --minwidth PCT     leave out frames narrower than PCT percent\n"
	      "  --reverse          callers of hot leaves (leaf-first tree)\n"
	      "  --inverted         icicle: root at the top\n"
	      "  --include GLOB     keep stacks with a frame matching GLOB ('*' wildcards; repeatable)\n"
	      "  --exclude GLOB     drop stacks with a frame matching GLOB (repeatable)\n"
	      "  --threads          keep [name tid=N] thread root frames (dropped by default)\n"
	      "  --group-threads=stage|pool\n"
	      "                     fold per-task thread names: Spark tasks by stage, numbered pools into one\n"
	      "  --label-by-file    a root frame per input file (named without extension and loop number, so\n"
	      "                     exec-3-0.jfr and exec-3-1.jfr share [exec-3]): executors side by side\n"
	      "  --simple           class names without package\n"
	      "  --total            counts are weights (as written with the agent's `total`)\n"
	      "  --alloc, --lock    JFR input: allocation samples / monitor and park events instead of CPU samples\n"
	      "  --width PX, --height PX   SVG width and frame height\n"
	      "  --diff BASE NEW    differential graph: NEW's shape, coloured by change of self share (red grew,\n"
	      "                     blue shrank); collapsed output gets two counts per line: BASE NEW\n"
	      "  -h, --help\n",
	      f);
}

static int format_bits(const char *fmt, unsigned *bits)
{
	static const struct { const char *name; unsigned bits; } formats[] = {
		{"html", OUT_FLAMEGRAPH}, {"flamegraph", OUT_FLAMEGRAPH}, {"svg", OUT_SVG}, {"tree", OUT_TREE},
		{"collapsed", OUT_COLLAPSED}, {"folded", OUT_COLLAPSED}, {"flat", OUT_FLAT}, {"traces", OUT_TRACES},
		{"summary", OUT_SUMMARY}, {"text", OUT_SUMMARY | OUT_TRACES | OUT_FLAT}, {"jfr", OUT_JFR},
	};
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		if (strcmp(fmt, formats[i].name) == 0) {
			*bits = formats[i].bits;
			return 0;
		}
	return -1;
}

/* "[exec-3]" from "exec-3-12.jfr.gz": extensions and a loop sequence number dropped, so the intervals of
 * one executor share a root */
static void file_label(const char *base, char *out, size_t len)
{
	char name[FA_MAX_PATH];
	snprintf(name, sizeof(name), "%s", base);
	static const char *exts[] = {".gz", ".jfr", ".collapsed", ".folded", ".txt"};
	for (int again = 1; again;) {
		again = 0;
		for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++) {
			size_t n = strlen(name), e = strlen(exts[i]);
			if (n > e && strcmp(name + n - e, exts[i]) == 0) {
				name[n - e] = 0;
				again = 1;
			}
		}
	}
	/* drop a trailing "-N" when what remains still names something numbered (exec-3-12 -> exec-3) */
	char *dash = strrchr(name, '-');
	if (dash && dash[1] && strspn(dash + 1, "0123456789") == strlen(dash + 1) && dash != name) {
		*dash = 0;
		if (!strpbrk(name, "0123456789"))
			*dash = '-';
	}
	snprintf(out, len, "[%s]", name);
}

static unsigned bits_from_name(const char *out)
{
	struct options o;
	options_init(&o);
	snprintf(o.file, sizeof(o.file), "%s", out);
	return options_outputs(&o);
}

int main(int argc, char **argv)
{
	enum { O_TITLE = 256, O_MINWIDTH, O_REVERSE, O_INVERTED, O_INCLUDE, O_EXCLUDE, O_THREADS, O_SIMPLE, O_TOTAL,
	       O_WIDTH, O_HEIGHT, O_DIFF, O_LABEL, O_GROUP, O_ALLOC, O_LOCK };
	static const struct option longopts[] = {
		{"title", required_argument, 0, O_TITLE}, {"minwidth", required_argument, 0, O_MINWIDTH},
		{"reverse", no_argument, 0, O_REVERSE}, {"inverted", no_argument, 0, O_INVERTED},
		{"include", required_argument, 0, O_INCLUDE}, {"exclude", required_argument, 0, O_EXCLUDE},
		{"threads", no_argument, 0, O_THREADS}, {"simple", no_argument, 0, O_SIMPLE},
		{"total", no_argument, 0, O_TOTAL}, {"width", required_argument, 0, O_WIDTH},
		{"height", required_argument, 0, O_HEIGHT}, {"diff", no_argument, 0, O_DIFF},
		{"label-by-file", no_argument, 0, O_LABEL}, {"group-threads", required_argument, 0, O_GROUP},
		{"alloc", no_argument, 0, O_ALLOC}, {"lock", no_argument, 0, O_LOCK},
		{"help", no_argument, 0, 'h'}, {0, 0, 0, 0},
	};
	struct options o;
	options_init(&o);
	struct read_opts ro;
	memset(&ro, 0, sizeof(ro));
	unsigned bits = 0;
	int diff = 0, label = 0, c, jfr_kind = -1;
	while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
		char err[256];
		switch (c) {
		case 'o':
			if (format_bits(optarg, &bits)) {
				fprintf(stderr, "flameconv: -o %s: unknown format (expected html, svg, tree, collapsed, flat, traces or summary)\n", optarg);
				return FA_EXIT_USAGE;
			}
			break;
		case O_TITLE: snprintf(o.title, sizeof(o.title), "%s", optarg); break;
		case O_MINWIDTH: {
			char *end;
			o.minwidth = strtod(optarg, &end);
			if (*end || o.minwidth < 0 || o.minwidth > 100) {
				fprintf(stderr, "flameconv: --minwidth %s: expected a percentage from 0 to 100\n", optarg);
				return FA_EXIT_USAGE;
			}
			break;
		}
		case O_REVERSE: o.reverse = 1; break;
		case O_INVERTED: o.inverted = 1; break;
		case O_INCLUDE:
		case O_EXCLUDE: {
			int inc = c == O_INCLUDE;
			int *n = inc ? &ro.n_include : &ro.n_exclude;
			if (*n >= 16 || strlen(optarg) >= 256) {
				fprintf(stderr, "flameconv: --%s %s: at most 16 patterns of up to 255 characters\n",
					inc ? "include" : "exclude", optarg);
				return FA_EXIT_USAGE;
			}
			snprintf(inc ? ro.include[*n] : ro.exclude[*n], 256, "%s", optarg);
			(*n)++;
			break;
		}
		case O_THREADS: ro.threads = 1; break;
		case O_SIMPLE: ro.simple = 1; break;
		case O_TOTAL: o.total = 1; break;
		case O_WIDTH:
		case O_HEIGHT:
			snprintf(err, sizeof(err), "%s=%s", c == O_WIDTH ? "width" : "height", optarg);
			if (options_parse(&o, err, err, sizeof(err))) {
				fprintf(stderr, "flameconv: %s\n", err);
				return FA_EXIT_USAGE;
			}
			break;
		case O_DIFF: diff = 1; break;
		case O_LABEL: label = 1; break;
		case O_GROUP:
			if (strcmp(optarg, "stage") && strcmp(optarg, "pool")) {
				fprintf(stderr, "flameconv: --group-threads=%s: expected stage or pool\n", optarg);
				return FA_EXIT_USAGE;
			}
			ro.group_threads = optarg[0] == 's' ? READ_GROUP_STAGE : READ_GROUP_POOL;
			ro.threads = 1;
			break;
		case O_ALLOC: jfr_kind = JFR_ALLOC_SAMPLE; break;
		case O_LOCK: jfr_kind = JFR_MONITOR_ENTER; break;
		case 'h': usage(stdout); return FA_EXIT_OK;
		default: usage(stderr); return FA_EXIT_USAGE;
		}
	}
	int nargs = argc - optind;
	if (nargs < 2 || (diff && nargs != 3)) {
		fprintf(stderr, diff ? "flameconv: --diff needs BASE NEW OUTPUT\n" : "flameconv: need at least one INPUT and an OUTPUT\n");
		usage(stderr);
		return FA_EXIT_USAGE;
	}
	const char *output = argv[argc - 1];
	if (!bits)
		bits = strcmp(output, "-") == 0 ? OUT_COLLAPSED : bits_from_name(output);
	if (bits & OUT_JFR) {
		fprintf(stderr, "flameconv: output format jfr is not available in this build (html, svg, tree, collapsed, text)\n");
		return FA_EXIT_USAGE;
	}
	/* the HTML page reverses in the browser; the others need the tree reversed here */
	struct model *m = model_create(o.reverse && !(bits & OUT_FLAMEGRAPH));
	if (!m) {
		fprintf(stderr, "flameconv: out of memory\n");
		return FA_EXIT_OUTPUT;
	}
	uint64_t total = 0;
	for (int i = optind + (diff ? 1 : 0); i < argc - 1; i++) {
		char err[FA_MAX_PATH + 256], lbl[FA_MAX_PATH + 2];
		const char *base = strrchr(argv[i], '/');
		file_label(base ? base + 1 : argv[i], lbl, sizeof(lbl));
		ro.label = label ? lbl : NULL;
		uint64_t n = 0;
		int rc;
		if (read_is_jfr(argv[i])) {
			struct jfr_read_opts jo = {ro.threads, ro.simple, 0, 0, jfr_kind, ro.include, ro.n_include,
						   ro.exclude, ro.n_exclude, ro.label, ro.group_threads};
			rc = jfr_read_counted(argv[i], &jo, m, &n, err, sizeof(err));
		} else {
			uint64_t ignored = 0;
			char warn[512];
			rc = read_collapsed(argv[i], &ro, m, &n, &ignored, warn, sizeof(warn), err, sizeof(err));
			if (rc == 0 && ignored)
				fprintf(stderr, "flameconv: %s: ignored %llu malformed line%s (first: %s)\n", argv[i],
					(unsigned long long)ignored, ignored == 1 ? "" : "s", warn);
		}
		if (rc != 0) {
			fprintf(stderr, "flameconv: %s\n", err);
			model_destroy(m);
			return FA_EXIT_USAGE;
		}
		total += n;
	}
	if (diff) {
		char err[FA_MAX_PATH + 256];
		uint64_t n = 0, ignored = 0;
		char warn[512];
		ro.base = 1;
		ro.label = NULL;
		if (read_collapsed(argv[optind], &ro, m, &n, &ignored, warn, sizeof(warn), err, sizeof(err)) != 0) {
			fprintf(stderr, "flameconv: %s\n", err);
			model_destroy(m);
			return FA_EXIT_USAGE;
		}
	}
	if (total == 0) {
		fprintf(stderr, "flameconv: no samples in the input: nothing written\n");
		model_destroy(m);
		return FA_EXIT_USAGE;
	}
	struct render_opts r;
	out_render_init(&r, &o, o.total ? "units" : "samples");
	struct out_file of;
	char err[FA_MAX_PATH + 256];
	int rc = out_open(&of, output, err, sizeof(err));
	if (rc == 0) {
		rc = out_write(m, &r, NULL, bits, of.f);
		if (rc) {
			snprintf(err, sizeof(err), "cannot write %s: %s", output, strerror(-rc));
			out_abort(&of);
		} else {
			rc = out_commit(&of, err, sizeof(err));
		}
	}
	model_destroy(m);
	if (rc) {
		fprintf(stderr, "flameconv: %s\n", err);
		return FA_EXIT_OUTPUT;
	}
	if (!of.is_stdout)
		fprintf(stderr, "Wrote %s: %llu samples from %d input%s\n", output, (unsigned long long)total,
			nargs - 1 - diff, nargs - 1 - diff == 1 ? "" : "s");
	return FA_EXIT_OK;
}
