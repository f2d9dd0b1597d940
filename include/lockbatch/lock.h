/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#ifndef LOCKBATCH_LOCK_H
#define LOCKBATCH_LOCK_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

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
 * Five kinds, all from Concurrency Kit except the mutex (see
 * &enum lb_lock_kind for fairness, cost and when to pick each).
 * %LB_LOCK_DEFAULT names the kind chosen by measurement.
 *
 * An uncontended acquisition costs one atomic operation (or one trylock of
 * the mutex) and one counter increment; the clock is read only when the
 * lock is contended. Statistics are updated while the lock is held, so they
 * need no atomics of their own.
 *
 * Queue locks (%LB_LOCK_MCS, %LB_LOCK_CLH) need a queue node per
 * acquisition. lb_lock_acquire() takes one from a per-thread table of
 * %LB_LOCK_NEST_MAX entries and lb_lock_release() returns it, so a thread
 * may hold at most %LB_LOCK_NEST_MAX queue locks at once, released in any
 * order. CLH nodes migrate between threads and locks (a releaser inherits
 * its predecessor's node), so they live on the heap: one per lock, freed
 * by lb_lock_destroy(), and one per table entry a thread has used, freed
 * when the thread exits.
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
 * @LB_LOCK_SPIN: ck_spinlock_fas (test-and-set) with exponential backoff
 *	(ck_backoff_eb()), then sched_yield(). Cost: one exchange to take,
 *	one store to release. Unfair: the releasing thread finds the line in
 *	its own cache and usually wins the next round; a thread that
 *	re-acquires at once left a looping peer 0-45% of a fair share, with
 *	waits up to 0.25 s (see %LB_LOCK_DEFAULT). Pick it only when threads
 *	rarely meet at the lock.
 * @LB_LOCK_MUTEX: pthread_mutex_t (default attributes): sleeps in the
 *	kernel, so it is the one kind that costs nothing while the holder is
 *	preempted. glibc lets a running thread barge past woken sleepers, so
 *	it is not FIFO either. Pick it when threads outnumber CPUs and hold
 *	times are long.
 * @LB_LOCK_TICKET: ck_spinlock_ticket with ck's proportional backoff
 *	(ck_spinlock_ticket_lock_pb(): a waiter n places from the head spins
 *	about n << %LB_LOCK_TICKET_PB_SHIFT iterations between polls). FIFO:
 *	each waiter is served in arrival order. Cost as for @LB_LOCK_SPIN (one
 *	fetch-and-add, one increment) plus no per-thread state; every waiter
 *	polls the one shared word.
 * @LB_LOCK_MCS: ck_spinlock_mcs, the Mellor-Crummey-Scott queue lock
 *	(ACM TOCS 9(1), 1991). FIFO; each waiter spins on its own node, so a
 *	release touches one remote cache line however many wait. Costs a
 *	per-thread queue node (see %LB_LOCK_NEST_MAX) and a compare-and-swap
 *	to release. Pick it for many waiters on many CPUs.
 * @LB_LOCK_CLH: ck_spinlock_clh, the Craig/Landin-Hagersten queue lock
 *	(Craig, TR 93-02-02, 1993). FIFO; each waiter spins on its
 *	predecessor's node; release is one store. Costs a heap node per lock
 *	and per thread table entry; has no trylock, so an acquisition counts
 *	as contended when the lock looked held just before queueing.
 *
 * FIFO kinds (ticket, MCS, CLH) hand the lock to the next waiter even when
 * that waiter is preempted: with more threads than CPUs every hand-off to
 * a descheduled waiter stalls the lock until the scheduler runs it. ck's
 * waits spin without yielding, so with threads > CPUs expect throughput
 * to fall far below @LB_LOCK_SPIN's while fairness holds;
 * tests/bench/bench_lock_fair.c measures both.
 */
enum lb_lock_kind {
	LB_LOCK_MUTEX,		/* 0: the default, so zeroed configurations get it */
	LB_LOCK_SPIN,
	LB_LOCK_TICKET,
	LB_LOCK_MCS,
	LB_LOCK_CLH,
};

/* Number of kinds: valid kinds are 0 .. LB_LOCK_NR_KINDS - 1. */
#define LB_LOCK_NR_KINDS 5

/**
 * define LB_LOCK_DEFAULT - The kind to use when in doubt (%LB_LOCK_MUTEX).
 *
 * It is also kind 0, so a zero-initialised configuration (&struct
 * lb_pcp_conf.lock_kind) gets it. Chosen by tests/bench/bench_lock_fair.c
 * (make bench-lock-fair) on a 2-CPU machine, case C21: one thread
 * re-acquires at once after release, the others loop with a short pause;
 * critical section about 30 ns. The share is the looping thread's share
 * of the acquisitions made while it waited, in fair shares (1.0 = 1/n).
 * One run (load 11), 2 / 4 / 8 threads, lowest share and throughput as a
 * multiple of the spin kind's:
 *
 * ======  ==================  ==================
 * kind    lowest share        throughput vs spin
 * ======  ==================  ==================
 * spin    0.35 / 0.21 / 0.00  1 / 1 / 1
 * mutex   1.86 / 0.61 / 0.63  1.81 / 0.65 / 0.41
 * ticket  1.00 / 1.07 / 1.00  0.02 / 0.01 / 0.03
 * mcs     0.65 / 1.20 / 1.00  0.12 / 0.07 / 0.00
 * clh     1.81 / 1.00 / 1.00  0.12 / 0.00 / 0.01
 * ======  ==================  ==================
 *
 * The FIFO kinds are fair by design but hand the lock to waiters that are
 * not running: once runnable threads reach the CPU count, throughput
 * collapses (and the raw share of a preempted waiter drops to zero). The
 * mutex sleeps instead of spinning, so it stays within a small factor of
 * the spin kind while giving every thread at least 0.3 of a fair share;
 * it is fair only by glibc's wake-up timing, not by design, which the c21
 * test checks on every run. Pick a FIFO kind when threads never outnumber
 * CPUs and strict arrival order matters; pick spin only when threads
 * rarely meet at the lock.
 */
#define LB_LOCK_DEFAULT LB_LOCK_MUTEX

/**
 * define LB_LOCK_TICKET_PB_SHIFT - Proportional backoff of %LB_LOCK_TICKET.
 *
 * A waiter n tickets from the head spins n << 4 iterations between polls
 * of the shared word, so the polls of a long queue do not slow the hand-off.
 */
#define LB_LOCK_TICKET_PB_SHIFT 4

/**
 * define LB_LOCK_NEST_MAX - Queue locks one thread may hold at once.
 *
 * Bounds the per-thread table of queue nodes used by %LB_LOCK_MCS and
 * %LB_LOCK_CLH. Back-end locks nest rarely (DESIGN.md: no back-end lock
 * under another), so 8 leaves room. The other kinds have no bound.
 */
#define LB_LOCK_NEST_MAX 8

/**
 * struct lb_lock_stats - A snapshot of one lock's statistics.
 * @acquisitions: Times the lock was taken.
 * @contentions: Acquisitions that found the lock held and had to wait.
 * @wait_ns_total: Summed wait of the contended acquisitions, in ns.
 * @wait_ns_max: Longest single wait, in ns (0 if never contended).
 * @wait_ns_min: Shortest single wait, in ns (0 if never contended).
 * @wait_ns_yield: Of @wait_ns_total, the time waiters spent in
 *	sched_yield(), off their CPU (%LB_LOCK_SPIN only, after its backoff;
 *	0 for the other kinds). A yield returns when the scheduler runs the
 *	waiter again, a time slice or more when threads outnumber CPUs,
 *	however soon the lock was released: that is a wait for a CPU, not
 *	for the lock. A kernel spinlock has no such part (its waiters and
 *	holder run with preemption off): its ``CONFIG_LOCK_STAT`` wait is
 *	spinning only, which here is @wait_ns_total - @wait_ns_yield (that
 *	also holds any time a spinning waiter was preempted).
 */
struct lb_lock_stats {
	uint64_t acquisitions;
	uint64_t contentions;
	uint64_t wait_ns_total;
	uint64_t wait_ns_max;
	uint64_t wait_ns_min;
	uint64_t wait_ns_yield;
};

/**
 * struct lb_lock - A back-end lock that counts its acquisitions.
 * @kind: The wrapped primitive.
 * @name: Label used in reports (not copied; must outlive the lock).
 * @mutex: The mutex, for %LB_LOCK_MUTEX.
 * @lbi_ck: Opaque storage of the ck lock of the other kinds: the
 *	test-and-set word (%LB_LOCK_SPIN), the ticket pair (%LB_LOCK_TICKET),
 *	the MCS queue tail (%LB_LOCK_MCS) or the CLH queue tail, a heap node
 *	when unlocked (%LB_LOCK_CLH). Only the library reaches it, so this
 *	header needs no ck header (and compiles as C++).
 * @lbi_ck_ptr: Aligns @lbi_ck for a pointer.
 * @st: Statistics, written only by the holder.
 *
 * Embed it, initialise with lb_lock_init(), touch it only through the
 * functions below.
 */
struct lb_lock {
	enum lb_lock_kind kind;
	const char *name;
	union {
		pthread_mutex_t mutex;
		uint64_t lbi_ck[2];
		void *lbi_ck_ptr;
	};
	struct lb_lock_stats st;
};

/*
 * Order of input checks, the same in every call that validates more than
 * one thing: (1) pointer arguments, in parameter order (%-EINVAL); (2) the
 * kind, stored or requested (%-EINVAL); (3) the lock's state (%-EBUSY);
 * (4) the calling thread's queue-node table (%-ENOLCK); (5) allocation
 * (%-ENOMEM); (6) output (%-EIO). The first failing check decides the
 * error, and a failing call changes no lock (a report may have written
 * its rows).
 */

/**
 * lb_lock_init() - Initialise a back-end lock.
 * @l: The lock.
 * @kind: One of &enum lb_lock_kind; %LB_LOCK_DEFAULT when in doubt.
 * @name: Label for reports; may be NULL ("lock"). Not copied.
 *
 * Context: Any thread; @l must not be in use.
 * Return: 0; %-EINVAL if @l is NULL or @kind unknown; %-ENOMEM if the CLH
 * node cannot be allocated; or the negative error of pthread_mutex_init()
 * (%-ENOMEM, %-EAGAIN). On error @l is not initialised.
 */
int lb_lock_init(struct lb_lock *l, enum lb_lock_kind kind, const char *name);

/**
 * lb_lock_destroy() - Release a lock's resources.
 * @l: The lock, unlocked and unused.
 *
 * Context: No other thread may use @l during or after the call.
 * Return: 0; %-EINVAL if @l is NULL or its kind is unknown (not
 * initialised, or destroyed already); %-EBUSY if @l is held or queued on
 * (nothing is released; the lock stays usable). After a successful call
 * @l is no longer initialised: lb_lock_init() may reuse it.
 */
int lb_lock_destroy(struct lb_lock *l);

/**
 * lb_lock_acquire() - Take the lock, recording the acquisition.
 * @l: The lock, initialised.
 *
 * A contended acquisition reads the monotonic clock before and after
 * waiting and adds the wait to the statistics; %LB_LOCK_SPIN also reads it
 * around each sched_yield() of the wait (@wait_ns_yield). Queue kinds (%LB_LOCK_MCS,
 * %LB_LOCK_CLH) take a node from the calling thread's table first.
 *
 * Context: Any thread not already holding @l (not recursive). Spins or
 * sleeps until the lock is free.
 * Return: Nothing, and @l is held, except for queue kinds when the calling
 * thread already holds %LB_LOCK_NEST_MAX queue locks (errno = %ENOLCK) or
 * a first CLH node cannot be allocated (errno = %ENOMEM): then @l is NOT
 * taken and nothing is counted. Callers that may nest that deep clear
 * errno before the call and check it after.
 */
void lb_lock_acquire(struct lb_lock *l);

/**
 * lb_lock_release() - Drop the lock.
 * @l: The lock, held by the caller.
 *
 * Context: The thread that acquired @l. For queue kinds a release by a
 * thread that does not hold @l (no node of its table is queued on @l)
 * does nothing and sets errno to %EPERM; the other kinds cannot tell and
 * trust the caller.
 */
void lb_lock_release(struct lb_lock *l);

/**
 * lb_lock_op_acquire() - lb_lock_acquire() as a back-end lock callback.
 * @lock: The back-end: a &struct lb_lock, or a struct whose first member
 *        is one (C guarantees the two pointers are the same).
 *
 * Ready to use as &struct lb_backend_ops.lock (and wherever a callback
 * takes the lock as ``void *``), so a back-end guarded by an lb_lock needs
 * no wrapper: ``.lock = lb_lock_op_acquire, .unlock = lb_lock_op_release``
 * with the lock (or its container) as &struct lb_cpubatch_conf.backend.
 *
 * Context: As lb_lock_acquire(). A NULL @lock does nothing.
 */
void lb_lock_op_acquire(void *lock);

/**
 * lb_lock_op_release() - lb_lock_release() as a back-end unlock callback.
 * @lock: As for lb_lock_op_acquire().
 *
 * Context: As lb_lock_release(). A NULL @lock does nothing.
 */
void lb_lock_op_release(void *lock);

/**
 * lb_lock_is_held() - Whether some thread holds the lock right now.
 * @l: The lock, initialised.
 *
 * A snapshot for assertions and tests (e.g. "this callback runs with the
 * back-end lock held"): another thread may take or drop @l at any moment.
 * Does not count as an acquisition. For %LB_LOCK_MUTEX a successful probe
 * takes and drops the mutex.
 *
 * Context: Any thread.
 * Return: 1 if held, 0 if not; %-EINVAL if @l is NULL or its kind unknown;
 * another negative error of pthread_mutex_trylock() for the mutex kind.
 */
int lb_lock_is_held(struct lb_lock *l);

/**
 * lb_lock_stats() - Copy a consistent snapshot of the statistics.
 * @l: The lock.
 * @out: Where to write the snapshot.
 *
 * Takes @l briefly (without counting that acquisition) so the snapshot is
 * consistent.
 *
 * Context: Any thread not holding @l.
 * Return: 0; %-EINVAL if @l or @out is NULL or the kind is unknown;
 * %-ENOLCK or %-ENOMEM as for lb_lock_acquire() (queue kinds; @out is
 * left untouched).
 */
int lb_lock_stats(struct lb_lock *l, struct lb_lock_stats *out);

/**
 * lb_lock_stats_reset() - Zero the statistics.
 * @l: The lock.
 *
 * Context: Any thread not holding @l.
 * Return: 0; %-EINVAL if @l is NULL or the kind is unknown; %-ENOLCK or
 * %-ENOMEM as for lb_lock_acquire() (nothing is reset).
 */
int lb_lock_stats_reset(struct lb_lock *l);

/**
 * lb_lock_report() - Print locks as a ``perf lock report``-style table.
 * @f: Output stream.
 * @locks: The locks.
 * @nr: Number of entries in @locks.
 *
 * One row per lock: name, acquired, contended, avg/total/max/min wait
 * and the yielded part of the total (ns), sorted as given. A lock whose snapshot fails (lb_lock_stats()
 * error) prints zeros and makes the call return that error after the
 * table is written.
 *
 * Context: Any thread holding none of @locks.
 * Return: 0; %-EINVAL if @f or @locks (or an entry) is NULL or an
 * entry's kind is unknown (nothing is written); the first lb_lock_stats()
 * error (%-ENOLCK, %-ENOMEM; every row is still written, zeros for that
 * lock); %-EIO if writing failed.
 */
int lb_lock_report(FILE *f, struct lb_lock *const *locks, unsigned int nr);

/**
 * lb_lock_report_json() - Print locks as a JSON array.
 * @f: Output stream.
 * @locks: The locks.
 * @nr: Number of entries in @locks.
 *
 * Each element: ``{"name", "acquisitions", "contentions", "wait_ns_total",
 * "wait_ns_max", "wait_ns_min", "wait_ns_avg", "wait_ns_yield"}``.
 *
 * Context: Any thread holding none of @locks.
 * Return: 0; %-EINVAL if @f or @locks (or an entry) is NULL or an
 * entry's kind is unknown (nothing is written); the first lb_lock_stats()
 * error (%-ENOLCK, %-ENOMEM; every row is still written, zeros for that
 * lock); %-EIO if writing failed.
 */
int lb_lock_report_json(FILE *f, struct lb_lock *const *locks,
			unsigned int nr);

#ifdef __cplusplus
}
#endif

#endif /* LOCKBATCH_LOCK_H */
