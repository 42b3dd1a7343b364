/* The profile model: a trie of resolved frames with sample counts and weights; interned names; glob
 * selection; kind suffixes. Dump time (agent) and flameconv. */
#include "model.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct model_node {
	uint32_t name;
	uint8_t kind;
	uint8_t sorted;
	struct model_node *parent;
	const struct model *model;
	uint64_t total[2], self[2]; /* [0] samples, [1] weight */
	uint64_t base_self;         /* diff: self samples of the base profile */
	struct model_node **children;
	uint32_t n_children, cap_children;
};

#define CHUNK 4096

struct model {
	int reverse;
	int has_base;
	uint64_t base_total;
	struct model_node root;
	/* node storage: chunks, so node pointers stay valid */
	struct model_node **chunks;
	size_t n_chunks, used_in_chunk;
	/* interned names */
	char **names;
	uint32_t n_names, cap_names;
	uint32_t *name_index; /* open addressing: 0 = empty, else id + 1 */
	size_t name_index_cap;
	/* (parent, name, kind) -> child */
	struct model_node **child_index;
	size_t child_index_cap, n_nodes;
};

static const char *const suffixes[FK_COUNT] = {
	[FK_JAVA] = "_[j]", [FK_INLINED] = "_[i]", [FK_INTERPRETED] = "_[0]", [FK_C1] = "_[1]", [FK_KERNEL] = MODEL_KERNEL_SUFFIX,
};

const char *model_kind_suffix(enum frame_kind k)
{
	return (unsigned)k < FK_COUNT && suffixes[k] && k != FK_KERNEL ? suffixes[k] : "";
}

enum frame_kind model_kind_from_name(const char *name, size_t *name_len)
{
	size_t n = *name_len;
	if (n > 4 && name[n - 4] == '_' && name[n - 3] == '[' && name[n - 1] == ']') {
		for (int k = 0; k < FK_COUNT; k++)
			if (suffixes[k] && name[n - 2] == suffixes[k][2]) {
				if (k != FK_KERNEL)
					*name_len = n - 4;
				return (enum frame_kind)k;
			}
	}
	if (n >= 2 && name[0] == '[' && name[n - 1] == ']') {
		for (size_t i = 0; i + 4 <= n; i++)
			if (memcmp(name + i, "tid=", 4) == 0)
				return FK_THREAD;
		return FK_ERROR;
	}
	int has_slash_or_dot = 0, has_paren = 0;
	for (size_t i = 0; i < n; i++) {
		if (name[i] == ':' && i + 1 < n && name[i + 1] == ':')
			return FK_CPP;
		if (name[i] == '/' || name[i] == '.')
			has_slash_or_dot = 1;
		if (name[i] == '(')
			has_paren = 1;
	}
	for (size_t i = 0; i + 3 <= n; i++)
		if (memcmp(name + i, ".so", 3) == 0 && (i + 3 == n || name[i + 3] == '.'))
			return FK_NATIVE; /* a library: libc.so.6 */
	if (has_slash_or_dot && !has_paren)
		return FK_JAVA;
	return FK_NATIVE;
}

struct model *model_create(int reverse)
{
	struct model *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->reverse = reverse;
	m->root.name = UINT32_MAX;
	m->root.model = m;
	return m;
}

static void free_node_children(struct model_node *n)
{
	free(n->children);
}

void model_destroy(struct model *m)
{
	if (!m)
		return;
	free_node_children(&m->root);
	for (size_t c = 0; c < m->n_chunks; c++) {
		size_t used = c + 1 == m->n_chunks ? m->used_in_chunk : CHUNK;
		for (size_t i = 0; i < used; i++)
			free_node_children(&m->chunks[c][i]);
		free(m->chunks[c]);
	}
	free(m->chunks);
	for (uint32_t i = 0; i < m->n_names; i++)
		free(m->names[i]);
	free(m->names);
	free(m->name_index);
	free(m->child_index);
	free(m);
}

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static int grow_name_index(struct model *m)
{
	size_t cap = m->name_index_cap ? m->name_index_cap * 2 : 1024;
	uint32_t *idx = calloc(cap, sizeof(*idx));
	if (!idx)
		return -ENOMEM;
	for (uint32_t i = 0; i < m->n_names; i++) {
		size_t s = hash_str(m->names[i]) & (cap - 1);
		while (idx[s])
			s = (s + 1) & (cap - 1);
		idx[s] = i + 1;
	}
	free(m->name_index);
	m->name_index = idx;
	m->name_index_cap = cap;
	return 0;
}

static int intern(struct model *m, const char *name, uint32_t *id)
{
	if ((m->n_names + 1) * 2 > m->name_index_cap && grow_name_index(m))
		return -ENOMEM;
	size_t s = hash_str(name) & (m->name_index_cap - 1);
	while (m->name_index[s]) {
		uint32_t i = m->name_index[s] - 1;
		if (strcmp(m->names[i], name) == 0) {
			*id = i;
			return 0;
		}
		s = (s + 1) & (m->name_index_cap - 1);
	}
	if (m->n_names == m->cap_names) {
		uint32_t cap = m->cap_names ? m->cap_names * 2 : 1024;
		char **grown = realloc(m->names, cap * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		m->names = grown;
		m->cap_names = cap;
	}
	char *copy = strdup(name);
	if (!copy)
		return -ENOMEM;
	m->names[m->n_names] = copy;
	m->name_index[s] = m->n_names + 1;
	*id = m->n_names++;
	return 0;
}

static size_t child_hash(const struct model_node *parent, uint32_t name, int kind, size_t cap)
{
	uint64_t h = ((uint64_t)(uintptr_t)parent * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)name << 8 | (uint64_t)kind);
	h *= 0xC2B2AE3D27D4EB4Full;
	return (size_t)(h ^ (h >> 29)) & (cap - 1);
}

static int grow_child_index(struct model *m)
{
	size_t cap = m->child_index_cap ? m->child_index_cap * 2 : 4096;
	struct model_node **idx = calloc(cap, sizeof(*idx));
	if (!idx)
		return -ENOMEM;
	for (size_t i = 0; i < m->child_index_cap; i++) {
		struct model_node *n = m->child_index[i];
		if (!n)
			continue;
		size_t s = child_hash(n->parent, n->name, n->kind, cap);
		while (idx[s])
			s = (s + 1) & (cap - 1);
		idx[s] = n;
	}
	free(m->child_index);
	m->child_index = idx;
	m->child_index_cap = cap;
	return 0;
}

static struct model_node *new_node(struct model *m)
{
	if (m->n_chunks == 0 || m->used_in_chunk == CHUNK) {
		struct model_node **grown = realloc(m->chunks, (m->n_chunks + 1) * sizeof(*grown));
		if (!grown)
			return NULL;
		m->chunks = grown;
		m->chunks[m->n_chunks] = calloc(CHUNK, sizeof(struct model_node));
		if (!m->chunks[m->n_chunks])
			return NULL;
		m->n_chunks++;
		m->used_in_chunk = 0;
	}
	return &m->chunks[m->n_chunks - 1][m->used_in_chunk++];
}

static struct model_node *child(struct model *m, struct model_node *parent, uint32_t name, int kind)
{
	if ((m->n_nodes + 1) * 2 > m->child_index_cap && grow_child_index(m))
		return NULL;
	size_t s = child_hash(parent, name, kind, m->child_index_cap);
	while (m->child_index[s]) {
		struct model_node *c = m->child_index[s];
		if (c->parent == parent && c->name == name && c->kind == kind)
			return c;
		s = (s + 1) & (m->child_index_cap - 1);
	}
	if (parent->n_children == parent->cap_children) {
		uint32_t cap = parent->cap_children ? parent->cap_children * 2 : 2;
		struct model_node **grown = realloc(parent->children, cap * sizeof(*grown));
		if (!grown)
			return NULL;
		parent->children = grown;
		parent->cap_children = cap;
	}
	struct model_node *c = new_node(m);
	if (!c)
		return NULL;
	c->name = name;
	c->kind = (uint8_t)kind;
	c->parent = parent;
	c->model = m;
	parent->children[parent->n_children++] = c;
	parent->sorted = 0;
	m->child_index[s] = c;
	m->n_nodes++;
	return c;
}

int model_add(struct model *m, const struct model_frame *frames, int n, uint64_t samples, uint64_t weight)
{
	struct model_node *node = &m->root;
	node->total[0] += samples;
	node->total[1] += weight;
	for (int i = 0; i < n; i++) {
		const struct model_frame *f = &frames[m->reverse ? n - 1 - i : i];
		uint32_t id;
		if (intern(m, f->name, &id))
			return -ENOMEM;
		node = child(m, node, id, f->kind);
		if (!node)
			return -ENOMEM;
		node->total[0] += samples;
		node->total[1] += weight;
	}
	node->self[0] += samples;
	node->self[1] += weight;
	return 0;
}

static struct model_node *find_child(struct model *m, struct model_node *parent, uint32_t name, int kind)
{
	if (!m->child_index_cap)
		return NULL;
	size_t s = child_hash(parent, name, kind, m->child_index_cap);
	while (m->child_index[s]) {
		struct model_node *c = m->child_index[s];
		if (c->parent == parent && c->name == name && c->kind == kind)
			return c;
		s = (s + 1) & (m->child_index_cap - 1);
	}
	return NULL;
}

int model_add_base(struct model *m, const struct model_frame *frames, int n, uint64_t samples)
{
	m->has_base = 1;
	m->base_total += samples;
	struct model_node *node = &m->root;
	for (int i = 0; i < n && node; i++) {
		const struct model_frame *f = &frames[m->reverse ? n - 1 - i : i];
		uint32_t id;
		if (intern(m, f->name, &id))
			return -ENOMEM;
		/* the same method may be compiled in one run and inlined in the other: match by name */
		struct model_node *next = find_child(m, node, id, f->kind);
		for (uint32_t c = 0; !next && c < node->n_children; c++)
			if (node->children[c]->name == id)
				next = node->children[c];
		node = next;
	}
	if (node && node != &m->root)
		node->base_self += samples;
	return 0;
}

int model_has_base(const struct model *m)
{
	return m->has_base;
}

uint64_t model_base_total(const struct model *m)
{
	return m->base_total;
}

uint64_t model_node_base_self(const struct model_node *n)
{
	return n->base_self;
}

static int glob(const char *p, const char *s)
{
	/* iterative '*' matching with one backtrack point */
	const char *star = NULL, *resume = NULL;
	while (*s) {
		if (*p == '*') {
			star = p++;
			resume = s;
		} else if (*p == *s) {
			p++;
			s++;
		} else if (star) {
			p = star + 1;
			s = ++resume;
		} else {
			return 0;
		}
	}
	while (*p == '*')
		p++;
	return *p == 0;
}

int model_trace_selected(const struct model_frame *frames, int n, char include[][256], int n_include,
			 char exclude[][256], int n_exclude)
{
	for (int e = 0; e < n_exclude; e++)
		for (int i = 0; i < n; i++)
			if (glob(exclude[e], frames[i].name))
				return 0;
	if (n_include == 0)
		return 1;
	for (int e = 0; e < n_include; e++)
		for (int i = 0; i < n; i++)
			if (glob(include[e], frames[i].name))
				return 1;
	return 0;
}

const struct model_node *model_root(const struct model *m)
{
	return &m->root;
}

static const struct model *sort_model; /* qsort has no context argument */

static int cmp_nodes(const void *a, const void *b)
{
	const struct model_node *x = *(struct model_node *const *)a, *y = *(struct model_node *const *)b;
	int c = strcmp(sort_model->names[x->name], sort_model->names[y->name]);
	return c ? c : (int)x->kind - (int)y->kind;
}

size_t model_node_children(const struct model_node *n, const struct model_node *const **children)
{
	struct model_node *mn = (struct model_node *)n;
	if (!mn->sorted && mn->n_children > 1) {
		sort_model = n->model;
		qsort(mn->children, mn->n_children, sizeof(*mn->children), cmp_nodes);
	}
	mn->sorted = 1;
	*children = (const struct model_node *const *)mn->children;
	return mn->n_children;
}

const char *model_node_name(const struct model_node *n)
{
	if (!n->parent)
		return "";
	return n->model->names[n->name];
}

enum frame_kind model_node_kind(const struct model_node *n)
{
	return (enum frame_kind)n->kind;
}

uint64_t model_node_total(const struct model_node *n, int by_weight)
{
	return n->total[by_weight ? 1 : 0];
}

uint64_t model_node_self(const struct model_node *n, int by_weight)
{
	return n->self[by_weight ? 1 : 0];
}

const struct model_node *model_node_parent(const struct model_node *n)
{
	return n->parent;
}
