/* Writers: one per format (out_*.c) behind this interface, plus whole-file output (temp + rename).
 * Dump time (agent) or flameconv; never in a signal handler. */
#ifndef OUT_H
#define OUT_H

#include <stdio.h>

#include "model.h"
#include "options.h"

/* What a writer needs besides the model; filled from struct options (out_render_init) or flameconv flags. */
struct render_opts {
	int ann;           /* kind suffixes _[j] ... on frame names */
	int total;         /* weight instead of sample counts */
	int reverse, inverted;
	double minwidth;   /* percent */
	int width, height;
	int flat_n, traces_n;
	char title[256];   /* "" = default title for the event */
	char unit[16];     /* "samples", "ns", "bytes": what weights are */
};

void out_render_init(struct render_opts *r, const struct options *o, const char *unit);

/* Each writer prints the whole document to f; returns 0 or -errno (write error). */
int out_collapsed(const struct model *m, const struct render_opts *r, FILE *f);
/* Text: summary (counters, failures by reason with share, drops, mean cost per sample; st may be NULL),
 * traces (top r->traces_n stacks, leaf first) and flat (top r->flat_n frames by self), in that order, as
 * selected by bits. */
int out_text(const struct model *m, const struct render_opts *r, const struct profile_stats *st, unsigned bits,
	     FILE *f);

/* Interactive HTML flame graph (canvas; hover, zoom, regex search, flame/icicle, reversed, tree view). */
int out_flamegraph_html(const struct model *m, const struct render_opts *r, FILE *f);
/* Standalone interactive SVG flame graph (hover details, click zoom, search, reset). */
int out_flamegraph_svg(const struct model *m, const struct render_opts *r, FILE *f);
/* HTML call tree: nested <details>, total and self per node, children by weight. */
int out_tree(const struct model *m, const struct render_opts *r, FILE *f);

/* Writes the model in the format bits select (text bits combine; else html, svg, tree, collapsed; JFR is
 * not from the model). Returns 0 or -errno. */
int out_write(const struct model *m, const struct render_opts *r, const struct profile_stats *st, unsigned bits,
	      FILE *f);

/* Whole-file output. out_open: "-" or "" -> stdout; otherwise creates "<path>.tmp.<pid>" next to path.
 * Returns NULL with a message in err ("cannot write /x/out.html: No such file or directory").
 * out_commit flushes, closes and renames onto the final path (0 or -errno, message in err);
 * out_abort closes and removes the temp file. */
struct out_file {
	FILE *f;
	int is_stdout;
	char path[4096];
	char tmp[4200];
};
int out_open(struct out_file *of, const char *path, char *err, size_t errlen);
int out_commit(struct out_file *of, char *err, size_t errlen);
void out_abort(struct out_file *of);

#endif
