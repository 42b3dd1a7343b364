/* Kernel symbols from /proc/kallsyms, to name kernel frames at dump time. Pure C; never in a signal
 * handler. */
#ifndef KALLSYMS_H
#define KALLSYMS_H

#include <stddef.h>
#include <stdint.h>

struct kallsyms;

/* Parses kallsyms text ("ffffffff81000000 T _stext", module symbols with "\t[mod]" after the name):
 * keeps text symbols (types t, T, w, W), sorted by address. Copies what it needs from text.
 * NULL on ENOMEM. */
struct kallsyms *kallsyms_parse(const char *text, size_t len);

/* Reads and parses path (normally "/proc/kallsyms"). NULL with errno set when it cannot be read. */
struct kallsyms *kallsyms_load(const char *path);

void kallsyms_free(struct kallsyms *k);

/* Whether the symbols are unusable: none at all, or every address zero (kernel.kptr_restrict, or a
 * process without CAP_SYSLOG). */
int kallsyms_hidden(const struct kallsyms *k);

/* Number of text symbols kept. */
size_t kallsyms_count(const struct kallsyms *k);

/* The name of the text symbol containing addr (the nearest one at or below it, no further than
 * KALLSYMS_MAX_SIZE), or NULL. The string lives as long as k. */
const char *kallsyms_find(const struct kallsyms *k, uint64_t addr);

/* Distance beyond a symbol's start at which an address is no longer taken to be inside it (kallsyms
 * has no sizes; the largest kernel functions are far smaller). */
#define KALLSYMS_MAX_SIZE (1u << 20)

#endif
