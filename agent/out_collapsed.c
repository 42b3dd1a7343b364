/* Collapsed (folded) stacks writer: "root;...;leaf count" per distinct stack. Dump time / flameconv. */
#include <errno.h>
#include <stdlib.h>

#include "out.h"

struct walk {
	int diff;
	const struct render_opts *r;
	FILE *f;
	const struct model_node **path;
	int cap;
};

static void print_path(struct walk *w, int depth, uint64_t count, uint64_t base, int diff)
{
	for (int i = 0; i < depth; i++) {
		const struct model_node *n = w->path[i];
		fputs(model_node_name(n), w->f);
		if (w->r->ann)
			fputs(model_kind_suffix(model_node_kind(n)), w->f);
		fputc(i + 1 < depth ? ';' : ' ', w->f);
	}
	if (diff)
		fprintf(w->f, "%llu ", (unsigned long long)base);
	fprintf(w->f, "%llu\n", (unsigned long long)count);
}

static int visit(struct walk *w, const struct model_node *n, int depth)
{
	if (depth > 0) {
		if (depth > w->cap) {
			int cap = w->cap * 2;
			const struct model_node **grown = realloc(w->path, (size_t)cap * sizeof(*grown));
			if (!grown)
				return -ENOMEM;
			w->path = grown;
			w->cap = cap;
		}
		w->path[depth - 1] = n;
		uint64_t self = model_node_self(n, w->r->total);
		if (self || (w->diff && model_node_base_self(n)))
			print_path(w, depth, self, model_node_base_self(n), w->diff);
	}
	const struct model_node *const *children;
	size_t nc = model_node_children(n, &children);
	for (size_t i = 0; i < nc; i++) {
		int rc = visit(w, children[i], depth + 1);
		if (rc)
			return rc;
	}
	return 0;
}

int out_collapsed(const struct model *m, const struct render_opts *r, FILE *f)
{
	struct walk w = {model_has_base(m), r, f, malloc(256 * sizeof(*w.path)), 256};
	if (!w.path)
		return -ENOMEM;
	int rc = visit(&w, model_root(m), 0);
	free(w.path);
	if (rc)
		return rc;
	return ferror(f) ? -EIO : 0;
}
