/* Java frame and class names from JVMTI signatures, per the naming rules of ARCHITECTURE.md section 4.
 * Pure C; dump time (agent) and flameconv. */
#include "frames.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

struct sbuf {
	char *p;
	size_t len, cap;
	int overflow;
};

static void put(struct sbuf *b, char c)
{
	if (b->len + 1 < b->cap)
		b->p[b->len++] = c;
	else
		b->overflow = 1;
	if (b->cap)
		b->p[b->len < b->cap ? b->len : b->cap - 1] = 0;
}

static void puts_n(struct sbuf *b, const char *s, size_t n)
{
	for (size_t i = 0; i < n && s[i]; i++)
		put(b, s[i]);
}

/* Length of a hidden class suffix to drop: "$$Lambda+0x0000000800c01234" keeps "$$Lambda";
 * "$$Lambda$14/0x0000000800c0a000" keeps "$$Lambda". Returns the length of the kept name. */
static size_t strip_hidden(const char *name, size_t n)
{
	const char *lambda = NULL;
	for (size_t i = 0; i + 8 <= n; i++)
		if (memcmp(name + i, "$$Lambda", 8) == 0)
			lambda = name + i;
	if (lambda)
		return (size_t)(lambda - name) + 8;
	/* other hidden classes: "Foo/0x0000000800c0a000" or "Foo+0x..." */
	for (size_t i = 0; i + 3 < n; i++)
		if ((name[i] == '/' || name[i] == '+') && name[i + 1] == '0' && name[i + 2] == 'x')
			return i;
	return n;
}

/* Appends a class given in internal form (name, n chars, no 'L' ';') per flags. */
static void put_class(struct sbuf *b, const char *name, size_t n, unsigned flags)
{
	n = strip_hidden(name, n);
	size_t start = 0;
	if (flags & FRAMES_SIMPLE) {
		for (size_t i = 0; i < n; i++)
			if (name[i] == '/')
				start = i + 1;
	}
	for (size_t i = start; i < n; i++)
		put(b, name[i] == '/' && (flags & FRAMES_DOT) ? '.' : name[i]);
}

static const char *primitive(char c)
{
	switch (c) {
	case 'Z': return "boolean";
	case 'B': return "byte";
	case 'C': return "char";
	case 'S': return "short";
	case 'I': return "int";
	case 'J': return "long";
	case 'F': return "float";
	case 'D': return "double";
	case 'V': return "void";
	}
	return NULL;
}

int frames_java_name(const char *class_sig, const char *method, const char *method_sig, unsigned flags, char *out,
		     size_t outlen)
{
	struct sbuf b = {out, 0, outlen, 0};
	if (outlen)
		out[0] = 0;
	const char *c = class_sig ? class_sig : "";
	size_t n = strlen(c);
	if (n >= 2 && c[0] == 'L' && c[n - 1] == ';')
		put_class(&b, c + 1, n - 2, flags);
	else if (n && c[0] == '[') {
		char tmp[512];
		frames_class_name(c, tmp, sizeof(tmp));
		puts_n(&b, tmp, sizeof(tmp));
	} else {
		put_class(&b, c, n, flags);
	}
	put(&b, '.');
	puts_n(&b, method ? method : "", (size_t)-1);
	if ((flags & FRAMES_SIG) && method_sig) {
		/* ';' separates frames in collapsed output */
		for (const char *p = method_sig; *p; p++)
			put(&b, *p == ';' ? '|' : (*p == '/' && (flags & FRAMES_DOT) ? '.' : *p));
	}
	return b.overflow ? -ENAMETOOLONG : 0;
}

int frames_class_name(const char *class_sig, char *out, size_t outlen)
{
	struct sbuf b = {out, 0, outlen, 0};
	if (outlen)
		out[0] = 0;
	const char *c = class_sig ? class_sig : "";
	int dims = 0;
	while (*c == '[') {
		dims++;
		c++;
	}
	size_t n = strlen(c);
	const char *prim = n == 1 ? primitive(c[0]) : NULL;
	if (prim)
		puts_n(&b, prim, (size_t)-1);
	else if (n >= 2 && c[0] == 'L' && c[n - 1] == ';')
		put_class(&b, c + 1, n - 2, FRAMES_DOT);
	else
		put_class(&b, c, n, FRAMES_DOT);
	for (int i = 0; i < dims; i++) {
		put(&b, '[');
		put(&b, ']');
	}
	return b.overflow ? -ENAMETOOLONG : 0;
}
