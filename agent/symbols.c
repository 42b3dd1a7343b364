/* Native symbols at dump time: each mapped file's .symtab (or its debug file's), .dynsym and PLT stubs,
 * demangled through the process's own __cxa_demangle (libjvm links libstdc++); one note per stripped
 * file that samples landed in without debug info. Dump time only. */
#include "symbols.h"

#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elfread.h"
#include "log.h"

struct sym {
	uint64_t start, size; /* file-relative virtual addresses */
	size_t name;          /* offset into the file's strings */
};

enum debug_state {
	DEBUG_SYMTAB,      /* the file has its own .symtab */
	DEBUG_FILE,        /* symbols from a separate debug file */
	DEBUG_MISSING,     /* stripped and no debug file found */
	DEBUG_UNREADABLE,  /* a debug file exists but its .symtab could not be read (debug_err) */
	DEBUG_NOT_ELF,     /* not an ELF file we can read: nothing to say about it */
};

struct elf_file {
	char path[512];
	uint64_t lo, hi;       /* mapped executable range */
	uint64_t bias;         /* load address - ELF vaddr */
	struct sym *syms;
	size_t n_syms, cap_syms;
	char *strings;         /* the symbol names, NUL-separated */
	size_t n_strings, cap_strings;
	int loaded;
	enum debug_state debug;
	int debug_err;         /* DEBUG_UNREADABLE: -errno from elfread */
	char debug_path[512];  /* DEBUG_FILE / DEBUG_UNREADABLE: the debug file */
	char debuglink[256];   /* the .gnu_debuglink name, if any */
	char build_id[128];    /* hex, if any */
	int noted;             /* the missing-symbols note was printed */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct elf_file *files;
static size_t n_files;

static int by_start(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* elfread_sym_fn: copies one symbol into the file's tables */
static int add_sym(void *arg, uint64_t start, uint64_t size, const char *name)
{
	struct elf_file *f = arg;
	size_t len = strlen(name) + 1;
	if (f->n_syms == f->cap_syms) {
		size_t cap = f->cap_syms ? 2 * f->cap_syms : 1024;
		struct sym *s = realloc(f->syms, cap * sizeof(*s));
		if (!s)
			return 1;
		f->syms = s;
		f->cap_syms = cap;
	}
	if (f->n_strings + len > f->cap_strings) {
		size_t cap = f->cap_strings ? 2 * f->cap_strings : 65536;
		while (cap < f->n_strings + len)
			cap *= 2;
		char *s = realloc(f->strings, cap);
		if (!s)
			return 1;
		f->strings = s;
		f->cap_strings = cap;
	}
	memcpy(f->strings + f->n_strings, name, len);
	f->syms[f->n_syms++] = (struct sym){start, size, f->n_strings};
	f->n_strings += len;
	return 0;
}

struct mapped {
	void *base;
	size_t size;
};

static int map_file(const char *path, struct mapped *m)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct stat st;
	int rc = 0;
	if (fstat(fd, &st) != 0)
		rc = -errno;
	else if (!S_ISREG(st.st_mode) || st.st_size <= 0)
		rc = -EINVAL;
	if (rc == 0) {
		m->size = (size_t)st.st_size;
		m->base = mmap(NULL, m->size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m->base == MAP_FAILED)
			rc = -errno;
	}
	close(fd);
	return rc;
}

/* The separate debug file of a stripped object, in GDB's order: by build-id, then by .gnu_debuglink name
 * (CRC32 checked) next to the object, in its .debug/ and under /usr/lib/debug. Returns 0 with the path
 * in f->debug_path, or -ENOENT. */
static int find_debug_file(struct elf_file *f, const struct elfread_image *img)
{
	if (elfread_build_id(img, f->build_id, sizeof(f->build_id)) > 0 &&
	    elfread_build_id_path(f->build_id, f->debug_path, sizeof(f->debug_path)) == 0 &&
	    access(f->debug_path, R_OK) == 0)
		return 0;
	uint32_t crc;
	if (elfread_debuglink(img, f->debuglink, sizeof(f->debuglink), &crc) != 0) {
		f->debuglink[0] = 0;
		return -ENOENT;
	}
	for (int i = 0; i < ELFREAD_DEBUGLINK_PLACES; i++) {
		uint32_t have;
		if (elfread_debuglink_path(f->path, f->debuglink, i, f->debug_path, sizeof(f->debug_path)) == 0 &&
		    strcmp(f->debug_path, f->path) != 0 && elfread_file_crc(f->debug_path, &have) == 0 && have == crc)
			return 0;
	}
	f->debug_path[0] = 0;
	return -ENOENT;
}

/* The .symtab of the debug file (same file-relative addresses as the object). */
static void load_debug_file(struct elf_file *f)
{
	struct mapped m;
	struct elfread_image img;
	int rc = map_file(f->debug_path, &m);
	if (rc != 0) {
		f->debug = DEBUG_UNREADABLE;
		f->debug_err = rc;
		return;
	}
	long n = elfread_open(&img, m.base, m.size);
	if (n == 0)
		n = elfread_symbols(&img, SHT_SYMTAB, add_sym, f);
	f->debug = n >= 0 ? DEBUG_FILE : DEBUG_UNREADABLE;
	f->debug_err = n >= 0 ? 0 : (int)n;
	munmap(m.base, m.size);
}

/* Reads .symtab (or the debug file's), .dynsym and the PLT stubs into sorted function symbols. */
static void load(struct elf_file *f)
{
	f->loaded = 1;
	f->debug = DEBUG_NOT_ELF;
	struct mapped m;
	if (map_file(f->path, &m) != 0)
		return;
	struct elfread_image img;
	if (elfread_open(&img, m.base, m.size) != 0)
		goto out;
	if (elfread_symbols(&img, SHT_SYMTAB, add_sym, f) >= 0)
		f->debug = DEBUG_SYMTAB;
	else if (find_debug_file(f, &img) == 0)
		load_debug_file(f);
	else
		f->debug = DEBUG_MISSING;
	elfread_symbols(&img, SHT_DYNSYM, add_sym, f);
	elfread_plt(&img, add_sym, f);
	if (f->n_syms)
		qsort(f->syms, f->n_syms, sizeof(*f->syms), by_start);
out:
	munmap(m.base, m.size);
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

/* The Debian package that installed path, from dpkg's file lists (merged /usr: a list may name /lib/...
 * for /usr/lib/...). Returns 0 with the package name (no :arch) in pkg, or -ENOENT. */
static int dpkg_owner(const char *path, char *pkg, size_t pkglen)
{
	const char *alt = !strncmp(path, "/usr/", 5) ? path + 4 : NULL;
	DIR *d = opendir("/var/lib/dpkg/info");
	if (!d)
		return -ENOENT;
	int rc = -ENOENT;
	char *line = NULL;
	size_t cap = 0;
	struct dirent *e;
	while (rc != 0 && (e = readdir(d)) != NULL) {
		size_t len = strlen(e->d_name);
		if (len < 6 || strcmp(e->d_name + len - 5, ".list") != 0)
			continue;
		char list[512];
		snprintf(list, sizeof(list), "/var/lib/dpkg/info/%s", e->d_name);
		FILE *fp = fopen(list, "r");
		if (!fp)
			continue;
		ssize_t n;
		while ((n = getline(&line, &cap, fp)) > 0) {
			if (line[n - 1] == '\n')
				line[n - 1] = 0;
			if (!strcmp(line, path) || (alt && !strcmp(line, alt))) {
				snprintf(pkg, pkglen, "%.*s", (int)strcspn(e->d_name, ":."), e->d_name);
				rc = 0;
				break;
			}
		}
		fclose(fp);
	}
	free(line);
	closedir(d);
	return rc;
}

/* Debian's debug package for pkg: the few hand-made -dbg packages of the main archive, else the
 * automatic PKG-dbgsym of the debian-debug archive. Returns 1 for a -dbgsym name. */
static int debug_package(const char *pkg, char *out, size_t outlen)
{
	int version;
	char rest[64];
	if (!strcmp(pkg, "libc6")) {
		snprintf(out, outlen, "libc6-dbg");
		return 0;
	}
	if (sscanf(pkg, "openjdk-%d-%63s", &version, rest) == 2 &&
	    (!strcmp(rest, "jre-headless") || !strcmp(rest, "jre") || !strcmp(rest, "jdk-headless") ||
	     !strcmp(rest, "jdk"))) {
		snprintf(out, outlen, "openjdk-%d-dbg", version);
		return 0;
	}
	snprintf(out, outlen, "%s-dbgsym", pkg);
	return 1;
}

int symbols_debug_package(const char *path, char *out, size_t outlen)
{
	char pkg[128];
	if (dpkg_owner(path, pkg, sizeof(pkg)) != 0)
		return -ENOENT;
	return debug_package(pkg, out, outlen);
}

/* One line per object whose samples found no symbol because its symbols are missing: what is missing and
 * where the debug info would come from. Profiling goes on either way. */
static void note_missing(struct elf_file *f, const char *lib)
{
	if (f->noted || (f->debug != DEBUG_MISSING && f->debug != DEBUG_UNREADABLE))
		return;
	f->noted = 1;
	if (f->debug == DEBUG_UNREADABLE) {
		const char *why = f->debug_err == -ENOTSUP
					  ? "zstd-compressed symbols need libzstd.so.1 (apt-get install libzstd1)"
				  : f->debug_err == -EINVAL ? "truncated or corrupt"
				  : f->debug_err == -ENOENT ? "no symbol table in it"
							    : strerror(-f->debug_err);
		log_info("note: no symbols for %s: its debug file %s is unreadable (%s); its frames show as [%s+0x...]",
			 f->path, f->debug_path, why, lib);
		return;
	}
	char dbg[160], hint[768];
	int dbgsym = symbols_debug_package(f->path, dbg, sizeof(dbg));
	if (dbgsym >= 0) {
		snprintf(hint, sizeof(hint), "its debug symbols: apt-get install %s%s", dbg,
			 dbgsym ? " (from the debian-debug archive)" : "");
	} else if (f->debuglink[0]) {
		const char *slash = strrchr(f->path, '/');
		snprintf(hint, sizeof(hint), "put its debug file %s in %.*s/.debug/", f->debuglink,
			 (int)(slash ? slash - f->path : 1), slash ? f->path : ".");
	} else if (f->build_id[0]) {
		char path[256];
		elfread_build_id_path(f->build_id, path, sizeof(path));
		snprintf(hint, sizeof(hint), "put its debug file at %s", path);
	} else {
		snprintf(hint, sizeof(hint), "build it without stripping symbols for names");
	}
	log_info("note: no symbols for %s (stripped, no debug file found): its frames show as [%s+0x...]; %s",
		 f->path, lib, hint);
}

/* The symbol containing the file-relative address rel (a sizeless one: within 4 KiB), or NULL. */
static const struct sym *find_sym(const struct elf_file *f, uint64_t rel)
{
	size_t lo = 0, hi = f->n_syms;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (f->syms[mid].start <= rel)
			lo = mid + 1;
		else
			hi = mid;
	}
	const struct sym *s = lo ? &f->syms[lo - 1] : NULL;
	return s && (rel < s->start + s->size || (s->size == 0 && rel - s->start < 4096)) ? s : NULL;
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
	const struct sym *s = find_sym(f, rel);
	/* a caller's frame holds a return address: after a call that ends its function (noreturn callee) it
	 * is the function's end, outside it */
	if (!s && rel)
		s = find_sym(f, rel - 1);
	if (s) {
		char *d = demangle(f->strings + s->name);
		const char *name = d ? d : f->strings + s->name;
		snprintf(out, outlen, "%s%s%s", lib_prefix ? lib : "", lib_prefix ? "`" : "", name);
		kind = d || strstr(name, "::") ? FK_CPP : FK_NATIVE;
		free(d);
	} else {
		snprintf(out, outlen, "[%s+0x%llx]", lib, (unsigned long long)(pc - f->lo));
		note_missing(f, lib);
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
