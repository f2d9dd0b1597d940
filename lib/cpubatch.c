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
	unsigned int max_nr, i;
	uint32_t max_weight;
	struct lb_cpubatch *pc;
	int rc;

	if (!pcp || !conf || !conf->ops || !conf->ops->lock ||
	    !conf->ops->unlock || !conf->ops->commit)
		return -EINVAL;
	max_nr = conf->max_nr ? conf->max_nr : LB_WBATCH_MAX;
	max_weight = conf->max_weight ? conf->max_weight : LB_WBATCH_MAX;
	if (max_nr > LB_WBATCH_MAX ||
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
	rc = lbi_slots_init(&pc->slots, conf->nr_slots, sizeof(struct lbi_slot),
			    conf->cpu_fn, conf->cpu_arg);
	if (rc) {
		free(pc);
		return rc;
	}
	pc->mode = conf->mode;
	pc->bypass_above = conf->mode == LB_CPUBATCH_BYPASS_LARGE ? 1 : UINT32_MAX;
	pc->ops = *conf->ops;
	pc->backend = conf->backend;
	/* Ids only tell objects apart; 0 is reserved for "never added". */
	do {
		pc->id = ck_pr_faa_32(&next_cpubatch_id, 1) + 1;
	} while (pc->id == 0);
	for (i = 0; i < pc->slots.nr; i++)
		lbi_wbatch_init_nocheck(&lbi_cb_slot(pc, i)->batch, max_nr,
					max_weight);
	if (lbi_drain_init(pc)) {
		lbi_slots_fini(&pc->slots);
		free(pc);
		return -ENOMEM;
	}
	*pcp = pc;
	return 0;
}

/* add_decide()'s "keep batching". */
#define LBI_NO_FLUSH LB_FLUSH_NR

/*
 * The one flush decision of an add: whether the batch goes now, and why.
 * @room: what lbi_wbatch_add() returned (0: the weight rule says flush).
 * disabled is read under the slot lock: lb_cpubatch_disable() raises it
 * and then takes every slot lock, so an add either runs before the
 * disable's pass reaches this slot (and is flushed by it) or sees the
 * raised count here and flushes at once.
 */
static inline enum lb_flush_cause add_decide(const struct lb_cpubatch *pc,
					     const struct lb_wbatch *b,
					     uint32_t weight, int room)
{
	if (lbi_likely(room > 0 && weight <= pc->bypass_above &&
		       !ck_pr_load_32(&pc->disabled)))
		return LBI_NO_FLUSH;
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

int lb_cpubatch_add(struct lb_cpubatch *pc, void *obj, struct lb_node *n,
		uint32_t weight)
{
	enum lb_flush_cause cause;
	struct lbi_slot *s;
	unsigned int idx;

	if (lbi_unlikely(!pc || !obj || !n || weight == 0 ||
			 weight > LB_WBATCH_WEIGHT_MAX))
		return -EINVAL;
	idx = lbi_slots_this(&pc->slots);
	s = lbi_cb_slot(pc, idx);
	lbi_slot_lock(&s->hdr);
	/* CAS, not a plain test: two racing adds of one node must not both win. */
	if (lbi_unlikely(!ck_pr_cas_32(&n->slot, 0, idx + 1))) {
		lbi_slot_unlock(&s->hdr);
		return -EEXIST;
	}
	/* Read without the slot lock by settle: single-copy atomic stores. */
	ck_pr_store_32(&n->home, idx + 1);
	ck_pr_store_32(&n->owner, pc->id);
	if (pc->ops.get)
		pc->ops.get(obj);
	s->st.adds++;
	s->st.weight_added += weight;
	s->nodes[s->batch.nr] = n;
	cause = add_decide(pc, &s->batch, weight,
			   lbi_wbatch_add(&s->batch, obj, weight));
	if (lbi_likely(cause == LBI_NO_FLUSH)) {
		lbi_slot_unlock(&s->hdr);
		return 0;
	}
	return lbi_add_flush(pc, idx, obj, n, weight, cause);
}

int lb_cpubatch_drain_local(struct lb_cpubatch *pc)
{
	unsigned int idx;
	int rc;

	if (!pc)
		return -EINVAL;
	rc = lbi_context_check(pc);
	if (rc)
		return rc;
	idx = lbi_slots_this(&pc->slots);
	rc = lbi_drain_slot(pc, idx, LB_FLUSH_DRAIN_LOCAL);
	/* Objects other threads swapped out of this slot before us, too. */
	lbi_wait_flushes(pc, idx);
	return rc;
}

/* A flush between swap-out and @put still reads the instance. */
static bool slot_busy(void *slot)
{
	return ck_pr_load_32(&((struct lbi_slot *)slot)->inflight) != 0;
}

int lb_cpubatch_destroy(struct lb_cpubatch *pc)
{
	unsigned int i;
	int rc;

	if (!pc)
		return -EINVAL;
	rc = lbi_context_check(pc);
	if (rc)
		return rc;
	/* A slot in use means a concurrent user: refuse, change nothing. */
	rc = lbi_slots_lock_idle(&pc->slots, slot_busy);
	if (rc)
		return rc;
	lbi_slots_unlock_all(&pc->slots);
	for (i = 0; i < pc->slots.nr; i++)
		lbi_drain_slot(pc, i, LB_FLUSH_DESTROY);
	lbi_drain_fini(pc);
	lbi_slots_fini(&pc->slots);
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
	t->flushes_committed += s->flushes_committed;
	t->objs_committed += s->objs_committed;
	t->objs_flushed += s->objs_flushed;
	t->weight_flushed += s->weight_flushed;
	t->nr_cached += s->nr_cached;
	t->weight_cached += s->weight_cached;
}

/*
 * One slot, under its lock (lbi_slots_stats()). The committed counters are
 * read after the in-flight count (D): a flush is never seen done only.
 */
static void read_slot(void *slot, void *onep, void *outp)
{
	struct lb_cpubatch_stats *out = outp;
	struct lb_cpubatch_slot_stats *one = onep;
	struct lbi_slot *s = slot;
	unsigned int inflight;

	*one = s->st;
	one->nr_cached = s->batch.nr;
	one->weight_cached = s->batch.weight;
	ck_pr_fence_load();
	inflight = ck_pr_load_32(&s->inflight);
	ck_pr_fence_load();
	one->flushes_committed = ck_pr_load_64(&s->flushes_committed);
	one->objs_committed = ck_pr_load_64(&s->objs_committed);
	if (out) {
		sum_stats(&out->total, one);
		out->backend_locks += ck_pr_load_64(&s->backend_locks);
		out->flushes_inflight += inflight;
	}
}

int lb_cpubatch_stats(struct lb_cpubatch *pc, struct lb_cpubatch_stats *out,
		      struct lb_cpubatch_slot_stats *slots, unsigned int nr)
{
	struct lb_cpubatch_slot_stats scratch;

	if (!pc || (!slots && nr))
		return -EINVAL;
	if (out) {
		memset(out, 0, sizeof(*out));
		out->nr_slots = pc->slots.nr;
		out->cpu_src = pc->slots.cpu_fn ? LB_CPU_SRC_INJECTED :
						  lb_cpu_source();
		lbi_drain_stats(pc, &out->drain);
	}
	lbi_slots_stats(&pc->slots, read_slot, out, slots, nr, sizeof(*slots),
			&scratch);
	return (int)pc->slots.nr;
}
