/* ELF64 images in memory at dump time: bounds-checked section access, zlib / zstd section decompression,
 * build-id, .gnu_debuglink, function symbols and x86_64 PLT stubs. Dump time only. */
#include "elfread.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#ifndef ELFCOMPRESS_ZSTD
#define ELFCOMPRESS_ZSTD 2
#endif
/* a decompressed section larger than this is taken for corruption */
#define ELFREAD_MAX_INFLATED (1ull << 31)

/* bytes [off, off+len) lie inside the image (no overflow) */
static int in_image(const struct elfread_image *img, uint64_t off, uint64_t len)
{
	return off <= img->size && len <= img->size - off;
}

int elfread_open(struct elfread_image *img, const void *base, size_t size)
{
	memset(img, 0, sizeof(*img));
	img->base = base;
	img->size = size;
	if (size < sizeof(Elf64_Ehdr))
		return -EINVAL;
	Elf64_Ehdr eh;
	memcpy(&eh, base, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_shoff == 0 || eh.e_shentsize != sizeof(Elf64_Shdr))
		return -EINVAL;
	img->eh = eh;
	img->shoff = eh.e_shoff;
	img->shnum = eh.e_shnum;
	img->shstrndx = eh.e_shstrndx;
	if (!in_image(img, img->shoff, sizeof(Elf64_Shdr)))
		return -EINVAL;
	/* more than SHN_LORESERVE sections: the real counts live in section 0 */
	Elf64_Shdr sh0;
	memcpy(&sh0, img->base + img->shoff, sizeof(sh0));
	if (img->shnum == 0)
		img->shnum = sh0.sh_size;
	if (img->shstrndx == SHN_XINDEX)
		img->shstrndx = sh0.sh_link;
	if (img->shnum == 0 || img->shnum > size / sizeof(Elf64_Shdr) ||
	    !in_image(img, img->shoff, (uint64_t)img->shnum * sizeof(Elf64_Shdr)) || img->shstrndx >= img->shnum)
		return -EINVAL;
	return 0;
}

int elfread_shdr(const struct elfread_image *img, size_t i, Elf64_Shdr *out)
{
	if (i >= img->shnum)
		return -ENOENT;
	memcpy(out, img->base + img->shoff + i * sizeof(Elf64_Shdr), sizeof(*out));
	return 0;
}

/* raw contents of section i, uncompressed or not */
static int raw_section(const struct elfread_image *img, size_t i, const unsigned char **data, size_t *size)
{
	Elf64_Shdr s;
	if (elfread_shdr(img, i, &s) != 0 || s.sh_type == SHT_NOBITS || s.sh_type == SHT_NULL)
		return -ENOENT;
	if (!in_image(img, s.sh_offset, s.sh_size))
		return -EINVAL;
	*data = img->base + s.sh_offset;
	*size = s.sh_size;
	return 0;
}

long elfread_find(const struct elfread_image *img, const char *name, uint32_t type)
{
	const unsigned char *names = NULL;
	size_t names_size = 0;
	if (name && raw_section(img, img->shstrndx, &names, &names_size) != 0)
		return -ENOENT;
	size_t len = name ? strlen(name) : 0;
	for (size_t i = 1; i < img->shnum; i++) {
		Elf64_Shdr s;
		elfread_shdr(img, i, &s);
		if (!name) {
			if (s.sh_type == type)
				return (long)i;
			continue;
		}
		if (s.sh_name < names_size && names_size - s.sh_name > len &&
		    !memcmp(names + s.sh_name, name, len + 1))
			return (long)i;
	}
	return -ENOENT;
}

static int inflate_zlib(const unsigned char *src, size_t n, unsigned char *dst, size_t dst_size)
{
	z_stream z;
	memset(&z, 0, sizeof(z));
	if (inflateInit(&z) != Z_OK)
		return -ENOMEM;
	int rc = 0;
	size_t in_done = 0, out_done = 0;
	/* avail_in / avail_out are 32-bit: feed large sections in slices */
	for (;;) {
		size_t in_left = n - in_done, out_left = dst_size - out_done;
		z.next_in = (unsigned char *)src + in_done;
		z.avail_in = in_left > 1u << 30 ? 1u << 30 : (uInt)in_left;
		z.next_out = dst + out_done;
		z.avail_out = out_left > 1u << 30 ? 1u << 30 : (uInt)out_left;
		uInt in0 = z.avail_in, out0 = z.avail_out;
		int zr = inflate(&z, Z_NO_FLUSH);
		in_done += in0 - z.avail_in;
		out_done += out0 - z.avail_out;
		if (zr == Z_STREAM_END)
			break;
		if (zr != Z_OK || (in0 == z.avail_in && out0 == z.avail_out)) {
			rc = -EINVAL;
			break;
		}
	}
	inflateEnd(&z);
	return rc == 0 && out_done == dst_size ? 0 : -EINVAL;
}

/* libzstd is looked up at run time: every Debian system has libzstd.so.1 (dpkg needs it), and the agent
 * then needs no -dev package to build */
static int inflate_zstd(const unsigned char *src, size_t n, unsigned char *dst, size_t dst_size)
{
	typedef size_t (*decompress_fn)(void *, size_t, const void *, size_t);
	typedef unsigned (*is_error_fn)(size_t);
	static decompress_fn decompress;
	static is_error_fn is_error;
	static int looked;
	if (!looked) {
		void *h = dlopen("libzstd.so.1", RTLD_LAZY | RTLD_LOCAL);
		if (h) {
			decompress = (decompress_fn)dlsym(h, "ZSTD_decompress");
			is_error = (is_error_fn)dlsym(h, "ZSTD_isError");
		}
		looked = 1;
	}
	if (!decompress || !is_error)
		return -ENOTSUP;
	size_t r = decompress(dst, dst_size, src, n);
	return is_error(r) || r != dst_size ? -EINVAL : 0;
}

int elfread_decompress(const void *sec, size_t size, void **out, size_t *out_size)
{
	*out = NULL;
	*out_size = 0;
	Elf64_Chdr ch;
	if (size < sizeof(ch))
		return -EINVAL;
	memcpy(&ch, sec, sizeof(ch));
	if (ch.ch_type != ELFCOMPRESS_ZLIB && ch.ch_type != ELFCOMPRESS_ZSTD)
		return -ENOTSUP;
	if (ch.ch_size == 0 || ch.ch_size > ELFREAD_MAX_INFLATED)
		return -EINVAL;
	unsigned char *buf = malloc(ch.ch_size);
	if (!buf)
		return -ENOMEM;
	const unsigned char *src = (const unsigned char *)sec + sizeof(ch);
	size_t n = size - sizeof(ch);
	int rc = ch.ch_type == ELFCOMPRESS_ZLIB ? inflate_zlib(src, n, buf, ch.ch_size)
						 : inflate_zstd(src, n, buf, ch.ch_size);
	if (rc != 0) {
		free(buf);
		return rc;
	}
	*out = buf;
	*out_size = ch.ch_size;
	return 0;
}

int elfread_section(const struct elfread_image *img, size_t i, const void **data, size_t *size, void **owned)
{
	*owned = NULL;
	const unsigned char *raw;
	size_t n;
	int rc = raw_section(img, i, &raw, &n);
	if (rc != 0)
		return rc;
	Elf64_Shdr s;
	elfread_shdr(img, i, &s);
	if (!(s.sh_flags & SHF_COMPRESSED)) {
		*data = raw;
		*size = n;
		return 0;
	}
	rc = elfread_decompress(raw, n, owned, size);
	*data = *owned;
	return rc;
}

int elfread_build_id(const struct elfread_image *img, char *hex, size_t hexlen)
{
	for (size_t i = 1; i < img->shnum; i++) {
		Elf64_Shdr s;
		elfread_shdr(img, i, &s);
		const unsigned char *p;
		size_t n;
		if (s.sh_type != SHT_NOTE || raw_section(img, i, &p, &n) != 0)
			continue;
		size_t off = 0;
		while (n - off >= sizeof(Elf64_Nhdr)) {
			Elf64_Nhdr nh;
			memcpy(&nh, p + off, sizeof(nh));
			size_t name_sz = (nh.n_namesz + 3u) & ~3u, desc_sz = (nh.n_descsz + 3u) & ~3u;
			off += sizeof(nh);
			if (name_sz > n - off || desc_sz > n - off - name_sz)
				return -EINVAL;
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && !memcmp(p + off, "GNU", 4)) {
				if (nh.n_descsz == 0)
					return -EINVAL;
				if ((size_t)nh.n_descsz * 2 + 1 > hexlen)
					return -ENAMETOOLONG;
				const unsigned char *id = p + off + name_sz;
				for (size_t k = 0; k < nh.n_descsz; k++)
					snprintf(hex + 2 * k, 3, "%02x", id[k]);
				return (int)nh.n_descsz;
			}
			off += name_sz + desc_sz;
		}
	}
	return -ENOENT;
}

int elfread_debuglink(const struct elfread_image *img, char *name, size_t namelen, uint32_t *crc)
{
	long i = elfread_find(img, ".gnu_debuglink", 0);
	const unsigned char *p;
	size_t n;
	if (i < 0 || raw_section(img, (size_t)i, &p, &n) != 0)
		return -ENOENT;
	/* the name, NUL, padding to 4 bytes, then the CRC */
	size_t len = strnlen((const char *)p, n);
	size_t crc_off = (len + 4) & ~(size_t)3;
	if (len == 0 || len == n || crc_off + 4 > n || len + 1 > namelen)
		return -EINVAL;
	memcpy(name, p, len + 1);
	memcpy(crc, p + crc_off, 4);
	return 0;
}

int elfread_build_id_path(const char *hex, char *out, size_t outlen)
{
	size_t len = strlen(hex);
	if (len < 4 || len % 2 || strspn(hex, "0123456789abcdef") != len)
		return -EINVAL;
	int n = snprintf(out, outlen, "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
	return n < 0 || (size_t)n >= outlen ? -ENAMETOOLONG : 0;
}

int elfread_debuglink_path(const char *obj_path, const char *name, int i, char *out, size_t outlen)
{
	if (!name[0] || strchr(name, '/'))
		return -EINVAL;
	const char *slash = strrchr(obj_path, '/');
	int dir_len = slash ? (int)(slash - obj_path) : 1;
	const char *dir = slash ? obj_path : ".";
	int n;
	switch (i) {
	case 0:
		n = snprintf(out, outlen, "%.*s/%s", dir_len, dir, name);
		break;
	case 1:
		n = snprintf(out, outlen, "%.*s/.debug/%s", dir_len, dir, name);
		break;
	case 2:
		if (!slash || obj_path[0] != '/')
			return -ENOENT;
		n = snprintf(out, outlen, "/usr/lib/debug%.*s/%s", dir_len, dir, name);
		break;
	default:
		return -ENOENT;
	}
	return n < 0 || (size_t)n >= outlen ? -ENAMETOOLONG : 0;
}

int elfread_file_crc(const char *path, uint32_t *crc)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	unsigned char buf[65536];
	uLong c = crc32(0L, Z_NULL, 0);
	ssize_t n;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		c = crc32(c, buf, (uInt)n);
	int rc = n < 0 ? -errno : 0;
	close(fd);
	*crc = (uint32_t)c;
	return rc;
}

long elfread_symbols(const struct elfread_image *img, uint32_t type, elfread_sym_fn fn, void *arg)
{
	long i = elfread_find(img, NULL, type);
	if (i < 0)
		return -ENOENT;
	Elf64_Shdr s;
	elfread_shdr(img, (size_t)i, &s);
	const void *syms, *strs;
	size_t syms_size, strs_size;
	void *syms_owned = NULL, *strs_owned = NULL;
	int rc = elfread_section(img, (size_t)i, &syms, &syms_size, &syms_owned);
	if (rc == 0 && (s.sh_link == 0 || s.sh_link >= img->shnum))
		rc = -EINVAL;
	if (rc == 0)
		rc = elfread_section(img, s.sh_link, &strs, &strs_size, &strs_owned);
	long count = 0;
	if (rc != 0)
		goto out;
	const char *str = strs;
	for (size_t k = 0; k + sizeof(Elf64_Sym) <= syms_size; k += sizeof(Elf64_Sym)) {
		Elf64_Sym sym;
		memcpy(&sym, (const char *)syms + k, sizeof(sym));
		int t = ELF64_ST_TYPE(sym.st_info);
		if ((t != STT_FUNC && t != STT_GNU_IFUNC) || sym.st_value == 0 || sym.st_shndx == SHN_UNDEF ||
		    sym.st_name >= strs_size || !memchr(str + sym.st_name, 0, strs_size - sym.st_name))
			continue;
		count++;
		if (fn(arg, sym.st_value, sym.st_size, str + sym.st_name))
			break;
	}
out:
	free(syms_owned);
	free(strs_owned);
	return rc != 0 ? rc : count;
}

/* ---- PLT stubs (x86_64) ---- */

struct got_slot {
	uint64_t addr;
	uint32_t sym;
};

static int by_addr(const void *a, const void *b)
{
	const struct got_slot *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

struct plt_ctx {
	const struct elfread_image *img;
	const unsigned char *dynsym, *dynstr;
	size_t dynsym_size, dynstr_size;
	struct got_slot *slots; /* GOT address -> symbol, sorted */
	size_t n_slots;
	const unsigned char *jump_slots; /* .rela.plt, for stubs that push an index instead */
	size_t n_jump_slots;
	elfread_sym_fn fn;
	void *arg;
	long named;
};

static const char *dyn_name(const struct plt_ctx *c, uint32_t idx)
{
	Elf64_Sym sym;
	if ((uint64_t)idx * sizeof(sym) + sizeof(sym) > c->dynsym_size)
		return NULL;
	memcpy(&sym, c->dynsym + (size_t)idx * sizeof(sym), sizeof(sym));
	if (sym.st_name == 0 || sym.st_name >= c->dynstr_size ||
	    !memchr(c->dynstr + sym.st_name, 0, c->dynstr_size - sym.st_name))
		return NULL;
	return (const char *)c->dynstr + sym.st_name;
}

static uint32_t rd32(const unsigned char *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

/* one stub: "jmp *disp(%rip)" (ff 25, after endbr64 / bnd in IBT layouts) names its GOT slot; a lazy stub
 * of the IBT .plt pushes its .rela.plt index instead (68 imm32) */
static int plt_stub(struct plt_ctx *c, uint64_t addr, const unsigned char *p, size_t ent)
{
	const char *name = NULL;
	for (size_t o = 0; o + 6 <= ent && !name; o++) {
		if (p[o] == 0xff && p[o + 1] == 0x25) {
			uint64_t got = addr + o + 6 + (uint64_t)(int64_t)(int32_t)rd32(p + o + 2);
			struct got_slot key = {got, 0};
			const struct got_slot *s = bsearch(&key, c->slots, c->n_slots, sizeof(key), by_addr);
			if (!s)
				return 0;
			name = dyn_name(c, s->sym);
			break;
		}
		if (p[o] == 0x68 && o + 5 <= ent) {
			uint32_t idx = rd32(p + o + 1);
			if (idx >= c->n_jump_slots)
				return 0;
			Elf64_Rela r;
			memcpy(&r, c->jump_slots + (size_t)idx * sizeof(r), sizeof(r));
			name = dyn_name(c, (uint32_t)ELF64_R_SYM(r.r_info));
			break;
		}
	}
	if (!name)
		return 0;
	char buf[512];
	snprintf(buf, sizeof(buf), "%s@plt", name);
	c->named++;
	return c->fn(c->arg, addr, ent, buf);
}

/* every JUMP_SLOT / GLOB_DAT relocation against .dynsym: GOT slot -> symbol */
static int collect_slots(struct plt_ctx *c, size_t dynsym_idx)
{
	long rela_plt = elfread_find(c->img, ".rela.plt", 0);
	for (size_t i = 1; i < c->img->shnum; i++) {
		Elf64_Shdr s;
		const unsigned char *p;
		size_t n;
		elfread_shdr(c->img, i, &s);
		if (s.sh_type != SHT_RELA || s.sh_link != dynsym_idx || raw_section(c->img, i, &p, &n) != 0)
			continue;
		n -= n % sizeof(Elf64_Rela);
		if ((long)i == rela_plt) {
			c->jump_slots = p;
			c->n_jump_slots = n / sizeof(Elf64_Rela);
		}
		struct got_slot *g = realloc(c->slots, (c->n_slots + n / sizeof(Elf64_Rela) + 1) * sizeof(*g));
		if (!g)
			return -ENOMEM;
		c->slots = g;
		for (size_t k = 0; k < n; k += sizeof(Elf64_Rela)) {
			Elf64_Rela r;
			memcpy(&r, p + k, sizeof(r));
			uint32_t t = (uint32_t)ELF64_R_TYPE(r.r_info);
			if (t == R_X86_64_JUMP_SLOT || t == R_X86_64_GLOB_DAT)
				c->slots[c->n_slots++] = (struct got_slot){r.r_offset, (uint32_t)ELF64_R_SYM(r.r_info)};
		}
	}
	qsort(c->slots, c->n_slots, sizeof(*c->slots), by_addr);
	return 0;
}

long elfread_plt(const struct elfread_image *img, elfread_sym_fn fn, void *arg)
{
	if (img->eh.e_machine != EM_X86_64)
		return 0;
	struct plt_ctx c = {.img = img, .fn = fn, .arg = arg};
	long dynsym = elfread_find(img, NULL, SHT_DYNSYM);
	Elf64_Shdr ds;
	if (dynsym < 0 || elfread_shdr(img, (size_t)dynsym, &ds) != 0 ||
	    raw_section(img, (size_t)dynsym, &c.dynsym, &c.dynsym_size) != 0 ||
	    raw_section(img, ds.sh_link, &c.dynstr, &c.dynstr_size) != 0)
		return 0;
	if (collect_slots(&c, (size_t)dynsym) != 0)
		goto out;
	static const char *const plts[] = {".plt", ".plt.sec", ".plt.got"};
	for (size_t k = 0; k < sizeof(plts) / sizeof(plts[0]); k++) {
		long i = elfread_find(img, plts[k], 0);
		Elf64_Shdr s;
		const unsigned char *p;
		size_t n;
		if (i < 0 || raw_section(img, (size_t)i, &p, &n) != 0)
			continue;
		elfread_shdr(img, (size_t)i, &s);
		size_t ent = s.sh_entsize >= 8 && s.sh_entsize <= 32 ? s.sh_entsize : k == 2 ? 8 : 16;
		/* the first .plt entry is the resolver trampoline (PLT0), not a stub */
		for (size_t off = k == 0 ? ent : 0; off + ent <= n; off += ent)
			if (plt_stub(&c, s.sh_addr + off, p + off, ent))
				goto out;
	}
out:
	free(c.slots);
	return c.named;
}
