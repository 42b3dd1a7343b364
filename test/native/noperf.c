/* Test helper (LD_PRELOAD): makes perf_event_open fail with EACCES, as a container's seccomp profile or
 * kernel.perf_event_paranoid would, so the cpu engine's fallback to CPU timers can be tested. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <sys/syscall.h>

long syscall(long number, ...);

long syscall(long number, ...)
{
	va_list ap;
	va_start(ap, number);
	long a[6];
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (number == SYS_perf_event_open) {
		errno = EACCES;
		return -1;
	}
	static long (*real)(long, ...);
	if (!real)
		real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	return real(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}
