/* Native symbols at dump time: the ELF .symtab/.dynsym of every mapped executable file, looked up by
 * address; C++ names demangled with the process's own __cxa_demangle. Never in a signal handler. */
#ifndef SYMBOLS_H
#define SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

/* Names pc: "G1RemSet::refine_card(...)" (FK_CPP), "burn_loop" (FK_NATIVE), "[libfoo.so+0x1234]" for
 * an address without a symbol in a known file, "[unknown_native]" elsewhere. lib_prefix: "libjvm.so`"
 * before the name. Returns the kind; writes out. Loads files lazily; thread-safe. */
enum frame_kind symbols_name(uint64_t pc, int lib_prefix, char *out, size_t outlen);

/* Forgets loaded files (their mappings may have changed). */
void symbols_reset(void);

#endif
