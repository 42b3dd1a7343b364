/* Test helper: compresses named sections of an ELF64 file in place (SHF_COMPRESSED, Elf64_Chdr + zlib or
 * zstd stream), which binutils 2.40 only does for .debug_* sections; the tests need a compressed .symtab.
 * Usage: elfcompress [-t zlib|zstd] FILE SECTION... */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#ifndef ELFCOMPRESS_ZSTD
#define ELFCOMPRESS_ZSTD 2
#endif

/* the compressed stream of src into dst (capacity *n); returns 0 and sets *n */
static int squeeze(int zstd, const unsigned char *src, size_t len, unsigned char *dst, size_t *n)
{
	if (!zstd) {
		uLongf out = *n;
		if (compress2(dst, &out, src, len, 9) != Z_OK)
			return -1;
		*n = out;
		return 0;
	}
	void *h = dlopen("libzstd.so.1", RTLD_LAZY);
	typedef size_t (*compress_fn)(void *, size_t, const void *, size_t, int);
	compress_fn zc = h ? (compress_fn)dlsym(h, "ZSTD_compress") : NULL;
	unsigned (*bad)(size_t) = h ? (unsigned (*)(size_t))dlsym(h, "ZSTD_isError") : NULL;
	if (!zc || !bad) {
		fprintf(stderr, "elfcompress: libzstd.so.1 not found\n");
		return -1;
	}
	size_t r = zc(dst, *n, src, len, 19);
	if (bad(r))
		return -1;
	*n = r;
	return 0;
}

int main(int argc, char **argv)
{
	int zstd = 0, a = 1;
	if (argc > 2 && !strcmp(argv[1], "-t")) {
		zstd = !strcmp(argv[2], "zstd");
		a = 3;
	}
	if (argc - a < 2) {
		fprintf(stderr, "usage: elfcompress [-t zlib|zstd] FILE SECTION...\n");
		return 1;
	}
	const char *path = argv[a];
	FILE *fp = fopen(path, "rb");
	if (!fp) {
		perror(path);
		return 1;
	}
	fseek(fp, 0, SEEK_END);
	long size = ftell(fp);
	rewind(fp);
	unsigned char *buf = malloc((size_t)size);
	if (!buf || fread(buf, 1, (size_t)size, fp) != (size_t)size) {
		fprintf(stderr, "elfcompress: cannot read %s\n", path);
		return 1;
	}
	fclose(fp);
	Elf64_Ehdr *eh = (Elf64_Ehdr *)buf;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64) {
		fprintf(stderr, "elfcompress: %s: not an ELF64 file\n", path);
		return 1;
	}
	Elf64_Shdr *sh = (Elf64_Shdr *)(buf + eh->e_shoff);
	const char *names = (const char *)buf + sh[eh->e_shstrndx].sh_offset;
	for (int k = a + 1; k < argc; k++) {
		int i;
		for (i = 1; i < eh->e_shnum && strcmp(names + sh[i].sh_name, argv[k]); i++)
			;
		if (i == eh->e_shnum || sh[i].sh_type == SHT_NOBITS || (sh[i].sh_flags & SHF_COMPRESSED)) {
			fprintf(stderr, "elfcompress: %s: no uncompressed section %s\n", path, argv[k]);
			return 1;
		}
		size_t cap = sh[i].sh_size + 1024, n = cap;
		unsigned char *z = malloc(cap);
		if (!z || squeeze(zstd, buf + sh[i].sh_offset, sh[i].sh_size, z, &n) != 0 ||
		    sizeof(Elf64_Chdr) + n > sh[i].sh_size) {
			fprintf(stderr, "elfcompress: %s: cannot compress %s\n", path, argv[k]);
			return 1;
		}
		Elf64_Chdr ch = {.ch_type = zstd ? ELFCOMPRESS_ZSTD : ELFCOMPRESS_ZLIB, .ch_size = sh[i].sh_size,
				 .ch_addralign = sh[i].sh_addralign};
		/* the compressed form is smaller: it stays at the section's offset, the rest is slack */
		memset(buf + sh[i].sh_offset, 0, sh[i].sh_size);
		memcpy(buf + sh[i].sh_offset, &ch, sizeof(ch));
		memcpy(buf + sh[i].sh_offset + sizeof(ch), z, n);
		sh[i].sh_size = sizeof(ch) + n;
		sh[i].sh_flags |= SHF_COMPRESSED;
		sh[i].sh_addralign = sh[i].sh_offset % 8 ? 1 : 8;
		free(z);
	}
	fp = fopen(path, "wb");
	if (!fp || fwrite(buf, 1, (size_t)size, fp) != (size_t)size || fclose(fp) != 0) {
		fprintf(stderr, "elfcompress: cannot write %s\n", path);
		return 1;
	}
	return 0;
}
