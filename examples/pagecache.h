/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * pagecache: a userspace page cache built from every lockbatch primitive.
 *
 * - Lookups: keys -> entries in a liburcu cds_lfht, read under
 *   rcu_read_lock(); a hit takes a reference (inc-not-zero) and reads the
 *   entry's pages, marking their referenced bits (lb_refbits).
 * - Misses: the entry's 1..16 pages come from an lb_pcp page pool over an
 *   mmap'd arena; the entry is published in the table and added to the
 *   LRU (lb_lru) through weighted per-CPU batches (lb_cpubatch).
 * - Eviction: a thread keeps the pages of live entries under a limit: it
 *   isolates entries from the LRU tail, rotates referenced ones (batched
 *   referenced check), settles each victim (lb_cpubatch_settle(); BUSY: skip it
 *   this round), freezes its count, and in lb_lru_putback()'s post-unlock
 *   phase removes it from the table and hands it to call_rcu(), which frees
 *   its pages to the pool after a grace period.
 *
 * Files: pagecache.c (options, main, report), pagecache-cache.c (the cache:
 * pool, entries, table, eviction), pagecache-run.c (workers, zipf keys,
 * evictor thread, the exact-LRU model and the self-checks).
 */
#ifndef PAGECACHE_H
#define PAGECACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <urcu/urcu-memb.h>
#include <urcu/rculfhash.h>

#include <lockbatch/lockbatch.h>

/* Pages per entry: 1..PC_MAX_PAGES, fixed per key. */
#define PC_MAX_PAGES 16u

/* Bytes at the start of a pooled page that lb_pcp uses as links. */
#define PC_PAGE_LINKS LB_PCP_MIN_OBJ_SIZE

/* Entries isolated per eviction round (a reclaim batch). */
#define PC_EVICT_BATCH 32u

/* Eviction, once over the limit, goes down to limit - limit / 2^this. */
#define PC_EVICT_GAP_SHIFT 4

struct pc_cache;

/*
 * One cached entry. References: one for being in the table (dropped only
 * by the evictor's freeze), one per reader in flight, one while it waits
 * in an lb_cpubatch batch (get/put). The evictor frees an entry only after
 * freezing its count from exactly the table's reference to 0, so a reader
 * that got a reference never sees its pages freed.
 */
struct pc_entry {
	struct lb_lru_node lru;		/* first: the LRU scan's hot line */
	uint32_t ref;			/* atomic */
	uint32_t evict;			/* evictor's verdict, while isolated */
	uint32_t active;		/* atomic: activation queued, or on the active list */
	uint64_t key;
	unsigned int nr_pages;
	struct pc_cache *cache;
	struct cds_lfht_node hnode;
	struct rcu_head rcu;
	struct lb_refbits rb;		/* one bit per page */
	void *pages[PC_MAX_PAGES];
	uint64_t order_stamp;		/* insert order (pagecache-order.c) */
};

struct pc_conf {
	unsigned int threads;
	uint64_t ops;			/* per thread */
	uint32_t keys;			/* key space */
	double skew;			/* zipf exponent; 0: uniform */
	uint64_t limit_pages;		/* pages of live entries */
	size_t page_size;
	bool baseline;			/* LB_CPUBATCH_BASELINE: a lock hold per insert */
	bool check;			/* one thread, inline eviction, LRU model */
	bool json;
	bool progress;			/* a progress line (on a terminal) */
	unsigned int hold_every;	/* every N-th hit yields holding its ref */
	uint64_t seed;
};

/* Settle outcomes and what eviction did. */
struct pc_evict_stats {
	uint64_t rounds;
	uint64_t isolated;
	uint64_t rotated;		/* referenced: second chance */
	uint64_t settled, drained, busy;
	uint64_t settle_errors;
	uint64_t freeze_failed;		/* a reader came between settle and freeze */
	uint64_t evicted;
	uint64_t evicted_pages;
	uint64_t refbits_flushes;	/* flush calls of the batched check */
	uint64_t rcu_waits;		/* rcu_barrier()s for the freed backlog */
	uint64_t deactivated;		/* active -> inactive by aging */
};

/* LRU order error of the inserted entries (pagecache-order.c). */
#define PC_ORDER_BUCKETS 24
struct pc_order_stats {
	uint64_t entries;		/* linked through the batches */
	uint64_t worst_early, worst_late;	/* positions */
	uint64_t sum_abs;
	uint64_t hist[PC_ORDER_BUCKETS];	/* |error| by bit length */
	uint64_t p50_within, p99_within;	/* |error| of half, of 99% */
};

struct pc_result {
	uint64_t ops, hits, misses, inserts, insert_races, alloc_fail;
	uint64_t activations;		/* queued through the op batches */
	uint64_t elapsed_ns;
	uint64_t cpu_ns;		/* workers' and evictor's CPU time */
	double hit_ratio, ops_per_sec;
	double ops_per_cpu_sec;		/* ops per second of that CPU time */
	struct pc_evict_stats ev;
	struct lb_lru_stats lru;
	struct lb_lock_stats lru_lock, pool_lock;
	struct lb_pcp_stats pool;
	struct lb_cpubatch_stats batch;
	uint64_t pool_pages, pool_free_at_exit;
	uint64_t entries_alloc, entries_freed;
	uint64_t stale_reads;		/* a page read while freed: must be 0 */
	struct pc_order_stats order;
	double model_hit_ratio;		/* check mode: exact LRU, same keys */
	bool model_run;
	bool verified;
};

/* pagecache-cache.c */
int pc_cache_create(struct pc_cache **pc, const struct pc_conf *conf);
/* Evict everything, wait for the grace periods, check, free. */
int pc_cache_destroy(struct pc_cache *c, struct pc_result *res);
/* 1: hit, 0: miss (and inserted if the pool allowed). Thread registered. */
int pc_cache_access(struct pc_cache *c, uint64_t key, struct pc_result *tls);
/* One eviction round if over the limit; returns pages evicted. */
uint64_t pc_cache_evict(struct pc_cache *c, bool all);
bool pc_cache_over_limit(const struct pc_cache *c);
uint64_t pc_cache_charged(const struct pc_cache *c);
void pc_cache_stats(struct pc_cache *c, struct pc_result *res);
unsigned int pc_key_pages(uint64_t key);

/* pagecache-order.c */
void pc_order_wrap(struct lb_cpubatch_conf *pconf);
void pc_order_stamp(struct pc_entry *e);
void pc_order_stats(struct lb_lru *lru, struct pc_order_stats *out);

/* pagecache-run.c */
int pc_run(const struct pc_conf *conf, struct pc_result *res);
double pc_model_hit_ratio(const struct pc_conf *conf);

#endif /* PAGECACHE_H */
