// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lb_pcp's owner operations: lb_pcp_alloc() and lb_pcp_free(), their
 * hit paths on the owner's magazine and the slow paths behind them
 * (steal, refill, the bulk release of a full slot).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <lockbatch/pcp.h>
#include "core/core.h"
#include "pcp/mag.h"
#include "tune/tune.h"

static inline struct lbi_pcp_slot *this_slot(struct lb_pcp *p)
{
	return lbi_pcp_slot_at(p, lbi_slots_this(&p->slots));
}

/*
 * What a steal may take from @peer (slot locked): half of what its lists
 * hold above one batch, in units. The magazine stays the owner's: as of
 * the account just made it holds mag_seen of the cached units, which a
 * thief never sees. Half, so that the peer keeps most of what it may
 * need next: taking all but one batch moved about twice the units per
 * steal on lb-compare's prodcons at 8 threads, for a higher peak RSS.
 */
static int steal_avail(const struct lbi_pcp_slot *peer)
{
	int listed = peer->ts.count - (int)peer->mag_seen;

	return listed > peer->ts.batch ? (listed - peer->ts.batch + 1) / 2 : 0;
}

/*
 * Take up to @n objects of @order from the cold end of a peer slot's list
 * (steal_avail() bounds how many). Only the ADAPTIVE tuner does this: the
 * traces move objects from CPUs that mostly free to CPUs that mostly
 * allocate, and a peer's surplus serves a refill without a back-end trip.
 *
 * The peer's slot lock alone covers its lists: its owner's sections touch
 * only the magazine (DOC: Owner path), so a steal neither stops nor
 * fences the peer, nor folds its magazine (a fold would send the peer's
 * next call down the lock path to reload). Steals that did both made two
 * slots trading objects (lb-compare's prodcons at 2 threads) steal from
 * each other 4000 to 7000 times a second each, an IPI every time.
 *
 * Lock order: the caller holds its own slot lock, so peers are only tried,
 * never waited for; no cycle can form.
 */
static int steal(struct lb_pcp *p, struct lbi_pcp_slot *sl,
		 unsigned int order, int n)
{
	unsigned int self = lbi_pcp_slot_idx(p, sl), k;
	struct cds_list_head *head = &sl->lists[order];
	int w = 1 << order;

	for (k = 1; k < p->slots.nr && k <= LBI_PCP_STEAL_PEERS; k++) {
		unsigned int pi = (self + k) % p->slots.nr;
		struct lbi_pcp_slot *peer = lbi_pcp_slot_at(p, pi);
		struct cds_list_head *ph = &peer->lists[order];
		int got = 0, avail;

		if (!lbi_slot_trylock(&peer->hdr))
			continue;
		if (p->slots.rseq)
			lbi_pcp_mag_account(peer);
		avail = steal_avail(peer);
		while (got < n && avail >= w && !cds_list_empty(ph)) {
			struct cds_list_head *node = ph->prev;

			cds_list_del(node);
			cds_list_add_tail(node, head);
			peer->ts.count -= w;
			lbi_assert_debug(peer->ts.count >= 0);
			avail -= w;
			got++;
		}
		if (peer->ts.count < peer->ts.count_min)
			peer->ts.count_min = peer->ts.count;
		lbi_slot_unlock(&peer->hdr);
		if (got) {
			sl->ts.count += got << order;
			sl->st.steals++;
			sl->st.steal_units += (uint64_t)got << order;
			return got;
		}
	}
	return 0;
}

/*
 * Debug mode: cache what a refill brought unless it is cached already. Such
 * an object was freed twice and its first copy came back from the
 * back-end; the cached copy stands for it, so this one is dropped (the
 * object stays counted once) and never handed out.
 */
static int dbg_keep(struct lb_pcp *p, struct lbi_pcp_slot *sl, int got, int n)
{
	int i, kept = 0;

	for (i = 0; i < got; i++) {
		if (lbi_pcp_dbg_add_reserved(p->dbg, sl->buf[i])) {
			sl->st.double_frees++;
			continue;
		}
		sl->buf[kept++] = sl->buf[i];
	}
	lbi_pcp_dbg_unreserve(p->dbg, (unsigned int)(n - got));
	return kept;
}

/*
 * rmqueue_bulk(): one back-end hold; the new objects go to the cold end.
 * Every hold counts as a refill, whatever it brought.
 */
static int refill(struct lb_pcp *p, struct lbi_pcp_slot *sl,
		  unsigned int order)
{
	struct cds_list_head *head = &sl->lists[order];
	int n = lbi_tune_refill(p->tuner, &sl->ts, order);
	int got, i;

	/*
	 * The per-hold bound of pcp.h, in units: nr_pcp_alloc() asks for at
	 * least 2 objects, 2 << order units, more than batch << 5 for a huge
	 * order and a small batch. Then one object, no more.
	 */
	if (n > (p->chunk >> order))
		n = (p->chunk >> order) ? p->chunk >> order : 1;
	if (p->tuner == LB_PCP_TUNE_ADAPTIVE && p->slots.nr > 1) {
		got = steal(p, sl, order, n);
		if (got)
			return got;
	}
	if (p->dbg && lbi_pcp_dbg_reserve(p->dbg, (unsigned int)n))
		return 0;
	lb_lock_acquire(p->bl);
	got = p->be.alloc_bulk(p->be.ctx, order, sl->buf, (unsigned int)n);
	lb_lock_release(p->bl);
	sl->st.refills++;
	got = got < 0 ? 0 : got > n ? n : got;
	if (p->dbg)
		got = dbg_keep(p, sl, got, n);
	for (i = 0; i < got; i++)
		cds_list_add_tail((struct cds_list_head *)sl->buf[i], head);
	sl->ts.count += got << order;
	sl->st.refill_units += (uint64_t)got << order;
	lbi_pcp_note_hold(sl, got << order);
	return got;
}

/*
 * __alloc_pages_direct_reclaim(): after a failed attempt, drain_all_pages()
 * and try once more. Objects sit in other slots (a thread that left, a
 * peer's last batch under ADAPTIVE) while the back-end is empty. The slot
 * lock is dropped while the others are drained: two slots never nest.
 */
static int refill_retry(struct lb_pcp *p, struct lbi_pcp_slot *sl,
			unsigned int order)
{
	unsigned int i;

	lbi_pcp_unlock(p, sl);
	for (i = 0; i < p->slots.nr; i++)
		lbi_pcp_drain_slot(p, lbi_pcp_slot_at(p, i));
	lbi_pcp_lock(p, sl);
	sl->st.retries++;
	/* A free may have refilled the list meanwhile. */
	if (!cds_list_empty(&sl->lists[order]))
		return 1;
	return refill(p, sl, order);
}

/* Pop the hot end of a non-empty list (__rmqueue_pcplist()). */
static inline void *pop(struct lb_pcp *p, struct lbi_pcp_slot *sl,
			unsigned int order)
{
	struct cds_list_head *node = sl->lists[order].next;

	cds_list_del(node);
	lbi_tune_alloc_done(p->tuner, &sl->ts, order);
	sl->st.allocs++;
	return node;
}

/* Refill, or debug mode: everything but the warm-list case. */
static __attribute__((noinline)) int alloc_slow(struct lb_pcp *p,
						struct lbi_pcp_slot *sl,
						unsigned int order, void **out)
{
	void *obj;

	if (cds_list_empty(&sl->lists[order]) && !refill(p, sl, order) &&
	    !refill_retry(p, sl, order)) {
		lbi_pcp_unlock_owner(p, sl);
		return -ENOMEM;
	}
	obj = pop(p, sl, order);
	/* Every cached object was added (dbg_keep(), free_slow()). */
	if (p->dbg)
		lbi_pcp_dbg_del(p->dbg, obj);
	lbi_pcp_unlock_owner(p, sl);
	*out = obj;
	return 0;
}

/*
 * The slot an owner call that missed the magazine locks: the CPU its
 * section ran on, or the lock path's choice for an unusable CPU id.
 */
static inline struct lbi_pcp_slot *miss_slot(struct lb_pcp *p, int cpu)
{
	return cpu >= 0 ? lbi_pcp_slot_at(p, (unsigned int)cpu) : this_slot(p);
}

/*
 * The owner's hold of its slot on @path, a constant at each call site: on
 * the rseq path the fold before and the magazine reload after (pcp/mag.c);
 * on LBI_OWNER_LOCK the slot lock without the TSan-client test (taken by
 * trylock in alloc_lock() and free_lock(), waited for in alloc_wait() and
 * free_wait()); on LBI_OWNER_LOCK_CHECKED the annotated one.
 */
static inline __attribute__((always_inline)) void
owner_lock(struct lb_pcp *p, struct lbi_pcp_slot *sl,
	   const enum lbi_owner_path path)
{
	if (path == LBI_OWNER_RSEQ)
		lbi_pcp_lock_rseq(p, sl);
	else
		lbi_slot_lock(&sl->hdr);
}

static inline __attribute__((always_inline)) void
owner_unlock(struct lb_pcp *p, struct lbi_pcp_slot *sl,
	     const enum lbi_owner_path path)
{
	if (path == LBI_OWNER_RSEQ)
		lbi_pcp_unlock_rseq(p, sl, true);
	else if (path == LBI_OWNER_LOCK)
		lbi_slot_unlock_bare(&sl->hdr);
	else
		lbi_slot_unlock(&sl->hdr);
}

/* After the owner's lock: the warm-list case here, the rest alloc_slow(). */
static inline __attribute__((always_inline)) int
alloc_held(struct lb_pcp *p, unsigned int order, void **out,
	   struct lbi_pcp_slot *sl, const enum lbi_owner_path path)
{
	void *obj;

	lbi_tune_alloc_start(p->tuner, &sl->ts);
	if (lbi_unlikely(cds_list_empty(&sl->lists[order]) ||
			 (path == LBI_OWNER_LOCK_CHECKED && p->dbg)))
		return alloc_slow(p, sl, order, out);
	obj = pop(p, sl, order);
	owner_unlock(p, sl, path);
	*out = obj;
	return 0;
}

/*
 * A miss of the magazine: the lock path of the CPU the section ran on.
 * Only the rseq path fences, so only its misses count the fences they made
 * (&lb_pcp_stats.owner_fences: the owner stays out of the kernel).
 */
static __attribute__((noinline)) int alloc_miss(struct lb_pcp *p,
						unsigned int order,
						void **out, int cpu)
{
	struct lbi_pcp_slot *sl = miss_slot(p, cpu);
	uint64_t m0 = lbi_rseq_membarriers;
	int rc;

	owner_lock(p, sl, LBI_OWNER_RSEQ);
	rc = alloc_held(p, order, out, sl, LBI_OWNER_RSEQ);
	lbi_pcp_count_fences(&p->owner_fences, m0);
	return rc;
}

/* &lb_pcp.alloc_path of the rseq path: orders above 0. */
static int alloc_rseq_order(struct lb_pcp *p, unsigned int order, void **out)
{
	if (lbi_unlikely(order > p->max_order))
		return -EINVAL;
	return alloc_miss(p, order, out, -1);
}

/* LBI_OWNER_LOCK's wait for a slot lock held elsewhere, off the hot path. */
static __attribute__((noinline)) int alloc_wait(struct lb_pcp *p,
						unsigned int order,
						void **out,
						struct lbi_pcp_slot *sl)
{
	lbi_slot_lock_bare(&sl->hdr);
	return alloc_held(p, order, out, sl, LBI_OWNER_LOCK);
}

/*
 * &lb_pcp.alloc_path of LBI_OWNER_LOCK: only the CPU-id call is made with
 * values to keep, so little is saved around it.
 */
static int alloc_lock(struct lb_pcp *p, unsigned int order, void **out)
{
	struct lbi_pcp_slot *sl;

	if (lbi_unlikely(order > p->max_order))
		return -EINVAL;
	sl = this_slot(p);
	if (lbi_unlikely(!lbi_slot_trylock_bare(&sl->hdr)))
		return alloc_wait(p, order, out, sl);
	/* Order 0, the common case, with its list and weight constant. */
	if (lbi_likely(!order))
		return alloc_held(p, 0, out, sl, LBI_OWNER_LOCK);
	return alloc_held(p, order, out, sl, LBI_OWNER_LOCK);
}

/* &lb_pcp.alloc_path of LBI_OWNER_LOCK_CHECKED. */
static int alloc_checked(struct lb_pcp *p, unsigned int order, void **out)
{
	struct lbi_pcp_slot *sl;

	if (lbi_unlikely(order > p->max_order))
		return -EINVAL;
	sl = this_slot(p);
	owner_lock(p, sl, LBI_OWNER_LOCK_CHECKED);
	return alloc_held(p, order, out, sl, LBI_OWNER_LOCK_CHECKED);
}

/*
 * The checks, then on the rseq path straight into the section: nothing is
 * saved before it, and a miss tail-calls the lock path. Every other call
 * jumps to its path's function, which checks the order.
 */
int lb_pcp_alloc(struct lb_pcp *p, unsigned int order, void **out)
{
	int cpu;

	if (lbi_unlikely(!p || !out))
		return -EINVAL;
	if (lbi_unlikely((order | p->path) != LBI_OWNER_RSEQ))
		return p->alloc_path(p, order, out);
	if (lbi_likely(lbi_pcp_mag_pop(p, out, &cpu) == LBI_RSEQ_OK))
		return 0;
	return alloc_miss(p, 0, out, cpu);
}

/*
 * A free that may flush, or debug mode. The tuner decides the flush; a
 * free never leaves the slot above high: with high == batch, nr_pcp_free()
 * asks for clamp(free_count, batch, 0) = 0 units and the slot would grow
 * for ever, so at least the excess goes.
 */
static __attribute__((noinline)) int free_slow(struct lb_pcp *p,
					       struct lbi_pcp_slot *sl,
					       void *obj, unsigned int order)
{
	int n;

	if (p->dbg) {
		int err = lbi_pcp_dbg_add(p->dbg, obj);

		if (err) {
			if (err == -EEXIST)
				sl->st.double_frees++;
			lbi_pcp_unlock_owner(p, sl);
			return err;
		}
	}
	cds_list_add((struct cds_list_head *)obj, &sl->lists[order]);
	sl->st.frees++;
	n = lbi_tune_free(p->tuner, &sl->ts, order);
	if (n < sl->ts.count - sl->ts.high)
		n = sl->ts.count - sl->ts.high;
	if (n > 0)
		lbi_pcp_release(p, sl, n, order, p->chunk, LBI_PCP_FLUSH);
	lbi_pcp_unlock_owner(p, sl);
	return 0;
}

/* After the owner's lock: the no-flush case here, the rest free_slow(). */
static inline __attribute__((always_inline)) int
free_held(struct lb_pcp *p, void *obj, unsigned int order,
	  struct lbi_pcp_slot *sl, const enum lbi_owner_path path)
{
	if (lbi_unlikely((path == LBI_OWNER_LOCK_CHECKED && p->dbg) ||
			 !lbi_tune_free_fast(p->tuner, &sl->ts, order)))
		return free_slow(p, sl, obj, order);
	cds_list_add((struct cds_list_head *)obj, &sl->lists[order]);
	sl->st.frees++;
	owner_unlock(p, sl, path);
	return 0;
}

static __attribute__((noinline)) int free_miss(struct lb_pcp *p, void *obj,
					       unsigned int order, int cpu)
{
	struct lbi_pcp_slot *sl = miss_slot(p, cpu);
	uint64_t m0 = lbi_rseq_membarriers;
	int rc;

	owner_lock(p, sl, LBI_OWNER_RSEQ);
	rc = free_held(p, obj, order, sl, LBI_OWNER_RSEQ);
	lbi_pcp_count_fences(&p->owner_fences, m0);
	return rc;
}

/* &lb_pcp.free_path of the rseq path: orders above 0. */
static int free_rseq_order(struct lb_pcp *p, void *obj, unsigned int order)
{
	if (lbi_unlikely(order > p->max_order))
		return -EINVAL;
	return free_miss(p, obj, order, -1);
}

/* As alloc_wait(). */
static __attribute__((noinline)) int free_wait(struct lb_pcp *p, void *obj,
					       unsigned int order,
					       struct lbi_pcp_slot *sl)
{
	lbi_slot_lock_bare(&sl->hdr);
	return free_held(p, obj, order, sl, LBI_OWNER_LOCK);
}

/* &lb_pcp.free_path of LBI_OWNER_LOCK, as alloc_lock(). */
static int free_lock(struct lb_pcp *p, void *obj, unsigned int order)
{
	struct lbi_pcp_slot *sl;

	if (lbi_unlikely(order > p->max_order))
		return -EINVAL;
	sl = this_slot(p);
	if (lbi_unlikely(!lbi_slot_trylock_bare(&sl->hdr)))
		return free_wait(p, obj, order, sl);
	if (lbi_likely(!order))
		return free_held(p, obj, 0, sl, LBI_OWNER_LOCK);
	return free_held(p, obj, order, sl, LBI_OWNER_LOCK);
}

/* &lb_pcp.free_path of LBI_OWNER_LOCK_CHECKED. */
static int free_checked(struct lb_pcp *p, void *obj, unsigned int order)
{
	struct lbi_pcp_slot *sl;

	if (lbi_unlikely(order > p->max_order))
		return -EINVAL;
	sl = this_slot(p);
	owner_lock(p, sl, LBI_OWNER_LOCK_CHECKED);
	return free_held(p, obj, order, sl, LBI_OWNER_LOCK_CHECKED);
}

/* As lb_pcp_alloc(); the pointer checks are the API's (-EINVAL). */
int lb_pcp_free(struct lb_pcp *p, void *obj, unsigned int order)
{
	int cpu;

	if (lbi_unlikely(!p || !obj || ((uintptr_t)obj & (sizeof(void *) - 1))))
		return -EINVAL;
	if (lbi_unlikely((order | p->path) != LBI_OWNER_RSEQ))
		return p->free_path(p, obj, order);
	if (lbi_likely(lbi_pcp_mag_push(p, obj, &cpu) == LBI_RSEQ_OK))
		return 0;
	return free_miss(p, obj, 0, cpu);
}

/* The entry points of the path lbi_pcp_mag_setup() chose. */
void lbi_pcp_set_path_ops(struct lb_pcp *p)
{
	if (p->path == LBI_OWNER_RSEQ) {
		p->alloc_path = alloc_rseq_order;
		p->free_path = free_rseq_order;
	} else if (p->path == LBI_OWNER_LOCK) {
		p->alloc_path = alloc_lock;
		p->free_path = free_lock;
	} else {
		p->alloc_path = alloc_checked;
		p->free_path = free_checked;
	}
}
