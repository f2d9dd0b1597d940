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
 */
#ifndef LOCKBATCH_BACKOFF_H
#define LOCKBATCH_BACKOFF_H

#include <sched.h>

#include <ck_backoff.h>

#define LBI_BACKOFF_ROUNDS 6

struct lbi_backoff {
	ck_backoff_t wait;
	unsigned int rounds;
};

#define LBI_BACKOFF_INIT { CK_BACKOFF_INITIALIZER, 0 }

static inline void lbi_backoff(struct lbi_backoff *b)
{
	if (b->rounds < LBI_BACKOFF_ROUNDS) {
		ck_backoff_eb(&b->wait);
		b->rounds++;
	} else {
		sched_yield();
	}
}

#endif /* LOCKBATCH_BACKOFF_H */
