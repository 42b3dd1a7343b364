/* The cpu engine's perf_events ring buffers: fd-indexed table and kernel callchain reading.
 * Signal-safe: every function here may run inside a signal handler, except perf_ring_init,
 * perf_ring_register and perf_ring_unregister (start, thread coverage and stop). */
#include "perf_ring.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdatomic.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

struct slot {
	_Atomic(uintptr_t) base;
	_Atomic int readers; /* handlers inside this ring; only the fd's own thread reads it */
};

static struct slot *table;
static unsigned table_cap;
static uint64_t page_size;
static _Atomic uint64_t ring_data_size;

int perf_ring_init(unsigned nfds, uint64_t page)
{
	if (table)
		return 0;
	if (nfds > (1u << 20))
		nfds = 1u << 20;
	if (nfds < 1024)
		nfds = 1024;
	long p = syscall(SYS_mmap, NULL, (size_t)nfds * sizeof(struct slot), PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p < 0 && p > -4096)
		return (int)p;
	page_size = page;
	table_cap = nfds;
	__atomic_store_n(&table, (struct slot *)p, __ATOMIC_RELEASE);
	return 0;
}

int perf_ring_register(int fd, void *base, uint64_t data_size)
{
	if (!table)
		return -ENOMEM;
	if (fd < 0 || (unsigned)fd >= table_cap)
		return -EBADF;
	atomic_store(&ring_data_size, data_size);
	atomic_store(&table[fd].base, (uintptr_t)base);
	return 0;
}

void *perf_ring_unregister(int fd)
{
	if (!table || fd < 0 || (unsigned)fd >= table_cap)
		return NULL;
	struct slot *s = &table[fd];
	uintptr_t base = atomic_exchange(&s->base, 0);
	/* sequentially consistent: a handler either saw the slot empty or is counted in readers */
	while (atomic_load(&s->readers) > 0)
		syscall(SYS_sched_yield);
	return (void *)base;
}

/* The 8-byte word at ring offset off (records and the data size are multiples of 8, so a word never
 * straddles the end of the ring). */
static inline uint64_t word(const void *data, uint64_t mask, uint64_t off)
{
	return *(const volatile uint64_t *)((const char *)data + (off & mask));
}

int perf_ring_read(void *meta, const void *data, uint64_t data_size, uint64_t *ips, int max)
{
	struct perf_event_mmap_page *m = meta;
	uint64_t head = __atomic_load_n(&m->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = __atomic_load_n(&m->data_tail, __ATOMIC_RELAXED);
	uint64_t mask = data_size - 1;
	int n = 0;
	if (data_size < 8 || (data_size & mask) || head - tail > data_size || (tail & 7))
		goto consume; /* lost track of the ring: drop what is there */
	uint64_t pos = tail, last = UINT64_MAX, last_size = 0;
	while (head - pos >= 8) {
		uint64_t h = word(data, mask, pos);
		uint64_t type = h & 0xffffffffu, size = h >> 48;
		if (size < 8 || (size & 7) || size > head - pos)
			break;
		if (type == PERF_RECORD_SAMPLE) {
			last = pos;
			last_size = size;
		}
		pos += size;
	}
	if (last == UINT64_MAX || last_size < 16)
		goto consume;
	/* sample_type PERF_SAMPLE_CALLCHAIN only: u64 nr, u64 ips[nr] */
	uint64_t nr = word(data, mask, last + 8);
	if (nr > (last_size - 16) / 8)
		goto consume;
	for (uint64_t i = 0; i < nr && n < max; i++) {
		uint64_t ip = word(data, mask, last + 16 + 8 * i);
		if (ip == (uint64_t)PERF_CONTEXT_USER)
			break;
		if (ip >= (uint64_t)PERF_CONTEXT_MAX)
			continue;
		ips[n++] = ip;
	}
consume:
	__atomic_store_n(&m->data_tail, head, __ATOMIC_RELEASE);
	return n;
}

int perf_ring_kernel_frames(const siginfo_t *si, uint64_t *ips, int max)
{
	struct slot *t = __atomic_load_n(&table, __ATOMIC_ACQUIRE);
	if (!t || !si || si->si_code != POLL_IN || max <= 0)
		return 0;
	int fd = si->si_fd;
	if (fd < 0 || (unsigned)fd >= table_cap)
		return 0;
	struct slot *s = &t[fd];
	atomic_fetch_add(&s->readers, 1);
	uintptr_t base = atomic_load(&s->base);
	int n = 0;
	if (base)
		n = perf_ring_read((void *)base, (const void *)(base + page_size),
				   atomic_load_explicit(&ring_data_size, memory_order_relaxed), ips, max);
	atomic_fetch_sub(&s->readers, 1);
	return n;
}
