/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The library's clock: monotonic nanoseconds (a vDSO read, no system call).
 */
#ifndef LOCKBATCH_CORE_CLOCK_H
#define LOCKBATCH_CORE_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t lbi_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif /* LOCKBATCH_CORE_CLOCK_H */
