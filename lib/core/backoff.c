// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * The yield at the end of every backoff (backoff.h), timed so a wait can
 * tell the part it spent off its CPU.
 */
#include "config.h"

#include "core/clock.h"
#include "core/backoff.h"

_Thread_local uint64_t lbi_yielded_ns;

/* Two vDSO clock reads around a system call that gives the CPU away. */
void lbi_backoff_yield(void)
{
	uint64_t t0 = lbi_now_ns();

	sched_yield();
	lbi_yielded_ns += lbi_now_ns() - t0;
}
