/* Native frames of the interrupted thread by frame pointers or DWARF unwind tables. Signal-safe: every
 * function here may run inside a signal handler. */
#ifndef STACKWALK_H
#define STACKWALK_H

#include <stdatomic.h>
#include <stdint.h>

/* Where a walk ended. */
struct stackwalk_end {
	int reached_java;     /* the walk stopped at the code cache */
	uintptr_t pc, sp, fp; /* then: the first code-cache frame's pc (a return address), sp and rbp */
};

/* Walks from ucontext outwards, writing return addresses leaf first (pcs[0] is the interrupted pc) until
 * a pc enters [code_lo, code_hi) (the JVM's code cache: Java frames begin there), the chain ends or a
 * check fails (alignment, direction, a frame larger than 8 MiB). Every word is read with
 * process_vm_readv, which fails instead of faulting on unmapped memory, so a broken chain cannot crash
 * the process. Returns the number of pcs (0 when the interrupted pc is already in the code cache);
 * end tells whether the walk stopped at the code cache and the context there. */
int stackwalk_fp(void *ucontext, uintptr_t code_lo, uintptr_t code_hi, uint64_t *pcs, int max,
		 struct stackwalk_end *end);

/* Same contract as stackwalk_fp, but each frame is unwound by the published DWARF tables
 * (dwarf_table.h): CFA from rsp or rbp, return address at CFA-8, rbp restored where the table says it was
 * saved. A pc that no table covers (anonymous code, an object without .eh_frame) takes one frame-pointer
 * step. Stops at the code cache, at the outermost frame (return address undefined), or at the first
 * failed check or rule it cannot follow (counted in stackwalk_stats.failed). */
int stackwalk_dwarf(void *ucontext, uintptr_t code_lo, uintptr_t code_hi, uint64_t *pcs, int max,
		 struct stackwalk_end *end);

/* Counters of stackwalk_dwarf since the process started (relaxed atomics). */
struct stackwalk_stats {
	_Atomic uint64_t walks;    /* walks started */
	_Atomic uint64_t failed;   /* walks that stopped at a failed check or an unknown rule */
	_Atomic uint64_t fp_steps; /* frames stepped by frame pointer for lack of a table */
};
extern struct stackwalk_stats stackwalk_stats;

#endif
