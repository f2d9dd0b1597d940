// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * The LRU back-end of lru-fault: one list behind one lb_lock, entered by
 * two paths that must be told apart in the lock statistics:
 *
 * - add: lb_cpubatch flushes committing batches of added objects
 *   (folio_batch_move_lru() -> lru_add());
 * - release: unmapping threads taking objects off the list in batches of
 *   up to 31 (folios_put_refs() -> __page_cache_release()).
 *
 * Per-path accounting. Both paths must share the one lock (that sharing is
 * what is measured), so the lock's own counters mix them. Snapshotting
 * the counters around a phase would be racy: other threads' acquisitions
 * land in between. Instead every acquisition attributes itself: right
 * after lb_lock_acquire() returns, the lock's counters contain exactly
 * the acquisitions made up to and including this one, because they are
 * written only by the holder (struct lb_lock @st: "written only by the
 * holder") and every acquisition of this lock goes through lru_lock().
 * The difference from the values seen by the previous holder is therefore
 * this acquisition alone: +1 acquisition, +0 or +1 contention and its
 * wait. It is read and charged to the caller's path while the lock is
 * still held, so the per-path sums always add up to the lock's totals
 * (which the run verifies). Cost: a few loads and adds inside a critical
 * section that exists anyway, no clock reads.
 */
#include <string.h>

#include <ck_pr.h>

#include "lru-fault.h"

/* The unmap batch of the calling thread; see lf_relq_attach(). */
static __thread struct lf_relq *cur_relq;

static void lru_lock(struct lf_lru *lru, enum lf_path p)
{
	const struct lb_lock_stats *now = &lru->lock.st;
	struct lf_path_stats *ps = &lru->path[p];
	uint64_t wait;

	if (!lru->locked)
		return;
	lb_lock_acquire(&lru->lock);
	/* Anything but exactly one acquisition means a lock user bypassed us. */
	if (now->acquisitions != lru->seen.acquisitions + 1)
		lru->errors++;
	wait = now->wait_ns_total - lru->seen.wait_ns_total;
	ps->acquisitions++;
	ps->contentions += now->contentions - lru->seen.contentions;
	ps->wait_ns_total += wait;
	if (wait > ps->wait_ns_max)
		ps->wait_ns_max = wait;
	lru->seen = *now;
}

static void lru_unlock(struct lf_lru *lru)
{
	if (lru->locked)
		lb_lock_release(&lru->lock);
}

int lf_lru_init(struct lf_lru *lru, enum lb_lock_kind kind, bool locked)
{
	memset(lru, 0, sizeof(*lru));
	lru->locked = locked;
	CDS_INIT_LIST_HEAD(&lru->head);
	return lb_lock_init(&lru->lock, kind, "lru");
}

void lf_lru_destroy(struct lf_lru *lru)
{
	lb_lock_destroy(&lru->lock);
}

/* Called with the lock held (or by the only user of an unlocked list). */
static void commit_locked(struct lf_lru *lru, void *const *objs,
			  unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct lf_obj *o = objs[i];

		if (o->on_lru) {
			lru->errors++;
			continue;
		}
		cds_list_add(&o->lru, &lru->head);
		o->on_lru = 1;
		o->commits++;
		lru->nr_listed++;
	}
}

/* The add path outside lb_cpubatch: limit mode, one object at a time. */
void lf_lru_commit(struct lf_lru *lru, void *const *objs, unsigned int n)
{
	lru_lock(lru, LF_PATH_ADD);
	commit_locked(lru, objs, n);
	lru_unlock(lru);
}

void lf_lru_release(struct lf_lru *lru, struct lf_obj **objs, unsigned int n)
{
	unsigned int i;

	lru_lock(lru, LF_PATH_RELEASE);
	for (i = 0; i < n; i++) {
		struct lf_obj *o = objs[i];

		if (!o->on_lru) {
			lru->errors++;
			continue;
		}
		cds_list_del(&o->lru);
		o->on_lru = 0;
		o->releases++;
		lru->nr_listed--;
	}
	lru_unlock(lru);
	/*
	 * The owner reuses an object as soon as it reads free == 1, so every
	 * store above (list links, counters) must be visible first; the unlock
	 * alone would not keep the later flag stores behind them. Pairs with
	 * the load fence in the owner's pool scan.
	 */
	ck_pr_fence_store();
	for (i = 0; i < n; i++)
		ck_pr_store_32(&objs[i]->free, 1);
}

void lf_relq_attach(struct lf_relq *q, struct lf_lru *lru)
{
	q->lru = lru;
	q->nr = 0;
	cur_relq = q;
}

void lf_relq_flush(struct lf_relq *q)
{
	if (q->nr) {
		lf_lru_release(q->lru, q->objs, q->nr);
		q->nr = 0;
	}
}

void lf_relq_detach(struct lf_relq *q)
{
	lf_relq_flush(q);
	if (cur_relq == q)
		cur_relq = NULL;
}

/*
 * Drop one reference. The last one queues the object on the calling
 * thread's unmap batch: when the mapping's reference goes last, the
 * unmapping thread releases it (the object is on the list: the batch's
 * reference is dropped only after commit); when the batch's goes last,
 * the thread that flushed the batch does, as folio_batch_move_lru() ends
 * with folios_put().
 */
void lf_obj_put(struct lf_obj *obj)
{
	struct lf_relq *q = cur_relq;
	bool zero;

	ck_pr_dec_32_zero(&obj->ref, &zero);
	if (!zero)
		return;
	q->objs[q->nr++] = obj;
	if (q->nr == LF_RELEASE_BATCH)
		lf_relq_flush(q);
}

static void op_lock(void *be)
{
	lru_lock(be, LF_PATH_ADD);
}

static void op_unlock(void *be)
{
	lru_unlock(be);
}

static void op_commit(void *be, void **objs, unsigned int n)
{
	commit_locked(be, objs, n);
}

static void op_get(void *obj)
{
	ck_pr_inc_32(&((struct lf_obj *)obj)->ref);
}

static void op_put(void *obj)
{
	lf_obj_put(obj);
}

static long op_refcount(void *obj)
{
	return (long)ck_pr_load_32(&((struct lf_obj *)obj)->ref);
}

const struct lb_backend_ops lf_lru_ops = {
	.lock = op_lock,
	.unlock = op_unlock,
	.commit = op_commit,
	.get = op_get,
	.put = op_put,
	.refcount = op_refcount,
};
