/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The ck lock shims: the one place ck lock calls are made, with the
 * ThreadSanitizer annotations ck's inline asm needs. The contended path of
 * the spinlock is in spin.c; every wait backs off as backoff.h says.
 */
#ifndef LOCKBATCH_CORE_SPIN_H
#define LOCKBATCH_CORE_SPIN_H

#include <stdbool.h>

#include <ck_pr.h>
#include <ck_spinlock.h>

#include "core/compiler.h"
#include "core/tsan.h"

/*
 * ck spinlock shim. TSan cannot see ck's inline-asm atomics, so without the
 * acquire/release annotations every access protected by these locks would
 * be reported as a race.
 */
static inline void lbi_spin_init(ck_spinlock_fas_t *l)
{
	ck_spinlock_fas_init(l);
}

static inline int lbi_spin_trylock(ck_spinlock_fas_t *l)
{
	if (!ck_spinlock_fas_trylock(l))
		return 0;
	lbi_tsan_acquire(l);
	return 1;
}

/* spin.c */
void lbi_spin_lock_slow(ck_spinlock_fas_t *l);

/*
 * Acquire: one exchange when free. Contended waiters back off and, after a
 * while, yield: with more threads than CPUs the holder may be preempted,
 * and spinning through its whole time slice helps nobody.
 */
static inline void lbi_spin_lock(ck_spinlock_fas_t *l)
{
	if (lbi_unlikely(!ck_spinlock_fas_trylock(l)))
		lbi_spin_lock_slow(l);
	lbi_tsan_acquire(l);
}

static inline void lbi_spin_unlock(ck_spinlock_fas_t *l)
{
	lbi_tsan_release(l);
	ck_spinlock_fas_unlock(l);
}

/*
 * Whether lock holds must carry the TSan annotations: always in a TSan
 * build, else when the process has a TSan runtime (a client built with
 * -fsanitize=thread). A process constant: a hot path decides once, at
 * creation, and then uses the bare calls below with no test at all.
 */
#ifdef LB_TSAN
static inline bool lbi_tsan_active(void)
{
	return true;
}

/* Never bare in a TSan build: the annotated calls under the bare names. */
#define lbi_spin_lock_bare lbi_spin_lock
#define lbi_spin_trylock_bare lbi_spin_trylock
#define lbi_spin_unlock_bare lbi_spin_unlock
#else
static inline bool lbi_tsan_active(void)
{
	return __tsan_acquire != NULL;
}

/* The shim without the annotations, where lbi_tsan_active() is false. */
static inline void lbi_spin_lock_bare(ck_spinlock_fas_t *l)
{
	if (lbi_unlikely(!ck_spinlock_fas_trylock(l)))
		lbi_spin_lock_slow(l);
}

static inline int lbi_spin_trylock_bare(ck_spinlock_fas_t *l)
{
	return ck_spinlock_fas_trylock(l);
}

static inline void lbi_spin_unlock_bare(ck_spinlock_fas_t *l)
{
	ck_spinlock_fas_unlock(l);
}
#endif

/*
 * ck fair-lock shim for lb_lock (lib/lock/lock.c): the same annotations, on the
 * lb_lock's lock word, for the ticket and queue kinds.
 */
static inline int lbi_ticket_trylock(ck_spinlock_ticket_t *l)
{
#ifdef CK_F_SPINLOCK_TICKET_TRYLOCK
	if (!ck_spinlock_ticket_trylock(l))
		return 0;
	lbi_tsan_acquire(l);
	return 1;
#else
	(void)l;
	return 0;	/* every acquisition takes the timed path */
#endif
}

static inline void lbi_ticket_lock(ck_spinlock_ticket_t *l, unsigned int pb)
{
	ck_spinlock_ticket_lock_pb(l, pb);
	lbi_tsan_acquire(l);
}

static inline void lbi_ticket_unlock(ck_spinlock_ticket_t *l)
{
	lbi_tsan_release(l);
	ck_spinlock_ticket_unlock(l);
}

static inline int lbi_mcs_trylock(ck_spinlock_mcs_t *q,
				  ck_spinlock_mcs_context_t *node)
{
	bool ok;

	lbi_tsan_ignore_begin();
	ok = ck_spinlock_mcs_trylock(q, node);
	lbi_tsan_ignore_end();
	if (ok)
		lbi_tsan_acquire(q);
	return ok;
}

static inline void lbi_mcs_lock(ck_spinlock_mcs_t *q,
				ck_spinlock_mcs_context_t *node)
{
	lbi_tsan_ignore_begin();
	ck_spinlock_mcs_lock(q, node);
	lbi_tsan_ignore_end();
	lbi_tsan_acquire(q);
}

static inline void lbi_mcs_unlock(ck_spinlock_mcs_t *q,
				  ck_spinlock_mcs_context_t *node)
{
	lbi_tsan_release(q);
	lbi_tsan_ignore_begin();
	ck_spinlock_mcs_unlock(q, node);
	lbi_tsan_ignore_end();
}

/* ck has no CLH trylock: "free" is only a hint taken before queueing. */
static inline int lbi_clh_locked(ck_spinlock_clh_t **q)
{
	bool held;

	lbi_tsan_ignore_begin();
	held = ck_spinlock_clh_locked(q);
	lbi_tsan_ignore_end();
	return held;
}

static inline void lbi_clh_lock(ck_spinlock_clh_t **q, ck_spinlock_clh_t *node)
{
	lbi_tsan_ignore_begin();
	ck_spinlock_clh_lock(q, node);
	lbi_tsan_ignore_end();
	lbi_tsan_acquire(q);
}

/* Unlocks and replaces *@node with the predecessor's node. */
static inline void lbi_clh_unlock(ck_spinlock_clh_t **q,
				  ck_spinlock_clh_t **node)
{
	lbi_tsan_release(q);
	lbi_tsan_ignore_begin();
	ck_spinlock_clh_unlock(node);
	lbi_tsan_ignore_end();
}

#endif /* LOCKBATCH_CORE_SPIN_H */
