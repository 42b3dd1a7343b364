/* Unit tests: ELF reading for symbols (agent/elfread.c): compressed .symtab/.strtab (zlib, zstd when
 * libzstd.so.1 is there), build-id and .gnu_debuglink with their debug-file paths and CRC, PLT stubs of
 * this very program, and truncated or corrupt images rejected without crashing. */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "check.h"
#include "elfread.h"
#include "symbols.h"

#define CMP_NONE 0
#define CMP_ZLIB 1
#define CMP_ZSTD 2

struct image {
	unsigned char buf[16384];
	size_t size;
	Elf64_Shdr sh[8];
	int n;
	char shstr[256];
	size_t shstr_len;
};

static const unsigned char build_id[20] = {0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8,
					   9, 10, 11, 12, 13, 14, 15, 16};

static size_t (*zstd_compress)(void *, size_t, const void *, size_t, int);

static size_t squeeze(int how, const void *src, size_t len, unsigned char *dst, size_t cap)
{
	if (how == CMP_ZLIB) {
		uLongf n = cap;
		return compress2(dst, &n, src, len, 9) == Z_OK ? n : 0;
	}
	return zstd_compress(dst, cap, src, len, 3);
}

static void add(struct image *im, const char *name, uint32_t type, uint64_t flags, const void *data, size_t len,
		int how, uint32_t link, uint64_t entsize)
{
	Elf64_Shdr *s = &im->sh[im->n++];
	memset(s, 0, sizeof(*s));
	s->sh_name = (uint32_t)im->shstr_len;
	memcpy(im->shstr + im->shstr_len, name, strlen(name) + 1);
	im->shstr_len += strlen(name) + 1;
	s->sh_type = type;
	s->sh_flags = flags;
	s->sh_link = link;
	s->sh_entsize = entsize;
	s->sh_addralign = 8;
	im->size = (im->size + 7) & ~(size_t)7;
	s->sh_offset = im->size;
	if (how == CMP_NONE) {
		memcpy(im->buf + im->size, data, len);
		s->sh_size = len;
	} else {
		Elf64_Chdr ch = {.ch_type = how == CMP_ZLIB ? ELFCOMPRESS_ZLIB : 2, .ch_size = len, .ch_addralign = 8};
		memcpy(im->buf + im->size, &ch, sizeof(ch));
		size_t n = squeeze(how, data, len, im->buf + im->size + sizeof(ch), sizeof(im->buf) - im->size - 1024);
		s->sh_size = sizeof(ch) + n;
		s->sh_flags |= SHF_COMPRESSED;
	}
	im->size += s->sh_size;
}

/* a debug-file-like image: build-id note, debuglink, .symtab + .strtab (compressed with how) */
static void begin(struct image *im)
{
	memset(im, 0, sizeof(*im));
	im->size = sizeof(Elf64_Ehdr);
	im->n = 1; /* section 0 is null */
	im->shstr_len = 1;
}

static void finish(struct image *im);

static void build(struct image *im, int how)
{
	begin(im);

	unsigned char note[sizeof(Elf64_Nhdr) + 4 + sizeof(build_id)];
	Elf64_Nhdr nh = {.n_namesz = 4, .n_descsz = sizeof(build_id), .n_type = NT_GNU_BUILD_ID};
	memcpy(note, &nh, sizeof(nh));
	memcpy(note + sizeof(nh), "GNU", 4);
	memcpy(note + sizeof(nh) + 4, build_id, sizeof(build_id));
	add(im, ".note.gnu.build-id", SHT_NOTE, SHF_ALLOC, note, sizeof(note), CMP_NONE, 0, 0);

	unsigned char link[24] = "libfoo.so.debug"; /* 15 chars + NUL = 16: CRC at 16 */
	uint32_t crc = 0x12345678;
	memcpy(link + 16, &crc, 4);
	add(im, ".gnu_debuglink", SHT_PROGBITS, 0, link, 20, CMP_NONE, 0, 0);

	static const char strtab[] = "\0burn_loop\0_ZN3Foo3barEv\0data_object\0undefined_fn";
	Elf64_Sym syms[5];
	memset(syms, 0, sizeof(syms));
	syms[1] = (Elf64_Sym){.st_name = 1, .st_info = ELF64_ST_INFO(STB_LOCAL, STT_FUNC), .st_shndx = 9,
			      .st_value = 0x1100, .st_size = 0x40};
	syms[2] = (Elf64_Sym){.st_name = 11, .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC), .st_shndx = 9,
			      .st_value = 0x1200, .st_size = 0x80};
	syms[3] = (Elf64_Sym){.st_name = 25, .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_OBJECT), .st_shndx = 9,
			      .st_value = 0x4000, .st_size = 8};
	syms[4] = (Elf64_Sym){.st_name = 37, .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC), .st_shndx = SHN_UNDEF};
	int symtab = im->n;
	add(im, ".symtab", SHT_SYMTAB, 0, syms, sizeof(syms), how, (uint32_t)symtab + 1, sizeof(Elf64_Sym));
	add(im, ".strtab", SHT_STRTAB, 0, strtab, sizeof(strtab), how, 0, 0);
	finish(im);
}

/* .shstrtab, the section headers and the ELF header */
static void finish(struct image *im)
{
	int shstrndx = im->n;
	im->shstr_len += strlen(".shstrtab") + 1;
	memcpy(im->shstr + im->shstr_len - strlen(".shstrtab") - 1, ".shstrtab", strlen(".shstrtab") + 1);
	Elf64_Shdr *s = &im->sh[im->n++];
	memset(s, 0, sizeof(*s));
	s->sh_name = (uint32_t)(im->shstr_len - strlen(".shstrtab") - 1);
	s->sh_type = SHT_STRTAB;
	s->sh_offset = im->size;
	s->sh_size = im->shstr_len;
	memcpy(im->buf + im->size, im->shstr, im->shstr_len);
	im->size += im->shstr_len;

	im->size = (im->size + 7) & ~(size_t)7;
	Elf64_Ehdr eh;
	memset(&eh, 0, sizeof(eh));
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_DYN;
	eh.e_machine = EM_X86_64;
	eh.e_shoff = im->size;
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = (uint16_t)im->n;
	eh.e_shstrndx = (uint16_t)shstrndx;
	memcpy(im->buf, &eh, sizeof(eh));
	memcpy(im->buf + im->size, im->sh, (size_t)im->n * sizeof(Elf64_Shdr));
	im->size += (size_t)im->n * sizeof(Elf64_Shdr);
}

struct seen {
	char names[8][64];
	uint64_t start[8], size[8];
	int n;
};

static int collect(void *arg, uint64_t start, uint64_t size, const char *name)
{
	struct seen *s = arg;
	if (s->n < 8) {
		snprintf(s->names[s->n], sizeof(s->names[0]), "%s", name);
		s->start[s->n] = start;
		s->size[s->n] = size;
	}
	s->n++;
	return 0;
}

static void test_compressed(int how)
{
	static struct image im;
	build(&im, how);
	struct elfread_image img;
	CHECK_INT(0, elfread_open(&img, im.buf, im.size));
	Elf64_Shdr sh;
	long i = elfread_find(&img, ".symtab", 0);
	CHECK(i > 0 && elfread_shdr(&img, (size_t)i, &sh) == 0 && (sh.sh_flags & SHF_COMPRESSED));
	struct seen s = {0};
	CHECK_INT(2, elfread_symbols(&img, SHT_SYMTAB, collect, &s));
	CHECK_STR("burn_loop", s.names[0]);
	CHECK_INT(0x1100, s.start[0]);
	CHECK_INT(0x40, s.size[0]);
	CHECK_STR("_ZN3Foo3barEv", s.names[1]);
	CHECK_INT(-ENOENT, elfread_symbols(&img, SHT_DYNSYM, collect, &s));

	char hex[64];
	CHECK_INT(20, elfread_build_id(&img, hex, sizeof(hex)));
	CHECK_STR("deadbeef0102030405060708090a0b0c0d0e0f10", hex);
	CHECK_INT(-ENAMETOOLONG, elfread_build_id(&img, hex, 40));
	char name[64];
	uint32_t crc = 0;
	CHECK_INT(0, elfread_debuglink(&img, name, sizeof(name), &crc));
	CHECK_STR("libfoo.so.debug", name);
	CHECK_INT(0x12345678, crc);

	/* a corrupt stream, a wrong inflated size, an unknown algorithm, an absurd size: refused */
	static unsigned char bad[sizeof(im.buf)];
	Elf64_Chdr ch;
	memcpy(bad, im.buf, im.size);
	bad[sh.sh_offset + sizeof(ch) + 4] ^= 0x5a;
	bad[sh.sh_offset + sizeof(ch) + 5] ^= 0xa5;
	CHECK_INT(0, elfread_open(&img, bad, im.size));
	CHECK(elfread_symbols(&img, SHT_SYMTAB, collect, &s) < 0);
	memcpy(bad, im.buf, im.size);
	memcpy(&ch, bad + sh.sh_offset, sizeof(ch));
	ch.ch_size += 8;
	memcpy(bad + sh.sh_offset, &ch, sizeof(ch));
	CHECK_INT(-EINVAL, elfread_symbols(&img, SHT_SYMTAB, collect, &s));
	ch.ch_size -= 16;
	memcpy(bad + sh.sh_offset, &ch, sizeof(ch));
	CHECK_INT(-EINVAL, elfread_symbols(&img, SHT_SYMTAB, collect, &s));
	ch.ch_size = 1ull << 40;
	memcpy(bad + sh.sh_offset, &ch, sizeof(ch));
	CHECK_INT(-EINVAL, elfread_symbols(&img, SHT_SYMTAB, collect, &s));
	ch.ch_size = sizeof(Elf64_Sym) * 5;
	ch.ch_type = 99;
	memcpy(bad + sh.sh_offset, &ch, sizeof(ch));
	CHECK_INT(-ENOTSUP, elfread_symbols(&img, SHT_SYMTAB, collect, &s));
	void *out;
	size_t out_size;
	CHECK_INT(-EINVAL, elfread_decompress(&ch, sizeof(ch) - 1, &out, &out_size));
	CHECK(out == NULL);
}

/* every truncation and many random byte flips: errors or fewer symbols, never a crash or an overread
 * (run under SANITIZE=address to see the latter) */
static void test_corrupt(void)
{
	static struct image im;
	build(&im, CMP_ZLIB);
	int opened = 0;
	for (size_t len = 0; len < im.size; len++) {
		unsigned char *copy = malloc(len ? len : 1);
		memcpy(copy, im.buf, len);
		struct elfread_image img;
		if (elfread_open(&img, copy, len) == 0) {
			opened++;
			struct seen s = {0};
			char hex[64], name[64];
			uint32_t crc;
			elfread_symbols(&img, SHT_SYMTAB, collect, &s);
			elfread_build_id(&img, hex, sizeof(hex));
			elfread_debuglink(&img, name, sizeof(name), &crc);
			elfread_plt(&img, collect, &s);
		}
		free(copy);
	}
	CHECK_INT(0, opened); /* the section headers are at the end: any cut loses them */
	srand(42);
	int ok = 0;
	for (int round = 0; round < 3000; round++) {
		unsigned char *copy = malloc(im.size);
		memcpy(copy, im.buf, im.size);
		for (int k = 0; k < 1 + round % 4; k++)
			copy[(size_t)rand() % im.size] = (unsigned char)rand();
		struct elfread_image img;
		if (elfread_open(&img, copy, im.size) == 0) {
			struct seen s = {0};
			char hex[64], name[64];
			uint32_t crc;
			if (elfread_symbols(&img, SHT_SYMTAB, collect, &s) == 2)
				ok++;
			elfread_symbols(&img, SHT_DYNSYM, collect, &s);
			elfread_build_id(&img, hex, sizeof(hex));
			elfread_debuglink(&img, name, sizeof(name), &crc);
			elfread_plt(&img, collect, &s);
		}
		free(copy);
	}
	CHECK(ok > 0);
	struct elfread_image img;
	CHECK_INT(-EINVAL, elfread_open(&img, "\177ELF", 4));
	CHECK_INT(-EINVAL, elfread_open(&img, im.buf + 1, im.size - 1));
}

static void test_paths(void)
{
	char p[256];
	CHECK_INT(0, elfread_build_id_path("ab12cd34", p, sizeof(p)));
	CHECK_STR("/usr/lib/debug/.build-id/ab/12cd34.debug", p);
	CHECK_INT(-EINVAL, elfread_build_id_path("ab", p, sizeof(p)));
	CHECK_INT(-EINVAL, elfread_build_id_path("AB12", p, sizeof(p)));
	CHECK_INT(-EINVAL, elfread_build_id_path("ab1", p, sizeof(p)));
	CHECK_INT(-EINVAL, elfread_build_id_path("ab/../x", p, sizeof(p)));
	CHECK_INT(-ENAMETOOLONG, elfread_build_id_path("ab12cd34", p, 20));

	const char *obj = "/usr/lib/x86_64-linux-gnu/libfoo.so.1";
	CHECK_INT(0, elfread_debuglink_path(obj, "libfoo.debug", 0, p, sizeof(p)));
	CHECK_STR("/usr/lib/x86_64-linux-gnu/libfoo.debug", p);
	CHECK_INT(0, elfread_debuglink_path(obj, "libfoo.debug", 1, p, sizeof(p)));
	CHECK_STR("/usr/lib/x86_64-linux-gnu/.debug/libfoo.debug", p);
	CHECK_INT(0, elfread_debuglink_path(obj, "libfoo.debug", 2, p, sizeof(p)));
	CHECK_STR("/usr/lib/debug/usr/lib/x86_64-linux-gnu/libfoo.debug", p);
	CHECK_INT(-ENOENT, elfread_debuglink_path(obj, "libfoo.debug", 3, p, sizeof(p)));
	CHECK_INT(-EINVAL, elfread_debuglink_path(obj, "../libfoo.debug", 0, p, sizeof(p)));
	CHECK_INT(-EINVAL, elfread_debuglink_path(obj, "", 0, p, sizeof(p)));
	CHECK_INT(-ENAMETOOLONG, elfread_debuglink_path(obj, "libfoo.debug", 0, p, 16));

	char tmp[] = "/tmp/fa-symbols-XXXXXX";
	int fd = mkstemp(tmp);
	CHECK(fd >= 0 && write(fd, "hello", 5) == 5);
	close(fd);
	uint32_t crc = 0;
	CHECK_INT(0, elfread_file_crc(tmp, &crc));
	CHECK_INT(0x3610a686, crc); /* zlib crc32("hello") */
	unlink(tmp);
	CHECK_INT(-ENOENT, elfread_file_crc(tmp, &crc));
}

struct plt_seen {
	int crc32, compress2, outside, n;
	uint64_t lo, hi; /* from .plt to the end of .plt, .plt.sec or .plt.got */
};

static int plt_cb(void *arg, uint64_t start, uint64_t size, const char *name)
{
	struct plt_seen *c = arg;
	c->n++;
	c->crc32 |= !strcmp(name, "crc32@plt");
	c->compress2 |= !strcmp(name, "compress2@plt");
	if (start < c->lo || start + size > c->hi)
		c->outside++;
	return 0;
}

/* the IBT layout of -fcf-protection -z now: lazy .plt stubs push their .rela.plt index, .plt.sec stubs
 * jump through the GOT (endbr64; bnd jmp *disp(%rip)) */
static void test_plt_ibt(void)
{
	static struct image im;
	begin(&im);
	static const char dynstr[] = "\0puts\0qsort";
	Elf64_Sym dyn[3];
	memset(dyn, 0, sizeof(dyn));
	dyn[1] = (Elf64_Sym){.st_name = 1, .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC)};
	dyn[2] = (Elf64_Sym){.st_name = 6, .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC)};
	add(&im, ".dynsym", SHT_DYNSYM, SHF_ALLOC, dyn, sizeof(dyn), CMP_NONE, 2, sizeof(Elf64_Sym));
	add(&im, ".dynstr", SHT_STRTAB, SHF_ALLOC, dynstr, sizeof(dynstr), CMP_NONE, 0, 0);
	Elf64_Rela rela[2] = {{.r_offset = 0x4018, .r_info = ELF64_R_INFO(1, R_X86_64_JUMP_SLOT)},
			      {.r_offset = 0x4020, .r_info = ELF64_R_INFO(2, R_X86_64_JUMP_SLOT)}};
	add(&im, ".rela.plt", SHT_RELA, SHF_ALLOC, rela, sizeof(rela), CMP_NONE, 1, sizeof(Elf64_Rela));
	unsigned char plt[48] = {0xff, 0x35, 0, 0, 0, 0, 0xf2, 0xff, 0x25, 0, 0, 0, 0, 0x0f, 0x1f, 0x00};
	for (int k = 0; k < 2; k++) {
		static const unsigned char lazy[16] = {0xf3, 0x0f, 0x1e, 0xfa, 0x68, 0, 0, 0,
						       0,    0xf2, 0xe9, 0, 0, 0, 0, 0x90};
		memcpy(plt + 16 + 16 * k, lazy, 16);
		plt[16 + 16 * k + 5] = (unsigned char)k;
	}
	add(&im, ".plt", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, plt, sizeof(plt), CMP_NONE, 0, 16);
	im.sh[im.n - 1].sh_addr = 0x1000;
	unsigned char sec[32];
	for (int k = 0; k < 2; k++) {
		static const unsigned char stub[16] = {0xf3, 0x0f, 0x1e, 0xfa, 0xf2, 0xff, 0x25,
						       0,    0,	   0,	 0,    0x0f, 0x1f, 0x44};
		memcpy(sec + 16 * k, stub, 16);
		int32_t disp = (int32_t)(0x4018 + 8 * k - (0x1030 + 16 * k + 4 + 7));
		memcpy(sec + 16 * k + 7, &disp, 4);
	}
	add(&im, ".plt.sec", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, sec, sizeof(sec), CMP_NONE, 0, 16);
	im.sh[im.n - 1].sh_addr = 0x1030;
	finish(&im);

	struct elfread_image img;
	struct seen s = {0};
	CHECK_INT(0, elfread_open(&img, im.buf, im.size));
	CHECK_INT(4, elfread_plt(&img, collect, &s));
	CHECK_STR("puts@plt", s.names[0]);
	CHECK_INT(0x1010, s.start[0]);
	CHECK_STR("qsort@plt", s.names[1]);
	CHECK_INT(0x1020, s.start[1]);
	CHECK_STR("puts@plt", s.names[2]);
	CHECK_INT(0x1030, s.start[2]);
	CHECK_INT(16, s.size[2]);
	CHECK_STR("qsort@plt", s.names[3]);
	CHECK_INT(0x1040, s.start[3]);
}

/* this program calls zlib through its PLT: the stubs are named after the relocation they jump through */
static void test_plt(void)
{
	FILE *fp = fopen("/proc/self/exe", "rb");
	static unsigned char exe[4 << 20];
	size_t n = fp ? fread(exe, 1, sizeof(exe), fp) : 0;
	if (fp)
		fclose(fp);
	struct elfread_image img;
	CHECK_INT(0, elfread_open(&img, exe, n));
	struct plt_seen seen = {0};
	Elf64_Shdr s;
	long plt = elfread_find(&img, ".plt", 0);
	CHECK(plt > 0 && elfread_shdr(&img, (size_t)plt, &s) == 0);
	seen.lo = s.sh_addr;
	static const char *const more[] = {".plt", ".plt.sec", ".plt.got"};
	for (int k = 0; k < 3; k++) {
		long i = elfread_find(&img, more[k], 0);
		if (i > 0 && elfread_shdr(&img, (size_t)i, &s) == 0 && s.sh_addr + s.sh_size > seen.hi)
			seen.hi = s.sh_addr + s.sh_size;
	}
	long named = elfread_plt(&img, plt_cb, &seen);
	CHECK(named > 10);
	CHECK_INT(named, seen.n);
	CHECK(seen.crc32);
	CHECK(seen.compress2);
	CHECK_INT(0, seen.outside);
}

int main(void)
{
	void *h = dlopen("libzstd.so.1", RTLD_LAZY);
	zstd_compress = h ? (size_t(*)(void *, size_t, const void *, size_t, int))dlsym(h, "ZSTD_compress") : NULL;
	test_compressed(CMP_ZLIB);
	if (zstd_compress)
		test_compressed(CMP_ZSTD);
	else
		printf("skipped: zstd (no libzstd.so.1)\n");
	test_corrupt();
	test_paths();
	test_plt();
	test_plt_ibt();

	/* whole files: this program's own .symtab, libc's (.dynsym, or its debug file by build-id) */
	char name[512];
	CHECK_INT(FK_NATIVE, symbols_name((uint64_t)(uintptr_t)test_paths + 1, 0, name, sizeof(name)));
	CHECK_STR("test_paths", name);
	void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD); /* not sanitizers' interceptors */
	symbols_name((uint64_t)(uintptr_t)dlsym(libc, "qsort") + 1, 1, name, sizeof(name));
	CHECK(strstr(name, "libc.so.6`") == name && strstr(name, "qsort"));
	CHECK_INT(FK_ERROR, symbols_name(8, 0, name, sizeof(name)));
	CHECK_STR("[unknown_native]", name);
	symbols_reset();

	char pkg[160];
	if (access("/var/lib/dpkg/info/libc6:amd64.list", R_OK) == 0) {
		CHECK_INT(0, symbols_debug_package("/usr/lib/x86_64-linux-gnu/libc.so.6", pkg, sizeof(pkg)));
		CHECK_STR("libc6-dbg", pkg);
		CHECK_INT(1, symbols_debug_package("/usr/lib/x86_64-linux-gnu/libz.so.1", pkg, sizeof(pkg)));
		CHECK_STR("zlib1g-dbgsym", pkg);
	}
	CHECK_INT(-ENOENT, symbols_debug_package("/nonexistent/libx.so", pkg, sizeof(pkg)));
	return check_report();
}
