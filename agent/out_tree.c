/* Call tree writer: an HTML page of nested <details> elements (expandable without script), total and
 * self per node, children sorted by weight. Dump time / flameconv. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "out.h"

static void html_str(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '<')
			fputs("&lt;", f);
		else if (*s == '>')
			fputs("&gt;", f);
		else if (*s == '&')
			fputs("&amp;", f);
		else if (*s == '"')
			fputs("&quot;", f);
		else
			fputc(*s, f);
	}
}

static int by_weight;

static int heavier_first(const void *a, const void *b)
{
	const struct model_node *x = *(const struct model_node *const *)a, *y = *(const struct model_node *const *)b;
	uint64_t tx = model_node_total(x, by_weight), ty = model_node_total(y, by_weight);
	return tx > ty ? -1 : tx < ty ? 1 : strcmp(model_node_name(x), model_node_name(y));
}

static int tree_node(FILE *f, const struct render_opts *r, const struct model_node *n, uint64_t all, uint64_t min,
		     int depth)
{
	const struct model_node *const *ch;
	size_t nc = model_node_children(n, &ch);
	const struct model_node **sorted = malloc((nc ? nc : 1) * sizeof(*sorted));
	if (!sorted)
		return -ENOMEM;
	memcpy(sorted, ch, nc * sizeof(*sorted));
	by_weight = r->total;
	qsort(sorted, nc, sizeof(*sorted), heavier_first);
	for (size_t i = 0; i < nc; i++) {
		uint64_t t = model_node_total(sorted[i], r->total), s = model_node_self(sorted[i], r->total);
		if (t < min || t == 0)
			continue;
		const struct model_node *const *gc;
		int leaf = model_node_children(sorted[i], &gc) == 0;
		fprintf(f, "%s<summary><span class=\"n\">%6.2f%% %12llu</span><span class=\"n\">%6.2f%% %12llu</span>",
			leaf ? "<details class=\"leaf\">" : (depth < 1 ? "<details open>" : "<details>"),
			all ? 100.0 * (double)t / (double)all : 0.0, (unsigned long long)t,
			all ? 100.0 * (double)s / (double)all : 0.0, (unsigned long long)s);
		fprintf(f, "<span class=\"k%d\">", (int)model_node_kind(sorted[i]));
		html_str(f, model_node_name(sorted[i]));
		if (r->ann)
			fputs(model_kind_suffix(model_node_kind(sorted[i])), f);
		fputs("</span></summary>\n", f);
		int rc = tree_node(f, r, sorted[i], all, min, depth + 1);
		if (rc) {
			free(sorted);
			return rc;
		}
		fputs("</details>\n", f);
	}
	free(sorted);
	return 0;
}

int out_tree(const struct model *m, const struct render_opts *r, FILE *f)
{
	uint64_t all = model_node_total(model_root(m), r->total);
	uint64_t min = r->minwidth > 0 ? (uint64_t)((double)all * r->minwidth / 100.0) : 0;
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>", f);
	html_str(f, r->title[0] ? r->title : "Call tree");
	fputs("</title><style>body{font:12px monospace;margin:10px} details{margin-left:18px}"
	      " details.leaf>summary{list-style:none;margin-left:12px} summary{cursor:pointer;white-space:nowrap}"
	      " .n{display:inline-block;width:190px;color:#555} .k0,.k1,.k2,.k3{color:#276} .k4,.k5{color:#a40}"
	      " .k6{color:#c60} .k7,.k8{color:#666}</style></head><body>\n<h2>", f);
	html_str(f, r->title[0] ? r->title : "Call tree");
	fprintf(f, "</h2>\n<p>Total %llu %s. Columns: total (share, value), self (share, value), frame. Children sorted by "
		   "weight; click to expand.</p>\n",
		(unsigned long long)all, r->total ? r->unit : "samples");
	int rc = tree_node(f, r, model_root(m), all, min, 0);
	fputs("</body></html>\n", f);
	if (rc)
		return rc;
	return ferror(f) ? -EIO : 0;
}
