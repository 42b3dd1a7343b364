/* Kernel text symbols from /proc/kallsyms: parse, sort by address, binary search. Dump time (agent)
 * and unit tests; never in a signal handler. */
#include "kallsyms.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct ksym {
	uint64_t addr;
	uint32_t name; /* offset into names */
	uint32_t seq;  /* order in the file: equal addresses keep it (stable sort) */
};

struct kallsyms {
	struct ksym *syms;
	size_t n;
	char *names;
	int all_zero;
};

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int cmp_sym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

struct kallsyms *kallsyms_parse(const char *text, size_t len)
{
	struct kallsyms *k = calloc(1, sizeof(*k));
	if (!k)
		return NULL;
	size_t cap = 0, names_len = 0;
	/* names are at most the whole text plus a NUL per line */
	k->names = malloc(len + 1);
	if (!k->names)
		goto fail;
	k->all_zero = 1;
	size_t i = 0;
	while (i < len) {
		size_t end = i;
		while (end < len && text[end] != '\n')
			end++;
		const char *p = text + i, *e = text + end;
		i = end + 1;
		uint64_t addr = 0;
		int digits = 0, v;
		while (p < e && (v = hexval(*p)) >= 0 && digits < 16) {
			addr = addr << 4 | (uint64_t)v;
			p++;
			digits++;
		}
		if (!digits || p >= e || *p != ' ')
			continue;
		p++;
		if (p + 2 > e || p[1] != ' ')
			continue;
		char type = p[0];
		p += 2;
		const char *name = p;
		while (p < e && *p != '\t' && *p != ' ')
			p++;
		size_t nl = (size_t)(p - name);
		if (!nl)
			continue;
		if (addr)
			k->all_zero = 0;
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		if (k->n == cap) {
			size_t ncap = cap ? cap * 2 : 4096;
			struct ksym *g = realloc(k->syms, ncap * sizeof(*g));
			if (!g)
				goto fail;
			k->syms = g;
			cap = ncap;
		}
		memcpy(k->names + names_len, name, nl);
		k->names[names_len + nl] = 0;
		k->syms[k->n] = (struct ksym){addr, (uint32_t)names_len, (uint32_t)k->n};
		k->n++;
		names_len += nl + 1;
	}
	if (k->n)
		qsort(k->syms, k->n, sizeof(*k->syms), cmp_sym);
	/* kept for the session: give back what data symbols and addresses took */
	char *trimmed = realloc(k->names, names_len + 1);
	if (trimmed)
		k->names = trimmed;
	return k;
fail:
	kallsyms_free(k);
	errno = ENOMEM;
	return NULL;
}

struct kallsyms *kallsyms_load(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	/* /proc files report size 0: read until the end */
	size_t cap = 1 << 20, len = 0;
	char *buf = malloc(cap);
	struct kallsyms *k = NULL;
	if (!buf)
		goto out;
	for (;;) {
		if (len == cap) {
			char *g = realloc(buf, cap * 2);
			if (!g)
				goto out;
			buf = g;
			cap *= 2;
		}
		ssize_t r = read(fd, buf + len, cap - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			goto out;
		if (r == 0)
			break;
		len += (size_t)r;
	}
	k = kallsyms_parse(buf, len);
out:
	{
		int e = errno;
		free(buf);
		close(fd);
		errno = e;
	}
	return k;
}

void kallsyms_free(struct kallsyms *k)
{
	if (!k)
		return;
	free(k->syms);
	free(k->names);
	free(k);
}

int kallsyms_hidden(const struct kallsyms *k)
{
	return !k || !k->n || k->all_zero;
}

size_t kallsyms_count(const struct kallsyms *k)
{
	return k ? k->n : 0;
}

const char *kallsyms_find(const struct kallsyms *k, uint64_t addr)
{
	if (kallsyms_hidden(k) || addr < k->syms[0].addr)
		return NULL;
	/* the last symbol at or below addr; among equal addresses the last one listed */
	size_t lo = 0, hi = k->n;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (k->syms[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	if (addr - k->syms[lo].addr >= KALLSYMS_MAX_SIZE)
		return NULL;
	return k->names + k->syms[lo].name;
}
