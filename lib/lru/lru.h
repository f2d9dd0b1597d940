/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * lb_lru internals shared by lru/lru.c (lifetime, commit, lock accounting) and
 * lru/scan.c (isolate, putback, del).
 */
#ifndef LOCKBATCH_LRU_IMPL_H
#define LOCKBATCH_LRU_IMPL_H

#include <stdbool.h>
#include <stddef.h>

#include <lockbatch/lru.h>

/* The cache line size the layout of &struct lb_lru is built for. */
#define LBI_LRU_LINE 64

/* How the scan prefetches the next node (chosen at creation). */
enum lbi_lru_prefetch {
	LBI_LRU_PREFETCH_WRITE,	/* the default: lbi_lru_prefetch_w() */
	LBI_LRU_PREFETCH_NONE,	/* %LB_LRU_NO_PREFETCH */
	LBI_LRU_PREFETCH_READ,	/* %LB_LRU_PREFETCH_READ */
};

/*
 * Lock use by one path, as counted on one CPU: what every hold writes
 * first, then what a contended acquisition adds.
 */
struct lbi_lru_path {
	uint64_t acquisitions;
	uint64_t objs;
	uint64_t hold_ns_total;
	uint64_t hold_ns_max;
	uint64_t contentions;
	uint64_t wait_ns_total;
	uint64_t wait_ns_max;
	uint64_t waits_long;
	uint64_t wait_ns_long;
	uint64_t holds_long;
	uint64_t hold_ns_long;
	uint64_t wait_ns_yield;
};

/*
 * What the holds made on one CPU count, on lines of their own: the
 * changes they made to the lists' sizes and their per-path counters.
 * Written under the LRU lock like the rest, but a hold writes the block
 * of the CPU it runs on, so these lines stay in that CPU's cache. Kept in
 * the shared structure, the path's line and the sizes (next to the list
 * heads) moved to the holder's CPU on most holds, on top of the lock
 * word: a del hold, which rarely touches a list head, wrote that line for
 * the sizes alone. Which block a hold writes does not matter for
 * correctness (the lock serialises them all; a thread that migrates
 * mid-hold writes the block it chose). A size is the sum over the CPUs of
 * their changes, modulo 2^64 (lbi_lru_size()); lb_lru_stats() sums the
 * counters.
 */
struct lbi_lru_cpu {
	uint64_t nr[LB_LRU_NR_LISTS];		/* objects linked - unlinked */
	uint64_t weight[LB_LRU_NR_LISTS];	/* likewise, in base units */
	struct lbi_lru_path path[LB_LRU_NR_PATHS];
} __attribute__((aligned(LBI_LRU_LINE)));

/*
 * One hold in progress, kept by the holder (on its stack, not in the
 * shared structure): where it counts, and when it started (ticks, with
 * %LB_LRU_HOLD_TIME).
 */
struct lbi_lru_hold {
	struct lbi_lru_cpu *c;
	struct lbi_lru_path *ps;
	uint64_t start;
};

/* One list; its sizes are counted per CPU (&struct lbi_lru_cpu). */
struct lbi_lru_list {
	struct cds_list_head head;
};

/*
 * Read-only after creation first: it is read without the lock (a commit's
 * prepare phase reads @node_offset and @flags while another thread holds
 * the lock). Then what a holder writes, laid out so that an add hold
 * touches two shared lines besides the objects, both lists' heads and the
 * lock word with its acquisition count (the lock's other counters are
 * written only on contention), and a del hold the lock's line alone. The
 * sizes and the path counters are per CPU (&struct lbi_lru_cpu). Each
 * further shared line written per hold is one
 * more transfer from the last holder's CPU inside the lock, which
 * lengthens every hold and with it the chance that the next acquisition
 * finds the lock taken.
 */
struct lb_lru {
	size_t node_offset;
	unsigned int flags;
	enum lbi_lru_prefetch prefetch;
	struct lb_lru_ops ops;
	void *arg;
	struct lb_backend_ops bops;	/* what lb_lru_cpubatch_conf() hands out */
	bool has_prefetchw;		/* lbi_lru_has_prefetchw() */
	unsigned int nr_cpus;		/* entries of @cpu */
	struct lbi_lru_cpu *cpu;	/* path counters, by CPU */

	/* Under lock. */
	struct lbi_lru_list lists[LB_LRU_NR_LISTS]
		__attribute__((aligned(LBI_LRU_LINE)));
	struct lb_lock lock __attribute__((aligned(LBI_LRU_LINE)));
	uint64_t errors;				/* under lock */
	/* Under lock, written by the reclaim paths only. */
	uint64_t scanned, rotated, activated, released, snapshots;
};

_Static_assert(sizeof(((struct lb_lru *)0)->lists) <= LBI_LRU_LINE &&
	       offsetof(struct lb_lock, st) +
	       offsetof(struct lb_lock_stats, acquisitions) +
	       sizeof(uint64_t) <= LBI_LRU_LINE,
	       "both lists share a line; the lock word and its acquisition "
	       "count share the next");

static inline struct lb_lru_node *lbi_lru_node(const struct lb_lru *lru,
					       void *obj)
{
	return (struct lb_lru_node *)((char *)obj + lru->node_offset);
}

static inline void *lbi_lru_obj(const struct lb_lru *lru,
				struct lb_lru_node *n)
{
	return (char *)n - lru->node_offset;
}

/*
 * Fetch the line at @p for writing: PREFETCHW, so the line arrives
 * exclusive, so the stores need no second request for ownership when it
 * was last held by another CPU (nodes are committed by every CPU).
 * __builtin_prefetch(p, 1) emits it only when the compiler targets
 * PRFCHW, which x86-64's baseline does not (it becomes a read prefetch),
 * so the instruction is issued directly where lb_lru_create() found it
 * (lbi_lru_has_prefetchw()).
 */
static inline void lbi_lru_prefetch_w(const struct lb_lru *lru, const void *p)
{
#if defined(__x86_64__)
	if (lru->has_prefetchw) {
		__asm__ volatile("prefetchw %0" : : "m"(*(const char *)p));
		return;
	}
#else
	(void)lru;
#endif
	__builtin_prefetch(p, 1);
}

/*
 * The scan's prefetch of the next node, as lb_lru_create() chose it: for
 * writing (the default), for reading with %LB_LRU_PREFETCH_READ, none
 * with %LB_LRU_NO_PREFETCH.
 */
static inline void lbi_lru_prefetch(const struct lb_lru *lru, const void *p)
{
	if (lru->prefetch == LBI_LRU_PREFETCH_WRITE)
		lbi_lru_prefetch_w(lru, p);
	else if (lru->prefetch == LBI_LRU_PREFETCH_READ)
		__builtin_prefetch(p, 0);
}

static inline enum lb_lru_list lbi_lru_list_of(const struct lb_lru_node *n)
{
	return (n->flags & LB_LRU_NODE_ACTIVE) ? LB_LRU_ACTIVE : LB_LRU_INACTIVE;
}

/* Link @n at the head of its list; the lock is held (@h). */
static inline void lbi_lru_link(struct lb_lru *lru, struct lbi_lru_hold *h,
				struct lb_lru_node *n)
{
	enum lb_lru_list l = lbi_lru_list_of(n);

	cds_list_add(&n->link, &lru->lists[l].head);
	n->flags |= LB_LRU_NODE_ON_LRU;
	h->c->nr[l]++;
	h->c->weight[l] += n->weight;
}

/*
 * Unlink @n (on the LRU) from its list, leaving the list's sizes to the
 * caller; the lock is held. Returns the list it was on.
 */
static inline enum lb_lru_list lbi_lru_unlink_node(struct lb_lru_node *n)
{
	enum lb_lru_list l = lbi_lru_list_of(n);

	cds_list_del(&n->link);
	n->flags &= ~LB_LRU_NODE_ON_LRU;
	return l;
}

/* Unlink @n (on the LRU) from its list; the lock is held (@h). */
static inline void lbi_lru_unlink(struct lbi_lru_hold *h,
				  struct lb_lru_node *n)
{
	enum lb_lru_list l = lbi_lru_unlink_node(n);

	h->c->nr[l]--;
	h->c->weight[l] -= n->weight;
}

/* The size of list @l (@weight: its weight instead); the lock is held. */
static inline uint64_t lbi_lru_size(const struct lb_lru *lru,
				    enum lb_lru_list l, bool weight)
{
	uint64_t sum = 0;
	unsigned int c;

	for (c = 0; c < lru->nr_cpus; c++)
		sum += weight ? lru->cpu[c].weight[l] : lru->cpu[c].nr[l];
	return sum;
}

void lbi_lru_lock(struct lb_lru *lru, enum lb_lru_path path,
		  struct lbi_lru_hold *h);
bool lbi_lru_has_prefetchw(void);
void lbi_lru_unlock(struct lb_lru *lru, struct lbi_lru_hold *h, uint64_t objs);
/* lru/op.c: &lb_backend_ops.apply of the batch sets lb_lru hands out. */
void lbi_lru_apply(void *be, enum lb_op_step step, void **objs, unsigned int n);

#endif /* LOCKBATCH_LRU_IMPL_H */
