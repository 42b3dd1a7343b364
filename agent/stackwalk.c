/* Native frames by frame pointers or DWARF unwind tables, for the sampler. Signal-safe: every function
 * here may run inside a signal handler. */
#include "stackwalk.h"

#include <stddef.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <ucontext.h>
#include <unistd.h>

#include "dwarf_table.h"

struct stackwalk_stats stackwalk_stats;

/* A window of the stack copied with one process_vm_readv, which stops at the first unmapped byte
 * instead of faulting: frames inside the window are read from the copy, the next window when a frame
 * lies beyond it. */
#define WINDOW 8192

struct window {
	uintptr_t base;
	long len;
	long pid;
	unsigned char buf[WINDOW];
};

static int read_words(struct window *w, uintptr_t addr, uintptr_t out[2])
{
	if (addr < w->base || addr + 16 > w->base + (uintptr_t)w->len) {
		struct iovec local = {w->buf, WINDOW};
		struct iovec remote = {(void *)addr, WINDOW};
		w->base = addr;
		w->len = syscall(SYS_process_vm_readv, w->pid, &local, 1UL, &remote, 1UL, 0UL);
		if (w->len < 16)
			return -1;
	}
	const unsigned char *p = w->buf + (addr - w->base);
	uintptr_t a = 0, b = 0;
	for (int i = 7; i >= 0; i--) {
		a = a << 8 | p[i];
		b = b << 8 | p[8 + i];
	}
	out[0] = a;
	out[1] = b;
	return 0;
}

/* One word at addr; a new window starts at low (the frame's sp) when that covers addr, so the return
 * address and the saved rbp of a frame come from one copy. */
static int read_word(struct window *w, uintptr_t low, uintptr_t addr, uintptr_t *out)
{
	if (addr < w->base || addr + 8 > w->base + (uintptr_t)w->len) {
		uintptr_t base = low <= addr && addr - low <= WINDOW - 8 ? low : addr;
		struct iovec local = {w->buf, WINDOW};
		struct iovec remote = {(void *)base, WINDOW};
		w->base = base;
		w->len = syscall(SYS_process_vm_readv, w->pid, &local, 1UL, &remote, 1UL, 0UL);
		if (w->len < 0 || addr + 8 > base + (uintptr_t)w->len) {
			w->len = 0;
			return -1;
		}
	}
	const unsigned char *p = w->buf + (addr - w->base);
	uintptr_t a = 0;
	for (int i = 7; i >= 0; i--)
		a = a << 8 | p[i];
	*out = a;
	return 0;
}

/* The interrupted registers; 0 when there is nothing to walk (no context, or the pc is already in the
 * code cache: then end says so). */
static int walk_begin(void *ucontext, uintptr_t code_lo, uintptr_t code_hi, int max, struct stackwalk_end *end,
		      uintptr_t *pc, uintptr_t *sp, uintptr_t *fp)
{
	end->reached_java = 0;
	if (!ucontext || max <= 0)
		return 0;
	const ucontext_t *uc = ucontext;
	*pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
	*sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
	*fp = (uintptr_t)uc->uc_mcontext.gregs[REG_RBP];
	if (*pc >= code_lo && *pc < code_hi) {
		*end = (struct stackwalk_end){1, *pc, *sp, *fp};
		return 0;
	}
	return 1;
}

static void window_init(struct window *w)
{
	w->base = 0;
	w->len = 0;
	w->pid = syscall(SYS_getpid);
}

int stackwalk_fp(void *ucontext, uintptr_t code_lo, uintptr_t code_hi, uint64_t *pcs, int max,
		 struct stackwalk_end *end)
{
	uintptr_t pc, sp, fp;
	if (!walk_begin(ucontext, code_lo, code_hi, max, end, &pc, &sp, &fp))
		return 0;
	int n = 0;
	pcs[n++] = pc;
	struct window win;
	window_init(&win);
	while (n < max) {
		if ((fp & 7) != 0 || fp < sp || fp - sp > (8u << 20))
			break;
		uintptr_t w[2];
		if (read_words(&win, fp, w) != 0)
			break;
		uintptr_t next = w[0], ret = w[1];
		if (ret < 4096)
			break;
		if (ret >= code_lo && ret < code_hi) {
			*end = (struct stackwalk_end){1, ret, fp + 16, next};
			break;
		}
		pcs[n++] = ret;
		if (next <= fp)
			break;
		sp = fp + 16;
		fp = next;
	}
	return n;
}

#define MAX_FRAME (8u << 20)
/* where the kernel's rt_sigframe keeps the interrupted registers, from the sp __restore_rt runs with
 * (the ucontext_t follows the 8-byte return address the handler popped) */
#define UC_GREGS offsetof(ucontext_t, uc_mcontext.gregs)
#define UC_RBP (UC_GREGS + 8 * REG_RBP)
#define UC_RSP (UC_GREGS + 8 * REG_RSP)
#define UC_RIP (UC_GREGS + 8 * REG_RIP)

int stackwalk_dwarf(void *ucontext, uintptr_t code_lo, uintptr_t code_hi, uint64_t *pcs, int max,
		 struct stackwalk_end *end)
{
	uintptr_t pc, sp, fp;
	if (!walk_begin(ucontext, code_lo, code_hi, max, end, &pc, &sp, &fp))
		return 0;
	const struct dwarf_set *set = atomic_load_explicit(&dwarf_table_current, memory_order_acquire);
	atomic_fetch_add_explicit(&stackwalk_stats.walks, 1, memory_order_relaxed);
	int n = 0;
	pcs[n++] = pc;
	struct window win;
	window_init(&win);
	int fp_valid = 1, failed = 0;
	/* the interrupted pc is exact; a return address may be one past a call at a function's end */
	uintptr_t lookup = pc;
	while (n < max) {
		const struct dwarf_row *row = dwarf_table_find(set, lookup);
		int rule = row ? row->kind & DWARF_RULE_MASK : DWARF_NONE;
		uintptr_t cfa, ra, nfp = fp;
		if (rule == DWARF_END)
			break;
		if (rule == DWARF_UNKNOWN) {
			failed = 1;
			break;
		}
		if (rule == DWARF_SIGNAL) {
			/* continue from the interrupted context: its rip is exact, not a return address */
			uintptr_t nsp, npc;
			if ((sp & 7) != 0 || read_word(&win, sp, sp + UC_RBP, &nfp) != 0 ||
			    read_word(&win, sp, sp + UC_RSP, &nsp) != 0 || read_word(&win, sp, sp + UC_RIP, &npc) != 0 ||
			    nsp <= sp || nsp - sp > MAX_FRAME || npc < 4096) {
				failed = 1;
				break;
			}
			if (npc >= code_lo && npc < code_hi) {
				*end = (struct stackwalk_end){1, npc, nsp, nfp};
				break;
			}
			pcs[n++] = npc;
			sp = nsp;
			fp = nfp;
			fp_valid = 1;
			pc = npc;
			lookup = npc;
			continue;
		}
		if (rule == DWARF_NONE) {
			/* no CFI here (anonymous code, an object without .eh_frame): one frame-pointer step */
			if (!fp_valid || (fp & 7) != 0 || fp < sp || fp - sp > MAX_FRAME ||
			    read_word(&win, sp, fp, &nfp) != 0 || read_word(&win, sp, fp + 8, &ra) != 0) {
				failed = 1;
				break;
			}
			cfa = fp + 16;
			fp_valid = 1;
			atomic_fetch_add_explicit(&stackwalk_stats.fp_steps, 1, memory_order_relaxed);
		} else {
			uintptr_t off = row->cfa;
			if (row->kind & DWARF_CFA_X8)
				off *= 8;
			if (rule == DWARF_CFA_RSP) {
				cfa = sp + off;
			} else if (rule == DWARF_CFA_RBP) {
				if (!fp_valid) {
					failed = 1;
					break;
				}
				cfa = fp + off;
			} else {
				cfa = sp + 8 + ((pc & 15) >= off ? 8 : 0);
			}
			if ((cfa & 7) != 0 || cfa <= sp || cfa - sp > MAX_FRAME || read_word(&win, sp, cfa - 8, &ra) != 0) {
				failed = 1;
				break;
			}
			if (row->kind & DWARF_FP_LOST) {
				fp_valid = 0;
			} else if (row->fp != 0) {
				uintptr_t at = cfa + (uintptr_t)((intptr_t)row->fp * 8);
				/* after `pop %rbp` GCC keeps the rule "saved at CFA-16": a word just below sp,
				 * in the red zone the kernel leaves intact for the signal frame */
				if (at + 128 < sp || read_word(&win, sp - 128, at, &nfp) != 0) {
					failed = 1;
					break;
				}
				fp_valid = 1;
			}
		}
		if (ra < 4096)
			break;
		if (ra >= code_lo && ra < code_hi) {
			*end = (struct stackwalk_end){1, ra, cfa, nfp};
			break;
		}
		pcs[n++] = ra;
		sp = cfa;
		fp = nfp;
		pc = ra;
		lookup = ra - 1;
	}
	if (failed)
		atomic_fetch_add_explicit(&stackwalk_stats.failed, 1, memory_order_relaxed);
	return n;
}
