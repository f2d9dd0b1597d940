/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The per-CPU slot core shared by lb_cpubatch and lb_pcp: one array of
 * slots, one per CPU, each on its own cache lines and led by a
 * &struct lbi_slot_hdr. A cache defines its slot as a struct whose first
 * member is that header; the core knows only the stride between slots.
 *
 * What the core owns: the allocation (one alignment, CK_MD_CACHELINE; one
 * size limit, %LBI_SLOTS_MAX, -EINVAL above it), the choice of the
 * caller's slot (lbi_slots_this()), the slot lock, the remote-access entry
 * points that follow the rseq layer's R1-R5 (lib/rseq/rseq.h), the fork hooks,
 * the walk used by stats, and the destroy rule (lbi_slots_lock_idle():
 * -EBUSY while a slot is in use).
 *
 * Where a cache's instance is on the lock path (lbi_slots.rseq false), the
 * owner takes the slot lock and R2/R4 are skipped; on the rseq path its
 * owner operations are sections on the slot's &struct lbi_rseq_hdr.
 */
#ifndef LOCKBATCH_SLOTS_H
#define LOCKBATCH_SLOTS_H

#include <stdbool.h>
#include <stddef.h>

#include <ck_spinlock.h>

#include <lockbatch/cpu.h>
#include "core/core.h"
#include "rseq/rseq.h"

/* Largest slot count accepted, by both caches. */
#define LBI_SLOTS_MAX LB_CPU_SLOTS_MAX

/*
 * struct lbi_slot_hdr - First member of every slot.
 * @lock: The slot lock (R1/R5); everything in the slot not documented
 *        otherwise is under it.
 * @rseq: Stop flag and committed word of the owner sections (R2/R4).
 */
struct lbi_slot_hdr {
	ck_spinlock_fas_t lock;
	struct lbi_rseq_hdr rseq;
};

/*
 * struct lbi_slots - A slot array.
 * @base: Slot 0, CK_MD_CACHELINE-aligned; slot i at @base + i * @stride.
 * @stride: Bytes per slot, a multiple of CK_MD_CACHELINE.
 * @nr: Number of slots, 1..%LBI_SLOTS_MAX.
 * @rseq: Whether owner operations run as rseq sections (remote access
 *        then runs R2 and R4); fixed at creation.
 * @cpu_fn, @cpu_arg: Injected CPU source, or NULL for the real CPU.
 * @fork: Registered fork hook: prepare takes every slot lock.
 */
struct lbi_slots {
	char *base;
	size_t stride;
	unsigned int nr;
	bool rseq;
	lb_cpu_fn cpu_fn;
	void *cpu_arg;
	struct lbi_fork_hook fork;
};

/*
 * enum lbi_owner_path - How the owner operations on a slot array run: the
 * one owner-path decision of the library, made at creation by
 * lbi_slots_choose_path() and never changed. Each cache derives its
 * hot-path encodings from it.
 * @LBI_OWNER_RSEQ: rseq sections on the caller's own slot, no lock. Zero,
 *	so that a hot path may fold the test into another (lb_pcp_alloc()
 *	tests order | path).
 * @LBI_OWNER_LOCK: the slot lock, without TSan annotations.
 * @LBI_OWNER_LOCK_CHECKED: the slot lock with every check: the TSan
 *	annotations (a TSan build, or a TSan runtime in the process: TSan
 *	cannot see the sections' orderings) or the cache's own debug checks.
 */
enum lbi_owner_path {
	LBI_OWNER_RSEQ,
	LBI_OWNER_LOCK,
	LBI_OWNER_LOCK_CHECKED,
};

/*
 * lbi_slots_choose_path() - Choose how @s's owner operations run; sets
 * @s->rseq to match. @checked: the cache wants every call checked (its
 * debug mode). @force_lock: the cache's own reasons rule the sections out
 * (a forced lock path, a batch of one). Injected CPU sources take the lock
 * path: the id a test chooses is not the cpu_id a section checks.
 * Context: creation, before the array is shared.
 */
enum lbi_owner_path lbi_slots_choose_path(struct lbi_slots *s, bool checked,
					  bool force_lock);

/*
 * Allocate and zero @nr slots of @size bytes (0: lb_cpu_count(), clamped to
 * %LBI_SLOTS_MAX), initialise every slot lock and register the fork hook.
 * @size must be a multiple of CK_MD_CACHELINE (declare the slot struct
 * aligned to it). Return: 0, -EINVAL for @nr above %LBI_SLOTS_MAX, -ENOMEM.
 */
int lbi_slots_init(struct lbi_slots *s, unsigned int nr, size_t size,
		   lb_cpu_fn cpu_fn, void *cpu_arg);

/* Unregister the fork hook and free the array. No slot may be in use. */
void lbi_slots_fini(struct lbi_slots *s);

static inline void *lbi_slot_at(const struct lbi_slots *s, unsigned int idx)
{
	return s->base + (size_t)idx * s->stride;
}

static inline struct lbi_slot_hdr *lbi_slot_hdr(const struct lbi_slots *s,
						unsigned int idx)
{
	return (struct lbi_slot_hdr *)lbi_slot_at(s, idx);
}

/*
 * The calling thread's slot index: the injected source when there is one, else
 * the current CPU, folded into [0, nr_slots). An unknown CPU (negative id)
 * selects slot 0: any slot is correct because slots are locked.
 */
static inline unsigned int lbi_slots_this(const struct lbi_slots *s)
{
	unsigned int nr;
	int cpu;

	if (s->cpu_fn)
		cpu = s->cpu_fn(s->cpu_arg);
	else
		cpu = lbi_cpu_read();
	/* Read after the call: a caller keeps nothing across it for this. */
	nr = s->nr;
	if (lbi_unlikely(cpu < 0))
		return 0;
	return (unsigned int)cpu < nr ? (unsigned int)cpu :
					(unsigned int)cpu % nr;
}

/* The slot lock, on the owner's lock path (R1/R5 without R2/R4). */
static inline void lbi_slot_lock(struct lbi_slot_hdr *h)
{
	lbi_spin_lock(&h->lock);
}

static inline int lbi_slot_trylock(struct lbi_slot_hdr *h)
{
	return lbi_spin_trylock(&h->lock);
}

/* Debug builds: the slot lock is held (by this thread, if the protocol holds). */
#define lbi_slot_assert_held(h) \
	lbi_assert_debug(ck_spinlock_fas_locked(&(h)->lock))

static inline void lbi_slot_unlock(struct lbi_slot_hdr *h)
{
	lbi_slot_assert_held(h);
	lbi_spin_unlock(&h->lock);
}

/*
 * The owner's lock path of an instance that chose at creation that no
 * TSan runtime is present (lbi_tsan_active() false): no annotation test.
 */
static inline void lbi_slot_lock_bare(struct lbi_slot_hdr *h)
{
	lbi_spin_lock_bare(&h->lock);
}

static inline int lbi_slot_trylock_bare(struct lbi_slot_hdr *h)
{
	return lbi_spin_trylock_bare(&h->lock);
}

static inline void lbi_slot_unlock_bare(struct lbi_slot_hdr *h)
{
	lbi_slot_assert_held(h);
	lbi_spin_unlock_bare(&h->lock);
}

/*
 * Remote access to slot @idx from any thread: R1 then, on the rseq path,
 * R2 (@empty: the caller saw the slot empty and will not write it, so no
 * fence). lbi_slot_unlock_remote() is R4 then R5; it also ends a hold taken
 * with lbi_slot_lock() (R4 then finds the slot running and changes
 * nothing), so a tail shared by owner and remote paths uses it. Every path
 * that may hold another CPU's slot (drains, decay, steal, settle, stats)
 * goes through these; lbi_slot_lock() is for the owner's own slot.
 */
void lbi_slot_lock_remote(struct lbi_slots *s, unsigned int idx, bool empty);
int lbi_slot_trylock_remote(struct lbi_slots *s, unsigned int idx);
void lbi_slot_unlock_remote(struct lbi_slots *s, unsigned int idx);

/*
 * Destroy rule: take every slot lock in index order by trylock, and ask
 * @busy (may be NULL) about each slot while holding its lock. A lock held
 * elsewhere or a busy slot releases what was taken and returns -EBUSY
 * (nothing changed); else 0 with every slot locked, for
 * lbi_slots_unlock_all().
 */
int lbi_slots_lock_idle(struct lbi_slots *s, bool (*busy)(void *slot));
void lbi_slots_unlock_all(struct lbi_slots *s);

/*
 * Stats: for each slot in index order, under the slot lock, @read(@slot,
 * @one, @out) fills @one with the slot's figures and adds them to @out (may
 * be NULL). @one is @per_slot[idx] (elements of @size bytes) for idx < @nr,
 * else @scratch (@size bytes).
 */
void lbi_slots_stats(struct lbi_slots *s,
		     void (*read)(void *slot, void *one, void *out), void *out,
		     void *per_slot, unsigned int nr, size_t size,
		     void *scratch);

#endif /* LOCKBATCH_SLOTS_H */
