/* ELF64 images in memory at dump time: sections (zlib / zstd compressed ones too), build-id and
 * .gnu_debuglink, function symbols and x86_64 PLT stubs. Every read is bounds-checked against the image,
 * so truncated or corrupt files are rejected, never followed. Never in a signal handler. */
#ifndef ELFREAD_H
#define ELFREAD_H

#include <elf.h>
#include <stddef.h>
#include <stdint.h>

struct elfread_image {
	const unsigned char *base;
	size_t size;
	Elf64_Ehdr eh;       /* a copy: the image need not be aligned */
	size_t shoff, shnum; /* section header table */
	size_t shstrndx;
};

/* Called per symbol: start is the file's virtual address, name is valid only during the call. Return
 * non-zero to stop. */
typedef int (*elfread_sym_fn)(void *arg, uint64_t start, uint64_t size, const char *name);

/* Checks that base[0..size) is a 64-bit ELF file with a sane section header table. The image is not
 * copied and must stay mapped. Returns 0, -EINVAL. */
int elfread_open(struct elfread_image *img, const void *base, size_t size);

/* Copies section i's header into *out. Returns 0, -ENOENT (no such section). */
int elfread_shdr(const struct elfread_image *img, size_t i, Elf64_Shdr *out);

/* Index of the first section named name (or, with name NULL, of type type). Returns it or -ENOENT. */
long elfread_find(const struct elfread_image *img, const char *name, uint32_t type);

/* Points *data at section i's contents and sets *size. A SHF_COMPRESSED section is inflated into a
 * malloc'd buffer returned in *owned (free it; NULL otherwise). Returns 0, -ENOENT (no contents: missing
 * or SHT_NOBITS), -EINVAL (out of the image, corrupt), -ENOTSUP (unknown compression, or zstd without
 * libzstd.so.1), -ENOMEM. */
int elfread_section(const struct elfread_image *img, size_t i, const void **data, size_t *size, void **owned);

/* Inflates a compressed section's bytes (Elf64_Chdr, then the stream) into a malloc'd *out of exactly
 * ch_size bytes. Returns 0, -EINVAL (truncated, corrupt, wrong size), -ENOTSUP, -ENOMEM. */
int elfread_decompress(const void *sec, size_t size, void **out, size_t *out_size);

/* The NT_GNU_BUILD_ID note as lowercase hex in hex[hexlen]. Returns the id's length in bytes, -ENOENT,
 * -EINVAL, -ENAMETOOLONG. */
int elfread_build_id(const struct elfread_image *img, char *hex, size_t hexlen);

/* .gnu_debuglink: the debug file's name and the CRC32 of its contents. Returns 0, -ENOENT, -EINVAL. */
int elfread_debuglink(const struct elfread_image *img, char *name, size_t namelen, uint32_t *crc);

/* /usr/lib/debug/.build-id/xx/rest.debug for a hex build-id (at least 2 bytes). Returns 0, -EINVAL,
 * -ENAMETOOLONG. */
int elfread_build_id_path(const char *hex, char *out, size_t outlen);

#define ELFREAD_DEBUGLINK_PLACES 3

/* The i-th place GDB looks for a debuglink name of the object at obj_path: <dir>/<name>,
 * <dir>/.debug/<name>, /usr/lib/debug/<dir>/<name>. Returns 0, -ENOENT (i past the last), -EINVAL (a
 * name with '/' or empty), -ENAMETOOLONG. */
int elfread_debuglink_path(const char *obj_path, const char *name, int i, char *out, size_t outlen);

/* CRC32 (zlib's, as .gnu_debuglink uses) of a whole file. Returns 0, -errno. */
int elfread_file_crc(const char *path, uint32_t *crc);

/* Calls fn for every defined function symbol (STT_FUNC, STT_GNU_IFUNC, non-zero address) of the first
 * section of type SHT_SYMTAB or SHT_DYNSYM, compressed or not. Returns the number of symbols, -ENOENT (no
 * such section or it has no contents), or an elfread_section error. */
long elfread_symbols(const struct elfread_image *img, uint32_t type, elfread_sym_fn fn, void *arg);

/* Calls fn for every x86_64 PLT stub (.plt, .plt.sec, .plt.got) whose target the relocations name, as
 * "name@plt", size one entry. Returns the number of stubs named (0 on other machines). */
long elfread_plt(const struct elfread_image *img, elfread_sym_fn fn, void *arg);

#endif
