// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Per-CPU size-weighted batches in front of a locked back-end.
 *
 * mm/swap.c keeps one folio_batch per CPU behind a local_lock that only
 * the owning CPU may take. Userspace threads cannot disable preemption, so
 * each slot here has a real (ck) spinlock instead; it is uncontended unless
 * a thread migrated between choosing and locking its slot, or another
 * thread drains the slot remotely, which is what lets a drain target one
 * slot instead of all of them.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <lockbatch/cpubatch.h>
#include "internal.h"
#include "cpubatch_impl.h"

static uint32_t next_cpubatch_id;

/* Re-entrant adds (made by commit) that had to flush, per thread. */
#define LBI_PENDING_MAX 4
struct lbi_reentry {
	struct lb_cpubatch *committing;	/* pc whose commit runs on this thread */
	unsigned int in_callback;	/* depth of commit_runs() on this thread */
	unsigned int nr_pending;
	struct lbi_flushbuf pending[LBI_PENDING_MAX];
};
static __thread struct lbi_reentry reentry;

const char *lb_cpubatch_flush_cause_name(enum lb_flush_cause cause)
{
	static const char *const names[LB_FLUSH_NR] = {
		[LB_FLUSH_FULL] = "full",
		[LB_FLUSH_WEIGHT] = "weight",
		[LB_FLUSH_BYPASS] = "bypass",
		[LB_FLUSH_DRAIN_LOCAL] = "drain_local",
		[LB_FLUSH_DRAIN_OBJ] = "drain_obj",
		[LB_FLUSH_DRAIN_OBJS] = "drain_objs",
		[LB_FLUSH_DRAIN_ALL] = "drain_all",
		[LB_FLUSH_DISABLE] = "disable",
		[LB_FLUSH_DESTROY] = "destroy",
	};

	if ((unsigned int)cause >= LB_FLUSH_NR)
		return "invalid";
	return names[cause];
}

int lb_cpubatch_create(struct lb_cpubatch **pcp, const struct lb_cpubatch_conf *conf)
{
	unsigned int nr_slots, max_nr, i;
	uint32_t max_weight;
	struct lb_cpubatch *pc;
	void *mem;

	if (!pcp || !conf || !conf->ops || !conf->ops->lock ||
	    !conf->ops->unlock || !conf->ops->commit)
		return -EINVAL;
	nr_slots = conf->nr_slots ? conf->nr_slots : lb_cpu_count();
	max_nr = conf->max_nr ? conf->max_nr : LB_WBATCH_MAX;
	max_weight = conf->max_weight ? conf->max_weight : LB_WBATCH_MAX;
	if (nr_slots > LB_CPUBATCH_MAX_SLOTS || max_nr > LB_WBATCH_MAX ||
	    max_weight > LB_WBATCH_WEIGHT_MAX)
		return -EINVAL;

	switch (conf->mode) {
	case LB_CPUBATCH_BASELINE:
		/* A batch of one: every add is committed on its own. */
		max_nr = 1;
		max_weight = LB_WBATCH_WEIGHT_MAX;
		break;
	case LB_CPUBATCH_BYPASS_LARGE:
		max_weight = LB_WBATCH_WEIGHT_MAX;
		break;
	case LB_CPUBATCH_WEIGHTED:
		break;
	default:
		return -EINVAL;
	}

	pc = calloc(1, sizeof(*pc));
	if (!pc)
		return -ENOMEM;
	if (posix_memalign(&mem, CK_MD_CACHELINE,
			   (size_t)nr_slots * sizeof(struct lbi_slot))) {
		free(pc);
		return -ENOMEM;
	}
	memset(mem, 0, (size_t)nr_slots * sizeof(struct lbi_slot));
	pc->slots = mem;
	pc->nr_slots = nr_slots;
	pc->mode = conf->mode;
	pc->bypass_above = conf->mode == LB_CPUBATCH_BYPASS_LARGE ? 1 : UINT32_MAX;
	pc->ops = *conf->ops;
	pc->backend = conf->backend;
	pc->cpu_fn = conf->cpu_fn;
	pc->cpu_arg = conf->cpu_arg;
	/* Ids only tell objects apart; 0 is reserved for "never added". */
	do {
		pc->id = ck_pr_faa_32(&next_cpubatch_id, 1) + 1;
	} while (pc->id == 0);
	for (i = 0; i < nr_slots; i++) {
		lbi_spin_init(&pc->slots[i].lock);
		lbi_wbatch_init_nocheck(&pc->slots[i].batch, max_nr, max_weight);
	}
	if (lbi_drain_init(pc)) {
		free(pc->slots);
		free(pc);
		return -ENOMEM;
	}
	*pcp = pc;
	return 0;
}

/*
 * Swap the batch out for commit. Called under the slot lock. The nodes are
 * marked "not cached" here, before commit, because once @put runs the
 * object may be freed and its node must not be touched again. inflight
 * tells settle-like callers that a flush of this slot has objects between
 * swap-out and @put.
 *
 * inflight is raised before the batch count and the nodes are cleared, and
 * a store fence keeps that order for lock-free readers: whoever sees a node
 * or a batch emptied by this swap-out also sees the flush in flight
 * (lb_cpubatch_settle() and the empty-slot skip of lb_cpubatch_drain_all() rely on
 * it).
 */
void lbi_swap_out(struct lb_cpubatch *pc, unsigned int idx,
		  struct lbi_flushbuf *buf, enum lb_flush_cause cause)
{
	struct lbi_slot *s = &pc->slots[idx];
	unsigned int i, nr = s->batch.nr;

	buf->epoch = s->epoch & 1;
	ck_pr_inc_32(&s->inflight);
	ck_pr_inc_32(&s->epoch_inflight[buf->epoch]);
	ck_pr_fence_store();
	buf->slot = idx;
	buf->nr = nr;
	memcpy(buf->objs, s->batch.objs, nr * sizeof(buf->objs[0]));
	for (i = 0; i < nr; i++)
		ck_pr_store_32(&s->nodes[i]->slot, 0);
	s->st.flushes[cause]++;
	s->st.objs_flushed += nr;
	s->st.weight_flushed += s->batch.weight;
	lbi_wbatch_reinit(&s->batch);
}

static void *backend_of(const struct lb_cpubatch *pc, void *obj)
{
	return pc->ops.backend_of ? pc->ops.backend_of(obj) : pc->backend;
}

static void commit_runs(struct lb_cpubatch *pc, struct lbi_flushbuf *buf)
{
	struct lb_cpubatch *outer = reentry.committing;
	struct lbi_slot *s = &pc->slots[buf->slot];
	unsigned int i = 0, j, runs = 0;
	void *be, *next = NULL;

	reentry.in_callback++;
	be = buf->nr ? backend_of(pc, buf->objs[0]) : NULL;
	while (i < buf->nr) {
		/* One lock hold per run of objects sharing a back-end. */
		for (j = i + 1; j < buf->nr; j++) {
			next = backend_of(pc, buf->objs[j]);
			if (next != be)
				break;
		}
		pc->ops.lock(be);
		reentry.committing = pc;
		pc->ops.commit(be, buf->objs + i, j - i);
		reentry.committing = outer;
		pc->ops.unlock(be);
		if (pc->ops.after)
			pc->ops.after(be, buf->objs + i, j - i);
		runs++;
		i = j;
		be = next;	/* backend_of() is asked once per object */
	}
	if (pc->ops.put)
		for (i = 0; i < buf->nr; i++)
			pc->ops.put(buf->objs[i]);
	ck_pr_add_64(&s->backend_locks, runs);
	/* Orders the commit and @put before inflight drops (settle waits on it). */
	ck_pr_fence_release();
	ck_pr_dec_32(&s->epoch_inflight[buf->epoch]);
	ck_pr_dec_32(&s->inflight);
	reentry.in_callback--;
}

/* Whether this thread runs @commit, @after or @put of some flush now. */
bool lbi_in_callback(void)
{
	return reentry.in_callback != 0;
}

/*
 * Commit a swapped-out batch, then any batches that adds made from inside
 * commit queued on this thread. Runs with no lock of ours held.
 */
void lbi_flush_buf(struct lb_cpubatch *pc, struct lbi_flushbuf *buf)
{
	struct lbi_flushbuf local;

	commit_runs(pc, buf);
	if (reentry.committing)
		return;		/* the outermost flush empties the queue */
	while (reentry.nr_pending) {
		local = reentry.pending[--reentry.nr_pending];
		commit_runs(pc, &local);
	}
}

/* @room: what lbi_wbatch_add() returned; > 0 means only disable flushes. */
static enum lb_flush_cause add_cause(const struct lb_cpubatch *pc,
				     const struct lb_wbatch *b, uint32_t weight,
				     int room)
{
	/* BASELINE commits every add on its own: "full", whatever the weight. */
	if (pc->mode == LB_CPUBATCH_BASELINE)
		return LB_FLUSH_FULL;
	if (weight > pc->bypass_above || weight >= b->max_weight)
		return LB_FLUSH_BYPASS;
	if (room > 0)
		return LB_FLUSH_DISABLE;
	if (b->nr >= b->max_nr)
		return LB_FLUSH_FULL;
	return LB_FLUSH_WEIGHT;
}

/*
 * The add asked for a flush: swap the batch out and commit it, or, for an
 * add made by commit itself, queue it behind the outer flush. Out of line
 * so the no-flush path keeps a small frame (the flush buffer is 270 bytes).
 */
static __attribute__((noinline)) int add_flush(struct lb_cpubatch *pc,
					       unsigned int idx, void *obj,
					       struct lb_node *n,
					       uint32_t weight, int rc)
{
	struct lbi_slot *s = &pc->slots[idx];
	struct lbi_flushbuf buf;

	if (lbi_unlikely(reentry.committing == pc)) {
		/* Called from commit: the back-end lock may be ours already. */
		if (reentry.nr_pending == LBI_PENDING_MAX) {
			lbi_wbatch_unadd(&s->batch, weight);
			ck_pr_store_32(&n->slot, 0);
			lbi_spin_unlock(&s->lock);
			if (pc->ops.put)
				pc->ops.put(obj);
			return -EAGAIN;
		}
		lbi_swap_out(pc, idx, &reentry.pending[reentry.nr_pending++],
			     add_cause(pc, &s->batch, weight, rc));
		lbi_spin_unlock(&s->lock);
		return 1;
	}
	lbi_swap_out(pc, idx, &buf, add_cause(pc, &s->batch, weight, rc));
	lbi_spin_unlock(&s->lock);
	lbi_flush_buf(pc, &buf);
	return 1;
}

int lb_cpubatch_add(struct lb_cpubatch *pc, void *obj, struct lb_node *n,
		uint32_t weight)
{
	struct lbi_slot *s;
	unsigned int idx;
	int rc;

	if (lbi_unlikely(!pc || !obj || !n || weight == 0 ||
			 weight > LB_WBATCH_WEIGHT_MAX))
		return -EINVAL;
	idx = lbi_cpu_slot(pc->cpu_fn, pc->cpu_arg, pc->nr_slots);
	s = &pc->slots[idx];
	lbi_spin_lock(&s->lock);
	/* CAS, not a plain test: two racing adds of one node must not both win. */
	if (lbi_unlikely(!ck_pr_cas_32(&n->slot, 0, idx + 1))) {
		lbi_spin_unlock(&s->lock);
		return -EEXIST;
	}
	/* Read without the slot lock by settle: single-copy atomic stores. */
	ck_pr_store_32(&n->home, idx + 1);
	ck_pr_store_32(&n->owner, pc->id);
	if (pc->ops.get)
		pc->ops.get(obj);
	/* No add counters here: lb_cpubatch_stats() derives them. */
	s->nodes[s->batch.nr] = n;
	rc = lbi_wbatch_add(&s->batch, obj, weight);
	/*
	 * disabled is read under the slot lock: lb_cpubatch_disable() raises it
	 * and then takes every slot lock, so an add either runs before the
	 * disable's pass reaches this slot (and is flushed by it) or sees the
	 * raised count here and flushes at once.
	 */
	if (lbi_likely(rc > 0 && weight <= pc->bypass_above &&
		       !ck_pr_load_32(&pc->disabled))) {
		lbi_spin_unlock(&s->lock);
		return 0;
	}
	return add_flush(pc, idx, obj, n, weight, rc);
}

int lbi_drain_slot(struct lb_cpubatch *pc, unsigned int idx,
		   enum lb_flush_cause cause)
{
	struct lbi_slot *s = &pc->slots[idx];
	struct lbi_flushbuf buf;

	lbi_spin_lock(&s->lock);
	if (!s->batch.nr) {
		lbi_spin_unlock(&s->lock);
		return 0;
	}
	lbi_swap_out(pc, idx, &buf, cause);
	lbi_spin_unlock(&s->lock);
	lbi_flush_buf(pc, &buf);
	return (int)buf.nr;
}

int lb_cpubatch_drain_local(struct lb_cpubatch *pc)
{
	if (!pc)
		return -EINVAL;
	return lbi_drain_slot(pc, lbi_cpu_slot(pc->cpu_fn, pc->cpu_arg,
					       pc->nr_slots),
			      LB_FLUSH_DRAIN_LOCAL);
}

int lb_cpubatch_destroy(struct lb_cpubatch *pc)
{
	unsigned int i, j;

	if (!pc)
		return -EINVAL;
	/* A slot in use means a concurrent user: refuse, change nothing. */
	for (i = 0; i < pc->nr_slots; i++) {
		struct lbi_slot *s = &pc->slots[i];
		bool busy = !lbi_spin_trylock(&s->lock);

		if (!busy && ck_pr_load_32(&s->inflight)) {
			lbi_spin_unlock(&s->lock);
			busy = true;
		}
		if (busy) {
			for (j = 0; j < i; j++)
				lbi_spin_unlock(&pc->slots[j].lock);
			return -EBUSY;
		}
	}
	for (i = 0; i < pc->nr_slots; i++)
		lbi_spin_unlock(&pc->slots[i].lock);
	for (i = 0; i < pc->nr_slots; i++)
		lbi_drain_slot(pc, i, LB_FLUSH_DESTROY);
	lbi_drain_fini(pc);
	free(pc->slots);
	free(pc);
	return 0;
}

static void sum_stats(struct lb_cpubatch_slot_stats *t,
		      const struct lb_cpubatch_slot_stats *s)
{
	unsigned int c;

	t->adds += s->adds;
	t->weight_added += s->weight_added;
	for (c = 0; c < LB_FLUSH_NR; c++)
		t->flushes[c] += s->flushes[c];
	t->objs_flushed += s->objs_flushed;
	t->weight_flushed += s->weight_flushed;
	t->nr_cached += s->nr_cached;
	t->weight_cached += s->weight_cached;
}

int lb_cpubatch_stats(struct lb_cpubatch *pc, struct lb_cpubatch_stats *out,
		  struct lb_cpubatch_slot_stats *slots, unsigned int nr)
{
	struct lb_cpubatch_slot_stats one;
	unsigned int i;

	if (!pc || (!slots && nr))
		return -EINVAL;
	if (out) {
		memset(out, 0, sizeof(*out));
		out->nr_slots = pc->nr_slots;
		out->cpu_src = pc->cpu_fn ? LB_CPU_SRC_INJECTED :
					    lb_cpu_source();
		lbi_drain_stats(pc, &out->drain);
	}
	for (i = 0; i < pc->nr_slots; i++) {
		struct lbi_slot *s = &pc->slots[i];

		lbi_spin_lock(&s->lock);
		one = s->st;
		one.nr_cached = s->batch.nr;
		one.weight_cached = s->batch.weight;
		lbi_spin_unlock(&s->lock);
		/* Every add enters a batch, and leaves it only by a flush. */
		one.adds = one.objs_flushed + one.nr_cached;
		one.weight_added = one.weight_flushed + one.weight_cached;
		if (i < nr)
			slots[i] = one;
		if (out) {
			sum_stats(&out->total, &one);
			out->backend_locks += ck_pr_load_64(&s->backend_locks);
		}
	}
	return (int)pc->nr_slots;
}
