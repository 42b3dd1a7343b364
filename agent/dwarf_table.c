/* Lookup in the published DWARF unwind tables. Signal-safe: every function here may run inside a signal
 * handler. */
#include "dwarf_table.h"

#include <stddef.h>
#include <sys/syscall.h>
#include <unistd.h>

_Atomic(const struct dwarf_set *) dwarf_table_current;
_Atomic int dwarf_table_miss;
_Atomic int dwarf_table_wake_fd = -1;

const struct dwarf_row *dwarf_table_find(const struct dwarf_set *s, uintptr_t pc)
{
	if (!s)
		return NULL;
	uint32_t lo = 0, hi = s->n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (s->objects[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || pc >= s->objects[lo - 1].hi) {
		if (!atomic_load_explicit(&dwarf_table_miss, memory_order_relaxed) &&
		    !atomic_exchange_explicit(&dwarf_table_miss, 1, memory_order_relaxed)) {
			int fd = atomic_load_explicit(&dwarf_table_wake_fd, memory_order_acquire);
			if (fd >= 0) {
				uint64_t one = 1;
				syscall(SYS_write, fd, &one, sizeof(one));
			}
		}
		return NULL;
	}
	const struct dwarf_object *o = &s->objects[lo - 1];
	if (o->n_rows == 0)
		return NULL;
	uint32_t off = (uint32_t)(pc - o->lo);
	uint32_t a = 0, b = o->n_rows;
	while (a < b) {
		uint32_t mid = a + (b - a) / 2;
		if (o->rows[mid].loc <= off)
			a = mid + 1;
		else
			b = mid;
	}
	return a == 0 ? NULL : &o->rows[a - 1];
}
