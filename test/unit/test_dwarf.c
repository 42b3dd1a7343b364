/* Unit tests: DWARF CFI -> unwind rows (synthetic CIE/FDE programs, garbage and truncated input) and
 * stackwalk_dwarf over this program's own .eh_frame through a chain of functions built without frame
 * pointers (the Makefile compiles this file with -fomit-frame-pointer). */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>

#include "check.h"
#include "dwarf.h"
#include "stackwalk.h"

/* ---- synthetic .eh_frame: one CIE (fde encoding udata4, absolute pcs) and one FDE ---- */

static size_t put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
	return 4;
}

struct fde_spec {
	uint32_t begin, len;
	const uint8_t *prog;
	size_t prog_len;
};

/* CIE with initial instructions "CFA = rsp+8, RA at CFA-8", then the FDEs; returns the section length
 * (with a zero terminator). */
static size_t make_eh_n(uint8_t *buf, const struct fde_spec *f, int n_fdes)
{
	static const uint8_t cie_body[] = {0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 16, 1, 0x03,
					   0x0c, 7, 8, 0x90, 1};
	size_t n = 0;
	n += put32(buf + n, sizeof(cie_body));
	memcpy(buf + n, cie_body, sizeof(cie_body));
	n += sizeof(cie_body);
	for (int i = 0; i < n_fdes; i++) {
		n += put32(buf + n, (uint32_t)(4 + 4 + 4 + 1 + f[i].prog_len));
		n += put32(buf + n, (uint32_t)(n)); /* CIE pointer: back to offset 0 */
		n += put32(buf + n, f[i].begin);
		n += put32(buf + n, f[i].len);
		buf[n++] = 0; /* augmentation data length */
		memcpy(buf + n, f[i].prog, f[i].prog_len);
		n += f[i].prog_len;
	}
	n += put32(buf + n, 0);
	return n;
}

/* one FDE for [0x1000, 0x1100) running prog */
static size_t make_eh(uint8_t *buf, const uint8_t *prog, size_t prog_len)
{
	struct fde_spec f = {0x1000, 0x100, prog, prog_len};
	return make_eh_n(buf, &f, 1);
}

static struct dwarf_object obj;

static int build(const uint8_t *prog, size_t prog_len)
{
	static uint8_t buf[512];
	size_t len = make_eh(buf, prog, prog_len);
	free((void *)obj.rows);
	return dwarf_build_object(buf, len, NULL, 0, 0x1000, 0x1200, &obj, NULL);
}

static const struct dwarf_row *row_at(uintptr_t pc)
{
	static struct {
		uint32_t n;
		struct dwarf_object o;
	} set;
	set.n = 1;
	set.o = obj;
	return dwarf_table_find((const struct dwarf_set *)&set, pc);
}

static int rule_at(uintptr_t pc)
{
	const struct dwarf_row *r = row_at(pc);
	return r ? r->kind & DWARF_RULE_MASK : -1;
}

static void test_programs(void)
{
	/* push rbp; mov rbp,rsp; ...; leave at 0x1040 (remember/restore state), PLT-free */
	static const uint8_t fp_prog[] = {
		0x41, 0x0e, 16, 0x86, 2,  /* +1: CFA rsp+16, rbp at CFA-16 */
		0x43, 0x0d, 6,            /* +3: CFA rbp+16 */
		0x7c, 0x0a, 0x0c, 7, 8,   /* +60 (0x1040): remember; CFA rsp+8 */
		0x41, 0x0b,               /* +1: restore_state */
		0x2e, 0x10, 0x00,         /* GNU_args_size 16, nop */
	};
	CHECK_INT(0, build(fp_prog, sizeof(fp_prog)));
	CHECK_INT(6, obj.n_rows); /* 0x1000 rsp+8, 0x1001 rsp+16, 0x1004 rbp+16, 0x1040 rsp+8, 0x1041 rbp+16, 0x1100 none */
	const struct dwarf_row *r = row_at(0x1000);
	CHECK(r && r->kind == DWARF_CFA_RSP && r->cfa == 8 && r->fp == 0);
	r = row_at(0x1002);
	CHECK(r && r->kind == DWARF_CFA_RSP && r->cfa == 16 && r->fp == -2);
	r = row_at(0x1020);
	CHECK(r && r->kind == DWARF_CFA_RBP && r->cfa == 16 && r->fp == -2);
	r = row_at(0x1040);
	CHECK(r && r->kind == DWARF_CFA_RSP && r->cfa == 8);
	r = row_at(0x10ff);
	CHECK(r && r->kind == DWARF_CFA_RBP && r->cfa == 16 && r->fp == -2);
	CHECK_INT(DWARF_NONE, rule_at(0x1100));
	CHECK_INT(DWARF_NONE, rule_at(0x11ff));
	CHECK(row_at(0x1200) == NULL); /* outside the object */
	CHECK(row_at(0xfff) == NULL);

	/* an opcode no one defines: the rest of the FDE is unknown, the object still builds */
	static const uint8_t bad_op[] = {0x44, 0x0e, 16, 0x48, 0x3f, 0x44, 0x0e, 24};
	CHECK_INT(0, build(bad_op, sizeof(bad_op)));
	CHECK_INT(DWARF_CFA_RSP, rule_at(0x1004));
	CHECK_INT(DWARF_UNKNOWN, rule_at(0x100c));
	CHECK_INT(DWARF_UNKNOWN, rule_at(0x10ff));

	/* restore_state without remember: unknown from there */
	static const uint8_t underflow[] = {0x44, 0x0b};
	CHECK_INT(0, build(underflow, sizeof(underflow)));
	CHECK_INT(DWARF_CFA_RSP, rule_at(0x1000));
	CHECK_INT(DWARF_UNKNOWN, rule_at(0x1004));

	/* the PLT's CFA expression is understood; any other expression is unknown */
	static const uint8_t plt[] = {0x46, 0x0f, 11, 0x77, 8, 0x80, 0, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22,
				      0x50, 0x0f, 2, 0x77, 8};
	CHECK_INT(0, build(plt, sizeof(plt)));
	r = row_at(0x1008);
	CHECK(r && r->kind == DWARF_CFA_PLT && r->cfa == 11);
	CHECK_INT(DWARF_UNKNOWN, rule_at(0x1020));

	/* return address undefined: the outermost frame */
	static const uint8_t outer[] = {0x07, 16};
	CHECK_INT(0, build(outer, sizeof(outer)));
	CHECK_INT(DWARF_END, rule_at(0x1010));

	/* an operand that runs past the FDE: unknown, not a crash */
	static const uint8_t cut_operand[] = {0x44, 0x0c, 0x87};
	CHECK_INT(0, build(cut_operand, sizeof(cut_operand)));
	CHECK_INT(DWARF_UNKNOWN, rule_at(0x1004));

	/* FDEs 8 bytes apart (alignment padding): no "none" row between them, and the second one's entry
	 * row merges with the first one's last; 32 bytes apart: a "none" row for the gap */
	static const uint8_t push_pop[] = {0x41, 0x0e, 16, 0x44, 0x0e, 8};
	struct fde_spec three[] = {{0x1000, 0x18, push_pop, sizeof(push_pop)},
				   {0x1020, 0x18, push_pop, sizeof(push_pop)},
				   {0x1058, 0x18, push_pop, sizeof(push_pop)}};
	static uint8_t buf[512];
	size_t len = make_eh_n(buf, three, 3);
	free((void *)obj.rows);
	CHECK_INT(0, dwarf_build_object(buf, len, NULL, 0, 0x1000, 0x1200, &obj, NULL));
	/* 0x1000 rsp+8, 0x1001 +16, 0x1005 +8, 0x1021 +16, 0x1025 +8, 0x1038 none, 0x1058 +8, 0x1059 +16,
	 * 0x105d +8, 0x1070 none */
	CHECK_INT(10, obj.n_rows);
	CHECK_INT(DWARF_CFA_RSP, rule_at(0x101c));
	r = row_at(0x1022);
	CHECK(r && r->kind == DWARF_CFA_RSP && r->cfa == 16);
	CHECK_INT(DWARF_NONE, rule_at(0x1040));
	CHECK_INT(DWARF_CFA_RSP, rule_at(0x1058));
	CHECK_INT(DWARF_NONE, rule_at(0x1070));
	free((void *)obj.rows);
	obj.rows = NULL;
}

/* ---- garbage and truncated sections are rejected ---- */

struct own {
	const uint8_t *eh;
	size_t len;
};

static int find_own(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct own *o = arg;
	if (info->dlpi_name && info->dlpi_name[0])
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_GNU_EH_FRAME)
			continue;
		const uint8_t *hdr = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
		if (hdr[1] != 0x1b)
			return 1;
		o->eh = hdr + 4 + *(const int32_t *)(hdr + 4);
		/* up to the zero terminator */
		size_t off = 0;
		uint32_t n;
		while ((n = *(const uint32_t *)(o->eh + off)) != 0)
			off += 4 + n;
		o->len = off + 4;
		return 1;
	}
	return 1;
}

static void test_garbage(void)
{
	struct dwarf_object o;
	uint8_t junk[4096];
	uint32_t x = 12345;
	int rejected = 0, survived = 0;
	for (int round = 0; round < 200; round++) {
		for (size_t i = 0; i < sizeof(junk); i++) {
			x = x * 1103515245u + 12345u;
			junk[i] = (uint8_t)(x >> 16);
		}
		/* small plausible lengths make the walker go deeper than pure noise would */
		if (round & 1)
			put32(junk, 0x20);
		int rc = dwarf_build_object(junk, sizeof(junk), round & 2 ? junk : NULL, 64, 0x1000, 0x100000, &o, NULL);
		if (rc == -EINVAL)
			rejected++;
		else if (rc == 0)
			survived++;
		free((void *)o.rows);
	}
	CHECK_INT(200, rejected + survived);
	CHECK(rejected > 150);

	/* a length field that runs past the end */
	uint8_t small[16] = {0};
	put32(small, 0x1000);
	CHECK_INT(-EINVAL, dwarf_build_object(small, sizeof(small), NULL, 0, 0x1000, 0x2000, &o, NULL));
	CHECK(o.rows == NULL && o.n_rows == 0);
	/* an FDE whose CIE pointer leads before the section */
	uint8_t orphan[16] = {0};
	put32(orphan, 12);
	put32(orphan + 4, 0x400);
	CHECK_INT(-EINVAL, dwarf_build_object(orphan, sizeof(orphan), NULL, 0, 0x1000, 0x2000, &o, NULL));
	CHECK_INT(-EINVAL, dwarf_build_object(orphan, 0, NULL, 0, 0x2000, 0x1000, &o, NULL));

	/* this program's own .eh_frame, copied whole and cut inside its second record */
	struct own own = {NULL, 0};
	dl_iterate_phdr(find_own, &own);
	CHECK(own.eh != NULL && own.len > 64);
	if (!own.eh)
		return;
	uint8_t *copy = malloc(own.len);
	memcpy(copy, own.eh, own.len);
	CHECK_INT(0, dwarf_build_object(copy, own.len, NULL, 0, 0, UINT32_MAX, &o, NULL));
	free((void *)o.rows);
	size_t second = 4 + *(const uint32_t *)copy;
	CHECK_INT(-EINVAL, dwarf_build_object(copy, second + 10, NULL, 0, 0, UINT32_MAX, &o, NULL));
	CHECK(o.rows == NULL);
	free(copy);
}

/* ---- unwinding this program: main -> chain_a -> chain_b -> chain_c, no frame pointers ---- */

static uintptr_t ra_a, ra_b, ra_c;
static uint64_t pcs[64];
static int n_pcs, n_pcs_fp, n_pcs_java;
static struct stackwalk_end reached_java;
static volatile int sink;
static long long walk_ns[2];

/* from inside a signal handler: the walk crosses the signal trampoline back into chain_c */
static uint64_t sig_pcs[64];
static int n_sig_pcs;

static void on_signal(int sig, siginfo_t *si, void *ctx)
{
	(void)sig;
	(void)si;
	(void)ctx;
	ucontext_t uc;
	getcontext(&uc);
	struct stackwalk_end rj;
	n_sig_pcs = stackwalk_dwarf(&uc, 0, 0, sig_pcs, 64, &rj);
}

static int (*volatile raise_fn)(int) = raise;

__attribute__((noinline)) static int chain_c(int depth)
{
	volatile char pad[40];
	pad[depth & 31] = (char)depth;
	ra_c = (uintptr_t)__builtin_return_address(0);
	ucontext_t uc;
	getcontext(&uc);
	struct stackwalk_end rj;
	n_pcs = stackwalk_dwarf(&uc, 0, 0, pcs, 64, &rj);
	uint64_t fp_pcs[64];
	n_pcs_fp = stackwalk_fp(&uc, 0, 0, fp_pcs, 64, &rj);
	/* cost of a walk of this stack (printed, not checked: the machine may be busy) */
	struct timespec t0, t1, t2;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < 20000; i++)
		stackwalk_dwarf(&uc, 0, 0, fp_pcs, 64, &rj);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	for (int i = 0; i < 20000; i++)
		stackwalk_fp(&uc, 0, 0, fp_pcs, 64, &rj);
	clock_gettime(CLOCK_MONOTONIC, &t2);
	walk_ns[0] = ((t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec)) / 20000;
	walk_ns[1] = ((t2.tv_sec - t1.tv_sec) * 1000000000LL + (t2.tv_nsec - t1.tv_nsec)) / 20000;
	raise_fn(SIGUSR2);
	/* a pretend code cache around chain_b's return address into chain_a: the walk stops there */
	n_pcs_java = stackwalk_dwarf(&uc, ra_b - 1, ra_b + 1, fp_pcs, 64, &reached_java);
	return pad[depth & 31] + n_pcs;
}

__attribute__((noinline)) static int chain_b(int depth)
{
	volatile long pad[7];
	pad[depth & 7] = depth;
	ra_b = (uintptr_t)__builtin_return_address(0);
	int r = chain_c(depth + 1);
	return r + (int)pad[depth & 7];
}

__attribute__((noinline)) static int chain_a(int depth)
{
	volatile long pad[3];
	pad[depth & 3] = depth;
	ra_a = (uintptr_t)__builtin_return_address(0);
	int r = chain_b(depth + 1);
	return r + (int)pad[depth & 3];
}

static void test_unwind(void)
{
	CHECK_INT(1, dwarf_refresh());
	CHECK_INT(0, dwarf_refresh()); /* nothing loaded since */
	struct dwarf_stats st;
	dwarf_get_stats(&st);
	CHECK(st.objects >= 2 && st.rows > 100 && st.bytes > 0);
	printf("tables: %u objects, %llu FDEs, %llu rows, %llu bytes (largest %s)\n", st.objects,
	       (unsigned long long)st.fdes, (unsigned long long)st.rows, (unsigned long long)st.bytes, st.largest);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGUSR2, &sa, NULL);
	uint64_t failed = atomic_load(&stackwalk_stats.failed);
	sink = chain_a(1);
	CHECK(n_pcs >= 5);
	CHECK(pcs[1] == ra_c);
	CHECK(pcs[2] == ra_b);
	CHECK(pcs[3] == ra_a);
	/* main and below (libc's start code) unwind to the outermost frame without a failure */
	CHECK_INT(failed, atomic_load(&stackwalk_stats.failed));
	CHECK_INT(2, n_pcs_java);
	CHECK_INT(1, reached_java.reached_java);
	int at = -1;
	for (int i = 0; i < n_sig_pcs; i++)
		if (sig_pcs[i] == ra_c)
			at = i;
	CHECK(at > 2 && at + 2 < n_sig_pcs);
	if (at > 2 && at + 2 < n_sig_pcs)
		CHECK(sig_pcs[at + 1] == ra_b && sig_pcs[at + 2] == ra_a);
	printf("walk from a signal handler: %d frames, chain_b's return address at %d\n", n_sig_pcs, at);
	if (getenv("TEST_DWARF_VERBOSE")) {
		for (int i = 0; i < n_sig_pcs; i++) {
			Dl_info info;
			printf("  %#lx %s\n", (unsigned long)sig_pcs[i],
			       dladdr((void *)sig_pcs[i], &info) && info.dli_sname ? info.dli_sname : "?");
		}
	}
	printf("dwarf walk: %d frames in %lld ns; frame-pointer walk: %d frames in %lld ns\n", n_pcs, walk_ns[0],
	       n_pcs_fp, walk_ns[1]);
}

int main(void)
{
	test_programs();
	test_garbage();
	test_unwind();
	printf("%d passed, %d failed\n", check_passed, check_failed);
	return check_failed ? 1 : 0;
}
