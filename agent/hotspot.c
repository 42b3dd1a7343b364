/* HotSpot frames for the signal handler (see hotspot.h). Signal-safe: every function here may run inside
 * a signal handler. */
#include "hotspot.h"

#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

struct hs_layout hotspot_layout;

#define L hotspot_layout

static inline uintptr_t word(uintptr_t addr)
{
	return *(const uintptr_t *)addr;
}

static inline int32_t i32(uintptr_t addr)
{
	return *(const int32_t *)addr;
}

/* Copies len bytes at addr with process_vm_readv: fails instead of faulting on unmapped memory. */
static int safe_read(uintptr_t addr, void *out, unsigned long len)
{
	if (addr < 4096)
		return -1;
	struct iovec local = {out, len};
	struct iovec remote = {(void *)addr, len};
	long got = syscall(SYS_process_vm_readv, (long)syscall(SYS_getpid), &local, 1UL, &remote, 1UL, 0UL);
	return got == (long)len ? 0 : -1;
}

int hotspot_find(uintptr_t pc, struct hs_blob *b)
{
	if (!L.ok)
		return 0;
	for (int h = 0; h < L.n_heaps; h++) {
		uintptr_t heap = L.heaps[h];
		uintptr_t lo = word(heap + L.heap_memory + L.vs_low_boundary);
		uintptr_t hi = word(heap + L.heap_memory + L.vs_high);
		if (pc < lo || pc >= hi)
			continue;
		const unsigned char *map = (const unsigned char *)word(heap + L.heap_segmap + L.vs_low_boundary);
		int log2 = i32(heap + L.heap_log2);
		if (!map || log2 < 4 || log2 > 20)
			return 0;
		uintptr_t seg = (pc - lo) >> log2;
		if (map[seg] == 0xff)
			return 0;
		/* each entry says how many segments back the block starts (at most 0xfe per hop) */
		for (int hops = 0; map[seg] > 0; hops++) {
			if (hops > 65536 || map[seg] > seg)
				return 0;
			seg -= map[seg];
		}
		uintptr_t block = lo + (seg << log2);
		if (!*(const unsigned char *)(block + (uintptr_t)L.hb_used))
			return 0;
		uintptr_t blob = block + (uintptr_t)L.hb_size;
		int32_t size = i32(blob + L.blob_size);
		if (size <= 0 || blob + (uintptr_t)size > hi)
			return 0;
		uintptr_t cb, ce;
		if (L.code_absolute) {
			cb = word(blob + L.blob_code_begin);
			ce = word(blob + L.blob_code_end);
		} else {
			cb = blob + (uintptr_t)i32(blob + L.blob_code_begin);
			ce = blob + (uintptr_t)i32(blob + L.blob_code_end);
		}
		if (cb < blob || ce > blob + (uintptr_t)size || pc < cb || pc >= ce)
			return 0;
		b->start = blob;
		b->code_begin = cb;
		b->code_end = ce;
		int32_t fs = i32(blob + L.blob_frame_size);
		b->frame_size = fs > 0 && fs < (1 << 20) ? fs * 8 : 0;
		int fc = L.frame_complete_bytes == 2 ? *(const int16_t *)(blob + L.blob_frame_complete)
						     : i32(blob + L.blob_frame_complete);
		b->frame_complete = fc >= 0 && cb + (uintptr_t)fc <= ce ? cb + (uintptr_t)fc : 0;
		b->method = 0;
		b->level = 0;
		b->osr = 0;
		b->verified_entry = 0;
		int is_nm = L.blob_kind >= 0 ? *(const unsigned char *)(blob + L.blob_kind) == L.kind_nmethod
					    : L.vtbl_nmethod && word(blob) == L.vtbl_nmethod;
		if (is_nm) {
			b->kind = HS_NMETHOD;
			b->method = word(blob + L.nm_method);
			b->level = L.level_bytes == 1 ? *(const signed char *)(blob + L.nm_level) : i32(blob + L.nm_level);
			b->osr = i32(blob + L.nm_entry_bci) != -1;
			uintptr_t ve = L.verified_absolute ? word(blob + L.nm_verified_entry)
							   : cb + *(const uint16_t *)(blob + L.nm_verified_entry);
			b->verified_entry = ve >= cb && ve < ce ? ve : 0;
		} else if (pc >= L.interp_lo && pc < L.interp_hi) {
			b->kind = HS_INTERPRETER;
		} else {
			b->kind = HS_STUB;
		}
		return 1;
	}
	return 0;
}

/* The word at addr when it lies in the stack above sp; else -1. */
static int stack_word(uintptr_t addr, uintptr_t sp, uintptr_t stack_hi, uintptr_t *out)
{
	if ((addr & 7) != 0 || addr < sp || addr + 8 > stack_hi)
		return -1;
	*out = word(addr);
	return 0;
}

/* Bytes the interrupted compiled method has pushed at pc when pc is in its prologue (before the frame
 * is complete) or its epilogue (frame being torn down): 0 = return address at sp; -1 = cannot tell.
 * Decodes the few instruction forms HotSpot's x86_64 prologues and epilogues use: stack bang
 * (mov %eax,-N(%rsp)), push %rbp, sub $N,%rsp, multi-byte nops; add $N,%rsp, pop %rbp, return poll,
 * ret. All bytes read lie in the method's code. */
static long pushed_at(const struct hs_blob *b, uintptr_t pc)
{
	const unsigned char *c = (const unsigned char *)pc;
	uintptr_t room = b->code_end - pc;
	/* epilogue: at ret, or at the poll after pop %rbp: nothing left but the return address */
	if (room >= 1 && c[0] == 0xc3)
		return 0;
	if (room >= 1 && c[0] == 0x5d)
		return 8;
	if (room >= 10 && c[0] == 0x49 && c[1] == 0x3b && c[2] == 0x67 && c[4] == 0x0f && c[5] == 0x87)
		return 0; /* cmp disp8(%r15),%rsp; ja: the return poll (JDK 17+) */
	if (room >= 13 && c[0] == 0x49 && c[1] == 0x3b && c[2] == 0xa7 && c[7] == 0x0f && c[8] == 0x87)
		return 0;
	if (room >= 7 && c[0] == 0x0f && c[1] == 0x87 && c[6] == 0xc3)
		return 0; /* the poll's ja, right before ret */
	if (!b->verified_entry || pc < b->verified_entry)
		return pc >= b->code_begin && b->verified_entry ? 0 : -1;
	const unsigned char *p = (const unsigned char *)b->verified_entry;
	long off = 0;
	int framed = 0;
	for (int steps = 0; (uintptr_t)p < pc && steps < 32; steps++) {
		uintptr_t left = b->code_end - (uintptr_t)p;
		if (p[0] == 0x55) {
			off += 8;
			p += 1;
		} else if (left >= 4 && p[0] == 0x48 && p[1] == 0x83 && p[2] == 0xec) {
			off += p[3];
			p += 4;
			framed = 1;
		} else if (left >= 7 && p[0] == 0x48 && p[1] == 0x81 && p[2] == 0xec) {
			off += (long)((uint32_t)p[3] | (uint32_t)p[4] << 8 | (uint32_t)p[5] << 16 | (uint32_t)p[6] << 24);
			p += 7;
			framed = 1;
		} else if (left >= 7 && p[0] == 0x89 && p[1] == 0x84 && p[2] == 0x24) {
			p += 7; /* stack bang */
		} else if (p[0] == 0x90) {
			p += 1;
		} else if (left >= 2 && p[0] == 0x66 && p[1] == 0x90) {
			p += 2;
		} else if (left >= 3 && p[0] == 0x0f && p[1] == 0x1f) {
			p += p[2] == 0x00 ? 3 : p[2] == 0x40 ? 4 : p[2] == 0x44 ? 5 : p[2] == 0x80 ? 7 : 8;
		} else if (left >= 4 && p[0] == 0x66 && p[1] == 0x0f && p[2] == 0x1f) {
			p += p[3] == 0x44 ? 6 : 9;
		} else {
			/* past the frame's construction (an entry barrier, say): the frame is whole */
			return framed ? off : -1;
		}
	}
	return off;
}

/* An entry frame (the call stub: the VM called Java): the caller's Java frames continue at the anchor
 * the JavaCallWrapper saved, found at fp - 6 words. */
static int entry_sender(struct hs_frame *f, uintptr_t stack_hi)
{
	uintptr_t wrapper, sp, pc, fp;
	if (L.jcw_anchor < 0 || L.jt_anchor_sp < 0 || f->fp <= f->sp || stack_word(f->fp - 48, f->sp, stack_hi, &wrapper))
		return -1;
	uintptr_t a = wrapper + (uintptr_t)L.jcw_anchor;
	if (stack_word(a + (uintptr_t)L.anchor_sp, f->sp, stack_hi, &sp) || !sp ||
	    stack_word(a + (uintptr_t)L.anchor_pc, f->sp, stack_hi, &pc) ||
	    stack_word(a + (uintptr_t)L.anchor_fp, f->sp, stack_hi, &fp))
		return -1;
	if (sp <= f->sp || (sp & 7) != 0 || sp >= stack_hi)
		return -1;
	if (!pc && stack_word(sp - 8, f->sp, stack_hi, &pc))
		return -1;
	f->pc = pc;
	f->sp = sp;
	f->fp = fp;
	return 0;
}

int hotspot_sender(struct hs_frame *f, const struct hs_blob *b, int top, uintptr_t stack_hi)
{
	uintptr_t sp = f->sp, fp = f->fp, ret, link = fp, nsp;
	if (!top && L.call_stub_return && f->pc == *L.call_stub_return)
		return entry_sender(f, stack_hi);
	if (b->kind == HS_INTERPRETER) {
		/* rbp frame: [fp] caller's rbp, [fp+8] return address, [fp-8] the caller's sp before the
		 * interpreter extended it */
		if (top || fp <= sp || fp - sp > (1u << 20))
			return -1;
		if (stack_word(fp, sp, stack_hi, &link) || stack_word(fp + 8, sp, stack_hi, &ret) ||
		    stack_word(fp - 8, sp, stack_hi, &nsp))
			return -1;
		if (nsp < fp + 16 || nsp - fp > (1u << 20))
			return -1;
	} else if (top && b->kind == HS_NMETHOD && b->frame_size > 0) {
		/* the interrupted method may be building or tearing down its frame */
		long pushed = pushed_at(b, f->pc);
		if (pushed < 0 && b->frame_complete && f->pc >= b->frame_complete)
			pushed = b->frame_size - 8;
		if (pushed < 0 || pushed > b->frame_size - 8)
			return -1;
		nsp = sp + (uintptr_t)pushed + 8;
		if (stack_word(nsp - 8, sp, stack_hi, &ret))
			return -1;
		if (pushed >= 8 && stack_word(nsp - 16, sp, stack_hi, &link))
			return -1;
	} else if (b->frame_size > 0 && (!top || (b->frame_complete && f->pc >= b->frame_complete))) {
		nsp = sp + (uintptr_t)b->frame_size;
		if (stack_word(nsp - 8, sp, stack_hi, &ret) || stack_word(nsp - 16, sp, stack_hi, &link))
			return -1;
	} else if (top && (b->frame_size == 0 || f->pc == b->code_begin ||
			   (b->kind == HS_NMETHOD && f->pc < b->frame_complete && f->pc < b->code_begin + 8))) {
		/* frameless, or the first instructions of a method: the return address is at sp */
		if (stack_word(sp, sp, stack_hi, &ret))
			return -1;
		nsp = sp + 8;
	} else {
		return -1;
	}
	if (ret < 4096 || nsp <= sp)
		return -1;
	f->pc = ret;
	f->sp = nsp;
	f->fp = link;
	return 0;
}

int hotspot_interpreted(const struct hs_frame *f, uintptr_t stack_hi, uintptr_t *method, int *bci)
{
	uintptr_t m, bcp;
	if (f->fp <= f->sp || stack_word(f->fp - 24, f->sp, stack_hi, &m) || stack_word(f->fp - 64, f->sp, stack_hi, &bcp))
		return -1;
	if (m < 4096 || (m & 7) != 0)
		return -1;
	*method = m;
	if (!bci)
		return 0;
	*bci = -1;
	uintptr_t cm;
	if (L.m_const_method >= 0 && safe_read(m + (uintptr_t)L.m_const_method, &cm, 8) == 0 && bcp > cm &&
	    bcp - cm < 65536 + 4096) {
		/* the bytecodes follow the ConstMethod header */
		long off = (long)(bcp - cm) - L.cm_header;
		if (off >= 0 && off < 65536)
			*bci = (int)off;
	}
	return 0;
}

uint64_t hotspot_jmethod(uintptr_t method)
{
	if (!L.ok || L.ik_jmethod_ids < 0 || method < 4096 || (method & 7) != 0)
		return 0;
	uintptr_t cm, cp, holder, ids, n, id;
	uint16_t idnum;
	if (safe_read(method + (uintptr_t)L.m_const_method, &cm, 8) || safe_read(cm + (uintptr_t)L.cm_constants, &cp, 8) ||
	    safe_read(cm + (uintptr_t)L.cm_idnum, &idnum, 2) || safe_read(cp + (uintptr_t)L.cp_holder, &holder, 8) ||
	    safe_read(holder + (uintptr_t)L.ik_jmethod_ids, &ids, 8) || !ids || safe_read(ids, &n, 8) ||
	    (uintptr_t)idnum >= n || safe_read(ids + 8 * ((uintptr_t)idnum + 1), &id, 8) || !id)
		return 0;
	/* the slot must point back at this method */
	uintptr_t back;
	if (safe_read(id, &back, 8) || back != method)
		return 0;
	return id;
}

uintptr_t hotspot_method_of(uint64_t jmethod)
{
	if (jmethod < 4096 || (jmethod & 7) != 0)
		return 0;
	return word((uintptr_t)jmethod);
}

static uintptr_t thread_of(void *env)
{
	if (!L.ok || !env || L.env_offset <= 0)
		return 0;
	return (uintptr_t)env - (uintptr_t)L.env_offset;
}

uintptr_t hotspot_stack_base(void *env)
{
	uintptr_t t = thread_of(env);
	return t && L.jt_stack_base >= 0 ? word(t + (uintptr_t)L.jt_stack_base) : 0;
}

int hotspot_thread_state(void *env)
{
	uintptr_t t = thread_of(env);
	return t && L.jt_state >= 0 ? i32(t + (uintptr_t)L.jt_state) : -1;
}

int hotspot_anchor(void *env, struct hs_frame *f, uintptr_t **pc_slot)
{
	uintptr_t t = thread_of(env);
	if (!t || L.jt_anchor_sp < 0)
		return 0;
	f->sp = word(t + (uintptr_t)L.jt_anchor_sp);
	if (!f->sp)
		return 0;
	*pc_slot = (uintptr_t *)(t + (uintptr_t)L.jt_anchor_pc);
	f->pc = **pc_slot;
	f->fp = word(t + (uintptr_t)L.jt_anchor_fp);
	return 1;
}
