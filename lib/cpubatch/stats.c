// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lb_cpubatch's counters: the names of the flush causes and the sum of the
 * per-slot stats, read under each slot lock in turn.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <lockbatch/cpubatch.h>
#include "core/core.h"
#include "cpubatch/cpubatch.h"

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
	t->flushes_abandoned += s->flushes_abandoned;
	t->objs_abandoned += s->objs_abandoned;
	for (c = 0; c < LB_OP_NR; c++) {
		t->ops[c] += s->ops[c];
		t->ops_flushed[c] += s->ops_flushed[c];
	}
	t->merged += s->merged;
	t->cancelled += s->cancelled;
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
	one->nr_cached = lbi_cb_nr(s);
	one->weight_cached = lbi_cb_weight(s);
	/*
	 * Every entry leaves its slot by a swap-out or a cancellation, and
	 * every operation but a merged one made an entry; only the adds
	 * (the rseq path's among them) are not counted as they happen.
	 */
	one->adds = one->objs_flushed + one->nr_cached + one->merged +
		    one->cancelled - one->ops[LB_OP_MOVE] -
		    one->ops[LB_OP_ROTATE] - one->ops[LB_OP_DEL];
	one->ops[LB_OP_ADD] = one->adds;
	one->weight_added = one->weight_flushed + one->weight_cached +
			    s->weight_cancelled;
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
		out->path = pc->slots.rseq ? LB_CPU_PATH_RSEQ : LB_CPU_PATH_LOCK;
		lbi_drain_stats(pc, &out->drain);
	}
	lbi_slots_stats(&pc->slots, read_slot, out, slots, nr, sizeof(*slots),
			&scratch);
	return (int)pc->slots.nr;
}
