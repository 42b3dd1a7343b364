/* JFR writer: one self-contained chunk (header, metadata, one checkpoint of constant pools, events) that
 * the JDK's `jfr` tool and JMC read. Dump time / flameconv; pure C. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jfr.h"

/* type ids of this writer (any ids work as long as metadata and data agree) */
enum {
	T_METADATA = 0, T_CHECKPOINT = 1,
	T_BOOLEAN = 4, T_INT = 8, T_LONG = 9, T_STRING = 10,
	T_THREAD = 20, T_CLASS = 21, T_STACK_TRACE = 22, T_STACK_FRAME = 23, T_METHOD = 24, T_SYMBOL = 25,
	T_FRAME_TYPE = 26, T_THREAD_STATE = 27,
	T_ANNOTATION = 30, T_TIMESTAMP = 31, T_TIMESPAN = 32, T_LABEL = 33,
	T_EXECUTION_SAMPLE = 101, T_ALLOC_SAMPLE = 102, T_MONITOR_ENTER = 103, T_THREAD_PARK = 104,
	T_EVENT = 100,
};

/* a growable byte buffer with JFR's compressed integers */
struct buf {
	unsigned char *p;
	size_t len, cap;
	int oom;
};

static void put_bytes(struct buf *b, const void *data, size_t n)
{
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 65536;
		while (cap < b->len + n)
			cap *= 2;
		unsigned char *g = realloc(b->p, cap);
		if (!g) {
			b->oom = 1;
			return;
		}
		b->p = g;
		b->cap = cap;
	}
	memcpy(b->p + b->len, data, n);
	b->len += n;
}

static void put_u8(struct buf *b, unsigned v)
{
	unsigned char c = (unsigned char)v;
	put_bytes(b, &c, 1);
}

/* 7 bits per byte, high bit = more; at most 9 bytes, the 9th carrying 8 bits */
static void put_varint(struct buf *b, uint64_t v)
{
	for (int i = 0; i < 8; i++) {
		if (v < 0x80) {
			put_u8(b, (unsigned)v);
			return;
		}
		put_u8(b, (unsigned)(v & 0x7f) | 0x80);
		v >>= 7;
	}
	put_u8(b, (unsigned)v);
}

static void put_string(struct buf *b, const char *s)
{
	if (!s) {
		put_u8(b, 0); /* null */
		return;
	}
	size_t n = strlen(s);
	if (!n) {
		put_u8(b, 1); /* empty */
		return;
	}
	put_u8(b, 3); /* UTF-8 */
	put_varint(b, n);
	put_bytes(b, s, n);
}

static void put_be(struct buf *b, uint64_t v, int bytes)
{
	for (int i = bytes - 1; i >= 0; i--)
		put_u8(b, (unsigned)(v >> (8 * i)));
}

static void patch_be(struct buf *b, size_t at, uint64_t v, int bytes)
{
	for (int i = bytes - 1; i >= 0; i--)
		b->p[at + (size_t)(bytes - 1 - i)] = (unsigned char)(v >> (8 * i));
}

/* An event: its size (a fixed 4-byte padded varint, patched at the end) then the body. */
static size_t event_begin(struct buf *b)
{
	size_t at = b->len;
	put_bytes(b, "\x80\x80\x80\x00", 4);
	return at;
}

static void event_end(struct buf *b, size_t at)
{
	uint64_t size = b->len - at;
	b->p[at] = (unsigned char)(0x80 | (size & 0x7f));
	b->p[at + 1] = (unsigned char)(0x80 | ((size >> 7) & 0x7f));
	b->p[at + 2] = (unsigned char)(0x80 | ((size >> 14) & 0x7f));
	b->p[at + 3] = (unsigned char)((size >> 21) & 0x7f);
}

/* ---- string interning for the metadata and the symbol / class / method pools ---- */

struct strtab {
	char **s;
	size_t n, cap;
	size_t *index; /* open addressing: 0 empty, else id + 1 */
	size_t icap;
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static size_t intern(struct strtab *t, const char *s)
{
	if (!s)
		s = "";
	if ((t->n + 1) * 2 > t->icap) {
		size_t cap = t->icap ? t->icap * 2 : 256;
		size_t *idx = calloc(cap, sizeof(*idx));
		if (!idx)
			return 0;
		for (size_t i = 0; i < t->n; i++) {
			size_t h = hash_str(t->s[i]) & (cap - 1);
			while (idx[h])
				h = (h + 1) & (cap - 1);
			idx[h] = i + 1;
		}
		free(t->index);
		t->index = idx;
		t->icap = cap;
	}
	size_t h = hash_str(s) & (t->icap - 1);
	while (t->index[h]) {
		if (strcmp(t->s[t->index[h] - 1], s) == 0)
			return t->index[h] - 1;
		h = (h + 1) & (t->icap - 1);
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		char **g = realloc(t->s, cap * sizeof(*g));
		if (!g)
			return 0;
		t->s = g;
		t->cap = cap;
	}
	t->s[t->n] = strdup(s);
	t->index[h] = t->n + 1;
	return t->n++;
}

static void strtab_free(struct strtab *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->s[i]);
	free(t->s);
	free(t->index);
	memset(t, 0, sizeof(*t));
}

/* ---- metadata ---- */

struct meta {
	struct strtab names;
	struct buf tree;
	int children; /* scratch */
};

static void attr_list(struct meta *m, struct buf *out, const char *const *kv)
{
	int n = 0;
	while (kv[2 * n])
		n++;
	put_varint(out, (uint64_t)n);
	for (int i = 0; i < n; i++) {
		put_varint(out, intern(&m->names, kv[2 * i]));
		put_varint(out, intern(&m->names, kv[2 * i + 1]));
	}
}

struct field_def {
	const char *name;
	int type;
	int cp;        /* a constant pool reference */
	int array;
	int ann;       /* 0, T_TIMESTAMP or T_TIMESPAN */
};

struct class_def {
	const char *name;
	int id;
	const char *super;
	const char *label;
	struct field_def fields[10];
};

static const struct class_def classes[] = {
	{"boolean", T_BOOLEAN, NULL, NULL, {{0}}},
	{"int", T_INT, NULL, NULL, {{0}}},
	{"long", T_LONG, NULL, NULL, {{0}}},
	{"java.lang.String", T_STRING, NULL, NULL, {{0}}},
	{"java.lang.annotation.Annotation", T_ANNOTATION, NULL, NULL, {{0}}},
	{"jdk.jfr.Timestamp", T_TIMESTAMP, "java.lang.annotation.Annotation", NULL, {{"value", T_STRING, 0, 0, 0}}},
	{"jdk.jfr.Timespan", T_TIMESPAN, "java.lang.annotation.Annotation", NULL, {{"value", T_STRING, 0, 0, 0}}},
	{"jdk.jfr.Label", T_LABEL, "java.lang.annotation.Annotation", NULL, {{"value", T_STRING, 0, 0, 0}}},
	{"java.lang.Thread", T_THREAD, NULL, NULL,
	 {{"osName", T_STRING, 0, 0, 0}, {"osThreadId", T_LONG, 0, 0, 0}, {"javaName", T_STRING, 0, 0, 0},
	  {"javaThreadId", T_LONG, 0, 0, 0}}},
	{"java.lang.Class", T_CLASS, NULL, NULL,
	 {{"name", T_SYMBOL, 1, 0, 0}, {"modifiers", T_INT, 0, 0, 0}, {"hidden", T_BOOLEAN, 0, 0, 0}}},
	{"jdk.types.Symbol", T_SYMBOL, NULL, NULL, {{"string", T_STRING, 0, 0, 0}}},
	{"jdk.types.Method", T_METHOD, NULL, NULL,
	 {{"type", T_CLASS, 1, 0, 0}, {"name", T_SYMBOL, 1, 0, 0}, {"descriptor", T_SYMBOL, 1, 0, 0},
	  {"modifiers", T_INT, 0, 0, 0}, {"hidden", T_BOOLEAN, 0, 0, 0}}},
	{"jdk.types.FrameType", T_FRAME_TYPE, NULL, NULL, {{"description", T_STRING, 0, 0, 0}}},
	{"jdk.types.ThreadState", T_THREAD_STATE, NULL, NULL, {{"name", T_STRING, 0, 0, 0}}},
	{"jdk.types.StackFrame", T_STACK_FRAME, NULL, NULL,
	 {{"method", T_METHOD, 1, 0, 0}, {"lineNumber", T_INT, 0, 0, 0}, {"bytecodeIndex", T_INT, 0, 0, 0},
	  {"type", T_FRAME_TYPE, 1, 0, 0}}},
	{"jdk.types.StackTrace", T_STACK_TRACE, NULL, NULL,
	 {{"truncated", T_BOOLEAN, 0, 0, 0}, {"frames", T_STACK_FRAME, 0, 1, 0}}},
	{"jdk.ExecutionSample", T_EXECUTION_SAMPLE, "jdk.jfr.Event", "Method Profiling Sample",
	 {{"startTime", T_LONG, 0, 0, T_TIMESTAMP}, {"sampledThread", T_THREAD, 1, 0, 0},
	  {"stackTrace", T_STACK_TRACE, 1, 0, 0}, {"state", T_THREAD_STATE, 1, 0, 0}}},
	{"jdk.ObjectAllocationSample", T_ALLOC_SAMPLE, "jdk.jfr.Event", "Object Allocation Sample",
	 {{"startTime", T_LONG, 0, 0, T_TIMESTAMP}, {"eventThread", T_THREAD, 1, 0, 0},
	  {"stackTrace", T_STACK_TRACE, 1, 0, 0}, {"objectClass", T_CLASS, 1, 0, 0}, {"weight", T_LONG, 0, 0, 0}}},
	{"jdk.JavaMonitorEnter", T_MONITOR_ENTER, "jdk.jfr.Event", "Java Monitor Blocked",
	 {{"startTime", T_LONG, 0, 0, T_TIMESTAMP}, {"duration", T_LONG, 0, 0, T_TIMESPAN},
	  {"eventThread", T_THREAD, 1, 0, 0}, {"stackTrace", T_STACK_TRACE, 1, 0, 0},
	  {"monitorClass", T_CLASS, 1, 0, 0}, {"previousOwner", T_THREAD, 1, 0, 0}, {"address", T_LONG, 0, 0, 0}}},
	{"jdk.ThreadPark", T_THREAD_PARK, "jdk.jfr.Event", "Java Thread Park",
	 {{"startTime", T_LONG, 0, 0, T_TIMESTAMP}, {"duration", T_LONG, 0, 0, T_TIMESPAN},
	  {"eventThread", T_THREAD, 1, 0, 0}, {"stackTrace", T_STACK_TRACE, 1, 0, 0},
	  {"parkedClass", T_CLASS, 1, 0, 0}, {"timeout", T_LONG, 0, 0, T_TIMESPAN},
	  {"until", T_LONG, 0, 0, 0}, {"address", T_LONG, 0, 0, 0}}},
};

static void write_metadata(struct buf *out, int64_t start_ns)
{
	struct meta m;
	memset(&m, 0, sizeof(m));
	struct buf *t = &m.tree;
	char ids[64][16];
	/* root { metadata { class* } region } */
	put_varint(t, intern(&m.names, "root"));
	put_varint(t, 0);
	put_varint(t, 2);
	put_varint(t, intern(&m.names, "metadata"));
	put_varint(t, 0);
	size_t n_classes = sizeof(classes) / sizeof(classes[0]);
	put_varint(t, n_classes);
	for (size_t c = 0; c < n_classes; c++) {
		const struct class_def *cd = &classes[c];
		snprintf(ids[c], sizeof(ids[c]), "%d", cd->id);
		put_varint(t, intern(&m.names, "class"));
		const char *kv[8] = {"name", cd->name, "id", ids[c], NULL, NULL, NULL, NULL};
		if (cd->super) {
			kv[4] = "superType";
			kv[5] = cd->super;
		} else if (cd->id == T_SYMBOL || cd->id == T_FRAME_TYPE || cd->id == T_THREAD_STATE) {
			/* a one-field wrapper that readers unwrap to its string (RecordedMethod.getName ...) */
			kv[4] = "simpleType";
			kv[5] = "true";
		}
		attr_list(&m, t, kv);
		int nf = 0;
		while (nf < 10 && cd->fields[nf].name)
			nf++;
		put_varint(t, (uint64_t)nf + (cd->label ? 1 : 0));
		if (cd->label) {
			char lid[16];
			snprintf(lid, sizeof(lid), "%d", T_LABEL);
			put_varint(t, intern(&m.names, "annotation"));
			const char *akv[] = {"class", lid, "value", cd->label, NULL};
			attr_list(&m, t, akv);
			put_varint(t, 0);
		}
		for (int f = 0; f < nf; f++) {
			const struct field_def *fd = &cd->fields[f];
			char tid[16];
			snprintf(tid, sizeof(tid), "%d", fd->type);
			put_varint(t, intern(&m.names, "field"));
			const char *fkv[10] = {"name", fd->name, "class", tid};
			int k = 4;
			if (fd->cp) {
				fkv[k++] = "constantPool";
				fkv[k++] = "true";
			}
			if (fd->array) {
				fkv[k++] = "dimension";
				fkv[k++] = "1";
			}
			fkv[k] = NULL;
			attr_list(&m, t, fkv);
			if (fd->ann) {
				char aid[16];
				snprintf(aid, sizeof(aid), "%d", fd->ann);
				put_varint(t, 1);
				put_varint(t, intern(&m.names, "annotation"));
				const char *akv[] = {"class", aid, "value", "TICKS", NULL};
				attr_list(&m, t, akv);
				put_varint(t, 0);
			} else {
				put_varint(t, 0);
			}
		}
	}
	put_varint(t, intern(&m.names, "region"));
	const char *rkv[] = {"locale", "en_US", "gmtOffset", "0", "ticksToMillis", "1000000", NULL};
	attr_list(&m, t, rkv);
	put_varint(t, 0);

	size_t at = event_begin(out);
	put_varint(out, T_METADATA);
	put_varint(out, (uint64_t)start_ns);
	put_varint(out, 0);
	put_varint(out, 1); /* metadata id */
	put_varint(out, m.names.n);
	for (size_t i = 0; i < m.names.n; i++)
		put_string(out, m.names.s[i]);
	put_bytes(out, t->p, t->len);
	event_end(out, at);
	free(t->p);
	strtab_free(&m.names);
}

/* ---- constant pools ---- */

struct pools {
	struct strtab symbols; /* key = index + 1 */
	struct strtab classes; /* class names; key = index + 1 */
	struct strtab methods; /* "class\\nname\\ndesc"; key = index + 1 */
	size_t *method_class, *method_name, *method_desc;
	size_t method_cap;
};

static size_t method_key(struct pools *p, const struct jfr_frame *f)
{
	char key[2048];
	snprintf(key, sizeof(key), "%s\n%s\n%s", f->class_name ? f->class_name : "", f->method ? f->method : "",
		 f->signature ? f->signature : "");
	size_t before = p->methods.n;
	size_t id = intern(&p->methods, key);
	if (p->methods.n > before) {
		if (p->methods.n > p->method_cap) {
			size_t cap = p->method_cap ? p->method_cap * 2 : 256;
			p->method_class = realloc(p->method_class, cap * sizeof(size_t));
			p->method_name = realloc(p->method_name, cap * sizeof(size_t));
			p->method_desc = realloc(p->method_desc, cap * sizeof(size_t));
			p->method_cap = cap;
		}
		const char *cls = f->class_name && f->class_name[0] ? f->class_name : "";
		p->method_class[id] = intern(&p->classes, cls);
		p->method_name[id] = intern(&p->symbols, f->method ? f->method : "");
		/* readers format descriptors as "(...)": native and error frames get an empty one */
		p->method_desc[id] = intern(&p->symbols, f->signature && f->signature[0] ? f->signature : "()");
	}
	return id + 1;
}

static const char *frame_type_names[] = {"Interpreted", "JIT compiled", "Inlined", "Native", "C++", "Kernel", "C1 compiled"};

int out_jfr(const struct jfr_recording *rec, FILE *f)
{
	struct buf b = {0};
	struct pools p;
	memset(&p, 0, sizeof(p));
	/* header: patched at the end */
	put_bytes(&b, "FLR", 4);
	put_be(&b, 2, 2);
	put_be(&b, 0, 2);
	size_t hdr = b.len;
	for (int i = 0; i < 7; i++)
		put_be(&b, 0, 8);
	put_be(&b, 1, 4); /* features: compressed integers */

	/* events */
	for (uint64_t i = 0; i < rec->n_events; i++) {
		const struct jfr_event *e = &rec->events[i];
		int64_t ticks = e->time_ns - rec->start_ns + rec->start_ticks;
		size_t at = event_begin(&b);
		switch (e->kind) {
		case JFR_EXECUTION_SAMPLE:
		case JFR_WALL_SAMPLE:
			put_varint(&b, T_EXECUTION_SAMPLE);
			put_varint(&b, (uint64_t)ticks);
			put_varint(&b, (uint64_t)e->tid);
			put_varint(&b, e->stack + 1);
			put_varint(&b, e->state ? 2 : 1);
			break;
		case JFR_ALLOC_SAMPLE:
			put_varint(&b, T_ALLOC_SAMPLE);
			put_varint(&b, (uint64_t)ticks);
			put_varint(&b, (uint64_t)e->tid);
			put_varint(&b, e->stack + 1);
			put_varint(&b, intern(&p.classes, e->class_name) + 1);
			put_varint(&b, e->weight);
			break;
		case JFR_MONITOR_ENTER:
		case JFR_THREAD_PARK:
			put_varint(&b, e->kind == JFR_MONITOR_ENTER ? T_MONITOR_ENTER : T_THREAD_PARK);
			put_varint(&b, (uint64_t)(ticks - (int64_t)e->weight));
			put_varint(&b, e->weight);
			put_varint(&b, (uint64_t)e->tid);
			put_varint(&b, e->stack + 1);
			put_varint(&b, intern(&p.classes, e->class_name) + 1);
			if (e->kind == JFR_MONITOR_ENTER) {
				put_varint(&b, 0); /* previous owner unknown */
				put_varint(&b, 0);
			} else {
				put_varint(&b, 0);
				put_varint(&b, 0);
				put_varint(&b, 0);
			}
			break;
		}
		event_end(&b, at);
	}

	/* the stack traces' methods fill the method, class and symbol pools */
	size_t *frame_methods = NULL;
	size_t n_frames = 0;
	for (uint32_t s = 0; s < rec->n_stacks; s++)
		n_frames += (size_t)rec->stacks[s].n;
	frame_methods = malloc((n_frames ? n_frames : 1) * sizeof(size_t));
	size_t k = 0;
	for (uint32_t s = 0; s < rec->n_stacks; s++)
		for (int i = 0; i < rec->stacks[s].n; i++)
			frame_methods[k++] = method_key(&p, &rec->stacks[s].frames[i]);
	for (size_t c = 0; c < p.classes.n; c++)
		intern(&p.symbols, p.classes.s[c]);

	uint64_t metadata_off = b.len;
	write_metadata(&b, rec->start_ns);

	uint64_t cp_off = b.len;
	size_t at = event_begin(&b);
	put_varint(&b, T_CHECKPOINT);
	put_varint(&b, (uint64_t)rec->start_ticks);
	put_varint(&b, 0);
	put_varint(&b, 0); /* delta to the previous checkpoint: none */
	put_u8(&b, 1);     /* flush */
	int n_pools = 7;
	put_varint(&b, (uint64_t)n_pools);

	put_varint(&b, T_THREAD);
	put_varint(&b, (uint64_t)rec->n_threads + 1);
	put_varint(&b, 0); /* key 0: an unknown thread, for events that name none */
	put_string(&b, "unknown");
	put_varint(&b, 0);
	put_string(&b, "unknown");
	put_varint(&b, 0);
	for (int i = 0; i < rec->n_threads; i++) {
		const struct jfr_thread *t = &rec->threads[i];
		put_varint(&b, (uint64_t)(t->key ? t->key : t->tid));
		put_string(&b, t->name);
		put_varint(&b, (uint64_t)t->tid);
		put_string(&b, t->is_java ? t->name : NULL);
		put_varint(&b, (uint64_t)(t->java_id ? t->java_id : t->tid));
	}

	put_varint(&b, T_STACK_TRACE);
	put_varint(&b, rec->n_stacks);
	k = 0;
	for (uint32_t s = 0; s < rec->n_stacks; s++) {
		const struct jfr_stack *st = &rec->stacks[s];
		put_varint(&b, (uint64_t)s + 1);
		put_u8(&b, st->truncated ? 1 : 0);
		put_varint(&b, (uint64_t)st->n);
		for (int i = 0; i < st->n; i++) {
			const struct jfr_frame *fr = &st->frames[i];
			put_varint(&b, frame_methods[k++]);
			put_varint(&b, (uint64_t)(uint32_t)fr->line);
			put_varint(&b, (uint64_t)(uint32_t)fr->bci);
			put_varint(&b, (uint64_t)fr->type + 1);
		}
	}

	put_varint(&b, T_METHOD);
	put_varint(&b, p.methods.n);
	for (size_t i = 0; i < p.methods.n; i++) {
		put_varint(&b, i + 1);
		put_varint(&b, p.method_class[i] + 1);
		put_varint(&b, p.method_name[i] + 1);
		put_varint(&b, p.method_desc[i] + 1);
		put_varint(&b, 1); /* public */
		put_u8(&b, 0);
	}

	put_varint(&b, T_CLASS);
	put_varint(&b, p.classes.n);
	for (size_t i = 0; i < p.classes.n; i++) {
		put_varint(&b, i + 1);
		put_varint(&b, intern(&p.symbols, p.classes.s[i]) + 1);
		put_varint(&b, 1);
		put_u8(&b, 0);
	}

	put_varint(&b, T_SYMBOL);
	put_varint(&b, p.symbols.n);
	for (size_t i = 0; i < p.symbols.n; i++) {
		put_varint(&b, i + 1);
		put_string(&b, p.symbols.s[i]);
	}

	put_varint(&b, T_FRAME_TYPE);
	put_varint(&b, sizeof(frame_type_names) / sizeof(frame_type_names[0]));
	for (size_t i = 0; i < sizeof(frame_type_names) / sizeof(frame_type_names[0]); i++) {
		put_varint(&b, i + 1);
		put_string(&b, frame_type_names[i]);
	}

	put_varint(&b, T_THREAD_STATE);
	put_varint(&b, 2);
	put_varint(&b, 1);
	put_string(&b, "STATE_RUNNABLE");
	put_varint(&b, 2);
	put_string(&b, "STATE_SLEEPING");
	event_end(&b, at);

	patch_be(&b, hdr, b.len, 8);
	patch_be(&b, hdr + 8, cp_off, 8);
	patch_be(&b, hdr + 16, metadata_off, 8);
	patch_be(&b, hdr + 24, (uint64_t)rec->start_ns, 8);
	patch_be(&b, hdr + 32, (uint64_t)rec->duration_ns, 8);
	patch_be(&b, hdr + 40, (uint64_t)rec->start_ticks, 8);
	patch_be(&b, hdr + 48, 1000000000ull, 8);
	int rc = b.oom ? -ENOMEM : 0;
	if (!rc && fwrite(b.p, 1, b.len, f) != b.len)
		rc = -EIO;
	free(b.p);
	free(frame_methods);
	strtab_free(&p.symbols);
	strtab_free(&p.classes);
	strtab_free(&p.methods);
	free(p.method_class);
	free(p.method_name);
	free(p.method_desc);
	return rc;
}
