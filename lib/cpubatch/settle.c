// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Settle: the reference-expectation check that drains the one slot holding
 * an object when, and only when, the batch's reference is the whole
 * surplus. Linux answers "one reference too many" with lru_add_drain()
 * and then lru_add_drain_all(), whoever holds the extra reference.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>

#include <lockbatch/cpubatch.h>
#include "core/core.h"
#include "cpubatch/cpubatch.h"

/*
 * Where the count comes from: @refcount of the back-end, or the caller's
 * function (lb_cpubatch_settle_fn()), which reads a count its own lock
 * protects.
 */
struct lbi_count {
	lb_count_fn fn;
	void *arg;
};

static long read_count(const struct lb_cpubatch *pc, const struct lbi_count *c,
		       void *obj)
{
	return c->fn ? c->fn(obj, c->arg) : pc->ops.refcount(obj);
}

static int outcome(struct lb_cpubatch *pc, int res)
{
	ck_pr_inc_64(&pc->drain.settle[res - LB_SETTLED]);
	return res;
}

/*
 * The object sits in slot @idx, whose lock is held: the batch's reference
 * cannot go away, so R less that reference is what everybody else holds.
 * Without @put the batch holds none that R counts, but its hold is still
 * the one thing beyond @expected that a drain removes.
 */
static int settle_cached(struct lb_cpubatch *pc, const struct lbi_count *c,
			 void *obj, unsigned int idx, long expected)
{
	long r = read_count(pc, c, obj) - (pc->ops.put ? 1 : 0);

	if (r < expected) {
		lbi_slot_unlock_remote(&pc->slots, idx);
		return -ERANGE;
	}
	if (r > expected) {
		lbi_slot_unlock_remote(&pc->slots, idx);
		return outcome(pc, LB_BUSY);
	}
	lbi_flush_locked(pc, idx, LB_FLUSH_DRAIN_OBJ);
	return outcome(pc, LB_DRAINED);
}

/*
 * Whether a flush that may hold the object is between swap-out and @put
 * (its home slot's, or any slot's once it moved). The caller read n->slot
 * == 0 first (D).
 */
static bool home_in_flight(const struct lb_cpubatch *pc, const struct lb_node *n)
{
	ck_pr_fence_load();
	return lbi_home_in_flight(pc, lbi_node_home(n));
}

static int settle(struct lb_cpubatch *pc, const struct lbi_count *c,
		  void *obj, struct lb_node *n, long expected)
{
	struct lbi_backoff b = LBI_BACKOFF_INIT;
	unsigned int moves = 0;
	uint64_t deadline = 0;
	int rc;
	long r;

	/* Ownership, then calling context, then what the back-end offers. */
	rc = lbi_node_check(pc, n);
	if (!rc)
		rc = lbi_context_check(pc);
	if (rc)
		return rc;
	if (!c->fn && !pc->ops.refcount)
		return -EOPNOTSUPP;
	for (;;) {
		rc = lbi_lock_node_slot(pc, n);
		if (rc < 0)
			return rc;
		if (rc > 0)
			return settle_cached(pc, c, obj, (unsigned int)rc - 1,
					     expected);
		if (lbi_node_busy(pc, n)) {
			/*
			 * A flush is applying an operation to the object: what
			 * the count means is known once it is done.
			 */
			lbi_wait_node_flush(pc, n);
			continue;
		}
		/* n->slot read 0 before R, and is read again after it. */
		ck_pr_fence_load();
		r = read_count(pc, c, obj);
		ck_pr_fence_load();
		if (lbi_node_slot(n)) {
			/* Re-added between the two reads: decide again. */
			if (++moves == LBI_CHASE_MAX)
				return -EAGAIN;
			continue;
		}
		if (r == expected) {
			/*
			 * Without @put the batch's reference is not in R: a
			 * flush still holding the object is invisible there.
			 */
			if (!pc->ops.put)
				lbi_wait_node_flush(pc, n);
			return outcome(pc, LB_SETTLED);
		}
		if (r < expected)
			return -ERANGE;
		if (r - expected > 1)
			return outcome(pc, LB_BUSY);
		/*
		 * One reference too many and no slot: either someone else's,
		 * or the batch's, still held by a flush between swap-out and
		 * @put. Only the second can go away by itself.
		 */
		if (!home_in_flight(pc, n)) {
			/* The flush may have ended after we read R. */
			r = read_count(pc, c, obj);
			return outcome(pc, r == expected ? LB_SETTLED : LB_BUSY);
		}
		if (!deadline) {
			deadline = lbi_now_ns() + LB_CPUBATCH_SETTLE_WAIT_NS;
			ck_pr_inc_64(&pc->drain.settle_waits);
		} else if (lbi_now_ns() >= deadline) {
			return outcome(pc, LB_BUSY);
		}
		lbi_backoff(&b);
	}
}

int lb_cpubatch_settle_held(struct lb_cpubatch *pc, void *obj, struct lb_node *n,
			long expected, long held)
{
	static const struct lbi_count refcount = { NULL, NULL };

	if (!pc || !obj || !n || expected < 0 || held < 0 ||
	    expected > LONG_MAX - held)
		return -EINVAL;
	return settle(pc, &refcount, obj, n, expected + held);
}

int lb_cpubatch_settle_fn(struct lb_cpubatch *pc, void *obj, struct lb_node *n,
			  long expected, lb_count_fn count, void *arg)
{
	const struct lbi_count c = { count, arg };

	if (!pc || !obj || !n || expected < 0 || !count)
		return -EINVAL;
	return settle(pc, &c, obj, n, expected);
}

int lb_cpubatch_settle(struct lb_cpubatch *pc, void *obj, struct lb_node *n,
		   long expected)
{
	return lb_cpubatch_settle_held(pc, obj, n, expected, 0);
}
