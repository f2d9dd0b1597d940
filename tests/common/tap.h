/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Minimal TAP 13 emitter for the plain-pthread stress programs (Criterion
 * cannot run under ThreadSanitizer). Single-threaded use: call it from
 * main() after joining the workers.
 */
#ifndef LB_TEST_TAP_H
#define LB_TEST_TAP_H

#include <stdarg.h>
#include <stdio.h>

static int lb_tap_n;
static int lb_tap_failed;

static inline void lb_tap_plan(int n)
{
	printf("TAP version 13\n1..%d\n", n);
	fflush(stdout);
}

__attribute__((format(printf, 2, 3)))
static inline int lb_tap_ok(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%s %d - ", cond ? "ok" : "not ok", ++lb_tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	if (!cond)
		lb_tap_failed++;
	return cond;
}

__attribute__((format(printf, 1, 2)))
static inline void lb_tap_diag(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

/* Exit status for main(): 0 when every test passed. */
static inline int lb_tap_done(void)
{
	return lb_tap_failed ? 1 : 0;
}

#endif /* LB_TEST_TAP_H */
