/* Builds the DWARF unwind tables (dwarf_table.h) from each loaded object's .eh_frame: runs the CFA
 * programs of every FDE into compact rows, publishes them for the signal handler, and keeps them current
 * from a background thread while a session runs. Runs outside signal handlers only. */
#include "dwarf.h"

#include <errno.h>
#include <link.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

/* x86_64 DWARF register numbers */
#define DW_RBP 6
#define DW_RSP 7
#define DW_RA 16

/* DW_EH_PE pointer encodings */
#define PE_OMIT 0xff
#define PE_ABSPTR 0x00
#define PE_ULEB128 0x01
#define PE_UDATA2 0x02
#define PE_UDATA4 0x03
#define PE_UDATA8 0x04
#define PE_SLEB128 0x09
#define PE_SDATA2 0x0a
#define PE_SDATA4 0x0b
#define PE_SDATA8 0x0c
#define PE_PCREL 0x10
#define PE_DATAREL 0x30

/* ---- bounds-checked reader ---- */

struct rd {
	const uint8_t *p, *end;
	int err;
};

static uint64_t rd_fixed(struct rd *r, int n)
{
	if (r->err || r->end - r->p < n) {
		r->err = 1;
		return 0;
	}
	uint64_t v = 0;
	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | r->p[i];
	r->p += n;
	return v;
}

static uint64_t rd_uleb(struct rd *r)
{
	uint64_t v = 0;
	for (int shift = 0; !r->err; shift += 7) {
		if (r->p >= r->end || shift > 63) {
			r->err = 1;
			return 0;
		}
		uint8_t b = *r->p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	return 0;
}

static int64_t rd_sleb(struct rd *r)
{
	int64_t v = 0;
	int shift = 0;
	uint8_t b = 0;
	do {
		if (r->err || r->p >= r->end || shift > 63) {
			r->err = 1;
			return 0;
		}
		b = *r->p++;
		v |= (int64_t)((uint64_t)(b & 0x7f) << shift);
		shift += 7;
	} while (b & 0x80);
	if (shift < 64 && (b & 0x40))
		v |= -(int64_t)((uint64_t)1 << shift);
	return v;
}

/* A pointer in encoding enc; pc-relative ones against the field's own address, data-relative ones
 * against datarel. Indirect pointers are returned undereferenced (only personality routines use them). */
static uint64_t rd_ptr(struct rd *r, uint8_t enc, uintptr_t datarel)
{
	uintptr_t field = (uintptr_t)r->p;
	uint64_t v;
	switch (enc & 0x0f) {
	case PE_ABSPTR: v = rd_fixed(r, 8); break;
	case PE_ULEB128: v = rd_uleb(r); break;
	case PE_UDATA2: v = rd_fixed(r, 2); break;
	case PE_UDATA4: v = rd_fixed(r, 4); break;
	case PE_UDATA8: v = rd_fixed(r, 8); break;
	case PE_SLEB128: v = (uint64_t)rd_sleb(r); break;
	case PE_SDATA2: v = (uint64_t)(int64_t)(int16_t)rd_fixed(r, 2); break;
	case PE_SDATA4: v = (uint64_t)(int64_t)(int32_t)rd_fixed(r, 4); break;
	case PE_SDATA8: v = rd_fixed(r, 8); break;
	default: r->err = 1; return 0;
	}
	switch (enc & 0x70) {
	case 0: break;
	case PE_PCREL: v += field; break;
	case PE_DATAREL:
		if (!datarel)
			r->err = 1;
		v += datarel;
		break;
	default: r->err = 1; return 0;
	}
	return v;
}

/* ---- CIE / FDE ---- */

struct cie {
	uint64_t code_align;
	int64_t data_align;
	uint8_t fde_enc;
	int has_z;
	const uint8_t *insns, *insns_end;
};

/* The record at off: its body [*body, *end). -EINVAL when it does not fit or uses 64-bit lengths. */
static int record(const uint8_t *sec, size_t len, size_t off, const uint8_t **body, const uint8_t **end)
{
	if (off > len || len - off < 4)
		return -EINVAL;
	struct rd r = {sec + off, sec + len, 0};
	uint64_t n = rd_fixed(&r, 4);
	if (n == 0 || n == 0xffffffffu || n > (uint64_t)(r.end - r.p) || n < 4)
		return -EINVAL;
	*body = r.p;
	*end = r.p + n;
	return 0;
}

static int parse_cie(const uint8_t *sec, size_t len, size_t off, struct cie *c)
{
	const uint8_t *body, *end;
	if (record(sec, len, off, &body, &end) != 0)
		return -EINVAL;
	struct rd r = {body, end, 0};
	if (rd_fixed(&r, 4) != 0)
		return -EINVAL;
	uint64_t version = rd_fixed(&r, 1);
	if (version != 1 && version != 3 && version != 4)
		return -EINVAL;
	const char *aug = (const char *)r.p;
	while (!r.err && rd_fixed(&r, 1) != 0)
		;
	if (r.err)
		return -EINVAL;
	if (version == 4)
		rd_fixed(&r, 2); /* address_size, segment_selector_size */
	c->code_align = rd_uleb(&r);
	c->data_align = rd_sleb(&r);
	uint64_t ra = version == 1 ? rd_fixed(&r, 1) : rd_uleb(&r);
	c->fde_enc = PE_ABSPTR;
	c->has_z = aug[0] == 'z';
	if (c->has_z) {
		uint64_t n = rd_uleb(&r);
		if (r.err || n > (uint64_t)(r.end - r.p))
			return -EINVAL;
		struct rd a = {r.p, r.p + n, 0};
		for (const char *s = aug + 1; *s && !a.err; s++) {
			if (*s == 'R')
				c->fde_enc = (uint8_t)rd_fixed(&a, 1);
			else if (*s == 'L')
				rd_fixed(&a, 1);
			else if (*s == 'P')
				rd_ptr(&a, (uint8_t)rd_fixed(&a, 1), 0x1);
			else if (*s != 'S' && *s != 'B' && *s != 'G')
				break; /* unknown augmentation: the length still lets us skip the data */
		}
		if (a.err)
			return -EINVAL;
		r.p += n;
	} else if (aug[0]) {
		return -EINVAL; /* "eh" and other pre-'z' augmentations: data of unknown length */
	}
	if (r.err || ra != DW_RA || c->code_align == 0)
		return -EINVAL;
	c->insns = r.p;
	c->insns_end = end;
	return 0;
}

struct fde {
	uint64_t pc_begin, pc_end;
	size_t off;
};

/* Parses the FDE at off (its CIE too); fills f and, when c is given, the CIE and the FDE's instructions. */
static int parse_fde(const uint8_t *sec, size_t len, size_t off, struct fde *f, struct cie *c,
		     const uint8_t **insns, const uint8_t **insns_end)
{
	const uint8_t *body, *end;
	if (record(sec, len, off, &body, &end) != 0)
		return -EINVAL;
	struct rd r = {body, end, 0};
	uint64_t id = rd_fixed(&r, 4);
	size_t id_off = (size_t)(body - sec);
	if (id == 0 || id > id_off)
		return -EINVAL;
	struct cie local;
	struct cie *cp = c ? c : &local;
	if (parse_cie(sec, len, id_off - id, cp) != 0)
		return -EINVAL;
	uint64_t begin = rd_ptr(&r, cp->fde_enc, 0);
	uint64_t range = rd_ptr(&r, cp->fde_enc & 0x0f, 0);
	if (cp->has_z) {
		uint64_t n = rd_uleb(&r);
		if (r.err || n > (uint64_t)(r.end - r.p))
			return -EINVAL;
		r.p += n;
	}
	if (r.err || begin + range < begin)
		return -EINVAL;
	f->pc_begin = begin;
	f->pc_end = begin + range;
	f->off = off;
	if (insns) {
		*insns = r.p;
		*insns_end = end;
	}
	return 0;
}

/* ---- CFA programs -> rows ---- */

enum fp_rule { FP_SAME, FP_OFFSET, FP_LOST };
enum ra_rule { RA_CFA_M8, RA_UNDEF, RA_OTHER };
#define CFA_EXPR (-1)
#define CFA_PLT (-2)
#define CFA_SIGNAL (-3)

struct cfa_state {
	int64_t cfa_reg; /* DWARF register, CFA_EXPR or CFA_PLT */
	int64_t cfa_off;
	int fp;
	int64_t fp_off;
	int ra;
};

struct rowbuf {
	struct dwarf_row *v;
	size_t n, cap;
	uintptr_t lo, hi;
	uint64_t last_end; /* absolute pc where the last emitted row ends */
	uint64_t unknown;
	int oom;
};

static struct dwarf_row make_row(const struct cfa_state *s)
{
	struct dwarf_row row = {0, 0, 0, DWARF_UNKNOWN};
	if (s->cfa_reg == CFA_SIGNAL) {
		row.kind = DWARF_SIGNAL;
		return row;
	}
	if (s->ra == RA_UNDEF) {
		row.kind = DWARF_END;
		return row;
	}
	if (s->ra != RA_CFA_M8)
		return row;
	struct dwarf_row unknown = row;
	row.kind = 0;
	if (s->cfa_reg == CFA_PLT) {
		row.kind = DWARF_CFA_PLT;
		row.cfa = (uint16_t)s->cfa_off;
	} else if (s->cfa_reg == DW_RSP || s->cfa_reg == DW_RBP) {
		int64_t off = s->cfa_off;
		if (off < 8)
			return unknown;
		if (off <= 0xffff) {
			row.cfa = (uint16_t)off;
		} else if (off % 8 == 0 && off / 8 <= 0xffff) {
			row.cfa = (uint16_t)(off / 8);
			row.kind = DWARF_CFA_X8;
		} else {
			return unknown;
		}
		row.kind |= s->cfa_reg == DW_RSP ? DWARF_CFA_RSP : DWARF_CFA_RBP;
	} else {
		return unknown;
	}
	if (s->fp == FP_OFFSET) {
		if (s->fp_off % 8 == 0 && s->fp_off / 8 >= -128 && s->fp_off / 8 <= 127 && s->fp_off != 0)
			row.fp = (int8_t)(s->fp_off / 8);
		else
			row.kind |= DWARF_FP_LOST;
	} else if (s->fp == FP_LOST) {
		row.kind |= DWARF_FP_LOST;
	}
	return row;
}

static void push_row(struct rowbuf *b, uint64_t at, struct dwarf_row row)
{
	row.loc = (uint32_t)(at - b->lo);
	if (b->n > 0) {
		struct dwarf_row *last = &b->v[b->n - 1];
		if (last->cfa == row.cfa && last->fp == row.fp && last->kind == row.kind)
			return;
		if (last->loc == row.loc) {
			*last = row;
			return;
		}
	}
	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 1024;
		struct dwarf_row *v = realloc(b->v, cap * sizeof(*v));
		if (!v) {
			b->oom = 1;
			return;
		}
		b->v = v;
		b->cap = cap;
	}
	if ((row.kind & DWARF_RULE_MASK) == DWARF_UNKNOWN)
		b->unknown++;
	b->v[b->n++] = row;
}

#define DWARF_PAD 16

/* Rows for [start, end) with state s, clipped to the object and to what earlier FDEs covered; gaps
 * between FDEs become DWARF_NONE rows. */
static void emit(struct rowbuf *b, uint64_t start, uint64_t end, const struct cfa_state *s)
{
	if (start < b->last_end)
		start = b->last_end;
	if (end > b->hi)
		end = b->hi;
	if (start >= end)
		return;
	/* alignment padding between functions (never executed, never a return address) belongs to the
	 * previous row: that saves a "none" row and lets the next function's entry row merge with the
	 * previous function's last one (both "CFA = rsp+8"): about 40% fewer rows */
	if (start > b->last_end && (start - b->last_end >= DWARF_PAD || b->n == 0)) {
		struct dwarf_row none = {0, 0, 0, DWARF_NONE};
		push_row(b, b->last_end, none);
	}
	push_row(b, start, make_row(s));
	b->last_end = end;
}

/* DW_OP sequence of the lazy-binding PLT (ld's .plt CFI): rsp+8 + ((rip & 15) >= N ? 8 : 0) */
static int plt_expression(const uint8_t *p, uint64_t n, int64_t *threshold)
{
	static const uint8_t head[] = {0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a};
	static const uint8_t tail[] = {0x2a, 0x33, 0x24, 0x22};
	if (n != 11 || memcmp(p, head, 6) != 0 || memcmp(p + 7, tail, 4) != 0 || p[6] < 0x30 || p[6] > 0x4f)
		return 0;
	*threshold = p[6] - 0x30; /* DW_OP_litN */
	return 1;
}

static void set_reg(struct cfa_state *s, uint64_t reg, int fp_rule, int64_t off, int ra_rule)
{
	if (reg == DW_RBP) {
		s->fp = fp_rule;
		s->fp_off = off;
	} else if (reg == DW_RA) {
		s->ra = ra_rule;
	}
}

static void restore_reg(struct cfa_state *s, const struct cfa_state *init, uint64_t reg)
{
	if (reg == DW_RBP) {
		s->fp = init->fp;
		s->fp_off = init->fp_off;
	} else if (reg == DW_RA) {
		s->ra = init->ra;
	}
}

#define STATE_STACK 16

/* Runs a CFA program from loc. With rows (an FDE), emits a row at every advance and up to pc_end; an
 * instruction it cannot decode ends the program with the rest of the range DWARF_UNKNOWN. Returns 0,
 * or -EINVAL for such an instruction (rows then already cover the range). */
static int run(const struct cie *c, const uint8_t *p, const uint8_t *end, struct cfa_state *s,
	       const struct cfa_state *init, uint64_t loc, uint64_t pc_end, struct rowbuf *rows)
{
	struct cfa_state stack[STATE_STACK];
	int depth = 0;
	struct rd r = {p, end, 0};
	int bad = 0;
	while (r.p < r.end && !r.err && !bad) {
		uint8_t op = (uint8_t)rd_fixed(&r, 1);
		uint64_t reg, next = loc;
		int64_t off;
		switch (op >> 6) {
		case 1: /* DW_CFA_advance_loc */
			next = loc + (op & 0x3f) * c->code_align;
			goto advance;
		case 2: /* DW_CFA_offset */
			off = (int64_t)rd_uleb(&r) * c->data_align;
			set_reg(s, op & 0x3f, FP_OFFSET, off, off == -8 ? RA_CFA_M8 : RA_OTHER);
			continue;
		case 3: /* DW_CFA_restore */
			restore_reg(s, init, op & 0x3f);
			continue;
		}
		switch (op) {
		case 0x00: /* nop */
			break;
		case 0x01: /* set_loc */
			next = rd_ptr(&r, c->fde_enc, 0);
			goto advance;
		case 0x02: next = loc + rd_fixed(&r, 1) * c->code_align; goto advance;
		case 0x03: next = loc + rd_fixed(&r, 2) * c->code_align; goto advance;
		case 0x04: next = loc + rd_fixed(&r, 4) * c->code_align; goto advance;
		case 0x05: /* offset_extended */
			reg = rd_uleb(&r);
			off = (int64_t)rd_uleb(&r) * c->data_align;
			set_reg(s, reg, FP_OFFSET, off, off == -8 ? RA_CFA_M8 : RA_OTHER);
			break;
		case 0x06: /* restore_extended */
			restore_reg(s, init, rd_uleb(&r));
			break;
		case 0x07: /* undefined */
			set_reg(s, rd_uleb(&r), FP_LOST, 0, RA_UNDEF);
			break;
		case 0x08: /* same_value */
			set_reg(s, rd_uleb(&r), FP_SAME, 0, RA_OTHER);
			break;
		case 0x09: /* register */
			reg = rd_uleb(&r);
			off = (int64_t)rd_uleb(&r);
			set_reg(s, reg, off == DW_RBP ? FP_SAME : FP_LOST, 0, RA_OTHER);
			break;
		case 0x0a: /* remember_state */
			if (depth == STATE_STACK)
				bad = 1;
			else
				stack[depth++] = *s;
			break;
		case 0x0b: /* restore_state */
			if (depth == 0)
				bad = 1;
			else
				*s = stack[--depth];
			break;
		case 0x0c: /* def_cfa */
			s->cfa_reg = (int64_t)rd_uleb(&r);
			s->cfa_off = (int64_t)rd_uleb(&r);
			break;
		case 0x0d: /* def_cfa_register */
			s->cfa_reg = (int64_t)rd_uleb(&r);
			break;
		case 0x0e: /* def_cfa_offset */
			off = (int64_t)rd_uleb(&r);
			if (s->cfa_reg >= 0)
				s->cfa_off = off;
			break;
		case 0x0f: { /* def_cfa_expression */
			uint64_t n = rd_uleb(&r);
			if (r.err || n > (uint64_t)(r.end - r.p)) {
				r.err = 1;
				break;
			}
			int64_t thr;
			/* glibc's __restore_rt: CFA = *(rsp + 160), the rsp saved in the ucontext at sp */
			static const uint8_t sigframe[] = {0x77, 0xa0, 0x01, 0x06};
			if (n == sizeof(sigframe) && memcmp(r.p, sigframe, n) == 0) {
				s->cfa_reg = CFA_SIGNAL;
				s->cfa_off = 0;
			} else if (plt_expression(r.p, n, &thr)) {
				s->cfa_reg = CFA_PLT;
				s->cfa_off = thr;
			} else {
				s->cfa_reg = CFA_EXPR;
			}
			r.p += n;
			break;
		}
		case 0x10: /* expression */
		case 0x16: { /* val_expression */
			reg = rd_uleb(&r);
			uint64_t n = rd_uleb(&r);
			if (r.err || n > (uint64_t)(r.end - r.p)) {
				r.err = 1;
				break;
			}
			r.p += n;
			set_reg(s, reg, FP_LOST, 0, RA_OTHER);
			break;
		}
		case 0x11: /* offset_extended_sf */
			reg = rd_uleb(&r);
			off = rd_sleb(&r) * c->data_align;
			set_reg(s, reg, FP_OFFSET, off, off == -8 ? RA_CFA_M8 : RA_OTHER);
			break;
		case 0x12: /* def_cfa_sf */
			s->cfa_reg = (int64_t)rd_uleb(&r);
			s->cfa_off = rd_sleb(&r) * c->data_align;
			break;
		case 0x13: /* def_cfa_offset_sf */
			off = rd_sleb(&r) * c->data_align;
			if (s->cfa_reg >= 0)
				s->cfa_off = off;
			break;
		case 0x14: /* val_offset */
		case 0x15: /* val_offset_sf */
			reg = rd_uleb(&r);
			if (op == 0x14)
				rd_uleb(&r);
			else
				rd_sleb(&r);
			set_reg(s, reg, FP_LOST, 0, RA_OTHER);
			break;
		case 0x2e: /* GNU_args_size */
			rd_uleb(&r);
			break;
		case 0x2f: /* GNU_negative_offset_extended */
			reg = rd_uleb(&r);
			off = -(int64_t)rd_uleb(&r) * c->data_align;
			set_reg(s, reg, FP_OFFSET, off, off == -8 ? RA_CFA_M8 : RA_OTHER);
			break;
		default:
			bad = 1;
			break;
		}
		continue;
	advance:
		if (r.err)
			break;
		if (next < loc) {
			bad = 1;
			break;
		}
		if (rows)
			emit(rows, loc, next < pc_end ? next : pc_end, s);
		loc = next;
	}
	if (r.err || bad) {
		if (rows) {
			struct cfa_state unknown = *s;
			unknown.cfa_reg = CFA_EXPR;
			emit(rows, loc, pc_end, &unknown);
		}
		return -EINVAL;
	}
	if (rows)
		emit(rows, loc, pc_end, s);
	return 0;
}

static int cmp_fde(const void *a, const void *b)
{
	const struct fde *x = a, *y = b;
	if (x->pc_begin != y->pc_begin)
		return x->pc_begin < y->pc_begin ? -1 : 1;
	return x->pc_end < y->pc_end ? 1 : x->pc_end > y->pc_end ? -1 : 0;
}

/* FDEs from the .eh_frame_hdr search table; -EINVAL when the header is not the usual one. */
static int fdes_from_hdr(const uint8_t *sec, size_t len, const uint8_t *hdr, size_t hdr_len, struct fde **out,
			 size_t *n_out)
{
	struct rd r = {hdr, hdr + hdr_len, 0};
	uint8_t version = (uint8_t)rd_fixed(&r, 1);
	uint8_t ptr_enc = (uint8_t)rd_fixed(&r, 1);
	uint8_t count_enc = (uint8_t)rd_fixed(&r, 1);
	uint8_t table_enc = (uint8_t)rd_fixed(&r, 1);
	if (r.err || version != 1 || count_enc == PE_OMIT || table_enc != (PE_DATAREL | PE_SDATA4))
		return -EINVAL;
	rd_ptr(&r, ptr_enc, (uintptr_t)hdr);
	uint64_t count = rd_ptr(&r, count_enc, (uintptr_t)hdr);
	if (r.err || count > (uint64_t)(r.end - r.p) / 8)
		return -EINVAL;
	struct fde *v = malloc((count ? count : 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	size_t n = 0;
	for (uint64_t i = 0; i < count; i++) {
		rd_fixed(&r, 4);
		uintptr_t at = (uintptr_t)hdr + (uintptr_t)(int64_t)(int32_t)rd_fixed(&r, 4);
		if (at < (uintptr_t)sec || at >= (uintptr_t)sec + len ||
		    parse_fde(sec, len, at - (uintptr_t)sec, &v[n], NULL, NULL, NULL) != 0) {
			free(v);
			return -EINVAL;
		}
		n++;
	}
	*out = v;
	*n_out = n;
	return 0;
}

/* FDEs by walking .eh_frame up to its zero terminator (or its end). */
static int fdes_from_section(const uint8_t *sec, size_t len, struct fde **out, size_t *n_out)
{
	size_t n = 0, cap = 256;
	struct fde *v = malloc(cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	size_t off = 0;
	while (len - off >= 4) {
		struct rd r = {sec + off, sec + len, 0};
		if (rd_fixed(&r, 4) == 0)
			break;
		const uint8_t *body, *end;
		if (record(sec, len, off, &body, &end) != 0)
			goto bad;
		struct rd id = {body, end, 0};
		if (rd_fixed(&id, 4) != 0) {
			if (n == cap) {
				struct fde *w = realloc(v, 2 * cap * sizeof(*v));
				if (!w) {
					free(v);
					return -ENOMEM;
				}
				v = w;
				cap *= 2;
			}
			if (parse_fde(sec, len, off, &v[n], NULL, NULL, NULL) != 0)
				goto bad;
			n++;
		} else {
			struct cie c;
			if (parse_cie(sec, len, off, &c) != 0)
				goto bad;
		}
		off = (size_t)(end - sec);
	}
	*out = v;
	*n_out = n;
	return 0;
bad:
	free(v);
	return -EINVAL;
}

int dwarf_build_object(const uint8_t *eh_frame, size_t len, const uint8_t *hdr, size_t hdr_len, uintptr_t lo,
		       uintptr_t hi, struct dwarf_object *out, struct dwarf_stats *stats)
{
	memset(out, 0, sizeof(*out));
	out->lo = lo;
	out->hi = hi;
	if (!eh_frame || hi <= lo || hi - lo > 0xffffffffu)
		return -EINVAL;
	struct fde *fdes = NULL;
	size_t n = 0;
	int rc = hdr ? fdes_from_hdr(eh_frame, len, hdr, hdr_len, &fdes, &n) : -EINVAL;
	if (rc == -EINVAL)
		rc = fdes_from_section(eh_frame, len, &fdes, &n);
	if (rc != 0)
		return rc;
	qsort(fdes, n, sizeof(*fdes), cmp_fde);
	struct rowbuf b = {NULL, 0, 0, lo, hi, lo, 0, 0};
	uint64_t used = 0;
	for (size_t i = 0; i < n && !b.oom; i++) {
		if (fdes[i].pc_end <= lo || fdes[i].pc_begin >= hi || fdes[i].pc_end <= b.last_end)
			continue;
		struct cie c;
		const uint8_t *p, *end;
		if (parse_fde(eh_frame, len, fdes[i].off, &fdes[i], &c, &p, &end) != 0) {
			rc = -EINVAL;
			break;
		}
		struct cfa_state init = {DW_RSP, 8, FP_SAME, 0, RA_OTHER};
		struct cfa_state s;
		if (run(&c, c.insns, c.insns_end, &init, &init, fdes[i].pc_begin, fdes[i].pc_end, NULL) != 0)
			init.cfa_reg = CFA_EXPR;
		s = init;
		run(&c, p, end, &s, &init, fdes[i].pc_begin, fdes[i].pc_end, &b);
		used++;
	}
	free(fdes);
	if (rc == 0 && b.oom)
		rc = -ENOMEM;
	if (rc != 0) {
		free(b.v);
		return rc;
	}
	if (b.n > 0 && b.last_end < hi) {
		struct dwarf_row none = {0, 0, 0, DWARF_NONE};
		push_row(&b, b.last_end, none);
	}
	if (b.oom) {
		free(b.v);
		return -ENOMEM;
	}
	if (b.n > 0 && b.n < b.cap) {
		struct dwarf_row *v = realloc(b.v, b.n * sizeof(*v));
		if (v)
			b.v = v;
	}
	out->rows = b.v;
	out->n_rows = (uint32_t)b.n;
	if (stats) {
		stats->fdes += used;
		stats->rows += b.n;
		stats->unknown += b.unknown;
	}
	return 0;
}

/* ---- loaded objects, publication, refresh thread ---- */

struct entry {
	struct dwarf_object obj;
	uintptr_t hdr;
	char name[64];
	int seen;
	uint64_t fdes;
};

struct retired {
	struct retired *next;
	void *mem;
};

static pthread_mutex_t build_lock = PTHREAD_MUTEX_INITIALIZER;
static struct entry *entries;
static size_t n_entries;
static struct retired *retired;
static unsigned long long loader_adds, loader_subs;
static struct dwarf_stats last_stats;

static void retire(void *mem)
{
	if (!mem)
		return;
	struct retired *r = malloc(sizeof(*r));
	if (!r)
		return; /* leak rather than free memory a handler may be reading */
	r->mem = mem;
	r->next = retired;
	retired = r;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

struct scan {
	struct entry *found;
	size_t n, cap;
	int oom;
};

static int add_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct scan *sc = arg;
	uintptr_t lo = UINTPTR_MAX, hi = 0, hdr = 0, eh = 0;
	size_t hdr_len = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			uintptr_t a = info->dlpi_addr + ph->p_vaddr;
			if (a < lo)
				lo = a;
			if (a + ph->p_memsz > hi)
				hi = a + ph->p_memsz;
		} else if (ph->p_type == PT_GNU_EH_FRAME) {
			hdr = info->dlpi_addr + ph->p_vaddr;
			hdr_len = ph->p_memsz;
		}
	}
	if (hi <= lo)
		return 0;
	if (sc->n == sc->cap) {
		size_t cap = sc->cap ? sc->cap * 2 : 64;
		struct entry *v = realloc(sc->found, cap * sizeof(*v));
		if (!v) {
			sc->oom = 1;
			return 1;
		}
		sc->found = v;
		sc->cap = cap;
	}
	struct entry *e = &sc->found[sc->n++];
	memset(e, 0, sizeof(*e));
	e->obj.lo = lo;
	e->obj.hi = hi;
	e->hdr = hdr;
	const char *name = info->dlpi_name && info->dlpi_name[0] ? base_name(info->dlpi_name) : "[main]";
	snprintf(e->name, sizeof(e->name), "%s", name);
	/* reuse the table of an object built before (same range, same header, same name) */
	for (size_t i = 0; i < n_entries; i++) {
		struct entry *old = &entries[i];
		if (!old->seen && old->obj.lo == lo && old->obj.hi == hi && old->hdr == hdr && !strcmp(old->name, e->name)) {
			e->obj = old->obj;
			e->fdes = old->fdes;
			old->seen = 1;
			e->seen = 2; /* reused */
			return 0;
		}
	}
	if (!hdr || hdr_len < 8)
		return 0;
	/* .eh_frame: where the header points, bounded by the PT_LOAD segment that holds it */
	struct rd r = {(const uint8_t *)hdr + 1, (const uint8_t *)hdr + hdr_len, 0};
	uint8_t enc = (uint8_t)rd_fixed(&r, 1);
	r.p += 2;
	eh = (uintptr_t)rd_ptr(&r, enc, hdr);
	if (r.err)
		return 0;
	size_t len = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && eh >= a && eh < a + ph->p_filesz)
			len = a + ph->p_filesz - eh;
	}
	if (!len)
		return 0;
	struct dwarf_stats st = {0};
	if (dwarf_build_object((const uint8_t *)eh, len, (const uint8_t *)hdr, hdr_len, lo, hi, &e->obj, &st) == -ENOMEM)
		sc->oom = 1;
	e->fdes = st.fdes;
	return 0;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	return x->obj.lo < y->obj.lo ? -1 : x->obj.lo > y->obj.lo;
}

static int count_loader(struct dl_phdr_info *info, size_t size, void *arg)
{
	unsigned long long *v = arg;
	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
		v[0] = info->dlpi_adds;
		v[1] = info->dlpi_subs;
	}
	return 1;
}

int dwarf_refresh(void)
{
	pthread_mutex_lock(&build_lock);
	unsigned long long counts[2] = {0, 0};
	dl_iterate_phdr(count_loader, counts);
	int rc = 0;
	if (atomic_load(&dwarf_table_current) && counts[0] == loader_adds && counts[1] == loader_subs)
		goto out;
	for (size_t i = 0; i < n_entries; i++)
		entries[i].seen = 0;
	struct scan sc = {NULL, 0, 0, 0};
	dl_iterate_phdr(add_object, &sc);
	struct dwarf_set *set = NULL;
	if (!sc.oom)
		set = malloc(sizeof(*set) + (sc.n ? sc.n : 1) * sizeof(set->objects[0]));
	if (!set) {
		/* tables built in this scan are nobody's yet; reused ones stay with entries */
		for (size_t i = 0; i < sc.n; i++)
			if (sc.found[i].seen != 2)
				free((void *)sc.found[i].obj.rows);
		free(sc.found);
		rc = -ENOMEM;
		goto out;
	}
	qsort(sc.found, sc.n, sizeof(*sc.found), cmp_entry);
	struct dwarf_stats st = {0};
	set->n = 0;
	for (size_t i = 0; i < sc.n; i++) {
		struct dwarf_object *o = &sc.found[i].obj;
		if (set->n > 0 && o->lo < set->objects[set->n - 1].hi)
			continue; /* overlapping ranges cannot happen for real objects; keep the first */
		set->objects[set->n++] = *o;
		uint64_t bytes = (uint64_t)o->n_rows * sizeof(struct dwarf_row);
		st.rows += o->n_rows;
		st.fdes += sc.found[i].fdes;
		st.bytes += bytes;
		if (bytes > st.largest_bytes) {
			st.largest_bytes = bytes;
			snprintf(st.largest, sizeof(st.largest), "%s", sc.found[i].name);
		}
	}
	for (uint32_t i = 0; i < set->n; i++) {
		const struct dwarf_row *rows = set->objects[i].rows;
		for (uint32_t k = 0; k < set->objects[i].n_rows; k++)
			if ((rows[k].kind & DWARF_RULE_MASK) == DWARF_UNKNOWN)
				st.unknown++;
	}
	st.objects = set->n;
	st.bytes += sizeof(*set) + set->n * sizeof(set->objects[0]);
	for (size_t i = 0; i < n_entries; i++)
		if (!entries[i].seen)
			retire((void *)entries[i].obj.rows);
	free(entries);
	entries = sc.found;
	n_entries = sc.n;
	const struct dwarf_set *old = atomic_exchange_explicit(&dwarf_table_current, set, memory_order_acq_rel);
	retire((void *)old);
	loader_adds = counts[0];
	loader_subs = counts[1];
	last_stats = st;
	rc = 1;
out:
	pthread_mutex_unlock(&build_lock);
	return rc;
}

void dwarf_get_stats(struct dwarf_stats *out)
{
	pthread_mutex_lock(&build_lock);
	*out = last_stats;
	pthread_mutex_unlock(&build_lock);
}

static pthread_t refresh_thread;
static _Atomic int refresh_running;

static void *refresh_main(void *arg)
{
	(void)arg;
	/* like the engines' scanner: the agent's own housekeeping is not sampled */
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	int fd = atomic_load(&dwarf_table_wake_fd);
	while (atomic_load(&refresh_running)) {
		/* woken by the handler's first miss (a library loaded since), else every 100 ms, which also
		 * catches a library unloaded and another loaded at the same address (no miss) */
		struct pollfd p = {fd, POLLIN, 0};
		int woken = poll(&p, 1, 100) > 0;
		if (woken) {
			uint64_t v;
			if (read(fd, &v, sizeof(v)) < 0)
				v = 0;
		}
		if (!atomic_load(&refresh_running))
			break;
		atomic_store(&dwarf_table_miss, 0);
		/* cheap when nothing changed: the loader's counters say whether objects came or went */
		dwarf_refresh();
		if (woken) {
			/* misses may also come from anonymous code (other JITs): at most 100 checks a second */
			struct timespec ts = {0, 10 * 1000 * 1000};
			nanosleep(&ts, NULL);
		}
	}
	return NULL;
}

static void wake(void)
{
	int fd = atomic_load(&dwarf_table_wake_fd);
	uint64_t one = 1;
	if (fd >= 0 && write(fd, &one, sizeof(one)) < 0)
		return;
}

int dwarf_start(void)
{
	int rc = dwarf_refresh();
	if (rc < 0)
		return rc;
	if (atomic_load(&dwarf_table_wake_fd) < 0) {
		int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (fd < 0)
			return -errno;
		atomic_store_explicit(&dwarf_table_wake_fd, fd, memory_order_release);
	}
	if (atomic_exchange(&refresh_running, 1))
		return 0;
	if (pthread_create(&refresh_thread, NULL, refresh_main, NULL) != 0) {
		atomic_store(&refresh_running, 0);
		return -EAGAIN;
	}
	pthread_setname_np(refresh_thread, "flameagent cfi");
	return 0;
}

void dwarf_stop(void)
{
	if (atomic_exchange(&refresh_running, 0)) {
		wake();
		pthread_join(refresh_thread, NULL);
	}
	pthread_mutex_lock(&build_lock);
	while (retired) {
		struct retired *r = retired;
		retired = r->next;
		free(r->mem);
		free(r);
	}
	pthread_mutex_unlock(&build_lock);
}
