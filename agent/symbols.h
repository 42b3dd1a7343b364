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

/* The Debian package with debug symbols for the installed file at path: "libc6-dbg", "openjdk-17-dbg",
 * else "<owner>-dbgsym" (the debian-debug archive), found through dpkg's file lists (slow: reads them
 * all). Returns 1 for a -dbgsym name, 0 for a main-archive one, -ENOENT when no package owns path. */
int symbols_debug_package(const char *path, char *out, size_t outlen);

/* Forgets loaded files (their mappings may have changed). */
void symbols_reset(void);

#endif
