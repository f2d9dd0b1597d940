// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Drain on demand: the slot holding one object, the slots holding several,
 * every slot (with coalescing), and disabling batching.
 *
 * Slots have real locks, so any thread can flush any slot; the kernel's
 * local_lock batches can only be drained by their own CPU, which is why
 * lru_add_drain_all() needs a work item per CPU and a global wait.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include <lockbatch/cpubatch.h>
#include "core/core.h"
#include "cpubatch/cpubatch.h"

/* Re-reads of one slot by a forced pass. */
#define LBI_FORCED_ROUNDS 4
/* Slots whose drain_objs bitmap fits on the stack. */
#define LBI_STACK_SLOTS 1024

int lbi_drain_init(struct lb_cpubatch *pc)
{
	return pthread_mutex_init(&pc->drain.lock, NULL) ? -ENOMEM : 0;
}

void lbi_drain_fini(struct lb_cpubatch *pc)
{
	pthread_mutex_destroy(&pc->drain.lock);
}

void lbi_drain_stats(struct lb_cpubatch *pc, struct lb_cpubatch_drain_stats *out)
{
	const struct lbi_drain *d = &pc->drain;

	out->settled = ck_pr_load_64(&d->settle[LB_SETTLED - LB_SETTLED]);
	out->drained = ck_pr_load_64(&d->settle[LB_DRAINED - LB_SETTLED]);
	out->busy = ck_pr_load_64(&d->settle[LB_BUSY - LB_SETTLED]);
	out->settle_waits = ck_pr_load_64(&d->settle_waits);
	out->drain_all_calls = ck_pr_load_64(&d->calls);
	out->drain_all_passes = ck_pr_load_64(&d->passes);
	out->drain_all_forced = ck_pr_load_64(&d->forced);
	out->drain_all_coalesced = ck_pr_load_64(&d->coalesced);
	out->drain_all_slots_touched = ck_pr_load_64(&d->slots_touched);
	out->drain_all_slots_max = ck_pr_load_64(&d->slots_max);
	out->disable_depth = ck_pr_load_32(&pc->disabled);
}

/*
 * Plausibility of a node before any slot is indexed with it. The fields are
 * read without a lock; the slot number is checked again under the lock.
 */
int lbi_node_check(const struct lb_cpubatch *pc, const struct lb_node *n)
{
	uint16_t owner = lbi_node_owner(n);
	uint32_t slot = lbi_node_slot(n);

	if (!owner)
		return -ENOENT;
	if (owner != pc->id)
		return -EXDEV;
	if (LBI_HOME_SLOT(lbi_node_home(n)) > pc->slots.nr ||
	    (slot > pc->slots.nr && slot != LBI_SLOT_BUSY))
		return -EINVAL;
	return 0;
}

/*
 * Lock the slot whose batch holds @n. Returns that slot's index + 1 with
 * its lock held, 0 when @n is in no batch (no lock held), or a negative
 * errno (no lock held). The lock-free read of n->slot is only a hint:
 * between it and the lock the batch may have been swapped out and the
 * object re-added elsewhere, so the node is checked again under the lock,
 * where it cannot leave the slot.
 */
int lbi_lock_node_slot(struct lb_cpubatch *pc, struct lb_node *n)
{
	unsigned int tries;

	for (tries = 0; tries < LBI_CHASE_MAX; tries++) {
		uint32_t idx = lbi_node_slot(n);

		/* Busy: in no batch; its flush is in flight (the callers wait). */
		if (!idx || idx == LBI_SLOT_BUSY)
			return 0;
		if (idx > pc->slots.nr)
			return -EINVAL;
		lbi_slot_lock_remote(&pc->slots, idx - 1, false);
		if (lbi_node_slot(n) == idx) {
			if (lbi_node_owner(n) == pc->id)
				return (int)idx;
			lbi_slot_unlock_remote(&pc->slots, idx - 1);
			return -EXDEV;
		}
		lbi_slot_unlock_remote(&pc->slots, idx - 1);
	}
	return -EAGAIN;
}

int lb_cpubatch_drain_obj(struct lb_cpubatch *pc, struct lb_node *n)
{
	int rc;

	if (!pc || !n)
		return -EINVAL;
	rc = lbi_node_check(pc, n);
	if (rc)
		return rc == -ENOENT ? 0 : rc;
	rc = lbi_context_check(pc);
	if (rc)
		return rc;
	rc = lbi_lock_node_slot(pc, n);
	if (rc < 0)
		return rc;
	if (rc > 0) {
		/* Read under the slot lock: after @put @n is not ours to read. */
		uint32_t home = lbi_node_home(n);

		lbi_flush_locked(pc, (unsigned int)rc - 1, LB_FLUSH_DRAIN_OBJ);
		/* An earlier flush of the object may still be in flight. */
		lbi_wait_home(pc, home);
		return 1;
	}
	lbi_wait_node_flush(pc, n);
	return 0;
}

/* Argument errors of every entry first, then ownership of every entry. */
static int check_nodes(const struct lb_cpubatch *pc, struct lb_node *const *nodes,
		       unsigned int cnt)
{
	unsigned int i;
	int rc;

	for (i = 0; i < cnt; i++)
		if (!nodes[i])
			return -EINVAL;
	for (i = 0; i < cnt; i++) {
		rc = lbi_node_check(pc, nodes[i]);
		if (rc && rc != -ENOENT)
			return rc;
	}
	return 0;
}

int lb_cpubatch_drain_objs(struct lb_cpubatch *pc, struct lb_node *const *nodes,
		       unsigned int cnt)
{
	uint64_t stackmap[LBI_STACK_SLOTS / 64] = { 0 };
	uint64_t *done = stackmap;
	unsigned int i, flushed = 0;
	int rc;

	if (!pc || (!nodes && cnt))
		return -EINVAL;
	/* All or nothing: every check before the first flush. */
	rc = check_nodes(pc, nodes, cnt);
	if (!rc)
		rc = lbi_context_check(pc);
	if (rc)
		return rc;
	if (pc->slots.nr > LBI_STACK_SLOTS) {
		done = calloc((pc->slots.nr + 63) / 64, sizeof(*done));
		if (!done)
			return -ENOMEM;
	}
	for (i = 0; i < cnt; i++) {
		unsigned int idx;
		uint32_t home;

		rc = lbi_lock_node_slot(pc, nodes[i]);
		if (rc == 0)
			lbi_wait_node_flush(pc, nodes[i]);
		if (rc <= 0)
			continue;	/* not cached, or moved away meanwhile */
		idx = (unsigned int)rc - 1;
		if (done[idx / 64] & (1ull << (idx % 64))) {
			/* Re-added after this call flushed the slot: leave it. */
			lbi_slot_unlock_remote(&pc->slots, idx);
			continue;
		}
		done[idx / 64] |= 1ull << (idx % 64);
		home = lbi_node_home(nodes[i]);	/* as drain_obj */
		lbi_flush_locked(pc, idx, LB_FLUSH_DRAIN_OBJS);
		lbi_wait_home(pc, home);
		flushed++;
	}
	if (done != stackmap)
		free(done);
	return (int)flushed;
}

/*
 * Nothing to do in a slot: an empty batch and no flush in flight. Read
 * without the lock: the count first, then the in-flight counter (D).
 */
static bool slot_idle(struct lbi_slot *s)
{
	if (lbi_cb_nr(s))
		return false;
	ck_pr_fence_load();
	return ck_pr_load_32(&s->inflight) == 0;
}

/*
 * Wait for the flushes of slot @idx counted in epoch @old (F); the drain
 * mutex is held, so the old epoch only drains.
 */
static void wait_epoch(struct lbi_slot *s, unsigned int old)
{
	struct lbi_backoff b = LBI_BACKOFF_INIT;

	while (ck_pr_load_32(&s->epoch_inflight[old]))
		lbi_backoff(&b);
	ck_pr_fence_acquire();	/* (E) */
	lbi_tsan_acquire(&s->epoch_inflight[old]);
}

/*
 * One slot of a pass; the drain mutex is held. @fence_empty: disable's
 * pass fences even an empty slot, so that a section that read "not
 * disabled" before the raise restarts and reads it again (model/drain.pml,
 * SKIP_EMPTY_FENCE); other passes fence only a slot that holds objects.
 */
static unsigned int drain_slot_pass(struct lb_cpubatch *pc, unsigned int idx,
				    unsigned int rounds, bool fence_empty,
				    enum lb_flush_cause cause)
{
	struct lbi_slot *s = lbi_cb_slot(pc, idx);
	unsigned int old, objs = 0;

	bool may_write = lbi_cb_lock_remote(pc, idx, fence_empty);

	old = s->epoch & 1;
	s->epoch++;
	while (may_write && lbi_cb_nr(s) && rounds--) {
		objs += lbi_flush_locked(pc, idx, cause);
		may_write = lbi_cb_lock_remote(pc, idx, false);
	}
	lbi_slot_unlock_remote(&pc->slots, idx);
	wait_epoch(s, old);
	return objs;
}

/*
 * Return once every flush of slot @idx that swapped out before the call
 * has committed and run @put. The common case, nothing in flight, is one
 * load; otherwise the wait takes the drain mutex (a pass may hold it for a
 * while) so that epoch flips stay one at a time.
 */
void lbi_wait_flushes(struct lb_cpubatch *pc, unsigned int idx)
{
	struct lbi_slot *s = lbi_cb_slot(pc, idx);
	unsigned int old;

	if (!ck_pr_load_32(&s->inflight)) {
		ck_pr_fence_acquire();	/* (E) */
		lbi_tsan_acquire(&s->inflight);
		return;
	}
	lbi_drain_lock(pc);
	/* Only the epoch changes: the slot is not written as the owner sees it. */
	lbi_slot_lock_remote(&pc->slots, idx, true);
	old = s->epoch & 1;
	s->epoch++;
	lbi_slot_unlock_remote(&pc->slots, idx);
	wait_epoch(s, old);
	lbi_drain_unlock(pc);
}

/*
 * Whether a flush that may hold the object whose node reads @home is
 * between swap-out and @put: its home slot's in-flight count, or every
 * slot's once it moved (%LBI_HOME_MOVED). Read after the node's slot read
 * 0 (D); false comes with (E).
 */
bool lbi_home_in_flight(const struct lb_cpubatch *pc, uint32_t home)
{
	unsigned int i = 0, end = pc->slots.nr, slot = LBI_HOME_SLOT(home);

	if (!(home & LBI_HOME_MOVED)) {
		if (!slot || slot > end)
			return false;
		i = slot - 1;
		end = slot;
	}
	for (; i < end; i++) {
		if (ck_pr_load_32(&lbi_cb_slot(pc, i)->inflight))
			return true;
		ck_pr_fence_acquire();	/* (E) */
		lbi_tsan_acquire(&lbi_cb_slot(pc, i)->inflight);
	}
	return false;
}

/*
 * (G): a busy entry of @n on a flush buffer of slot @s whose callbacks run.
 * Nodes are compared, never read: the object may be freed already, and
 * its memory may hold a new object with a node at the same address, which
 * then reads busy until this flush's callbacks return (a wait or -EBUSY
 * bounded by that flush, never a wrong "not busy").
 */
static bool slot_pending(struct lbi_slot *s, const struct lb_node *n)
{
	const struct lbi_flushbuf *buf;
	bool found = false;
	uint32_t m;

	lbi_spin_lock(&s->tail);
	cds_list_for_each_entry(buf, &s->flushing, link) {
		for (m = buf->pending; m && !found; m &= m - 1)
			found = lbi_ent_node(buf->nodes[__builtin_ctz(m)]) == n;
		if (found)
			break;
	}
	lbi_spin_unlock(&s->tail);
	return found;
}

/*
 * After @n read "not cached": whether a flush has its busy mark cleared
 * and the callbacks of that entry's last step not yet returned (G). Looks
 * only where a flush is in flight: the home slot, or every slot once the
 * object moved. False comes with acquire ordering against those
 * callbacks: (E) on the in-flight count, or the @tail lock.
 */
bool lbi_node_pending(struct lb_cpubatch *pc, const struct lb_node *n)
{
	uint32_t home;
	unsigned int i = 0, end = pc->slots.nr;

	ck_pr_fence_load();	/* (D) */
	home = lbi_node_home(n);
	if (!lbi_home_in_flight(pc, home))
		return false;
	if (!(home & LBI_HOME_MOVED)) {
		i = LBI_HOME_SLOT(home) - 1;
		end = i + 1;
	}
	for (; i < end; i++)
		if (slot_pending(lbi_cb_slot(pc, i), n))
			return true;
	return false;
}

/*
 * Whether a flush is applying an operation to @n (busy mark, or pending
 * (G)), or an add of it is under way, for a caller that found it in no
 * batch. False: every flush that held an operation of it is done, with
 * acquire ordering (lbi_node_pending()).
 */
bool lbi_node_busy(struct lb_cpubatch *pc, const struct lb_node *n)
{
	if (lbi_node_slot(n))
		return true;
	return lbi_node_pending(pc, n);
}

/*
 * Wait for the flushes that may hold the object whose node read @home:
 * those of its home slot, or of every slot once it moved. One load per
 * slot read when nothing is in flight.
 */
void lbi_wait_home(struct lb_cpubatch *pc, uint32_t home)
{
	unsigned int i, slot = LBI_HOME_SLOT(home);

	if (!(home & LBI_HOME_MOVED)) {
		if (slot && slot <= pc->slots.nr)
			lbi_wait_flushes(pc, slot - 1);
		return;
	}
	for (i = 0; i < pc->slots.nr; i++)
		lbi_wait_flushes(pc, i);
}

/*
 * @n read "not cached": the flush that took it out of its batch, if any,
 * is counted in its home slot (D), or in any slot once it moved. After
 * waiting for every slot, the "moved" mark goes, unless @home changed
 * meanwhile: an add to the home slot itself leaves @home as it is, and
 * its flushes are the home slot's, so only a move matters, and each move
 * advances the generation. The caller keeps the node valid for the call.
 */
void lbi_wait_node_flush(struct lb_cpubatch *pc, struct lb_node *n)
{
	uint32_t home;

	ck_pr_fence_load();
	home = lbi_node_home(n);
	lbi_tsan_acquire(&n->home);	/* a wait that cleared the mark */
	lbi_wait_home(pc, home);
	if (home & LBI_HOME_MOVED) {
		lbi_tsan_release(&n->home);
		lbi_node_cas_home(n, home, home & ~LBI_HOME_MOVED);
	}
}

static int drain_all(struct lb_cpubatch *pc, bool forced, enum lb_flush_cause cause)
{
	struct lbi_drain *d = &pc->drain;
	unsigned int i, touched = 0;
	uint64_t gen;
	int objs = 0;

	/*
	 * As __lru_add_drain_all(): the fence orders this thread's earlier
	 * adds before the sample, pairing with the fence after the bump
	 * below, so a pass that bumped after our sample reads our batches.
	 */
	ck_pr_fence_memory();
	gen = ck_pr_load_64(&d->gen);
	ck_pr_inc_64(&d->calls);
	lbi_drain_lock(pc);
	if (!forced && ck_pr_load_64(&d->gen) != gen) {
		/* A pass started after our sample and has finished. */
		ck_pr_inc_64(&d->coalesced);
		lbi_drain_unlock(pc);
		return 0;
	}
	ck_pr_store_64(&d->gen, ck_pr_load_64(&d->gen) + 1);
	ck_pr_fence_memory();
	for (i = 0; i < pc->slots.nr; i++) {
		if (!forced && slot_idle(lbi_cb_slot(pc, i)))
			continue;
		touched++;
		objs += (int)drain_slot_pass(pc, i,
					     forced ? LBI_FORCED_ROUNDS : 1,
					     cause == LB_FLUSH_DISABLE, cause);
	}
	ck_pr_inc_64(&d->passes);
	if (forced)
		ck_pr_inc_64(&d->forced);
	ck_pr_add_64(&d->slots_touched, touched);
	if (touched > ck_pr_load_64(&d->slots_max))
		ck_pr_store_64(&d->slots_max, touched);
	lbi_drain_unlock(pc);
	return objs;
}

static int drain_all_checked(struct lb_cpubatch *pc, bool forced)
{
	int rc;

	rc = lbi_context_check(pc);
	if (rc)
		return rc;
	return drain_all(pc, forced, LB_FLUSH_DRAIN_ALL);
}

int lb_cpubatch_drain_all(struct lb_cpubatch *pc)
{
	return drain_all_checked(pc, false);
}

int lb_cpubatch_drain_all_forced(struct lb_cpubatch *pc)
{
	return drain_all_checked(pc, true);
}

int lb_cpubatch_disable(struct lb_cpubatch *pc)
{
	uint32_t old;
	int rc;

	rc = lbi_context_check(pc);
	if (rc)
		return rc;
	do {
		old = ck_pr_load_32(&pc->disabled);
		if (old == UINT32_MAX)
			return -EOVERFLOW;
	} while (!ck_pr_cas_32(&pc->disabled, old, old + 1));
	/* The raise is visible before the pass takes the first slot lock. */
	ck_pr_fence_memory();
	drain_all(pc, true, LB_FLUSH_DISABLE);
	return 0;
}

int lb_cpubatch_enable(struct lb_cpubatch *pc)
{
	uint32_t old;

	if (!pc)
		return -EINVAL;
	do {
		old = ck_pr_load_32(&pc->disabled);
		if (!old)
			return -EINVAL;
	} while (!ck_pr_cas_32(&pc->disabled, old, old - 1));
	return (int)(old - 1 > INT32_MAX ? INT32_MAX : old - 1);
}

int lb_cpubatch_drain_local(struct lb_cpubatch *pc)
{
	unsigned int idx;
	uint32_t home;
	int rc;

	rc = lbi_context_check(pc);
	if (rc)
		return rc;
	idx = lbi_slots_this(&pc->slots);
	rc = lbi_drain_slot(pc, idx, LB_FLUSH_DRAIN_LOCAL, &home);
	/*
	 * Objects other threads swapped out of this slot before us, too, and
	 * earlier flushes of moved objects of the batch, from any slot.
	 */
	lbi_wait_home(pc, home);
	return rc;
}
