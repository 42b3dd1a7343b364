/* The trace table: a lock-free open-addressing hash of raw call traces with counts and weights, and a
 * frame arena, in one mmap'd region. Signal-safe: every function here may run inside a signal handler
 * (create/destroy/clear/foreach are called outside handlers but use only raw syscalls too). */
#include "calltrace.h"

#include <errno.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

struct slot {
	_Atomic uint64_t hash;     /* 0 = free; claimed by CAS */
	_Atomic uint32_t n;        /* frame count, published (release) after the frames are written */
	uint32_t pad;
	_Atomic uint64_t offset;   /* frame index into the arena */
	_Atomic uint64_t samples;
	_Atomic uint64_t weight;
};

struct calltrace_table {
	size_t map_size;
	uint64_t n_slots;          /* power of two */
	uint64_t max_traces;       /* load limit */
	uint64_t arena_frames;
	_Atomic uint64_t arena_used;
	_Atomic uint64_t traces;
	_Atomic uint64_t overflow;
	struct slot *slots;
	struct raw_frame *arena;
	struct slot *overflow_slot;
};

static const char *const frame_names[ERR_COUNT] = {
	"[no_Java_frame]", "[no_class_load]", "[GC_active]", "[unknown_not_Java]", "[not_walkable_not_Java]",
	"[unknown_Java]", "[not_walkable_Java]", "[unknown_state]", "[thread_exit]", "[deopt]", "[safepoint]",
	"[truncated]", "[storage_overflow]", "[no_Java_env]", "[unknown]",
};
static const char *const reasons[ERR_COUNT] = {
	"no Java frame", "no class load listener", "GC active", "unknown non-Java state",
	"non-Java frame not walkable", "unknown Java state", "Java frame not walkable", "unknown thread state",
	"thread exiting", "deoptimisation in progress", "at a safepoint", "stack cut by jstackdepth",
	"trace storage full", "no JNIEnv for the thread", "unknown",
};

const char *calltrace_error_frame(enum trace_error e)
{
	return (unsigned)e < ERR_COUNT ? frame_names[e] : "[unknown]";
}

const char *calltrace_error_reason(enum trace_error e)
{
	return (unsigned)e < ERR_COUNT ? reasons[e] : "unknown";
}

static uint64_t hash_frames(const struct raw_frame *f, int n)
{
	uint64_t h = 0x9E3779B97F4A7C15ull ^ (uint64_t)n;
	for (int i = 0; i < n; i++) {
		uint64_t k = f[i].id ^ ((uint64_t)(uint32_t)f[i].bci << 32 | (uint32_t)f[i].kind) * 0xC2B2AE3D27D4EB4Full;
		k *= 0x87C37B91114253D5ull;
		k ^= k >> 31;
		h = (h ^ k) * 0x4CF5AD432745937Full;
		h ^= h >> 29;
	}
	return h ? h : 1;
}

static int same(const struct raw_frame *a, const struct raw_frame *b, int n)
{
	for (int i = 0; i < n; i++)
		if (a[i].id != b[i].id || a[i].bci != b[i].bci || a[i].kind != b[i].kind)
			return 0;
	return 1;
}

static void copy_frames(struct raw_frame *dst, const struct raw_frame *src, int n)
{
	for (int i = 0; i < n; i++) {
		dst[i].bci = src[i].bci;
		dst[i].kind = src[i].kind;
		dst[i].id = src[i].id;
	}
}

static void clear_slot(struct slot *s)
{
	atomic_store(&s->hash, 0);
	atomic_store(&s->n, 0);
	atomic_store(&s->samples, 0);
	atomic_store(&s->weight, 0);
}

/* Empties the table. A fresh mapping is zero already and is not read: a read would map the shared zero
 * page, and the handler's first write to such a page is then a copy-on-write fault that flushes the
 * TLB on every CPU running the JVM (an IPI each: tens of microseconds in a VM). A used table is
 * emptied by dropping its pages (MADV_DONTNEED: zero-filled again on the next write) rather than by
 * scanning it; the slots on the header's page are cleared by hand. Not while handlers can write. */
static void reset(struct calltrace_table *t, int fresh)
{
	if (!fresh) {
		uintptr_t end = (uintptr_t)t + t->map_size;
		uintptr_t start = ((uintptr_t)t->slots + 4095) & ~(uintptr_t)4095;
		for (uint64_t i = 0; i <= t->n_slots && (uintptr_t)&t->slots[i] < start; i++)
			clear_slot(&t->slots[i]);
		if (start < end && syscall(SYS_madvise, (void *)start, end - start, MADV_DONTNEED) != 0) {
			/* cannot drop the pages: clear the used slots one by one */
			for (uint64_t i = 0; i < t->n_slots; i++)
				if (atomic_load(&t->slots[i].hash) != 0)
					clear_slot(&t->slots[i]);
		}
	}
	atomic_store(&t->arena_used, 0);
	atomic_store(&t->traces, 0);
	atomic_store(&t->overflow, 0);
	/* the overflow trace lives outside the table so it can always be counted */
	struct raw_frame *f = &t->arena[t->arena_frames];
	f->bci = 0;
	f->kind = RAW_ERROR;
	f->id = ERR_STORAGE_OVERFLOW;
	struct slot *o = t->overflow_slot;
	atomic_store(&o->hash, 1);
	atomic_store(&o->offset, t->arena_frames);
	atomic_store(&o->samples, 0);
	atomic_store(&o->weight, 0);
	atomic_store(&o->n, 1);
}

struct calltrace_table *calltrace_create(size_t memlimit)
{
	if (memlimit < (1u << 20))
		memlimit = 1u << 20;
	size_t page = 4096;
	size_t size = (memlimit + page - 1) & ~(page - 1);
	long p = syscall(SYS_mmap, NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			 -1, 0);
	if (p < 0 && p > -4096) {
		errno = (int)-p;
		return NULL;
	}
	if (p == -1)
		return NULL;
	struct calltrace_table *t = (struct calltrace_table *)p;
	t->map_size = size;
	size_t avail = size - sizeof(*t) - 2 * sizeof(struct slot) - sizeof(struct raw_frame);
	/* about 1/8 of the memory for slots, the rest for frames */
	uint64_t slots = 1;
	while ((slots * 2) * sizeof(struct slot) <= avail / 8)
		slots *= 2;
	t->n_slots = slots;
	t->max_traces = slots / 4 * 3;
	t->slots = (struct slot *)(t + 1);
	t->overflow_slot = &t->slots[slots];
	t->arena = (struct raw_frame *)(t->overflow_slot + 1);
	t->arena_frames = (avail - slots * sizeof(struct slot)) / sizeof(struct raw_frame) - 1;
	reset(t, 1);
	return t;
}

void calltrace_destroy(struct calltrace_table *t)
{
	if (t)
		syscall(SYS_munmap, t, t->map_size);
}

void calltrace_clear(struct calltrace_table *t)
{
	reset(t, 0);
}

static int64_t put_overflow(struct calltrace_table *t, uint64_t weight)
{
	atomic_fetch_add_explicit(&t->overflow_slot->samples, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&t->overflow_slot->weight, weight, memory_order_relaxed);
	atomic_fetch_add_explicit(&t->overflow, 1, memory_order_relaxed);
	return (int64_t)t->n_slots;
}

int calltrace_put(struct calltrace_table *t, const struct raw_frame *frames, int n, uint64_t weight)
{
	int64_t ref = calltrace_put_ref(t, frames, n, weight);
	if (ref < 0)
		return (int)ref;
	return (uint64_t)ref == t->n_slots ? -ENOSPC : 0;
}

int calltrace_get_ref(const struct calltrace_table *t, int64_t ref, const struct raw_frame **frames, int *n)
{
	if (ref < 0 || (uint64_t)ref > t->n_slots)
		return -EINVAL;
	const struct slot *s = &t->slots[ref];
	uint32_t len = atomic_load_explicit(&s->n, memory_order_acquire);
	if (!len)
		return -EINVAL;
	*frames = &t->arena[atomic_load_explicit(&s->offset, memory_order_relaxed)];
	*n = (int)len;
	return 0;
}

int calltrace_is_overflow_ref(const struct calltrace_table *t, int64_t ref)
{
	return (uint64_t)ref == t->n_slots;
}

void calltrace_add_ref(struct calltrace_table *t, int64_t ref, uint64_t samples, uint64_t weight)
{
	if (ref < 0 || (uint64_t)ref > t->n_slots)
		return;
	struct slot *s = &t->slots[ref];
	atomic_fetch_add_explicit(&s->samples, samples, memory_order_relaxed);
	atomic_fetch_add_explicit(&s->weight, weight, memory_order_relaxed);
	if ((uint64_t)ref == t->n_slots)
		atomic_fetch_add_explicit(&t->overflow, samples, memory_order_relaxed);
}

int64_t calltrace_put_ref(struct calltrace_table *t, const struct raw_frame *frames, int n, uint64_t weight)
{
	if (n < 1 || n > CALLTRACE_MAX_FRAMES)
		return -EINVAL;
	uint64_t h = hash_frames(frames, n);
	uint64_t mask = t->n_slots - 1;
	uint64_t i = h & mask;
	for (uint64_t probes = 0; probes <= mask; probes++, i = (i + 1) & mask) {
		struct slot *s = &t->slots[i];
		/* a write access (adding 0), not a load: the first touch of a page then allocates it
		 * directly instead of mapping the zero page that the claim below would have to replace */
		uint64_t cur = atomic_fetch_add_explicit(&s->hash, 0, memory_order_acquire);
		if (cur == h) {
			uint32_t sn = atomic_load_explicit(&s->n, memory_order_acquire);
			/* not yet published: its writer may be the thread this handler interrupted; never wait */
			if (sn == (uint32_t)n && same(&t->arena[atomic_load_explicit(&s->offset, memory_order_relaxed)],
						      frames, n)) {
				atomic_fetch_add_explicit(&s->samples, 1, memory_order_relaxed);
				atomic_fetch_add_explicit(&s->weight, weight, memory_order_relaxed);
				return (int64_t)i;
			}
			continue;
		}
		if (cur != 0)
			continue;
		if (atomic_load_explicit(&t->traces, memory_order_relaxed) >= t->max_traces)
			return put_overflow(t, weight);
		uint64_t expected = 0;
		if (!atomic_compare_exchange_strong_explicit(&s->hash, &expected, h, memory_order_acq_rel,
							     memory_order_acquire)) {
			if (expected == h) {
				i = (i - 1) & mask; /* look at it again as a match */
				probes--;
			}
			continue;
		}
		uint64_t off = atomic_fetch_add_explicit(&t->arena_used, (uint64_t)n, memory_order_relaxed);
		if (off + (uint64_t)n > t->arena_frames) {
			/* the slot stays claimed but never published: lookups skip it */
			return put_overflow(t, weight);
		}
		copy_frames(&t->arena[off], frames, n);
		atomic_store_explicit(&s->offset, off, memory_order_relaxed);
		atomic_store_explicit(&s->samples, 1, memory_order_relaxed);
		atomic_store_explicit(&s->weight, weight, memory_order_relaxed);
		atomic_fetch_add_explicit(&t->traces, 1, memory_order_relaxed);
		atomic_store_explicit(&s->n, (uint32_t)n, memory_order_release);
		return (int64_t)i;
	}
	return put_overflow(t, weight);
}

int calltrace_foreach(const struct calltrace_table *t, calltrace_visit_fn cb, void *arg)
{
	for (uint64_t i = 0; i <= t->n_slots; i++) {
		struct slot *s = &t->slots[i]; /* i == n_slots is the overflow slot */
		uint32_t n = atomic_load_explicit(&s->n, memory_order_acquire);
		uint64_t samples = atomic_load_explicit(&s->samples, memory_order_relaxed);
		if (n == 0 || samples == 0)
			continue;
		int rc = cb(&t->arena[atomic_load_explicit(&s->offset, memory_order_relaxed)], (int)n, samples,
			    atomic_load_explicit(&s->weight, memory_order_relaxed), arg);
		if (rc)
			return rc;
	}
	return 0;
}

void calltrace_stats(const struct calltrace_table *t, struct calltrace_stats *st)
{
	st->traces = atomic_load(&t->traces);
	st->overflow = atomic_load(&t->overflow);
	st->bytes_used = sizeof(*t) + (t->n_slots + 1) * sizeof(struct slot) +
			 atomic_load(&t->arena_used) * sizeof(struct raw_frame);
	st->bytes_limit = t->map_size;
}
