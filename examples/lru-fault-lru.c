// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * The LRU back-end of lru-fault: an lb_lru (one list behind one lb_lock),
 * entered by two paths that must be told apart in the lock statistics:
 *
 * - add: lb_cpubatch flushes committing batches of added objects
 *   (folio_batch_move_lru() -> lru_add()); lb_lru links each batch into a
 *   chain before taking the lock and splices it in under the lock
 *   (--no-splice: one insertion per object under the lock, as 6.12);
 * - release: unmapping threads taking objects off the list in batches of
 *   up to 31 with lb_lru_del() (folios_put_refs() ->
 *   __page_cache_release()).
 *
 * Per-path accounting. Both paths share the one lock (that sharing is what
 * is measured), so the lock's own counters mix them; lb_lru charges every
 * acquisition to the path that made it (see lb_lru_stats()), and the run
 * checks that the per-path sums add up to the lock's totals.
 */
#include <stddef.h>
#include <string.h>

#include <ck_pr.h>

#include "lru-fault.h"

/* The unmap batch of the calling thread; see lf_relq_attach(). */
static __thread struct lf_relq *cur_relq;

static void op_get(void *obj)
{
	ck_pr_inc_32(&((struct lf_obj *)obj)->ref);
}

/* Called once the object's batch was committed: count it, drop the ref. */
static void op_put(void *obj)
{
	struct lf_obj *o = obj;

	o->commits++;
	lf_obj_put(o);
}

static long op_refcount(void *obj)
{
	return (long)ck_pr_load_32(&((struct lf_obj *)obj)->ref);
}

static const struct lb_lru_ops lf_lru_ops = {
	.get = op_get,
	.put = op_put,
	.refcount = op_refcount,
};

const char *lf_lock_name(enum lb_lock_kind kind)
{
	static const char *const names[LB_LOCK_NR_KINDS] = {
		[LB_LOCK_MUTEX] = "mutex", [LB_LOCK_SPIN] = "spin",
		[LB_LOCK_TICKET] = "ticket", [LB_LOCK_MCS] = "mcs",
		[LB_LOCK_CLH] = "clh",
	};

	return (unsigned int)kind < LB_LOCK_NR_KINDS ? names[kind] : NULL;
}

int lf_lru_init(struct lf_lru *lru, enum lb_lock_kind kind, bool splice)
{
	struct lb_lru_conf conf = {
		.lock_kind = kind,
		.name = "lru",
		.node_offset = offsetof(struct lf_obj, lru),
		.flags = LB_LRU_HOLD_TIME | (splice ? 0 : LB_LRU_NO_SPLICE),
		.ops = &lf_lru_ops,
	};

	lru->lb = NULL;
	return lb_lru_create(&lru->lb, &conf);
}

void lf_lru_destroy(struct lf_lru *lru)
{
	if (lru->lb)
		lb_lru_destroy(lru->lb);
	lru->lb = NULL;
}

int lf_lru_cpubatch_conf(struct lf_lru *lru, struct lb_cpubatch_conf *pconf)
{
	return lb_lru_cpubatch_conf(lru->lb, pconf);
}

/* The add path outside lb_cpubatch: limit mode, one object at a time. */
void lf_lru_commit(struct lf_lru *lru, void *const *objs, unsigned int n)
{
	unsigned int i;

	lb_lru_commit(lru->lb, objs, n);
	for (i = 0; i < n; i++)
		((struct lf_obj *)objs[i])->commits++;
}

void lf_lru_release(struct lf_lru *lru, struct lf_obj **objs, unsigned int n)
{
	unsigned int i;

	lb_lru_del(lru->lb, (void *const *)objs, n);
	for (i = 0; i < n; i++)
		objs[i]->releases++;
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

void lf_lru_state(struct lf_lru *lru, struct lf_lru_state *out)
{
	struct lb_lru_stats st;
	unsigned int p;

	lb_lru_stats(lru->lb, &st);
	for (p = 0; p < LF_NR_PATHS; p++) {
		const struct lb_lru_path_stats *s = &st.path[LF_LB_PATH(p)];

		out->path[p].acquisitions = s->acquisitions;
		out->path[p].contentions = s->contentions;
		out->path[p].wait_ns_total = s->wait_ns_total;
		out->path[p].wait_ns_max = s->wait_ns_max;
		out->path[p].hold_ns_total = s->hold_ns_total - s->hold_ns_long;
		out->path[p].holds_long = s->holds_long;
	}
	out->errors = st.errors;
	out->nr_listed = st.nr[LB_LRU_INACTIVE] + st.nr[LB_LRU_ACTIVE];
	out->snapshots = st.snapshots;
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
