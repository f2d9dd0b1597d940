// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lb_lru's operation batches: the move function of mm/swap.c's
 * folio_batch_move_lru() for each step lb_cpubatch asks (see
 * <lockbatch/cpubatch_op.h>), under the LRU lock this file takes itself,
 * as the commit of adds does (lb_cpubatch's lock hooks are empty here).
 *
 * As the kernel's lru_activate(), lru_move_tail() and lru_lazyfree() skip
 * a folio that is not on an LRU (isolated by reclaim, or not yet added),
 * every step skips an object that is not on the LRU when it runs: a queued
 * operation on an isolated object is dropped, not an error. An activation
 * stays within the LRU (no target_of), so lb_cpubatch applies it whole,
 * %LB_STEP_MOVE; the two halves (%LB_STEP_UNLINK, %LB_STEP_LINK) are kept
 * for a batch set whose target_of sends moves elsewhere: the unlink marks
 * what it took off (LBI_LRU_NODE_MOVING), so the link puts back only
 * those.
 */
#include "config.h"

#include <errno.h>

#include <lockbatch/lru.h>
#include "core/core.h"
#include "cpubatch/cpubatch.h"
#include "lru/lru.h"

/* Taken off its list by a move's first half, to be linked by its second. */
#define LBI_LRU_NODE_MOVING 0x4u
_Static_assert(!(LBI_LRU_NODE_MOVING & (LB_LRU_NODE_ON_LRU | LB_LRU_NODE_ACTIVE)),
	       "an internal node flag");

/* The tail of the object's list, where reclaim looks first. */
static void rotate(struct lb_lru *lru, struct lb_lru_node *n)
{
	cds_list_del(&n->link);
	cds_list_add_tail(&n->link, &lru->lists[lbi_lru_list_of(n)].head);
}

void lbi_lru_apply(void *be, enum lb_op_step step, void **objs, unsigned int n)
{
	struct lb_lru *lru = be;
	struct lbi_lru_hold h;
	unsigned int i, nr = 0;

	for (i = 0; i < n; i++)
		lbi_lru_prefetch(lru, lbi_lru_node(lru, objs[i]));
	lbi_lru_lock(lru, LB_LRU_PATH_OP, &h);
	for (i = 0; i < n; i++) {
		struct lb_lru_node *node = lbi_lru_node(lru, objs[i]);
		/*
		 * A node off the LRU may be isolated: its private list's holder
		 * writes its flags without the LRU lock
		 * (lb_lru_node_set_active()), so they are read with one atomic
		 * load and written only for a node this flush took off
		 * (MOVING), which nobody else holds.
		 */
		uint32_t fl = ck_pr_load_32(&node->flags);

		if (step == LB_STEP_LINK) {
			/* lru_activate(): to the head of the active list. */
			if (!(fl & LBI_LRU_NODE_MOVING))
				continue;
			node->flags = LB_LRU_NODE_ACTIVE;
			lbi_lru_link(lru, &h, node);
			nr++;
			continue;
		}
		if (!(fl & LB_LRU_NODE_ON_LRU)) {
			/* Not ours to move: a mark left by a deletion goes. */
			if (fl & LBI_LRU_NODE_MOVING)
				node->flags = fl & ~LBI_LRU_NODE_MOVING;
			continue;
		}
		if (step == LB_STEP_ROTATE) {
			rotate(lru, node);
		} else if (step == LB_STEP_MOVE) {
			/* lru_activate(), whole: off its list, onto the active. */
			lbi_lru_unlink(&h, node);
			node->flags = LB_LRU_NODE_ACTIVE;
			lbi_lru_link(lru, &h, node);
		} else {
			lbi_lru_unlink(&h, node);
			node->flags |= LBI_LRU_NODE_MOVING;
		}
		nr++;
	}
	lbi_lru_unlock(lru, &h, nr);
}

int lb_lru_queue(struct lb_cpubatch *pc, struct lb_lru *lru, void *obj,
		 enum lb_op op)
{
	struct lb_lru_node *n;

	/* As lb_lru_add(): a batch set made for another LRU is refused. */
	if (!pc || !lru || !obj || pc->backend != lru)
		return -EINVAL;
	n = lbi_lru_node(lru, obj);
	return lb_cpubatch_queue(pc, obj, &n->batch, op, n->weight);
}
