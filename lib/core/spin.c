// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * The contended path of the ck spinlock shim (lbi_spin_lock(), core/core.h),
 * and the yield at the end of every backoff (core/backoff.h).
 */
#include "config.h"

#include "core/core.h"
#include "core/backoff.h"

_Thread_local uint64_t lbi_yielded_ns;

/* Two vDSO clock reads around a system call that gives the CPU away. */
void lbi_backoff_yield(void)
{
	uint64_t t0 = lbi_now_ns();

	sched_yield();
	lbi_yielded_ns += lbi_now_ns() - t0;
}

void lbi_spin_lock_slow(ck_spinlock_fas_t *l)
{
	struct lbi_backoff b = LBI_BACKOFF_INIT;

	do {
		/* Read-only wait: no cache-line ping-pong while it is held. */
		while (ck_spinlock_fas_locked(l))
			lbi_backoff(&b);
	} while (!ck_spinlock_fas_trylock(l));
}
