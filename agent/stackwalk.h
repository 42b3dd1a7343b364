/* Native frames of the interrupted thread by frame pointers. Signal-safe: every function here may run
 * inside a signal handler. */
#ifndef STACKWALK_H
#define STACKWALK_H

#include <stdint.h>

/* Walks from ucontext outwards, writing return addresses leaf first (pcs[0] is the interrupted pc) until
 * a pc enters [code_lo, code_hi) (the JVM's code cache: Java frames begin there), the chain ends or a
 * check fails (alignment, direction, a frame larger than 8 MiB). Every word is read with
 * process_vm_readv, which fails instead of faulting on unmapped memory, so a broken chain cannot crash
 * the process. Returns the number of pcs (0 when the interrupted pc is already in the code cache);
 * *reached_java is set when the walk stopped at the code cache. */
int stackwalk_fp(void *ucontext, uintptr_t code_lo, uintptr_t code_hi, uint64_t *pcs, int max, int *reached_java);

#endif
