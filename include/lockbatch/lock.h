/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#ifndef LOCKBATCH_LOCK_H
#define LOCKBATCH_LOCK_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include <ck_spinlock.h>

/**
 * DOC: Back-end lock with statistics
 *
 * &struct lb_lock is the lock in front of a shared back-end (an LRU list, a
 * free list, a pool). It is what lock batching exists to take less often,
 * so it counts itself, the way the kernel's ``CONFIG_LOCK_STAT`` and
 * ``perf lock`` do: acquisitions, contentions (acquisitions that found the
 * lock held), and the wait time of contended acquisitions in nanoseconds
 * (total, max, min, average).
 *
 * Two kinds: %LB_LOCK_SPIN, a ck test-and-set spinlock with exponential
 * backoff that yields the CPU after a while (good when hold times are short
 * and threads rarely outnumber CPUs), and %LB_LOCK_MUTEX, a pthread mutex
 * (good when threads outnumber CPUs).
 *
 * An uncontended acquisition costs one atomic exchange (or one trylock of
 * the mutex) and one counter increment; the clock is read only when the
 * lock is contended. Statistics are updated while the lock is held, so they
 * need no atomics of their own.
 *
 * Concurrency (X = needs external exclusion, - = safe together):
 *
 * ============  =======  =======  =====  =======
 *               acquire  release  stats  destroy
 * ============  =======  =======  =====  =======
 * acquire          -        -       -       X
 * stats            -        -       -       X
 * destroy          X        X       X       X
 * ============  =======  =======  =====  =======
 *
 * Source: ``CONFIG_LOCK_STAT`` (kernel/locking/lockdep.c, lock_contended()
 * and lock_acquired()) and tools/perf/builtin-lock.c's report columns.
 */

/**
 * enum lb_lock_kind - Which primitive an &lb_lock wraps.
 * @LB_LOCK_SPIN: ck_spinlock_fas with exponential backoff, then yield.
 * @LB_LOCK_MUTEX: pthread_mutex_t (default attributes).
 */
enum lb_lock_kind {
	LB_LOCK_SPIN,
	LB_LOCK_MUTEX,
};

/**
 * struct lb_lock_stats - A snapshot of one lock's statistics.
 * @acquisitions: Times the lock was taken.
 * @contentions: Acquisitions that found the lock held and had to wait.
 * @wait_ns_total: Summed wait of the contended acquisitions, in ns.
 * @wait_ns_max: Longest single wait, in ns (0 if never contended).
 * @wait_ns_min: Shortest single wait, in ns (0 if never contended).
 */
struct lb_lock_stats {
	uint64_t acquisitions;
	uint64_t contentions;
	uint64_t wait_ns_total;
	uint64_t wait_ns_max;
	uint64_t wait_ns_min;
};

/**
 * struct lb_lock - A back-end lock that counts its acquisitions.
 * @kind: The wrapped primitive.
 * @name: Label used in reports (not copied; must outlive the lock).
 * @spin: The spinlock, for %LB_LOCK_SPIN.
 * @mutex: The mutex, for %LB_LOCK_MUTEX.
 * @st: Statistics, written only by the holder.
 *
 * Embed it, initialise with lb_lock_init(), touch it only through the
 * functions below.
 */
struct lb_lock {
	enum lb_lock_kind kind;
	const char *name;
	union {
		ck_spinlock_fas_t spin;
		pthread_mutex_t mutex;
	};
	struct lb_lock_stats st;
};

/**
 * lb_lock_init() - Initialise a back-end lock.
 * @l: The lock.
 * @kind: %LB_LOCK_SPIN or %LB_LOCK_MUTEX.
 * @name: Label for reports; may be NULL ("lock"). Not copied.
 *
 * Context: Any thread; @l must not be in use.
 * Return: 0, or %-EINVAL if @l is NULL or @kind unknown, or the negative
 * error of pthread_mutex_init() (%-ENOMEM, %-EAGAIN).
 */
int lb_lock_init(struct lb_lock *l, enum lb_lock_kind kind, const char *name);

/**
 * lb_lock_destroy() - Release a lock's resources.
 * @l: The lock, unlocked and unused.
 *
 * Context: No other thread may use @l during or after the call.
 * Return: 0, %-EINVAL if @l is NULL, %-EBUSY if @l is held (nothing is
 * released; the lock stays usable).
 */
int lb_lock_destroy(struct lb_lock *l);

/**
 * lb_lock_acquire() - Take the lock, recording the acquisition.
 * @l: The lock, initialised.
 *
 * A contended acquisition reads the monotonic clock before and after
 * waiting and adds the wait to the statistics.
 *
 * Context: Any thread not already holding @l (not recursive). Spins or
 * sleeps until the lock is free.
 */
void lb_lock_acquire(struct lb_lock *l);

/**
 * lb_lock_release() - Drop the lock.
 * @l: The lock, held by the caller.
 *
 * Context: The thread that acquired @l.
 */
void lb_lock_release(struct lb_lock *l);

/**
 * lb_lock_stats() - Copy a consistent snapshot of the statistics.
 * @l: The lock.
 * @out: Where to write the snapshot.
 *
 * Takes @l briefly (without counting that acquisition) so the snapshot is
 * consistent.
 *
 * Context: Any thread not holding @l.
 * Return: 0, or %-EINVAL if @l or @out is NULL.
 */
int lb_lock_stats(struct lb_lock *l, struct lb_lock_stats *out);

/**
 * lb_lock_stats_reset() - Zero the statistics.
 * @l: The lock.
 *
 * Context: Any thread not holding @l.
 * Return: 0, or %-EINVAL if @l is NULL.
 */
int lb_lock_stats_reset(struct lb_lock *l);

/**
 * lb_lock_report() - Print locks as a ``perf lock report``-style table.
 * @f: Output stream.
 * @locks: The locks.
 * @nr: Number of entries in @locks.
 *
 * One row per lock: name, acquired, contended, avg/total/max/min wait
 * (ns), sorted as given.
 *
 * Context: Any thread holding none of @locks.
 * Return: 0, %-EINVAL if @f or @locks (or an entry) is NULL, %-EIO if
 * writing failed.
 */
int lb_lock_report(FILE *f, struct lb_lock *const *locks, unsigned int nr);

/**
 * lb_lock_report_json() - Print locks as a JSON array.
 * @f: Output stream.
 * @locks: The locks.
 * @nr: Number of entries in @locks.
 *
 * Each element: ``{"name", "acquisitions", "contentions", "wait_ns_total",
 * "wait_ns_max", "wait_ns_min", "wait_ns_avg"}``.
 *
 * Context: Any thread holding none of @locks.
 * Return: 0, %-EINVAL if @f or @locks (or an entry) is NULL, %-EIO if
 * writing failed.
 */
int lb_lock_report_json(FILE *f, struct lb_lock *const *locks,
			unsigned int nr);

#endif /* LOCKBATCH_LOCK_H */
