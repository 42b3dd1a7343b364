/* JFR reader for flameconv: every chunk of a recording (ours or the JDK's; concatenated files and gzip
 * too), parsed generically from each chunk's metadata, stack-bearing events added to the model.
 * flameconv only. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "frames.h"
#include "jfr.h"
#include "read.h"

struct field {
	char *name;
	long type;
	int cp, array;
};

struct type {
	long id;
	char *name;
	struct field *fields;
	int n_fields;
	int simple;
};

struct value; /* parsed values: a tree, only what the reader needs */

struct pool_entry {
	long type;
	uint64_t key;
	size_t off; /* where its value starts in the chunk */
};

struct chunk {
	const unsigned char *p;
	size_t len;
	int compressed;
	struct type *types;
	int n_types;
	char **strings;
	long n_strings;
	struct pool_entry *pool;
	size_t n_pool, cap_pool;
	int oom;
	const char *path;
	size_t base; /* chunk offset in the file, for messages */
	char *err;
	size_t errlen;
	int failed;
};

struct cursor {
	const unsigned char *p, *end;
	int bad;
};

static uint64_t rd_varint(struct chunk *c, struct cursor *s)
{
	if (!c->compressed) {
		/* uncompressed chunks (rare): big-endian 8 bytes for longs is not distinguishable here */
		uint64_t v = 0;
		for (int i = 0; i < 8 && s->p < s->end; i++)
			v = v << 8 | *s->p++;
		return v;
	}
	uint64_t v = 0;
	for (int i = 0; i < 9; i++) {
		if (s->p >= s->end) {
			s->bad = 1;
			return 0;
		}
		unsigned b = *s->p++;
		if (i == 8) {
			v |= (uint64_t)b << 56;
			break;
		}
		v |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80))
			break;
	}
	return v;
}

static unsigned rd_u8(struct cursor *s)
{
	if (s->p >= s->end) {
		s->bad = 1;
		return 0;
	}
	return *s->p++;
}

/* Reads a string value; returns malloc'd text or NULL (null string). Pool-string refs are looked up. */
static char *rd_string(struct chunk *c, struct cursor *s);

static struct type *type_of(struct chunk *c, long id)
{
	for (int i = 0; i < c->n_types; i++)
		if (c->types[i].id == id)
			return &c->types[i];
	return NULL;
}

static int is_prim(const char *n)
{
	return !strcmp(n, "int") || !strcmp(n, "long") || !strcmp(n, "short") || !strcmp(n, "char") ||
	       !strcmp(n, "byte") || !strcmp(n, "boolean") || !strcmp(n, "float") || !strcmp(n, "double");
}

/* Skips (or, for pools, locates) one value of type t. */
static void skip_value(struct chunk *c, struct cursor *s, long type_id, int depth);

static void skip_field(struct chunk *c, struct cursor *s, const struct field *f, int depth)
{
	if (f->array) {
		uint64_t n = rd_varint(c, s);
		for (uint64_t i = 0; i < n && !s->bad; i++) {
			if (f->cp)
				rd_varint(c, s);
			else
				skip_value(c, s, f->type, depth + 1);
		}
	} else if (f->cp) {
		rd_varint(c, s);
	} else {
		skip_value(c, s, f->type, depth + 1);
	}
}

static void skip_value(struct chunk *c, struct cursor *s, long type_id, int depth)
{
	struct type *t = type_of(c, type_id);
	if (!t || depth > 32) {
		s->bad = 1;
		return;
	}
	const char *n = t->name;
	if (!strcmp(n, "java.lang.String")) {
		free(rd_string(c, s));
	} else if (!strcmp(n, "byte") || !strcmp(n, "boolean")) {
		rd_u8(s);
	} else if (!strcmp(n, "float")) {
		s->p += 4;
	} else if (!strcmp(n, "double")) {
		s->p += 8;
	} else if (is_prim(n)) {
		rd_varint(c, s);
	} else {
		for (int i = 0; i < t->n_fields && !s->bad; i++)
			skip_field(c, s, &t->fields[i], depth);
	}
	if (s->p > s->end)
		s->bad = 1;
}

static struct pool_entry *pool_find(struct chunk *c, long type, uint64_t key)
{
	/* newest first: later checkpoints may redefine a key */
	for (size_t i = c->n_pool; i-- > 0;)
		if (c->pool[i].type == type && c->pool[i].key == key)
			return &c->pool[i];
	return NULL;
}

static char *rd_string(struct chunk *c, struct cursor *s)
{
	unsigned enc = rd_u8(s);
	switch (enc) {
	case 0:
		return NULL;
	case 1:
		return strdup("");
	case 2: { /* a reference into the java.lang.String pool */
		uint64_t key = rd_varint(c, s);
		struct type *st = NULL;
		for (int i = 0; i < c->n_types; i++)
			if (!strcmp(c->types[i].name, "java.lang.String"))
				st = &c->types[i];
		struct pool_entry *e = st ? pool_find(c, st->id, key) : NULL;
		if (!e)
			return strdup("");
		struct cursor v = {c->p + e->off, c->p + c->len, 0};
		return rd_string(c, &v);
	}
	case 3:
	case 5: {
		uint64_t n = rd_varint(c, s);
		if (n > (uint64_t)(s->end - s->p)) {
			s->bad = 1;
			return NULL;
		}
		char *r = malloc(n + 1);
		if (r) {
			memcpy(r, s->p, n);
			r[n] = 0;
		}
		s->p += n;
		return r;
	}
	case 4: {
		uint64_t n = rd_varint(c, s);
		if (n > 1 << 20) {
			s->bad = 1;
			return NULL;
		}
		char *r = malloc(n * 3 + 1);
		size_t k = 0;
		for (uint64_t i = 0; i < n && !s->bad; i++) {
			uint64_t ch = rd_varint(c, s);
			if (!r)
				continue;
			if (ch < 0x80)
				r[k++] = (char)ch;
			else if (ch < 0x800) {
				r[k++] = (char)(0xc0 | (ch >> 6));
				r[k++] = (char)(0x80 | (ch & 0x3f));
			} else {
				r[k++] = (char)(0xe0 | (ch >> 12));
				r[k++] = (char)(0x80 | ((ch >> 6) & 0x3f));
				r[k++] = (char)(0x80 | (ch & 0x3f));
			}
		}
		if (r)
			r[k] = 0;
		return r;
	}
	default:
		s->bad = 1;
		return NULL;
	}
}

/* ---- metadata ---- */

struct element {
	char *name;
	char **keys, **vals;
	int n_attr;
	struct element *children;
	int n_children;
};

static int rd_element(struct chunk *c, struct cursor *s, struct element *e, int depth)
{
	memset(e, 0, sizeof(*e));
	uint64_t name = rd_varint(c, s);
	if (s->bad || (long)name >= c->n_strings || depth > 16)
		return -1;
	e->name = c->strings[name];
	uint64_t na = rd_varint(c, s);
	if (na > 1000)
		return -1;
	e->keys = calloc(na + 1, sizeof(char *));
	e->vals = calloc(na + 1, sizeof(char *));
	for (uint64_t i = 0; i < na; i++) {
		uint64_t k = rd_varint(c, s), v = rd_varint(c, s);
		if ((long)k >= c->n_strings || (long)v >= c->n_strings)
			return -1;
		e->keys[i] = c->strings[k];
		e->vals[i] = c->strings[v];
	}
	e->n_attr = (int)na;
	uint64_t nc = rd_varint(c, s);
	if (nc > 100000)
		return -1;
	e->children = calloc(nc + 1, sizeof(*e->children));
	e->n_children = (int)nc;
	for (uint64_t i = 0; i < nc; i++)
		if (rd_element(c, s, &e->children[i], depth + 1))
			return -1;
	return s->bad ? -1 : 0;
}

static const char *attr(const struct element *e, const char *k)
{
	for (int i = 0; i < e->n_attr; i++)
		if (e->keys[i] && !strcmp(e->keys[i], k))
			return e->vals[i];
	return NULL;
}

static void free_element(struct element *e)
{
	for (int i = 0; i < e->n_children; i++)
		free_element(&e->children[i]);
	free(e->children);
	free(e->keys);
	free(e->vals);
}

static void collect_types(struct chunk *c, const struct element *e)
{
	if (e->name && !strcmp(e->name, "class")) {
		const char *name = attr(e, "name"), *id = attr(e, "id");
		if (name && id) {
			struct type *g = realloc(c->types, (size_t)(c->n_types + 1) * sizeof(*g));
			if (!g)
				return;
			c->types = g;
			struct type *t = &c->types[c->n_types++];
			memset(t, 0, sizeof(*t));
			t->id = atol(id);
			t->name = strdup(name);
			const char *st = attr(e, "simpleType");
			t->simple = st && !strcmp(st, "true");
			for (int i = 0; i < e->n_children; i++) {
				const struct element *f = &e->children[i];
				if (!f->name || strcmp(f->name, "field"))
					continue;
				struct field *fg = realloc(t->fields, (size_t)(t->n_fields + 1) * sizeof(*fg));
				if (!fg)
					return;
				t->fields = fg;
				struct field *fd = &t->fields[t->n_fields++];
				const char *fn = attr(f, "name"), *fc = attr(f, "class"), *cp = attr(f, "constantPool"),
					   *dim = attr(f, "dimension");
				fd->name = strdup(fn ? fn : "");
				fd->type = fc ? atol(fc) : -1;
				fd->cp = cp && !strcmp(cp, "true");
				fd->array = dim && atoi(dim) > 0;
			}
		}
		return;
	}
	for (int i = 0; i < e->n_children; i++)
		collect_types(c, &e->children[i]);
}

static int parse_metadata(struct chunk *c, size_t off)
{
	struct cursor s = {c->p + off, c->p + c->len, 0};
	rd_varint(c, &s); /* size */
	if (rd_varint(c, &s) != 0)
		return -1;
	rd_varint(c, &s); /* start */
	rd_varint(c, &s); /* duration */
	rd_varint(c, &s); /* id */
	uint64_t n = rd_varint(c, &s);
	if (s.bad || n > 1000000)
		return -1;
	c->strings = calloc(n + 1, sizeof(char *));
	c->n_strings = (long)n;
	for (uint64_t i = 0; i < n && !s.bad; i++)
		c->strings[i] = rd_string(c, &s);
	struct element root;
	int rc = rd_element(c, &s, &root, 0);
	if (rc == 0)
		collect_types(c, &root);
	free_element(&root);
	return rc;
}

/* a checkpoint event: pools of (key, value); values located, parsed on use */
static void parse_checkpoint(struct chunk *c, struct cursor *s)
{
	rd_varint(c, s); /* start */
	rd_varint(c, s); /* duration */
	rd_varint(c, s); /* delta */
	rd_u8(s);        /* type mask */
	uint64_t pools = rd_varint(c, s);
	for (uint64_t p = 0; p < pools && !s->bad; p++) {
		long type = (long)rd_varint(c, s);
		uint64_t count = rd_varint(c, s);
		for (uint64_t i = 0; i < count && !s->bad; i++) {
			uint64_t key = rd_varint(c, s);
			if (c->n_pool == c->cap_pool) {
				size_t cap = c->cap_pool ? c->cap_pool * 2 : 4096;
				struct pool_entry *g = realloc(c->pool, cap * sizeof(*g));
				if (!g) {
					c->oom = 1;
					return;
				}
				c->pool = g;
				c->cap_pool = cap;
			}
			c->pool[c->n_pool++] = (struct pool_entry){type, key, (size_t)(s->p - c->p)};
			skip_value(c, s, type, 0);
		}
	}
}

/* ---- reading typed values ---- */

static int field_index(const struct type *t, const char *name)
{
	for (int i = 0; i < t->n_fields; i++)
		if (!strcmp(t->fields[i].name, name))
			return i;
	return -1;
}

/* Positions s at field `name` of an object of type t starting at s (skipping earlier fields). */
static const struct field *seek_field(struct chunk *c, struct cursor *s, const struct type *t, const char *name)
{
	int idx = field_index(t, name);
	if (idx < 0)
		return NULL;
	for (int i = 0; i < idx && !s->bad; i++)
		skip_field(c, s, &t->fields[i], 0);
	return s->bad ? NULL : &t->fields[idx];
}

/* A string-like value: a String, a simple type (Symbol ...) or a pool reference to either. */
static char *rd_text(struct chunk *c, struct cursor *s, const struct field *f)
{
	struct type *t = type_of(c, f->type);
	if (!t)
		return NULL;
	if (f->cp) {
		uint64_t key = rd_varint(c, s);
		struct pool_entry *e = pool_find(c, f->type, key);
		if (!e)
			return NULL;
		struct cursor v = {c->p + e->off, c->p + c->len, 0};
		struct field inner = {NULL, f->type, 0, 0};
		return rd_text(c, &v, &inner);
	}
	if (!strcmp(t->name, "java.lang.String"))
		return rd_string(c, s);
	if (t->n_fields >= 1) /* a simple type: its first field */
		return rd_text(c, s, &t->fields[0]);
	return NULL;
}

/* A field of a pooled object: key -> object -> field name -> text */
static char *pooled_text(struct chunk *c, long type, uint64_t key, const char *name)
{
	struct pool_entry *e = pool_find(c, type, key);
	struct type *t = type_of(c, type);
	if (!e || !t)
		return NULL;
	struct cursor v = {c->p + e->off, c->p + c->len, 0};
	const struct field *f = seek_field(c, &v, t, name);
	return f ? rd_text(c, &v, f) : NULL;
}

static uint64_t pooled_ref(struct chunk *c, long type, uint64_t key, const char *name, long *ref_type)
{
	struct pool_entry *e = pool_find(c, type, key);
	struct type *t = type_of(c, type);
	if (!e || !t)
		return 0;
	struct cursor v = {c->p + e->off, c->p + c->len, 0};
	const struct field *f = seek_field(c, &v, t, name);
	if (!f || !f->cp)
		return 0;
	*ref_type = f->type;
	return rd_varint(c, &v);
}

static long pooled_long(struct chunk *c, long type, uint64_t key, const char *name)
{
	struct pool_entry *e = pool_find(c, type, key);
	struct type *t = type_of(c, type);
	if (!e || !t)
		return 0;
	struct cursor v = {c->p + e->off, c->p + c->len, 0};
	const struct field *f = seek_field(c, &v, t, name);
	return f ? (long)rd_varint(c, &v) : 0;
}

static char *class_name(struct chunk *c, long class_type, uint64_t key)
{
	char *n = pooled_text(c, class_type, key, "name");
	if (n)
		for (char *p = n; *p; p++)
			if (*p == '.')
				*p = '/';
	return n;
}

#define MAX_DEPTH 4096

struct ev_ctx {
	struct chunk *c;
	const struct jfr_read_opts *o;
	struct model *m;
	struct model_frame *frames;
	char **owned;
	int n_owned;
};

static const char *own(struct ev_ctx *x, char *s)
{
	if (!s)
		return "";
	if (x->n_owned < MAX_DEPTH + 8)
		x->owned[x->n_owned++] = s;
	return s;
}

static int add_stack_event(struct ev_ctx *x, const struct type *t, struct cursor *s, const char *thread_field,
			   const char *class_field, const char *weight_field)
{
	struct chunk *c = x->c;
	uint64_t stack_key = 0, thread_key = 0, class_key = 0, weight = 1;
	long stack_type = -1, thread_type = -1, class_type = -1;
	for (int i = 0; i < t->n_fields && !s->bad; i++) {
		const struct field *f = &t->fields[i];
		if (!strcmp(f->name, "stackTrace") && f->cp) {
			stack_key = rd_varint(c, s);
			stack_type = f->type;
		} else if (!strcmp(f->name, thread_field) && f->cp) {
			thread_key = rd_varint(c, s);
			thread_type = f->type;
		} else if (class_field && !strcmp(f->name, class_field) && f->cp) {
			class_key = rd_varint(c, s);
			class_type = f->type;
		} else if (weight_field && !strcmp(f->name, weight_field) && !f->cp && !f->array) {
			weight = rd_varint(c, s);
		} else {
			skip_field(c, s, f, 0);
		}
	}
	if (s->bad || stack_type < 0)
		return 0;
	int n = 0;
	x->n_owned = 0;
	if (x->o->label)
		x->frames[n++] = (struct model_frame){x->o->label, FK_THREAD};
	if (x->o->threads && thread_type >= 0) {
		char *name = pooled_text(c, thread_type, thread_key, "javaName");
		if (!name)
			name = pooled_text(c, thread_type, thread_key, "osName");
		long tid = pooled_long(c, thread_type, thread_key, "osThreadId");
		char *label = malloc(512);
		snprintf(label, 512, "[%s tid=%ld]", name ? name : "thread", tid);
		free(name);
		if (label && x->o->group_threads) {
			char grouped[512];
			read_group_thread(label, x->o->group_threads, grouped, sizeof(grouped));
			snprintf(label, 512, "%s", grouped);
		}
		x->frames[n++] = (struct model_frame){own(x, label), FK_THREAD};
	}
	/* the stack trace: frames leaf first in JFR; the model wants root first */
	struct pool_entry *e = pool_find(c, stack_type, stack_key);
	struct type *st = type_of(c, stack_type);
	if (!e || !st)
		return 0;
	struct cursor v = {c->p + e->off, c->p + c->len, 0};
	const struct field *ff = seek_field(c, &v, st, "frames");
	if (!ff || !ff->array)
		return 0;
	uint64_t nf = rd_varint(c, &v);
	struct type *frt = type_of(c, ff->type);
	if (!frt || nf > MAX_DEPTH)
		return 0;
	int first = n;
	for (uint64_t i = 0; i < nf && !v.bad; i++) {
		uint64_t method_key = 0;
		long method_type = -1;
		char *ftype = NULL;
		for (int k = 0; k < frt->n_fields; k++) {
			const struct field *g = &frt->fields[k];
			if (!strcmp(g->name, "method") && g->cp) {
				method_key = rd_varint(c, &v);
				method_type = g->type;
			} else if (!strcmp(g->name, "type")) {
				ftype = rd_text(c, &v, g);
			} else {
				skip_field(c, &v, g, 0);
			}
		}
		long class_t = -1;
		uint64_t ck = pooled_ref(c, method_type, method_key, "type", &class_t);
		char *cls = class_t >= 0 ? class_name(c, class_t, ck) : NULL;
		char *mname = pooled_text(c, method_type, method_key, "name");
		char buf[1024];
		enum frame_kind kind = FK_JAVA;
		if (ftype && !strcmp(ftype, "Inlined"))
			kind = FK_INLINED;
		else if (ftype && !strcmp(ftype, "Interpreted"))
			kind = FK_INTERPRETED;
		else if (ftype && !strcmp(ftype, "C1 compiled"))
			kind = FK_C1;
		else if (ftype && (!strcmp(ftype, "Native") || !strcmp(ftype, "C++") || !strcmp(ftype, "Kernel")))
			kind = !strcmp(ftype, "Kernel") ? FK_KERNEL : !strcmp(ftype, "C++") ? FK_CPP : FK_NATIVE;
		if (cls && cls[0]) {
			char sig[600];
			snprintf(sig, sizeof(sig), "L%s;", cls);
			frames_java_name(sig, mname ? mname : "?", NULL, (x->o->simple ? FRAMES_SIMPLE : 0) | (x->o->dot ? FRAMES_DOT : 0),
					 buf, sizeof(buf));
		} else {
			snprintf(buf, sizeof(buf), "%s", mname ? mname : "[unknown]");
			size_t bl = strlen(buf), sl = strlen(MODEL_KERNEL_SUFFIX);
			if (kind == FK_KERNEL) {
				/* kernel frames always carry "_[k]" (JFR keeps the bare kallsyms name) */
				if (bl < sl || strcmp(buf + bl - sl, MODEL_KERNEL_SUFFIX) != 0)
					snprintf(buf + bl, sizeof(buf) - bl, "%s", MODEL_KERNEL_SUFFIX);
			} else if (buf[0] == '[')
				kind = FK_ERROR;
			else if (kind == FK_JAVA)
				kind = FK_NATIVE;
		}
		free(cls);
		free(mname);
		free(ftype);
		if (n < MAX_DEPTH + 2)
			x->frames[n++] = (struct model_frame){own(x, strdup(buf)), kind};
	}
	/* reverse the stack part to root first */
	for (int i = first, j = n - 1; i < j; i++, j--) {
		struct model_frame tmp = x->frames[i];
		x->frames[i] = x->frames[j];
		x->frames[j] = tmp;
	}
	if (class_type >= 0) {
		char *cls = pooled_text(c, class_type, class_key, "name");
		char buf[600];
		if (cls) {
			snprintf(buf, sizeof(buf), "%s", cls);
			for (char *p = buf; *p; p++)
				if (*p == '/')
					*p = '.';
		}
		free(cls);
		x->frames[n++] = (struct model_frame){own(x, strdup(cls ? buf : "[unknown_class]")), FK_CLASS};
	}
	int rc = 0;
	if (n && model_trace_selected(x->frames, n, x->o->include, x->o->n_include, x->o->exclude, x->o->n_exclude))
		rc = model_add(x->m, x->frames, n, 1, weight);
	for (int i = 0; i < x->n_owned; i++)
		free(x->owned[i]);
	return rc;
}

static int parse_chunk(struct chunk *c, const struct jfr_read_opts *o, struct model *m, uint64_t *samples)
{
	const unsigned char *h = c->p;
	uint64_t cp_off = 0, meta_off = 0;
	for (int i = 0; i < 8; i++) {
		cp_off = cp_off << 8 | h[16 + i];
		meta_off = meta_off << 8 | h[24 + i];
	}
	uint32_t features = (uint32_t)h[64] << 24 | (uint32_t)h[65] << 16 | (uint32_t)h[66] << 8 | h[67];
	c->compressed = features & 1;
	if (meta_off >= c->len || parse_metadata(c, meta_off) != 0) {
		snprintf(c->err, c->errlen, "%s: offset %zu: unreadable JFR metadata", c->path, c->base + (size_t)meta_off);
		return -EINVAL;
	}
	/* pass 1: every checkpoint event (the JDK writes several per chunk) */
	struct cursor s = {c->p + 68, c->p + c->len, 0};
	while (s.p < s.end && !s.bad) {
		const unsigned char *start = s.p;
		uint64_t size = rd_varint(c, &s);
		if (size < 2 || size > (uint64_t)(s.end - start))
			break;
		uint64_t type = rd_varint(c, &s);
		if (type == 1) {
			struct cursor e = {s.p, start + size, 0};
			parse_checkpoint(c, &e);
		}
		s.p = start + size;
	}
	/* pass 2: the events */
	struct ev_ctx x = {c, o, m, malloc(sizeof(struct model_frame) * (MAX_DEPTH + 8)),
			   malloc(sizeof(char *) * (MAX_DEPTH + 8)), 0};
	if (!x.frames || !x.owned) {
		free(x.frames);
		free(x.owned);
		return -ENOMEM;
	}
	s = (struct cursor){c->p + 68, c->p + c->len, 0};
	int kind = o->kind_filter;
	while (s.p < s.end && !s.bad) {
		const unsigned char *start = s.p;
		uint64_t size = rd_varint(c, &s);
		if (size < 2 || size > (uint64_t)(s.end - start))
			break;
		long type = (long)rd_varint(c, &s);
		struct type *t = type > 1 ? type_of(c, type) : NULL;
		struct cursor e = {s.p, start + size, 0};
		if (t) {
			const char *n = t->name;
			int rc = 0, counted = 1;
			if ((kind < 0 || kind == JFR_EXECUTION_SAMPLE || kind == JFR_WALL_SAMPLE) &&
			    (!strcmp(n, "jdk.ExecutionSample") || (kind == JFR_WALL_SAMPLE && !strcmp(n, "jdk.NativeMethodSample"))))
				rc = add_stack_event(&x, t, &e, "sampledThread", NULL, NULL);
			else if (kind == JFR_ALLOC_SAMPLE && !strcmp(n, "jdk.ObjectAllocationSample"))
				rc = add_stack_event(&x, t, &e, "eventThread", "objectClass", "weight");
			else if (kind == JFR_ALLOC_SAMPLE && (!strcmp(n, "jdk.ObjectAllocationInNewTLAB") ||
							     !strcmp(n, "jdk.ObjectAllocationOutsideTLAB")))
				rc = add_stack_event(&x, t, &e, "eventThread", "objectClass", "allocationSize");
			else if (kind == JFR_MONITOR_ENTER && !strcmp(n, "jdk.JavaMonitorEnter"))
				rc = add_stack_event(&x, t, &e, "eventThread", "monitorClass", "duration");
			else if ((kind == JFR_THREAD_PARK || kind == JFR_MONITOR_ENTER) && !strcmp(n, "jdk.ThreadPark"))
				rc = add_stack_event(&x, t, &e, "eventThread", "parkedClass", "duration");
			else
				counted = 0;
			if (rc) {
				free(x.frames);
				free(x.owned);
				return rc;
			}
			*samples += (uint64_t)counted;
		}
		s.p = start + size;
	}
	free(x.frames);
	free(x.owned);
	return 0;
}

static void free_chunk(struct chunk *c)
{
	for (int i = 0; i < c->n_types; i++) {
		for (int k = 0; k < c->types[i].n_fields; k++)
			free(c->types[i].fields[k].name);
		free(c->types[i].fields);
		free(c->types[i].name);
	}
	free(c->types);
	for (long i = 0; i < c->n_strings; i++)
		free(c->strings[i]);
	free(c->strings);
	free(c->pool);
}

int jfr_read_file(const char *path, const struct jfr_read_opts *o, struct model *m, char *err, size_t errlen)
{
	uint64_t samples = 0;
	return jfr_read_counted(path, o, m, &samples, err, errlen);
}

int jfr_read_counted(const char *path, const struct jfr_read_opts *o, struct model *m, uint64_t *samples, char *err,
		     size_t errlen)
{
	gzFile gz = gzopen(path, "rb");
	if (!gz) {
		snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno ? errno : ENOMEM));
		return -EIO;
	}
	size_t cap = 1 << 20, len = 0;
	unsigned char *data = malloc(cap);
	int n;
	while (data && (n = gzread(gz, data + len, (unsigned)(cap - len))) > 0) {
		len += (size_t)n;
		if (len == cap) {
			unsigned char *g = realloc(data, cap * 2);
			if (!g) {
				free(data);
				data = NULL;
				break;
			}
			data = g;
			cap *= 2;
		}
	}
	gzclose(gz);
	if (!data) {
		snprintf(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	int rc = 0;
	size_t off = 0;
	*samples = 0;
	while (rc == 0 && off < len) {
		if (len - off < 68 || memcmp(data + off, "FLR", 4) != 0) {
			snprintf(err, errlen, "%s: offset %zu: not a JFR chunk (expected the magic FLR)", path, off);
			rc = -EINVAL;
			break;
		}
		uint64_t size = 0;
		for (int i = 0; i < 8; i++)
			size = size << 8 | data[off + 8 + i];
		if (size < 68 || size > len - off) {
			snprintf(err, errlen, "%s: offset %zu: truncated JFR chunk (%llu bytes announced, %zu present)", path,
				 off, (unsigned long long)size, len - off);
			rc = -EINVAL;
			break;
		}
		struct chunk c;
		memset(&c, 0, sizeof(c));
		c.p = data + off;
		c.len = (size_t)size;
		c.path = path;
		c.base = off;
		c.err = err;
		c.errlen = errlen;
		rc = parse_chunk(&c, o, m, samples);
		free_chunk(&c);
		off += (size_t)size;
	}
	free(data);
	return rc;
}
