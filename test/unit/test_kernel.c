/* Unit tests: kernel frames - /proc/kallsyms parsing and lookup, and perf ring reading (newest sample,
 * wrap-around, context markers, corrupt lengths) on synthetic buffers. */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kallsyms.h"
#include "perf_ring.h"

static void test_kallsyms(void)
{
	const char *text = "ffffffff81000000 T _stext\n"
			   "ffffffff81001000 t do_one\n"
			   "ffffffff81002000 D some_data\n"
			   "ffffffff81003000 T ksys_write\n"
			   "ffffffff81002800 W weak_fn\n"
			   "ffffffffc0a00000 t mod_fn\t[ext4]\n"
			   "garbage line\n"
			   "ffffffff81004000 r rodata\n"
			   "ffffffff81005000 T last_text"; /* no trailing newline */
	struct kallsyms *k = kallsyms_parse(text, strlen(text));
	CHECK(k != NULL);
	CHECK(!kallsyms_hidden(k));
	CHECK_INT(6, kallsyms_count(k));
	CHECK_STR("_stext", kallsyms_find(k, 0xffffffff81000000ull));
	CHECK_STR("do_one", kallsyms_find(k, 0xffffffff81001234ull));
	/* data symbols are not functions: the text symbol before them still covers the address */
	CHECK_STR("do_one", kallsyms_find(k, 0xffffffff81002100ull));
	CHECK_STR("weak_fn", kallsyms_find(k, 0xffffffff81002900ull));
	CHECK_STR("ksys_write", kallsyms_find(k, 0xffffffff81003008ull));
	CHECK_STR("last_text", kallsyms_find(k, 0xffffffff81005010ull));
	CHECK_STR("mod_fn", kallsyms_find(k, 0xffffffffc0a00010ull));
	CHECK(kallsyms_find(k, 0xffffffff80000000ull) == NULL);
	CHECK(kallsyms_find(k, 0xffffffffc0a00000ull + KALLSYMS_MAX_SIZE) == NULL);
	kallsyms_free(k);

	/* kptr_restrict: every address reads as zero */
	const char *hidden = "0000000000000000 T _stext\n0000000000000000 t do_one\n0000000000000000 T ksys_write\n";
	k = kallsyms_parse(hidden, strlen(hidden));
	CHECK(k != NULL);
	CHECK(kallsyms_hidden(k));
	CHECK(kallsyms_find(k, 0xffffffff81000000ull) == NULL);
	kallsyms_free(k);

	k = kallsyms_parse("", 0);
	CHECK(k != NULL && kallsyms_hidden(k));
	kallsyms_free(k);
	CHECK(kallsyms_hidden(NULL));
	CHECK(kallsyms_load("/nonexistent/kallsyms") == NULL);
}

#define DATA 512 /* a small ring so records wrap */

struct ring {
	struct perf_event_mmap_page meta;
	uint64_t data[DATA / 8];
};

/* Writes one record of n words (header included) at ring offset head; returns the new head. */
static uint64_t put_record(struct ring *r, uint64_t head, uint32_t type, const uint64_t *words, int n)
{
	uint64_t size = (uint64_t)(n + 1) * 8;
	r->data[(head % DATA) / 8] = (uint64_t)type | size << 48;
	for (int i = 0; i < n; i++)
		r->data[((head + 8 + 8 * (uint64_t)i) % DATA) / 8] = words[i];
	return head + size;
}

static void test_ring(void)
{
	struct ring *r = calloc(1, sizeof(*r));
	uint64_t ips[8];
	/* empty ring */
	CHECK_INT(0, perf_ring_read(&r->meta, r->data, DATA, ips, 8));

	/* two samples: the newest wins, context markers are skipped, the ring is consumed */
	uint64_t s1[] = {3, (uint64_t)PERF_CONTEXT_KERNEL, 0xffffffff81000010ull, 0xffffffff81000020ull};
	uint64_t lost[] = {1, 5};
	uint64_t s2[] = {4, (uint64_t)PERF_CONTEXT_KERNEL, 0xffffffff81003008ull, 0xffffffff81001000ull,
			 0xffffffff81000100ull};
	uint64_t head = 0;
	head = put_record(r, head, PERF_RECORD_SAMPLE, s1, 4);
	head = put_record(r, head, PERF_RECORD_LOST, lost, 2);
	head = put_record(r, head, PERF_RECORD_SAMPLE, s2, 5);
	r->meta.data_head = head;
	CHECK_INT(3, perf_ring_read(&r->meta, r->data, DATA, ips, 8));
	CHECK(ips[0] == 0xffffffff81003008ull && ips[1] == 0xffffffff81001000ull && ips[2] == 0xffffffff81000100ull);
	CHECK(r->meta.data_tail == head);
	CHECK_INT(0, perf_ring_read(&r->meta, r->data, DATA, ips, 8));

	/* max bounds the copy */
	head = put_record(r, head, PERF_RECORD_SAMPLE, s2, 5);
	r->meta.data_head = head;
	CHECK_INT(2, perf_ring_read(&r->meta, r->data, DATA, ips, 2));

	/* a user-mode sample has an empty kernel chain */
	uint64_t user[] = {0};
	head = put_record(r, head, PERF_RECORD_SAMPLE, user, 1);
	r->meta.data_head = head;
	CHECK_INT(0, perf_ring_read(&r->meta, r->data, DATA, ips, 8));

	/* a PERF_CONTEXT_USER marker ends the kernel part */
	uint64_t mixed[] = {4, (uint64_t)PERF_CONTEXT_KERNEL, 0xffffffff81000010ull, (uint64_t)PERF_CONTEXT_USER, 0x401000};
	head = put_record(r, head, PERF_RECORD_SAMPLE, mixed, 5);
	r->meta.data_head = head;
	CHECK_INT(1, perf_ring_read(&r->meta, r->data, DATA, ips, 8));

	/* wrap-around: advance until a record straddles the end of the ring */
	while (head % DATA < DATA - 16) {
		head = put_record(r, head, PERF_RECORD_LOST, lost, 2);
		r->meta.data_head = head;
		perf_ring_read(&r->meta, r->data, DATA, ips, 8);
	}
	head = put_record(r, head, PERF_RECORD_SAMPLE, s2, 5);
	r->meta.data_head = head;
	CHECK(r->meta.data_tail % DATA > head % DATA); /* it did wrap */
	CHECK_INT(3, perf_ring_read(&r->meta, r->data, DATA, ips, 8));
	CHECK(ips[0] == 0xffffffff81003008ull && ips[2] == 0xffffffff81000100ull);

	/* nr larger than the record: nothing taken, still consumed */
	uint64_t bad[] = {1000, (uint64_t)PERF_CONTEXT_KERNEL, 0xffffffff81000010ull};
	head = put_record(r, head, PERF_RECORD_SAMPLE, bad, 3);
	r->meta.data_head = head;
	CHECK_INT(0, perf_ring_read(&r->meta, r->data, DATA, ips, 8));
	CHECK(r->meta.data_tail == head);

	/* a header whose size runs past data_head: stop, consume */
	r->data[(head % DATA) / 8] = (uint64_t)PERF_RECORD_SAMPLE | (uint64_t)4096 << 48;
	r->meta.data_head = head + 16;
	CHECK_INT(0, perf_ring_read(&r->meta, r->data, DATA, ips, 8));
	CHECK(r->meta.data_tail == head + 16);
	head += 16;

	/* a zero-size header cannot loop forever */
	r->data[(head % DATA) / 8] = PERF_RECORD_SAMPLE;
	r->meta.data_head = head + 64;
	CHECK_INT(0, perf_ring_read(&r->meta, r->data, DATA, ips, 8));
	head += 64;

	/* head more than a ring ahead (overrun): dropped */
	r->meta.data_head = head + 2 * DATA;
	CHECK_INT(0, perf_ring_read(&r->meta, r->data, DATA, ips, 8));
	CHECK(r->meta.data_tail == head + 2 * DATA);
	free(r);

	/* signals that are not perf overflows, or fds without a ring, give nothing */
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	si.si_code = SI_TIMER;
	CHECK_INT(0, perf_ring_kernel_frames(&si, ips, 8));
	CHECK_INT(0, perf_ring_kernel_frames(NULL, ips, 8));
	CHECK_INT(0, perf_ring_init(64, 4096));
	si.si_code = POLL_IN;
	si.si_fd = 5;
	CHECK_INT(0, perf_ring_kernel_frames(&si, ips, 8));
	si.si_fd = 1 << 30;
	CHECK_INT(0, perf_ring_kernel_frames(&si, ips, 8));
	CHECK_INT(-EBADF, perf_ring_register(1 << 30, NULL, DATA));

	/* a registered ring (metadata page then data) is read through the signal's fd */
	unsigned char *mem = aligned_alloc(4096, 4096 + DATA);
	memset(mem, 0, 4096 + DATA);
	struct ring *view = (struct ring *)mem;
	CHECK_INT(0, perf_ring_register(5, mem, DATA));
	uint64_t *data = (uint64_t *)(mem + 4096);
	data[0] = (uint64_t)PERF_RECORD_SAMPLE | (uint64_t)32 << 48;
	data[1] = 2;
	data[2] = (uint64_t)PERF_CONTEXT_KERNEL;
	data[3] = 0xffffffff81000042ull;
	view->meta.data_head = 32;
	si.si_fd = 5;
	CHECK_INT(1, perf_ring_kernel_frames(&si, ips, 8));
	CHECK(ips[0] == 0xffffffff81000042ull);
	CHECK(perf_ring_unregister(5) == mem);
	CHECK_INT(0, perf_ring_kernel_frames(&si, ips, 8));
	CHECK(perf_ring_unregister(5) == NULL);
	free(mem);
}

int main(void)
{
	test_kallsyms();
	test_ring();
	return check_report();
}
