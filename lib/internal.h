/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Library-internal helpers: the one place ck lock calls are made (with the
 * ThreadSanitizer annotations ck's inline asm needs), the inline CPU lookup
 * used on hot paths, and a monotonic clock.
 */
#ifndef LOCKBATCH_INTERNAL_H
#define LOCKBATCH_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <ck_pr.h>
#include <ck_spinlock.h>

#include <lockbatch/cpu.h>

#if defined(HAVE_SYS_RSEQ_H) && HAVE_DECL___RSEQ_OFFSET
#include <sys/rseq.h>
#define LB_HAVE_RSEQ 1
#else
#define LB_HAVE_RSEQ 0
#endif

#if defined(__SANITIZE_THREAD__)
#define LB_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define LB_TSAN 1
#endif
#endif

#ifdef LB_TSAN
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
void AnnotateIgnoreReadsBegin(const char *file, int line);
void AnnotateIgnoreReadsEnd(const char *file, int line);
void AnnotateIgnoreWritesBegin(const char *file, int line);
void AnnotateIgnoreWritesEnd(const char *file, int line);
#define lbi_tsan_acquire(p) __tsan_acquire((void *)(p))
#define lbi_tsan_release(p) __tsan_release((void *)(p))
/*
 * ck's queue locks mix plain C stores to queue nodes with inline-asm
 * atomics TSan cannot see; the nodes are ordered by those atomics, so the
 * node accesses inside ck's lock and unlock calls are hidden from TSan.
 */
#define lbi_tsan_ignore_begin()						\
	do {								\
		AnnotateIgnoreReadsBegin(__FILE__, __LINE__);		\
		AnnotateIgnoreWritesBegin(__FILE__, __LINE__);		\
	} while (0)
#define lbi_tsan_ignore_end()						\
	do {								\
		AnnotateIgnoreWritesEnd(__FILE__, __LINE__);		\
		AnnotateIgnoreReadsEnd(__FILE__, __LINE__);		\
	} while (0)
#else
/*
 * A regular build: weak references, NULL unless the process runs with the
 * TSan runtime (a client built with -fsanitize=thread). Then the client's
 * TSan sees every ordering the library makes with ck's atomics, which it
 * cannot see in uninstrumented code, and callbacks touching plain user
 * data under the library's locks stay clean. Elsewhere: one load and a
 * not-taken branch, which the owner paths avoid by choosing at creation
 * (lbi_tsan_active()). The library's own accesses are not instrumented,
 * so nothing needs ignoring.
 */
void __tsan_acquire(void *addr) __attribute__((weak));
void __tsan_release(void *addr) __attribute__((weak));
#define lbi_tsan_acquire(p)						\
	do {								\
		if (__tsan_acquire)					\
			__tsan_acquire((void *)(p));			\
	} while (0)
#define lbi_tsan_release(p)						\
	do {								\
		if (__tsan_release)					\
			__tsan_release((void *)(p));			\
	} while (0)
#define lbi_tsan_ignore_begin() do { } while (0)
#define lbi_tsan_ignore_end() do { } while (0)
#endif

/*
 * AddressSanitizer cannot see ck's inline-asm loads and stores. The node
 * accessors (cpubatch_node.h) report theirs with these, so that an ASan
 * build of the library catches a store into an object its caller freed.
 */
#if defined(__SANITIZE_ADDRESS__)
#define LB_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LB_ASAN 1
#endif
#endif

#ifdef LB_ASAN
#include <sanitizer/asan_interface.h>

/* A load (@is_write 0) or store of @size bytes at @p, as ASan checks one. */
static inline void lbi_asan_access(const volatile void *p, size_t size,
				   int is_write)
{
	void *addr = (void *)(uintptr_t)p;

	if (__builtin_expect(__asan_region_is_poisoned(addr, size) != NULL, 0))
		__asan_report_error(__builtin_return_address(0),
				    __builtin_frame_address(0),
				    __builtin_frame_address(0), addr, is_write,
				    size);
}
#define lbi_asan_load(p) lbi_asan_access((p), sizeof(*(p)), 0)
#define lbi_asan_store(p) lbi_asan_access((p), sizeof(*(p)), 1)
#else
#define lbi_asan_load(p) ((void)(p))
#define lbi_asan_store(p) ((void)(p))
#endif

#define lbi_likely(x) __builtin_expect(!!(x), 1)
#define lbi_unlikely(x) __builtin_expect(!!(x), 0)

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

static inline void lbi_spin_lock_bare(ck_spinlock_fas_t *l)
{
	lbi_spin_lock(l);
}

static inline int lbi_spin_trylock_bare(ck_spinlock_fas_t *l)
{
	return lbi_spin_trylock(l);
}

static inline void lbi_spin_unlock_bare(ck_spinlock_fas_t *l)
{
	lbi_spin_unlock(l);
}
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
 * ck fair-lock shim for lb_lock (lib/lock.c): the same annotations, on the
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

struct lb_lock;
/*
 * lock.c: lb_lock_acquire() that reports whether it waited, how long, and
 * how much of that it spent yielding the CPU.
 */
bool lbi_lock_acquire_wait(struct lb_lock *l, bool *contended,
			   uint64_t *wait_ns, uint64_t *yield_ns);

static inline uint64_t lbi_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#if LB_HAVE_RSEQ
/*
 * The kernel rewrites cpu_id of the registered area on every return to user
 * space after a migration. Negative: glibc did not register for this thread
 * (tunable off, or the kernel refused).
 */
static inline int lbi_rseq_cpu(void)
{
	const struct rseq *rs;

	if (__rseq_size == 0)
		return -1;
	rs = (const struct rseq *)((char *)__builtin_thread_pointer() +
				   __rseq_offset);
	return (int)*(const volatile uint32_t *)&rs->cpu_id;
}
#endif

#endif /* LOCKBATCH_INTERNAL_H */
