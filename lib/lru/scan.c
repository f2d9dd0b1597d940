// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lb_lru reclaim side: isolate from the tail with a prefetching scan,
 * putback with a post-unlock phase, batched deletion.
 */
#include "config.h"

#include <errno.h>

#include "core/core.h"
#include "lru/lru.h"

/*
 * The scan walks from the tail towards the head. While @scan and the list
 * surgery work on one node, the next node's line is fetched for writing
 * (lbi_lru_prefetch()):
 * isolating or rotating the current node writes the next one's link, and
 * the next visit writes its flags. A pointer chase cannot run ahead on its
 * own; the prefetch overlaps the next miss with this node's work. It is
 * issued as soon as the next node's address is known, before the callback.
 *
 * It cannot do better than that. The next address arrives with the current
 * node, so a scan costs at least one miss latency per node whatever it
 * prefetches; a short visit (a referenced check, a rotation) already runs
 * inside that latency, where the out-of-order core overlaps it with the
 * next load without help. Looking further ahead does not change this:
 * collecting K nodes before visiting them (to prefetch the objects' other
 * lines K ahead) still walks the same chain, one miss at a time. The
 * prefetch pays when the per-node work outlasts the core's window
 * (tests/bench/bench_lru_scan.c, rows age+32 and age+64, and its ceiling
 * column).
 *
 * The nodes at the tail of a long LRU mostly come from memory, where no
 * other CPU holds them and a read brings them exclusive too; there the
 * read prefetch of %LB_LRU_PREFETCH_READ can be the cheaper instruction.
 */
static inline void prefetch_next(const struct lb_lru *lru,
				 struct cds_list_head *next,
				 const struct cds_list_head *head)
{
	if (next != head)
		lbi_lru_prefetch(lru, next);
}

/* Apply one verdict to @n; returns false to stop the scan. */
static bool apply(struct lb_lru *lru, struct lbi_lru_hold *h,
		  struct lb_lru_node *n, enum lb_lru_verdict v,
		  struct cds_list_head *dst, unsigned int *taken)
{
	switch (v) {
	case LB_LRU_ISOLATE:
		lbi_lru_unlink(h, n);
		cds_list_add_tail(&n->link, dst);
		(*taken)++;
		return true;
	case LB_LRU_ROTATE:
		cds_list_move(&n->link, &lru->lists[lbi_lru_list_of(n)].head);
		lru->rotated++;
		return true;
	case LB_LRU_ACTIVATE:
		lbi_lru_unlink(h, n);
		n->flags |= LB_LRU_NODE_ACTIVE;
		lbi_lru_link(lru, h, n);
		lru->activated++;
		return true;
	case LB_LRU_SKIP:
		return true;
	default:
		return false;
	}
}

int lb_lru_isolate(struct lb_lru *lru, enum lb_lru_list list,
		   struct cds_list_head *dst, unsigned int nr,
		   lb_lru_scan_fn scan, void *arg)
{
	struct cds_list_head *head, *pos, *next;
	struct lbi_lru_hold h;
	unsigned int taken = 0;
	uint64_t budget, seen = 0;

	if (!lru || !dst || (unsigned int)list >= LB_LRU_NR_LISTS)
		return -EINVAL;
	if (!nr)
		return 0;
	head = &lru->lists[list].head;
	lbi_lru_lock(lru, LB_LRU_PATH_ISOLATE, &h);
	budget = lbi_lru_size(lru, list, false);
	for (pos = head->prev; pos != head && taken < nr && seen < budget;
	     pos = next) {
		struct lb_lru_node *n = cds_list_entry(pos, struct lb_lru_node,
						       link);
		enum lb_lru_verdict v;

		next = pos->prev;
		prefetch_next(lru, next, head);
		seen++;
		v = scan ? scan(lbi_lru_obj(lru, n), arg) : LB_LRU_ISOLATE;
		if (!apply(lru, &h, n, v, dst, &taken))
			break;
	}
	lru->scanned += seen;
	lbi_lru_unlock(lru, &h, taken);
	return (int)taken;
}

/* Collected objects go to @secondary, in list order. */
static void run_secondary(struct lb_lru *lru, struct cds_list_head *dead)
{
	struct cds_list_head *pos, *next;

	cds_list_for_each_safe(pos, next, dead) {
		struct lb_lru_node *n = cds_list_entry(pos, struct lb_lru_node,
						       link);

		cds_list_del_init(&n->link);
		if (lru->ops.secondary)
			lru->ops.secondary(lbi_lru_obj(lru, n), lru->arg);
	}
}

int lb_lru_putback(struct lb_lru *lru, struct cds_list_head *src,
		   unsigned int flags)
{
	struct cds_list_head dead, *pos, *next;
	struct lbi_lru_hold h;
	unsigned int moved = 0, released = 0;

	if (!lru || !src || (flags & ~LB_LRU_PUTBACK_LOCKED))
		return -EINVAL;
	if (cds_list_empty(src))
		return 0;
	CDS_INIT_LIST_HEAD(&dead);
	lbi_lru_lock(lru, LB_LRU_PATH_PUTBACK, &h);
	cds_list_for_each_safe(pos, next, src) {
		struct lb_lru_node *n = cds_list_entry(pos, struct lb_lru_node,
						       link);

		prefetch_next(lru, next, src);
		cds_list_del(&n->link);
		if (lru->ops.release &&
		    lru->ops.release(lbi_lru_obj(lru, n), lru->arg)) {
			cds_list_add_tail(&n->link, &dead);
			released++;
			continue;
		}
		lbi_lru_link(lru, &h, n);
		moved++;
	}
	CDS_INIT_LIST_HEAD(src);
	lru->released += released;
	if (flags & LB_LRU_PUTBACK_LOCKED)
		run_secondary(lru, &dead);
	lbi_lru_unlock(lru, &h, moved + released);
	/* "mm: unqueue deferred split folios outside the lruvec lock". */
	if (!(flags & LB_LRU_PUTBACK_LOCKED))
		run_secondary(lru, &dead);
	return (int)moved;
}

int lb_lru_del(struct lb_lru *lru, void *const *objs, unsigned int n)
{
	uint64_t nr = 0, weight = 0, nr_active = 0, weight_active = 0;
	struct lbi_lru_hold h;
	unsigned int i;

	if (!lru || (!objs && n))
		return -EINVAL;
	if (!n)
		return 0;
	/*
	 * Every node is written under the lock, and its neighbours are mostly
	 * nodes of the same batch: fetched here, all at once, they are not
	 * waited for one by one inside the hold. Only the addresses are read;
	 * the links stay untouched until the lock is held.
	 */
	for (i = 0; i < n; i++)
		lbi_lru_prefetch(lru, lbi_lru_node(lru, objs[i]));
	lbi_lru_lock(lru, LB_LRU_PATH_DEL, &h);
	for (i = 0; i < n; i++) {
		struct lb_lru_node *node = lbi_lru_node(lru, objs[i]);

		if (lbi_unlikely(!(node->flags & LB_LRU_NODE_ON_LRU))) {
			lru->errors++;
			continue;
		}
		/* Sizes in registers: this CPU's block is written once. */
		if (lbi_lru_unlink_node(node) == LB_LRU_ACTIVE) {
			nr_active++;
			weight_active += node->weight;
		}
		nr++;
		weight += node->weight;
	}
	h.c->nr[LB_LRU_INACTIVE] -= nr - nr_active;
	h.c->weight[LB_LRU_INACTIVE] -= weight - weight_active;
	h.c->nr[LB_LRU_ACTIVE] -= nr_active;
	h.c->weight[LB_LRU_ACTIVE] -= weight_active;
	lbi_lru_unlock(lru, &h, nr);
	return (int)nr;
}
