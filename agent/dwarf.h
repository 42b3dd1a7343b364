/* DWARF call-frame information (.eh_frame) -> the compact unwind tables of dwarf_table.h, for every loaded
 * ELF object, kept current while a session runs (libraries loaded later get tables too). Runs outside
 * signal handlers only. */
#ifndef DWARF_H
#define DWARF_H

#include <stddef.h>
#include <stdint.h>

#include "dwarf_table.h"

struct dwarf_stats {
	uint32_t objects;     /* objects in the published set */
	uint64_t fdes;        /* FDEs turned into rows */
	uint64_t rows;        /* rows in the published set */
	uint64_t bytes;       /* memory of the published set: rows + object array */
	uint64_t unknown;     /* rows with a rule the walker cannot follow (DWARF expressions) */
	uint64_t largest_bytes;
	char largest[64];     /* the object with the largest table (base name) */
};

/* Builds the rows of one object from its .eh_frame image [eh_frame, eh_frame + len) as mapped in this
 * process (pc-relative pointers are resolved against these addresses), covering pcs [lo, hi). With hdr
 * (the .eh_frame_hdr image, hdr_len bytes) FDEs are found through its search table, else by walking
 * .eh_frame up to its zero terminator. Every read is bounds-checked: a truncated or malformed CIE/FDE
 * structure rejects the object (-EINVAL, *out empty); an unknown CFA instruction only turns the rest of
 * that FDE into DWARF_UNKNOWN rows. On success out->rows is malloc'd (caller frees; NULL when no FDE
 * covers [lo, hi)). 0, -EINVAL or -ENOMEM. */
int dwarf_build_object(const uint8_t *eh_frame, size_t len, const uint8_t *hdr, size_t hdr_len, uintptr_t lo,
		       uintptr_t hi, struct dwarf_object *out, struct dwarf_stats *stats);

/* Makes the published set match the loaded objects (dl_iterate_phdr): builds tables for objects not seen
 * before, keeps the others, publishes a new set (release store) when anything changed. Replaced sets and
 * tables of unloaded objects are retired, not freed (a handler may still read them). Thread-safe.
 * Returns 1 when a new set was published, 0 when nothing changed, -errno on failure. */
int dwarf_refresh(void);

/* Session start with cstack=dwarf: dwarf_refresh, then a background thread that refreshes as soon as
 * the handler met a pc outside every table (dwarf_table_miss, dwarf_table_wake_fd) and every 100 ms,
 * when the loader's counters say objects came or went. The wake-up eventfd is opened once and kept for
 * the life of the process. 0 or -errno (tables missing is not fatal: the walker then steps by frame
 * pointers). */
int dwarf_start(void);

/* Session stop: joins the background thread and frees retired tables. Call only after
 * sampler_quiesce() (no handler may be reading them). The published set stays for the next session. */
void dwarf_stop(void);

/* Figures of the published set. */
void dwarf_get_stats(struct dwarf_stats *out);

#endif
