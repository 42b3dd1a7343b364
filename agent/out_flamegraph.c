/* Flame graph writers: the interactive HTML page (agent/res/flamegraph.html with the profile embedded as
 * compact JSON) and a standalone interactive SVG. Dump time / flameconv. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "out.h"

extern const unsigned char res_flamegraph_html[];
extern const size_t res_flamegraph_html_len;

/* JSON string body: quotes, backslashes, control characters, and '<' '>' '&' (so no name can close the
 * <script> element) and U+2028/U+2029 escaped. */
static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20 || *p == '<' || *p == '>' || *p == '&')
			fprintf(f, "\\u%04x", *p);
		else if (p[0] == 0xe2 && p[1] == 0x80 && (p[2] == 0xa8 || p[2] == 0xa9)) {
			fprintf(f, "\\u%04x", p[2] == 0xa8 ? 0x2028 : 0x2029);
			p += 2;
		} else
			fputc(*p, f);
	}
	fputc('"', f);
}

/* name pointer -> index (model names are interned, so equal names share a pointer) */
struct names {
	const char **keys;
	uint32_t *vals;
	size_t cap, n;
	const char **order;
};

static int name_index(struct names *t, const char *name, uint32_t *out)
{
	if ((t->n + 1) * 2 > t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 1024;
		const char **keys = calloc(cap, sizeof(*keys));
		uint32_t *vals = calloc(cap, sizeof(*vals));
		const char **order = realloc(t->order, cap * sizeof(*order));
		if (!keys || !vals || !order) {
			free(keys);
			free(vals);
			if (order)
				t->order = order;
			return -ENOMEM;
		}
		t->order = order;
		for (size_t i = 0; i < t->cap; i++) {
			if (!t->keys[i])
				continue;
			size_t s = ((uintptr_t)t->keys[i] >> 4) * 0x9E3779B97F4A7C15ull >> 20 & (cap - 1);
			while (keys[s])
				s = (s + 1) & (cap - 1);
			keys[s] = t->keys[i];
			vals[s] = t->vals[i];
		}
		free(t->keys);
		free(t->vals);
		t->keys = keys;
		t->vals = vals;
		t->cap = cap;
	}
	size_t s = ((uintptr_t)name >> 4) * 0x9E3779B97F4A7C15ull >> 20 & (t->cap - 1);
	while (t->keys[s]) {
		if (t->keys[s] == name) {
			*out = t->vals[s];
			return 0;
		}
		s = (s + 1) & (t->cap - 1);
	}
	t->keys[s] = name;
	t->vals[s] = (uint32_t)t->n;
	t->order[t->n] = name;
	*out = (uint32_t)t->n++;
	return 0;
}

static void names_free(struct names *t)
{
	free(t->keys);
	free(t->vals);
	free(t->order);
}

struct emit {
	int diff;
	FILE *f;
	const struct render_opts *r;
	struct names names;
	uint64_t min_total;
	int first;
	int failed;
};

static void emit_nodes(struct emit *e, const struct model_node *n, int depth)
{
	const struct model_node *const *ch;
	size_t nc = model_node_children(n, &ch);
	for (size_t i = 0; i < nc && !e->failed; i++) {
		uint64_t total = model_node_total(ch[i], e->r->total);
		if (total < e->min_total || total == 0)
			continue;
		uint32_t idx;
		if (name_index(&e->names, model_node_name(ch[i]), &idx)) {
			e->failed = 1;
			return;
		}
		fprintf(e->f, "%s%d,%u,%d,%llu,%llu", e->first ? "" : ",", depth, idx + 1, (int)model_node_kind(ch[i]),
			(unsigned long long)total, (unsigned long long)model_node_self(ch[i], e->r->total));
		if (e->diff)
			fprintf(e->f, ",%llu", (unsigned long long)model_node_base_self(ch[i]));
		e->first = 0;
		if ((depth & 7) == 7)
			fputc('\n', e->f);
		emit_nodes(e, ch[i], depth + 1);
	}
}

static const char *default_title(const struct render_opts *r)
{
	if (r->title[0])
		return r->title;
	if (!strcmp(r->unit, "bytes"))
		return "Allocation profile";
	if (!strcmp(r->unit, "events"))
		return "Event profile";
	return "CPU profile";
}

int out_flamegraph_html(const struct model *m, const struct render_opts *r, FILE *f)
{
	const char *tpl = (const char *)res_flamegraph_html;
	const char *start = strstr(tpl, "/*DATA*/");
	const char *end = start ? strstr(start, "/*END*/") : NULL;
	if (!start || !end)
		return -EINVAL;
	fwrite(tpl, 1, (size_t)(start - tpl), f);
	struct emit e = {model_has_base(m), f, r, {0}, 0, 1, 0};
	uint64_t all = model_node_total(model_root(m), r->total);
	e.min_total = r->minwidth > 0 ? (uint64_t)((double)all * r->minwidth / 100.0) : 0;
	fputs("{\"title\":", f);
	json_str(f, default_title(r));
	fprintf(f, ",\"unit\":");
	json_str(f, r->total ? r->unit : "samples");
	fprintf(f, ",\"reverse\":%d,\"inverted\":%d,\"diff\":%d,\"baseTotal\":%llu,\"nodes\":[\n", r->reverse ? 1 : 0,
		r->inverted ? 1 : 0, e.diff, (unsigned long long)model_base_total(m));
	emit_nodes(&e, model_root(m), 0);
	fputs("],\n\"names\":[\"all\"", f);
	for (size_t i = 0; i < e.names.n; i++) {
		fputc(',', f);
		json_str(f, e.names.order[i]);
		if ((i & 31) == 31)
			fputc('\n', f);
	}
	fputs("]}", f);
	fwrite(end + 7, 1, res_flamegraph_html_len - (size_t)(end + 7 - tpl), f);
	names_free(&e.names);
	if (e.failed)
		return -ENOMEM;
	return ferror(f) ? -EIO : 0;
}

/* ---- SVG ---- */

static void xml_str(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		default:
			if ((unsigned char)*s >= 0x20)
				fputc(*s, f);
		}
	}
}

static const int svg_rgb[FK_COUNT][3] = {
	{80, 180, 80}, {60, 190, 200}, {215, 150, 60}, {170, 210, 80}, {230, 90, 70}, {215, 200, 70},
	{240, 140, 40}, {150, 150, 150}, {110, 110, 110}, {110, 140, 230}, {170, 120, 210},
};

struct svg {
	int diff;
	double max_delta;
	FILE *f;
	const struct render_opts *r;
	double width, frame_h, top;
	uint64_t all, min_total, base_total;
	int rows;
};

static int max_depth(const struct model_node *n, uint64_t min_total, int by_weight)
{
	int d = 0;
	const struct model_node *const *ch;
	size_t nc = model_node_children(n, &ch);
	for (size_t i = 0; i < nc; i++)
		if (model_node_total(ch[i], by_weight) >= min_total) {
			int c = 1 + max_depth(ch[i], min_total, by_weight);
			if (c > d)
				d = c;
		}
	return d;
}

/* diff: change of a frame's self share between base and new */
static double delta(const struct svg *s, const struct model_node *n)
{
	double now = s->all ? (double)model_node_self(n, s->r->total) / (double)s->all : 0;
	double before = s->base_total ? (double)model_node_base_self(n) / (double)s->base_total : 0;
	return now - before;
}

static double max_delta(const struct svg *s, const struct model_node *n)
{
	double m = model_node_parent(n) ? fabs(delta(s, n)) : 0;
	const struct model_node *const *ch;
	size_t nc = model_node_children(n, &ch);
	for (size_t i = 0; i < nc; i++) {
		double c = max_delta(s, ch[i]);
		if (c > m)
			m = c;
	}
	return m;
}

static void svg_frame(struct svg *s, const struct model_node *n, double x, int depth)
{
	uint64_t total = model_node_total(n, s->r->total);
	double w = s->all ? (double)total / (double)s->all * (s->width - 20) : 0;
	double y = s->r->inverted ? s->top + depth * s->frame_h
				  : s->top + (s->rows - 1 - depth) * s->frame_h;
	const char *name = depth ? model_node_name(n) : "all";
	enum frame_kind k = depth ? model_node_kind(n) : FK_THREAD;
	unsigned h = 2166136261u;
	for (const char *p = name; *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	int v = (int)(h % 40) - 20;
	int rgb[3] = {svg_rgb[k][0] + v, svg_rgb[k][1] + v, svg_rgb[k][2] + v};
	if (s->diff && depth) {
		/* red: its self share grew from base to new; blue: it shrank; white: unchanged */
		double d = delta(s, n), a = s->max_delta > 0 ? fabs(d) / s->max_delta : 0;
		int fade = (int)(255 * (1 - a));
		rgb[0] = d > 0 ? 255 : fade;
		rgb[1] = fade;
		rgb[2] = d < 0 ? 255 : fade;
	}
	for (int i = 0; i < 3; i++)
		rgb[i] = rgb[i] < 0 ? 0 : rgb[i] > 255 ? 255 : rgb[i];
	fprintf(s->f, "<g><title>");
	xml_str(s->f, name);
	fprintf(s->f, " (%llu %s, %.2f%%)</title><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"rgb(%d,%d,%d)\"/>",
		(unsigned long long)total, s->r->total ? s->r->unit : "samples",
		s->all ? 100.0 * (double)total / (double)s->all : 0.0, x, y, w, s->frame_h - 1, rgb[0], rgb[1], rgb[2]);
	fprintf(s->f, "<text x=\"%.1f\" y=\"%.1f\"></text></g>\n", x + 3, y + s->frame_h * 0.7);
	const struct model_node *const *ch;
	size_t nc = model_node_children(n, &ch);
	double cx = x;
	for (size_t i = 0; i < nc; i++) {
		uint64_t t = model_node_total(ch[i], s->r->total);
		if (t >= s->min_total && t > 0)
			svg_frame(s, ch[i], cx, depth + 1);
		cx += s->all ? (double)t / (double)s->all * (s->width - 20) : 0;
	}
}

static const char svg_script[] =
	"<script type=\"text/ecmascript\"><![CDATA[\n"
	"'use strict';\n"
	"var svg = document.documentElement, frames = [], details, matchedText, W, X0 = 10;\n"
	"function init() {\n"
	"  details = document.getElementById('details'); matchedText = document.getElementById('matched');\n"
	"  W = +svg.getAttribute('width') - 20;\n"
	"  var gs = document.getElementsByTagName('g');\n"
	"  for (var i = 0; i < gs.length; i++) {\n"
	"    var g = gs[i], r = g.getElementsByTagName('rect')[0], t = g.getElementsByTagName('title')[0];\n"
	"    if (!r || !t) continue;\n"
	"    var f = {g: g, r: r, t: g.getElementsByTagName('text')[0], name: t.textContent.replace(/ \\([^()]*\\)$/, ''),\n"
	"      info: t.textContent, x: +r.getAttribute('x'), y: +r.getAttribute('y'), w: +r.getAttribute('width'), fill: r.getAttribute('fill')};\n"
	"    frames.push(f);\n"
	"    g.onmouseover = (function (f) { return function () { details.textContent = f.info; }; })(f);\n"
	"    g.onmouseout = function () { details.textContent = ' '; };\n"
	"    g.onclick = (function (f) { return function () { zoom(f); }; })(f);\n"
	"  }\n"
	"  layout(X0, W + X0, -1);\n"
	"}\n"
	"function label(f, x, w) {\n"
	"  var chars = Math.floor((w - 6) / 7);\n"
	"  f.t.textContent = chars < 3 ? '' : (f.name.length <= chars ? f.name : f.name.substring(0, chars - 2) + '..');\n"
	"  f.t.setAttribute('x', x + 3);\n"
	"}\n"
	"function layout(lo, hi, zy) {\n"
	"  var scale = W / (hi - lo);\n"
	"  for (var i = 0; i < frames.length; i++) {\n"
	"    var f = frames[i], inside = f.x + f.w > lo + 1e-6 && f.x < hi - 1e-6;\n"
	"    var x = X0 + (Math.max(f.x, lo) - lo) * scale, w = (Math.min(f.x + f.w, hi) - Math.max(f.x, lo)) * scale;\n"
	"    f.g.style.display = inside && w > 0.1 ? '' : 'none';\n"
	"    f.g.style.opacity = (zy >= 0 && f.w * scale > W + 1) ? 0.6 : 1;\n"
	"    f.r.setAttribute('x', x); f.r.setAttribute('width', Math.max(w, 0));\n"
	"    label(f, x, w);\n"
	"  }\n"
	"}\n"
	"function zoom(f) { layout(f.x, f.x + f.w, f.y); svg.setAttribute('data-zoomed', f.name); }\n"
	"function resetZoom() { layout(X0, W + X0, -1); svg.removeAttribute('data-zoomed'); }\n"
	"function search(re) {\n"
	"  var rx, total = 0, all = W;\n"
	"  try { rx = re ? new RegExp(re) : null; } catch (e) { matchedText.textContent = 'bad regular expression'; return; }\n"
	"  var spans = [];\n"
	"  for (var i = 0; i < frames.length; i++) {\n"
	"    var f = frames[i], hit = rx && rx.test(f.name);\n"
	"    f.r.setAttribute('fill', hit ? 'rgb(230,80,230)' : f.fill);\n"
	"    if (hit) spans.push([f.x, f.x + f.w]);\n"
	"  }\n"
	"  spans.sort(function (a, b) { return a[0] - b[0]; });\n"
	"  var end = -1;\n"
	"  for (var j = 0; j < spans.length; j++) {\n"
	"    var s = spans[j];\n"
	"    if (s[0] >= end) { total += s[1] - s[0]; end = s[1]; } else if (s[1] > end) { total += s[1] - end; end = s[1]; }\n"
	"  }\n"
	"  var pct = rx ? (100 * total / all).toFixed(2) : null;\n"
	"  matchedText.textContent = rx ? 'Matched: ' + pct + '%' : '';\n"
	"  svg.setAttribute('data-matched', rx ? pct : '');\n"
	"}\n"
	"function askSearch() { var re = prompt('Search (regular expression)', ''); if (re !== null) search(re); }\n"
	"]]></script>\n";

int out_flamegraph_svg(const struct model *m, const struct render_opts *r, FILE *f)
{
	struct svg s = {model_has_base(m), 0, f, r, r->width > 0 ? r->width : 1200, r->height > 0 ? r->height : 16, 40, 0, 0, 0, 0};
	s.all = model_node_total(model_root(m), r->total);
	s.min_total = r->minwidth > 0 ? (uint64_t)((double)s.all * r->minwidth / 100.0) : 0;
	s.rows = max_depth(model_root(m), s.min_total, r->total) + 1;
	s.base_total = model_base_total(m);
	if (s.diff)
		s.max_delta = max_delta(&s, model_root(m));
	if (s.rows * s.frame_h > 32000)
		s.frame_h = 32000.0 / s.rows;
	double height = s.top + s.rows * s.frame_h + 30;
	fprintf(f, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		   "<svg version=\"1.1\" width=\"%.0f\" height=\"%.0f\" onload=\"init()\" viewBox=\"0 0 %.0f %.0f\" "
		   "xmlns=\"http://www.w3.org/2000/svg\" xmlns:xlink=\"http://www.w3.org/1999/xlink\">\n",
		s.width, height, s.width, height);
	fputs("<style>text { font-family: Verdana, sans-serif; font-size: 11px; fill: #000; pointer-events: none; }"
	      " g { cursor: pointer; } .ui { cursor: pointer; fill: #333; }</style>\n", f);
	fputs(svg_script, f);
	fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"#f8f8f8\"/>\n", s.width, height);
	fprintf(f, "<text x=\"%.0f\" y=\"20\" text-anchor=\"middle\" style=\"font-size:15px\">", s.width / 2);
	xml_str(f, default_title(r));
	fputs("</text>\n<text id=\"reset\" class=\"ui\" x=\"10\" y=\"20\" onclick=\"resetZoom()\" "
	      "style=\"pointer-events:all\">Reset zoom</text>\n", f);
	fprintf(f, "<text id=\"search\" class=\"ui\" x=\"%.0f\" y=\"20\" text-anchor=\"end\" onclick=\"askSearch()\" "
		   "style=\"pointer-events:all\">Search</text>\n", s.width - 10);
	fprintf(f, "<text id=\"matched\" x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\"></text>\n", s.width - 10, height - 10);
	fprintf(f, "<text id=\"details\" x=\"10\" y=\"%.0f\"> </text>\n", height - 10);
	svg_frame(&s, model_root(m), 10, 0);
	fputs("</svg>\n", f);
	return ferror(f) ? -EIO : 0;
}
