// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lb_cpubatch: creation and destruction, the owner-path choice made at
 * creation and the fork hooks. The top of the module: it calls add, flush
 * and drain, and nothing in the module calls it.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <lockbatch/cpubatch.h>
#include "core/core.h"
#include "cpubatch/cpubatch.h"

/*
 * fork(): the prepare hooks run in registration order, so this one (made
 * before the slot core's) takes the drain mutex before every slot lock, as
 * a drain pass does, then every slot's tail lock, which only a flush's
 * last few counter updates take, so each flush is either counted done or
 * not at all. In the child, flushes that other threads had swapped out
 * will never finish: their objects stay the parent's, they move from in
 * flight to abandoned (cpubatch.h, fork()), and the child's in-flight
 * counts start from zero so that its drains do not wait for them. Those
 * of the forking thread itself (a fork() from a callback) do finish, and
 * are counted in flight again. So are drain_all callers: those waiting
 * for the mutex are gone.
 */
static void fork_prepare(void *arg)
{
	struct lb_cpubatch *pc = arg;
	unsigned int i;

	pthread_mutex_lock(&pc->drain.lock);
	for (i = 0; i < pc->slots.nr; i++)
		ck_spinlock_lock(&lbi_cb_slot(pc, i)->tail);
}

static void fork_parent(void *arg)
{
	struct lb_cpubatch *pc = arg;
	unsigned int i;

	for (i = 0; i < pc->slots.nr; i++)
		ck_spinlock_unlock(&lbi_cb_slot(pc, i)->tail);
	pthread_mutex_unlock(&pc->drain.lock);
}

static void fork_child(void *arg)
{
	struct lb_cpubatch *pc = arg;
	unsigned int i;

	for (i = 0; i < pc->slots.nr; i++) {
		struct lbi_slot *s = lbi_cb_slot(pc, i);

		/*
		 * Swapped out (under the slot lock) and not counted done: the
		 * objects of those and of the flushes an ancestor abandoned.
		 */
		s->st.flushes_abandoned += s->inflight;
		s->st.objs_abandoned = s->st.objs_flushed - s->objs_committed;
		s->inflight = 0;
		s->epoch_inflight[0] = s->epoch_inflight[1] = 0;
		ck_spinlock_unlock(&s->tail);
	}
	lbi_flushing_reset(pc);
	lbi_fork_own_flushes(pc);
	/*
	 * A drain_all caller counts itself before it waits for the drain
	 * mutex; the ones waiting at fork() are not the child's threads.
	 */
	pc->drain.calls = pc->drain.passes + pc->drain.coalesced;
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
	if (lbi_fork_register(&pc->fork)) {
		lbi_drain_fini(pc);
		return -EINVAL;
	}
	return 0;
}

static void destroy_fork_hook(struct lb_cpubatch *pc)
{
	lbi_fork_unregister(&pc->fork);
	lbi_drain_fini(pc);
}

/*
 * The owner path, once (enum lbi_cb_path), from the slot core's choice. A
 * batch of one stays on the lock path: its every add flushes.
 */
static void choose_path(struct lb_cpubatch *pc,
			const struct lb_cpubatch_conf *conf)
{
	enum lbi_owner_path o;

	o = lbi_slots_choose_path(&pc->slots, false,
				  (conf->flags & LB_CPUBATCH_F_LOCK_PATH) ||
				  pc->max_nr <= 1);
	pc->path = o == LBI_OWNER_RSEQ && pc->ops.get ? LBI_CB_RSEQ_GET :
							 (enum lbi_cb_path)o;
#if LBI_RSEQ_ARCH
	pc->rseq_off = __rseq_offset;
	pc->rseq_h0 = (char *)&lbi_cb_slot(pc, 0)->hdr.rseq;
	if (pc->path == LBI_CB_RSEQ)
		pc->rseq_fast_wmax = pc->rseq_wmax;
#endif
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
	/* Caller-protected references: the batch takes none. */
	if ((conf->flags & LB_CPUBATCH_F_CALLER_REFS) &&
	    (conf->ops->get || conf->ops->put))
		return -EINVAL;
	/* A flush must have somewhere to deliver every object. */
	if (!conf->backend && !conf->ops->backend_of)
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
	/* Nodes record it: unique among live instances (cpubatch/id.c). */
	rc = lbi_cb_id_get(&pc->id);
	if (rc) {
		lbi_slots_fini(&pc->slots);
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
	pc->caller_refs = conf->flags & LB_CPUBATCH_F_CALLER_REFS;
	pc->rseq_wmax = pc->bypass_above < max_weight - 1 ? pc->bypass_above :
							    max_weight - 1;
	pc->rseq_lim = lbi_rseq_word(max_nr - 1, max_weight);
	lbi_flushing_reset(pc);
	choose_path(pc, conf);
	*pcp = pc;
	return 0;
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
		lbi_drain_slot(pc, i, LB_FLUSH_DESTROY, NULL);
	lbi_slots_fini(&pc->slots);
	destroy_fork_hook(pc);
	/* Every flush is done: no node of ours is read or written any more. */
	lbi_cb_id_put(pc->id);
	free(pc);
	return 0;
}
