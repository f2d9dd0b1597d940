// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Per-CPU size-weighted batches in front of a locked back-end.
 *
 * mm/swap.c keeps one folio_batch per CPU behind a local_lock that only
 * the owning CPU may take, which costs no more than disabling preemption.
 * The rseq path gets the same here: an add that does not flush is one
 * restartable sequence on the current CPU's slot (no lock, no atomic
 * instruction), and every other access to a slot takes its ck spinlock
 * and stops the slot (lib/rseq.h, R1-R5). Where sections cannot run (the
 * lock path: see lb_cpubatch_create()) the owner takes the slot lock too;
 * it is uncontended unless a thread migrated between choosing and locking
 * its slot, or another thread drains the slot remotely, which is what
 * lets a drain target one slot instead of all of them.
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

/*
 * fork(): the prepare hooks run in registration order, so this one (made
 * before the slot core's) takes the drain mutex before every slot lock, as
 * a drain pass does. In the child, flushes that other threads had swapped
 * out will never finish: their objects stay the parent's, and the child's
 * in-flight counts start from zero so that its drains do not wait for them.
 */
static void fork_prepare(void *arg)
{
	pthread_mutex_lock(&((struct lb_cpubatch *)arg)->drain.lock);
}

static void fork_parent(void *arg)
{
	pthread_mutex_unlock(&((struct lb_cpubatch *)arg)->drain.lock);
}

static void fork_child(void *arg)
{
	struct lb_cpubatch *pc = arg;
	unsigned int i;

	for (i = 0; i < pc->slots.nr; i++) {
		struct lbi_slot *s = lbi_cb_slot(pc, i);

		s->inflight = 0;
		s->epoch_inflight[0] = s->epoch_inflight[1] = 0;
	}
	pthread_mutex_unlock(&pc->drain.lock);
}

static int create_fork_hook(struct lb_cpubatch *pc)
{
	if (lbi_drain_init(pc))
		return -ENOMEM;
	pc->fork.prepare = fork_prepare;
	pc->fork.parent = fork_parent;
	pc->fork.child = fork_child;
	pc->fork.arg = pc;
	if (lbi_rseq_fork_register(&pc->fork)) {
		lbi_drain_fini(pc);
		return -EINVAL;
	}
	return 0;
}

static void destroy_fork_hook(struct lb_cpubatch *pc)
{
	lbi_rseq_fork_unregister(&pc->fork);
	lbi_drain_fini(pc);
}

int lb_cpubatch_create(struct lb_cpubatch **pcp, const struct lb_cpubatch_conf *conf)
{
	unsigned int max_nr;
	uint32_t max_weight;
	struct lb_cpubatch *pc;
	int rc;

	if (!pcp || !conf || !conf->ops || !conf->ops->lock ||
	    !conf->ops->unlock || !conf->ops->commit ||
	    (conf->flags & ~LB_CPUBATCH_F_ALL))
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
	rc = create_fork_hook(pc);
	if (rc) {
		free(pc);
		return rc;
	}
	rc = lbi_slots_init(&pc->slots, conf->nr_slots, sizeof(struct lbi_slot),
			    conf->cpu_fn, conf->cpu_arg);
	if (rc) {
		destroy_fork_hook(pc);
		free(pc);
		return rc;
	}
	pc->mode = conf->mode;
	pc->max_nr = max_nr;
	pc->max_weight = max_weight;
	pc->bypass_above = conf->mode == LB_CPUBATCH_BYPASS_LARGE ? 1 : UINT32_MAX;
	pc->ops = *conf->ops;
	pc->backend = conf->backend;
	/* Ids only tell objects apart; 0 is reserved for "never added". */
	do {
		pc->id = ck_pr_faa_32(&next_cpubatch_id, 1) + 1;
	} while (pc->id == 0);
	/*
	 * Injected CPU sources stay on the lock path: the id a test chooses
	 * is not the cpu_id the section checks. So does a batch of one.
	 */
	pc->slots.rseq = !conf->cpu_fn && max_nr > 1 &&
			 lbi_rseq_usable(conf->flags & LB_CPUBATCH_F_LOCK_PATH,
					 pc->slots.nr);
	pc->rseq_wmax = pc->bypass_above < max_weight - 1 ? pc->bypass_above :
							    max_weight - 1;
	pc->rseq_lim = lbi_rseq_word(max_nr - 1, max_weight);
	*pcp = pc;
	return 0;
}

/* add_decide()'s "keep batching". */
#define LBI_NO_FLUSH LB_FLUSH_NR

/*
 * The one flush decision of an add: whether the batch goes now, and why.
 * The object is appended already: @nr and @bw are the batch's count and
 * weight with it. disabled is read under the slot lock:
 * lb_cpubatch_disable() raises it and then takes every slot lock, so an
 * add either runs before the disable's pass reaches this slot (and is
 * flushed by it) or sees the raised count here and flushes at once. The
 * rseq section reads it too (add_rseq()), and disable fences every slot.
 */
static inline enum lb_flush_cause add_decide(const struct lb_cpubatch *pc,
					     uint32_t nr, uint32_t bw,
					     uint32_t weight)
{
	bool heavy = weight >= pc->max_weight || bw > pc->max_weight;

	if (lbi_likely(!heavy && nr < pc->max_nr &&
		       weight <= pc->bypass_above &&
		       !ck_pr_load_32(&pc->disabled)))
		return LBI_NO_FLUSH;
	/* BASELINE commits every add on its own: "full", whatever the weight. */
	if (pc->mode == LB_CPUBATCH_BASELINE)
		return LB_FLUSH_FULL;
	if (weight > pc->bypass_above || weight >= pc->max_weight)
		return LB_FLUSH_BYPASS;
	if (!heavy && nr < pc->max_nr)
		return LB_FLUSH_DISABLE;
	if (nr >= pc->max_nr)
		return LB_FLUSH_FULL;
	return LB_FLUSH_WEIGHT;
}

/*
 * The lock path: R1-R5 on the calling CPU's slot (the stop flag only on
 * the rseq path), append, decide; @got: @get already ran for this add.
 */
static inline int add_locked(struct lb_cpubatch *pc, void *obj,
			     struct lb_node *n, uint32_t weight, bool got)
{
	enum lb_flush_cause cause;
	unsigned int idx = lbi_slots_this(&pc->slots);
	struct lbi_slot *s = lbi_cb_slot(pc, idx);
	uint64_t word;
	uint32_t nr;

	lbi_cb_lock_own(pc, idx);
	/* CAS, not a plain test: two racing adds of one node must not both win. */
	if (lbi_unlikely(!ck_pr_cas_32(&n->slot, 0, idx + 1))) {
		lbi_cb_unlock_own(pc, idx);
		if (got && pc->ops.put)
			pc->ops.put(obj);
		return -EEXIST;
	}
	/* Read without the slot lock by settle: single-copy atomic stores. */
	ck_pr_store_32(&n->home, idx + 1);
	ck_pr_store_32(&n->owner, pc->id);
	if (!got && pc->ops.get)
		pc->ops.get(obj);
	word = s->hdr.rseq.word + lbi_rseq_word(1, weight);
	nr = lbi_rseq_count(word);
	s->objs[nr - 1] = obj;
	s->nodes[nr - 1] = n;
	ck_pr_store_64(&s->hdr.rseq.word, word);
	cause = add_decide(pc, nr, lbi_rseq_weight(word), weight);
	if (lbi_likely(cause == LBI_NO_FLUSH)) {
		lbi_cb_unlock_own(pc, idx);
		return 0;
	}
	return lbi_add_flush(pc, idx, obj, n, weight, cause);
}

/*
 * The rseq path (lib/rseq.h): the node is marked for the slot of each
 * attempt before the section, which stores the object and node above the
 * committed count and commits count and weight in one store. An attempt
 * that aborts is retried from the CPU id, its marks overwritten; a drain
 * that follows such a mark finds the node not in the slot's batch and
 * flushes what is there (the add is not done, so nothing is owed). A
 * stopped slot, a disabled instance, an add that would flush or a CPU id
 * without a slot takes the lock path, the marks cleared first.
 */
static __attribute__((noinline)) int
add_rseq(struct lb_cpubatch *pc, void *obj, struct lb_node *n, uint32_t weight)
{
#if LBI_RSEQ_ARCH
	uint64_t inc = lbi_rseq_word(1, weight);
	int rc = LBI_RSEQ_LOCK;

	/* A plain test: a concurrent add of one node is the caller's bug. */
	if (lbi_unlikely(ck_pr_load_32(&n->slot)))
		return -EEXIST;
	if (lbi_unlikely(weight > pc->rseq_wmax))
		return add_locked(pc, obj, n, weight, false);
	ck_pr_store_32(&n->owner, pc->id);
	if (pc->ops.get)
		pc->ops.get(obj);
	for (;;) {
		int cpu = lbi_rseq_cpu_id();
		struct lbi_slot *s;

		if (lbi_unlikely((unsigned int)cpu >= pc->slots.nr))
			break;
		s = lbi_cb_slot(pc, (unsigned int)cpu);
		ck_pr_store_32(&n->home, (uint32_t)cpu + 1);
		ck_pr_store_32(&n->slot, (uint32_t)cpu + 1);
		rc = lbi_rseq_arch_push2(cpu, &s->hdr.rseq, s->objs, obj,
					 n, inc, pc->rseq_lim,
					 (void **)s->nodes, &pc->disabled);
		if (lbi_likely(rc == LBI_RSEQ_OK))
			return 0;
		if (rc != LBI_RSEQ_RESTART)
			break;
	}
	ck_pr_store_32(&n->slot, 0);
	return add_locked(pc, obj, n, weight, true);
#else
	return add_locked(pc, obj, n, weight, false);
#endif
}

/* The rseq path out of line: the lock path's frame is not set up for it. */
int lb_cpubatch_add(struct lb_cpubatch *pc, void *obj, struct lb_node *n,
		uint32_t weight)
{
	if (lbi_unlikely(!pc || !obj || !n || weight == 0 ||
			 weight > LB_WBATCH_WEIGHT_MAX))
		return -EINVAL;
	if (pc->slots.rseq)
		return add_rseq(pc, obj, n, weight);
	return add_locked(pc, obj, n, weight, false);
}

int lb_cpubatch_drain_local(struct lb_cpubatch *pc)
{
	unsigned int idx;
	int rc;

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
	lbi_slots_fini(&pc->slots);
	destroy_fork_hook(pc);
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
	one->nr_cached = lbi_cb_nr(s);
	one->weight_cached = lbi_cb_weight(s);
	/* Every object added leaves its slot only by a swap-out (or unadd). */
	one->adds = one->objs_flushed + one->nr_cached;
	one->weight_added = one->weight_flushed + one->weight_cached;
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
