/* Text writers: summary (counters, failures by reason, drops, sampler cost), traces (top stacks) and flat
 * (top frames by self). Dump time / flameconv. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "out.h"

struct item {
	const struct model_node *node;
	uint64_t value;
};

struct collect {
	struct item *items;
	size_t n, cap;
	int by_weight;
};

static int collect_self(struct collect *c, const struct model_node *n)
{
	uint64_t self = model_node_self(n, c->by_weight);
	if (self && model_node_parent(n)) {
		if (c->n == c->cap) {
			size_t cap = c->cap ? c->cap * 2 : 1024;
			struct item *grown = realloc(c->items, cap * sizeof(*grown));
			if (!grown)
				return -ENOMEM;
			c->items = grown;
			c->cap = cap;
		}
		c->items[c->n++] = (struct item){n, self};
	}
	const struct model_node *const *ch;
	size_t nc = model_node_children(n, &ch);
	for (size_t i = 0; i < nc; i++)
		if (collect_self(c, ch[i]))
			return -ENOMEM;
	return 0;
}

static int by_value_desc(const void *a, const void *b)
{
	const struct item *x = a, *y = b;
	if (x->value != y->value)
		return x->value < y->value ? 1 : -1;
	int c = strcmp(model_node_name(x->node), model_node_name(y->node));
	return c ? c : (x->node < y->node ? -1 : x->node > y->node);
}

static int by_name(const void *a, const void *b)
{
	const struct item *x = a, *y = b;
	int c = strcmp(model_node_name(x->node), model_node_name(y->node));
	return c ? c : (int)model_node_kind(x->node) - (int)model_node_kind(y->node);
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static void frame_name(FILE *f, const struct render_opts *r, const struct model_node *n)
{
	fputs(model_node_name(n), f);
	if (r->ann)
		fputs(model_kind_suffix(model_node_kind(n)), f);
}

static void write_summary(const struct model *m, const struct render_opts *r, const struct profile_stats *st,
			  FILE *f)
{
	uint64_t samples = st ? st->samples : model_node_total(model_root(m), 0);
	fprintf(f, "--- Summary ---\n");
	if (st) {
		fprintf(f, "event:              %s%s%s%s\n", st->event, st->engine[0] ? " (" : "", st->engine,
			st->engine[0] ? ")" : "");
		if (st->interval)
			fprintf(f, "interval:           %lld %s\n", (long long)st->interval,
				r->unit);
		fprintf(f, "duration:           %.3f s\n", (double)st->duration_ns / 1e9);
	}
	fprintf(f, "samples:            %llu\n", (unsigned long long)samples);
	fprintf(f, "total:              %llu %s\n", (unsigned long long)model_node_total(model_root(m), 1), r->unit);
	const struct model_node *const *ch;
	size_t roots = model_node_children(model_root(m), &ch);
	fprintf(f, "distinct roots:     %zu\n", roots);
	if (!st)
		return;
	fprintf(f, "threads seen:       %llu\n", (unsigned long long)st->threads_seen);
	uint64_t failed = 0, recovered = 0;
	for (int e = 0; e < ERR_COUNT; e++) {
		failed += st->errors[e];
		recovered += st->recovered[e];
	}
	fprintf(f, "failed or cut walks: %llu (%.2f%%), recovered %llu (%.2f%% of them); left as error frames: %llu (%.2f%%)\n",
		(unsigned long long)failed, pct(failed, samples), (unsigned long long)recovered, pct(recovered, failed),
		(unsigned long long)(failed - recovered), pct(failed - recovered, samples));
	for (int e = 0; e < ERR_COUNT; e++)
		if (st->errors[e])
			fprintf(f, "  %s %s: %llu (%.2f%%), recovered %llu\n", calltrace_error_frame((enum trace_error)e),
				calltrace_error_reason((enum trace_error)e), (unsigned long long)st->errors[e],
				pct(st->errors[e], samples), (unsigned long long)st->recovered[e]);
	fprintf(f, "dropped:            %llu%s\n", (unsigned long long)st->dropped,
		st->dropped ? " (all sampler stripes busy)" : "");
	fprintf(f, "storage overflow:   %llu%s\n", (unsigned long long)st->overflow,
		st->overflow ? " (storage full: raise memlimit)" : "");
	if (st->dwarf_walks)
		fprintf(f, "native unwinding:   dwarf, %.1f MiB tables for %u objects; %llu walks, %llu stopped early "
			"(%.2f%%), %llu frames by frame pointer\n", (double)st->dwarf_bytes / 1048576.0, st->dwarf_objects,
			(unsigned long long)st->dwarf_walks, (unsigned long long)st->dwarf_failed,
			pct(st->dwarf_failed, st->dwarf_walks), (unsigned long long)st->dwarf_fp_steps);
	if (st->cost_samples)
		fprintf(f, "sampler cost:       %llu ns per sample (mean over %llu samples)\n",
			(unsigned long long)(st->cost_ns / st->cost_samples), (unsigned long long)st->cost_samples);
	fputc('\n', f);
}

static int write_traces(const struct model *m, const struct render_opts *r, FILE *f)
{
	struct collect c = {.by_weight = r->total};
	if (collect_self(&c, model_root(m))) {
		free(c.items);
		return -ENOMEM;
	}
	qsort(c.items, c.n, sizeof(*c.items), by_value_desc);
	uint64_t whole = model_node_total(model_root(m), r->total);
	size_t n = c.n < (size_t)r->traces_n ? c.n : (size_t)r->traces_n;
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "--- Trace %zu: %llu %s (%.2f%%) ---\n", i + 1, (unsigned long long)c.items[i].value,
			r->total ? r->unit : "samples", pct(c.items[i].value, whole));
		int k = 0;
		/* model root first: walking parents gives leaf first, as stack traces read (reversed models
		 * read callers-of-leaf the other way) */
		for (const struct model_node *p = c.items[i].node; model_node_parent(p); p = model_node_parent(p)) {
			fprintf(f, "  [%3d] ", k++);
			frame_name(f, r, p);
			fputc('\n', f);
		}
		fputc('\n', f);
	}
	free(c.items);
	return 0;
}

static int write_flat(const struct model *m, const struct render_opts *r, FILE *f)
{
	struct collect c = {.by_weight = r->total};
	if (collect_self(&c, model_root(m))) {
		free(c.items);
		return -ENOMEM;
	}
	/* merge the self values of equal frames found at different places in the tree */
	qsort(c.items, c.n, sizeof(*c.items), by_name);
	size_t out = 0;
	for (size_t i = 0; i < c.n; i++) {
		if (out && by_name(&c.items[out - 1], &c.items[i]) == 0)
			c.items[out - 1].value += c.items[i].value;
		else
			c.items[out++] = c.items[i];
	}
	qsort(c.items, out, sizeof(*c.items), by_value_desc);
	uint64_t whole = model_node_total(model_root(m), r->total);
	size_t n = out < (size_t)r->flat_n ? out : (size_t)r->flat_n;
	fprintf(f, "--- Flat profile: top %zu frames by self %s (of %llu) ---\n", n, r->total ? r->unit : "samples",
		(unsigned long long)whole);
	fprintf(f, "%14s  %7s  %s\n", r->total ? r->unit : "samples", "percent", "frame");
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "%14llu  %6.2f%%  ", (unsigned long long)c.items[i].value, pct(c.items[i].value, whole));
		frame_name(f, r, c.items[i].node);
		fputc('\n', f);
	}
	fputc('\n', f);
	free(c.items);
	return 0;
}

int out_text(const struct model *m, const struct render_opts *r, const struct profile_stats *st, unsigned bits,
	     FILE *f)
{
	if (bits & OUT_SUMMARY)
		write_summary(m, r, st, f);
	if ((bits & OUT_TRACES) && write_traces(m, r, f))
		return -ENOMEM;
	if ((bits & OUT_FLAT) && write_flat(m, r, f))
		return -ENOMEM;
	return ferror(f) ? -EIO : 0;
}
