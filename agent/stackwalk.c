/* Native frames by frame pointers, for the sampler. Signal-safe: every function here may run inside a
 * signal handler. */
#include "stackwalk.h"

#include <sys/syscall.h>
#include <sys/uio.h>
#include <ucontext.h>
#include <unistd.h>

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

int stackwalk_fp(void *ucontext, uintptr_t code_lo, uintptr_t code_hi, uint64_t *pcs, int max, int *reached_java)
{
	*reached_java = 0;
	if (!ucontext || max <= 0)
		return 0;
	const ucontext_t *uc = ucontext;
	uintptr_t pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
	uintptr_t sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
	uintptr_t fp = (uintptr_t)uc->uc_mcontext.gregs[REG_RBP];
	if (pc >= code_lo && pc < code_hi) {
		*reached_java = 1;
		return 0;
	}
	int n = 0;
	pcs[n++] = pc;
	struct window win;
	win.base = 0;
	win.len = 0;
	win.pid = syscall(SYS_getpid);
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
			*reached_java = 1;
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
