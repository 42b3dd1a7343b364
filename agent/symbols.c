/* Native symbols at dump time: ELF symbol tables of mapped files, sorted for lookup, demangled through
 * the process's own __cxa_demangle (libjvm links libstdc++, so it is there in every JVM). Dump time only. */
#include "symbols.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct sym {
	uint64_t start, size; /* file-relative virtual addresses */
	const char *name;     /* into the file's string copy */
};

struct elf_file {
	char path[512];
	uint64_t lo, hi;       /* mapped executable range */
	uint64_t bias;         /* load address - ELF vaddr */
	struct sym *syms;
	size_t n_syms;
	char *strings;         /* copies of the string tables */
	int loaded;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct elf_file *files;
static size_t n_files;

static int by_start(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* Reads .symtab and .dynsym of an ELF file into sorted function symbols. */
static void load(struct elf_file *f)
{
	f->loaded = 1;
	int fd = open(f->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	struct stat st;
	if (fstat(fd, &st) != 0 || (size_t)st.st_size < sizeof(ElfW(Ehdr))) {
		close(fd);
		return;
	}
	size_t size = (size_t)st.st_size;
	const char *base = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (base == MAP_FAILED)
		return;
	const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)base;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_shoff == 0 ||
	    eh->e_shoff + (size_t)eh->e_shnum * sizeof(ElfW(Shdr)) > size)
		goto out;
	const ElfW(Shdr) *sh = (const ElfW(Shdr) *)(base + eh->e_shoff);
	size_t total = 0, strbytes = 0;
	for (int i = 0; i < eh->e_shnum; i++)
		if ((sh[i].sh_type == SHT_SYMTAB || sh[i].sh_type == SHT_DYNSYM) && sh[i].sh_link < eh->e_shnum) {
			total += sh[i].sh_size / sizeof(ElfW(Sym));
			strbytes += sh[sh[i].sh_link].sh_size;
		}
	f->syms = calloc(total ? total : 1, sizeof(*f->syms));
	f->strings = malloc(strbytes ? strbytes : 1);
	if (!f->syms || !f->strings)
		goto out;
	size_t soff = 0;
	for (int i = 0; i < eh->e_shnum; i++) {
		if ((sh[i].sh_type != SHT_SYMTAB && sh[i].sh_type != SHT_DYNSYM) || sh[i].sh_link >= eh->e_shnum)
			continue;
		const ElfW(Shdr) *strs = &sh[sh[i].sh_link];
		if (sh[i].sh_offset + sh[i].sh_size > size || strs->sh_offset + strs->sh_size > size)
			continue;
		memcpy(f->strings + soff, base + strs->sh_offset, strs->sh_size);
		const ElfW(Sym) *sym = (const ElfW(Sym) *)(base + sh[i].sh_offset);
		size_t n = sh[i].sh_size / sizeof(ElfW(Sym));
		for (size_t k = 0; k < n; k++) {
			int type = ELF64_ST_TYPE(sym[k].st_info);
			if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym[k].st_value == 0 ||
			    sym[k].st_name >= strs->sh_size || sym[k].st_shndx == SHN_UNDEF)
				continue;
			f->syms[f->n_syms++] = (struct sym){sym[k].st_value, sym[k].st_size,
							    f->strings + soff + sym[k].st_name};
		}
		soff += strs->sh_size;
	}
	qsort(f->syms, f->n_syms, sizeof(*f->syms), by_start);
out:
	munmap((void *)base, size);
}

/* Reads /proc/self/maps for executable file mappings not known yet. */
static void scan_maps(void)
{
	FILE *m = fopen("/proc/self/maps", "r");
	if (!m)
		return;
	char line[1024];
	while (fgets(line, sizeof(line), m)) {
		unsigned long lo, hi, off;
		char perms[8], path[512] = "";
		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %511[^\n]", &lo, &hi, perms, &off, path) < 4 || perms[2] != 'x' ||
		    path[0] != '/')
			continue;
		int known = 0;
		for (size_t i = 0; i < n_files && !known; i++)
			known = files[i].lo == lo && !strcmp(files[i].path, path);
		if (known)
			continue;
		struct elf_file *g = realloc(files, (n_files + 1) * sizeof(*g));
		if (!g)
			break;
		files = g;
		struct elf_file *f = &files[n_files++];
		memset(f, 0, sizeof(*f));
		snprintf(f->path, sizeof(f->path), "%s", path);
		f->lo = lo;
		f->hi = hi;
		/* the load bias: from the dynamic loader when it knows the file, else from the mapping's offset */
		Dl_info info;
		f->bias = dladdr((void *)lo, &info) && info.dli_fbase ? (uint64_t)(uintptr_t)info.dli_fbase : lo - off;
	}
	fclose(m);
}

static struct elf_file *file_of(uint64_t pc)
{
	for (size_t i = 0; i < n_files; i++)
		if (pc >= files[i].lo && pc < files[i].hi)
			return &files[i];
	return NULL;
}

static char *demangle(const char *name)
{
	typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);
	static demangle_fn fn;
	static int looked;
	if (!looked) {
		/* Debian's libjvm links libstdc++ dynamically; Temurin's carries it statically, without the
		 * symbol: then load the system's copy */
		fn = (demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
		if (!fn) {
			void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
			if (h)
				fn = (demangle_fn)dlsym(h, "__cxa_demangle");
		}
		looked = 1;
	}
	if (!fn || name[0] != '_' || name[1] != 'Z')
		return NULL;
	int status = 0;
	char *r = fn(name, NULL, NULL, &status);
	return status == 0 ? r : NULL;
}

enum frame_kind symbols_name(uint64_t pc, int lib_prefix, char *out, size_t outlen)
{
	pthread_mutex_lock(&lock);
	struct elf_file *f = file_of(pc);
	if (!f) {
		scan_maps();
		f = file_of(pc);
	}
	enum frame_kind kind = FK_NATIVE;
	if (!f) {
		snprintf(out, outlen, "[unknown_native]");
		pthread_mutex_unlock(&lock);
		return FK_ERROR;
	}
	if (!f->loaded)
		load(f);
	const char *lib = strrchr(f->path, '/') ? strrchr(f->path, '/') + 1 : f->path;
	uint64_t rel = pc - f->bias;
	size_t lo = 0, hi = f->n_syms;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (f->syms[mid].start <= rel)
			lo = mid + 1;
		else
			hi = mid;
	}
	const struct sym *s = lo ? &f->syms[lo - 1] : NULL;
	if (s && (rel < s->start + s->size || (s->size == 0 && rel - s->start < 4096))) {
		char *d = demangle(s->name);
		const char *name = d ? d : s->name;
		snprintf(out, outlen, "%s%s%s", lib_prefix ? lib : "", lib_prefix ? "`" : "", name);
		kind = d || strstr(name, "::") ? FK_CPP : FK_NATIVE;
		free(d);
	} else {
		snprintf(out, outlen, "[%s+0x%llx]", lib, (unsigned long long)(pc - f->lo));
	}
	pthread_mutex_unlock(&lock);
	return kind;
}

void symbols_reset(void)
{
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < n_files; i++) {
		free(files[i].syms);
		free(files[i].strings);
	}
	free(files);
	files = NULL;
	n_files = 0;
	pthread_mutex_unlock(&lock);
}
