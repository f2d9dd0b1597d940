/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * lb_lru internals shared by lru.c (lifetime, commit, lock accounting) and
 * lru_scan.c (isolate, putback, del).
 */
#ifndef LOCKBATCH_LRU_IMPL_H
#define LOCKBATCH_LRU_IMPL_H

#include <lockbatch/lru.h>

/* The cache line size the layout of &struct lb_lru is built for. */
#define LBI_LRU_LINE 64

/* How the scan prefetches the next node (chosen at creation). */
enum lbi_lru_prefetch {
	LBI_LRU_PREFETCH_NONE,	/* %LB_LRU_NO_PREFETCH */
	LBI_LRU_PREFETCH_BUILTIN,	/* __builtin_prefetch(p, 1) */
	LBI_LRU_PREFETCH_W,	/* x86 PREFETCHW, the CPU has it */
	LBI_LRU_PREFETCH_READ,	/* %LB_LRU_PREFETCH_READ */
};

/*
 * Lock use by one path, one cache line for what every hold writes (the
 * counters of contended and long holds follow on the next line).
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
} __attribute__((aligned(LBI_LRU_LINE)));

/*
 * What every holder writes besides its path's line: list sizes, the clock
 * stamp, the lock counters seen by the last holder. One line.
 */
struct lbi_lru_counts {
	uint64_t nr[LB_LRU_NR_LISTS];
	uint64_t weight[LB_LRU_NR_LISTS];
	uint64_t hold_start;		/* ticks; valid while held */
	uint64_t seen_contentions;	/* the lock's, after the last holder */
	uint64_t seen_wait_ns;		/* likewise, its wait_ns_total */
	uint64_t seen_wait_yield;	/* likewise, its wait_ns_yield */
} __attribute__((aligned(LBI_LRU_LINE)));

/*
 * Read-only after creation first: it is read without the lock (a commit's
 * prepare phase reads @node_offset and @flags while another thread holds
 * the lock). Then what a holder writes, laid out so one hold touches four
 * lines: the lock word, the lock's counters and the list heads, @c, and its
 * path's line. Mixed, every prepare phase would pull a line the holder is
 * writing; spread, every hold would pull more lines from the last holder's
 * CPU.
 */
struct lb_lru {
	size_t node_offset;
	unsigned int flags;
	enum lbi_lru_prefetch prefetch;
	struct lb_lru_ops ops;
	void *arg;
	struct lb_backend_ops bops;	/* what lb_lru_cpubatch_conf() hands out */

	struct lb_lock lock __attribute__((aligned(LBI_LRU_LINE)));
	struct cds_list_head lists[LB_LRU_NR_LISTS];	/* under lock */
	struct lbi_lru_counts c;			/* under lock */
	struct lbi_lru_path path[LB_LRU_NR_PATHS];	/* under lock */
	/*
	 * Under lock, written by the reclaim paths, and by the others only on
	 * an object refused (@errors: already listed, or not listed).
	 */
	uint64_t scanned, rotated, activated, released, snapshots, errors;
};

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

static inline enum lb_lru_list lbi_lru_list_of(const struct lb_lru_node *n)
{
	return (n->flags & LB_LRU_NODE_ACTIVE) ? LB_LRU_ACTIVE : LB_LRU_INACTIVE;
}

/* Link @n at the head of its list; the lock is held. */
static inline void lbi_lru_link(struct lb_lru *lru, struct lb_lru_node *n)
{
	enum lb_lru_list l = lbi_lru_list_of(n);

	cds_list_add(&n->link, &lru->lists[l]);
	n->flags |= LB_LRU_NODE_ON_LRU;
	lru->c.nr[l]++;
	lru->c.weight[l] += n->weight;
}

/* Unlink @n (on the LRU) from its list; the lock is held. */
static inline void lbi_lru_unlink(struct lb_lru *lru, struct lb_lru_node *n)
{
	enum lb_lru_list l = lbi_lru_list_of(n);

	cds_list_del(&n->link);
	n->flags &= ~LB_LRU_NODE_ON_LRU;
	lru->c.nr[l]--;
	lru->c.weight[l] -= n->weight;
}

void lbi_lru_lock(struct lb_lru *lru, enum lb_lru_path path);
bool lbi_lru_has_prefetchw(void);
void lbi_lru_unlock(struct lb_lru *lru, enum lb_lru_path path,
		    uint64_t objs);

#endif /* LOCKBATCH_LRU_IMPL_H */
