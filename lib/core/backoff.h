/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The one wait policy of the library, for every wait on another thread
 * (a held slot lock, a flush in flight): ck's exponential backoff, then
 * yield.
 *
 * ck_backoff_eb() spins 2^9 iterations and doubles each round (capped at
 * 2^20): LBI_BACKOFF_ROUNDS = 6 rounds wait about 32k iterations, tens of
 * microseconds, far longer than any critical section or commit here, so
 * whoever is still awaited by then was preempted and the waiter yields
 * its CPU to it. 16 rounds spun about 6M iterations, a whole time slice,
 * before the first yield.
 *
 * A yield hands the CPU to whoever the scheduler picks and returns when
 * this thread runs again: with more runnable threads than CPUs, one
 * sched_yield() lasts a time slice or more, however soon the awaited
 * thread lets go. lbi_backoff_yield() adds that time to the thread's
 * @lbi_yielded_ns, so a wait can tell the part it spent off its CPU
 * (lb_lock's @wait_ns_yield).
 */
#ifndef LOCKBATCH_BACKOFF_H
#define LOCKBATCH_BACKOFF_H

#include <sched.h>
#include <stdint.h>

#include <ck_backoff.h>

#define LBI_BACKOFF_ROUNDS 6

struct lbi_backoff {
	ck_backoff_t wait;
	unsigned int rounds;
};

#define LBI_BACKOFF_INIT { CK_BACKOFF_INITIALIZER, 0 }

/* ns this thread spent in lbi_backoff_yield() since it started (backoff.c). */
extern _Thread_local uint64_t lbi_yielded_ns;

void lbi_backoff_yield(void);

static inline void lbi_backoff(struct lbi_backoff *b)
{
	if (b->rounds < LBI_BACKOFF_ROUNDS) {
		ck_backoff_eb(&b->wait);
		b->rounds++;
	} else {
		lbi_backoff_yield();
	}
}

#endif /* LOCKBATCH_BACKOFF_H */
