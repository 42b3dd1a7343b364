/* The cpu engine's perf_events ring buffers: an fd-indexed table of mapped rings (filled outside
 * handlers) and the kernel callchain of a thread's newest sample, read in its signal handler.
 * Signal-safe: perf_ring_kernel_frames and perf_ring_read may run inside a signal handler. */
#ifndef PERF_RING_H
#define PERF_RING_H

#include <signal.h>
#include <stdint.h>

/* Kernel frames kept per sample (perf_event_attr.sample_max_stack). */
#define PERF_RING_MAX_KERNEL 48
/* Data pages per ring (a power of two) after the metadata page: one sample with a full kernel chain
 * is under 450 bytes and the handler consumes the ring on every signal, so one page is plenty. */
#define PERF_RING_DATA_PAGES 1

/* Allocates the fd-indexed table for fds below nfds (at most 1 << 20), once per process; the table is
 * never freed (a late signal may still look into it). page: the metadata page's size (the data area
 * follows it). Not signal-safe. 0 or -errno. */
int perf_ring_init(unsigned nfds, uint64_t page);

/* Publishes the ring mapped at base (metadata page + data_size bytes of data) for perf fd fd.
 * data_size must be the same power of two for every ring. Not signal-safe. 0, or -EBADF when fd is
 * beyond the table, -ENOMEM when the table is missing. */
int perf_ring_register(int fd, void *base, uint64_t data_size);

/* Withdraws fd's ring and waits until no handler reads it; returns its base (the caller unmaps it), or
 * NULL if fd had none. Not signal-safe. */
void *perf_ring_unregister(int fd);

/* [SIG] The kernel part of the newest sample in the ring of the perf fd that sent this signal
 * (si_code POLL_IN, si_fd), leaf first, at most max instruction pointers; consumes every record in
 * that ring. 0 when the signal is not a perf overflow, the fd has no ring, or the sample was taken
 * in user mode. */
int perf_ring_kernel_frames(const siginfo_t *si, uint64_t *ips, int max);

/* [SIG] Reads a ring: meta is the perf_event_mmap_page, data its data area of data_size bytes (a power
 * of two). Finds the newest PERF_RECORD_SAMPLE between data_tail and data_head (every length checked
 * against the ring), copies its kernel instruction pointers (PERF_CONTEXT_* markers skipped, a
 * PERF_CONTEXT_USER ends them) into ips, then sets data_tail to data_head. Returns how many. */
int perf_ring_read(void *meta, const void *data, uint64_t data_size, uint64_t *ips, int max);

#endif
