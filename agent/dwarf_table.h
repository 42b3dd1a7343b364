/* Compact DWARF unwind tables (x86_64) as the signal handler reads them: per loaded object a sorted array
 * of rows "from this pc on: CFA = rsp|rbp + off, return address at CFA-8, rbp saved at CFA+k or kept".
 * dwarf.c builds and publishes them outside the handler. Signal-safe: every function here may run inside
 * a signal handler. */
#ifndef DWARF_TABLE_H
#define DWARF_TABLE_H

#include <stdatomic.h>
#include <stdint.h>

/* Row kinds (low 3 bits of dwarf_row.kind). */
enum dwarf_rule {
	DWARF_CFA_RSP = 0, /* CFA = rsp + cfa */
	DWARF_CFA_RBP = 1, /* CFA = rbp + cfa */
	DWARF_CFA_PLT = 2, /* the PLT expression: CFA = rsp + 8 + (((pc & 15) >= cfa) ? 8 : 0) */
	DWARF_NONE = 3,    /* no CFI covers this pc: the walker takes one frame-pointer step */
	DWARF_UNKNOWN = 4, /* a rule the table cannot express (DWARF expression, RA elsewhere): stop */
	DWARF_END = 5,     /* return address undefined: the outermost frame (_start, clone) */
	DWARF_SIGNAL = 6,  /* a signal trampoline (__restore_rt): the interrupted registers are in the
			    * ucontext_t at sp (rbp at sp+120, rsp at sp+160, rip at sp+168) */
};
#define DWARF_RULE_MASK 0x07
#define DWARF_FP_LOST 0x10   /* rbp cannot be recovered in the caller */
#define DWARF_CFA_X8 0x20    /* cfa is in units of 8 bytes (frames larger than 64 KiB) */

/* 8 bytes: the row holds from loc up to the next row's loc. */
struct dwarf_row {
	uint32_t loc;    /* pc - object lo */
	uint16_t cfa;    /* CFA offset (bytes, or 8-byte units with DWARF_CFA_X8) */
	int8_t fp;       /* rbp saved at CFA + 8 * fp; 0: rbp unchanged */
	uint8_t kind;    /* enum dwarf_rule | DWARF_FP_LOST | DWARF_CFA_X8 */
};

/* One loaded object's executable range and its rows (rows[0].loc == 0; the last row ends at hi). */
struct dwarf_object {
	uintptr_t lo, hi;
	const struct dwarf_row *rows;
	uint32_t n_rows;
};

/* A published, immutable set of objects sorted by lo, non-overlapping. */
struct dwarf_set {
	uint32_t n;
	struct dwarf_object objects[];
};

/* The set the handler reads (release store by the builder, acquire load by the handler); NULL = none. */
extern _Atomic(const struct dwarf_set *) dwarf_table_current;
/* Set by the handler when it met a pc outside every object (a library loaded after the tables were
 * built, or anonymous code); the builder's thread checks for new objects and clears it. On the flag's
 * 0 -> 1 transition the handler also writes 1 to dwarf_table_wake_fd (an eventfd the builder's thread
 * polls; opened once, never closed, so the handler cannot write to a recycled descriptor; -1: none). */
extern _Atomic int dwarf_table_miss;
extern _Atomic int dwarf_table_wake_fd;

/* [SIG] The row covering pc in set s, or NULL when no object covers pc (then sets dwarf_table_miss). */
const struct dwarf_row *dwarf_table_find(const struct dwarf_set *s, uintptr_t pc);

#endif
