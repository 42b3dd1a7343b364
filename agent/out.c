/* Whole-file output (temp name + rename) and render options from struct options. Dump time. */
#include "out.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void out_render_init(struct render_opts *r, const struct options *o, const char *unit)
{
	memset(r, 0, sizeof(*r));
	r->ann = o->ann;
	r->total = o->total;
	r->reverse = o->reverse;
	r->inverted = o->inverted;
	r->minwidth = o->minwidth;
	r->width = o->width;
	r->height = o->height;
	r->flat_n = o->flat_n;
	r->traces_n = o->traces_n;
	snprintf(r->title, sizeof(r->title), "%s", o->title);
	snprintf(r->unit, sizeof(r->unit), "%s", unit ? unit : "samples");
}

int out_open(struct out_file *of, const char *path, char *err, size_t errlen)
{
	memset(of, 0, sizeof(*of));
	if (!path || !path[0] || strcmp(path, "-") == 0) {
		of->f = stdout;
		of->is_stdout = 1;
		return 0;
	}
	if (strlen(path) >= sizeof(of->path)) {
		snprintf(err, errlen, "cannot write %.100s...: path too long", path);
		return -ENAMETOOLONG;
	}
	snprintf(of->path, sizeof(of->path), "%s", path);
	snprintf(of->tmp, sizeof(of->tmp), "%s.tmp.%d", path, (int)getpid());
	of->f = fopen(of->tmp, "w");
	if (!of->f) {
		int e = errno;
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(e));
		return -e;
	}
	return 0;
}

int out_commit(struct out_file *of, char *err, size_t errlen)
{
	if (of->is_stdout) {
		if (fflush(stdout) != 0) {
			snprintf(err, errlen, "cannot write to standard output: %s", strerror(errno));
			return -EIO;
		}
		return 0;
	}
	int bad = ferror(of->f);
	int e = bad ? EIO : 0;
	if (fclose(of->f) != 0 && !e)
		e = errno;
	of->f = NULL;
	if (!e && rename(of->tmp, of->path) != 0)
		e = errno;
	if (e) {
		unlink(of->tmp);
		snprintf(err, errlen, "cannot write %s: %s", of->path, strerror(e));
		return -e;
	}
	return 0;
}

void out_abort(struct out_file *of)
{
	if (of->is_stdout || !of->f)
		return;
	fclose(of->f);
	of->f = NULL;
	unlink(of->tmp);
}

int out_write(const struct model *m, const struct render_opts *r, const struct profile_stats *st, unsigned bits,
	      FILE *f)
{
	if (bits & OUT_TEXT_MASK)
		return out_text(m, r, st, bits & OUT_TEXT_MASK, f);
	if (bits & OUT_FLAMEGRAPH)
		return out_flamegraph_html(m, r, f);
	if (bits & OUT_SVG)
		return out_flamegraph_svg(m, r, f);
	if (bits & OUT_TREE)
		return out_tree(m, r, f);
	return out_collapsed(m, r, f);
}
