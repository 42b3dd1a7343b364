/* Tiny assertion helpers for unit tests: each test file is its own program ending with
 * "N passed, N failed"; scripts/run-unit-tests.sh adds them up. */
#ifndef CHECK_H
#define CHECK_H

#include <stdio.h>
#include <string.h>

static int check_passed, check_failed;

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (cond) {                                                                        \
			check_passed++;                                                            \
		} else {                                                                           \
			check_failed++;                                                            \
			fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond);        \
		}                                                                                  \
	} while (0)

#define CHECK_INT(expected, actual)                                                                \
	do {                                                                                       \
		long long e_ = (long long)(expected), a_ = (long long)(actual);                    \
		if (e_ == a_) {                                                                    \
			check_passed++;                                                            \
		} else {                                                                           \
			check_failed++;                                                            \
			fprintf(stderr, "%s:%d: expected %lld, got %lld (%s)\n", __FILE__, __LINE__, e_, \
				a_, #actual);                                                      \
		}                                                                                  \
	} while (0)

#define CHECK_STR(expected, actual)                                                                \
	do {                                                                                       \
		const char *e_ = (expected), *a_ = (actual);                                       \
		if (e_ && a_ && strcmp(e_, a_) == 0) {                                             \
			check_passed++;                                                            \
		} else {                                                                           \
			check_failed++;                                                            \
			fprintf(stderr, "%s:%d: expected \"%s\", got \"%s\" (%s)\n", __FILE__, __LINE__, \
				e_ ? e_ : "(null)", a_ ? a_ : "(null)", #actual);                  \
		}                                                                                  \
	} while (0)

static inline int check_report(void)
{
	printf("%d passed, %d failed\n", check_passed, check_failed);
	return check_failed ? 1 : 0;
}

#endif
