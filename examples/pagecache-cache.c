// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * The page cache itself: the page pool (lb_pcp over an mmap'd arena), the
 * entries and their references, the cds_lfht table, insertion through
 * lb_cpubatch into lb_lru, and eviction.
 *
 * Page stamps: the bytes after the pool's links hold the owning key and
 * the page index while the page belongs to an entry, and PC_POISON while
 * it is in the pool (under AddressSanitizer the page body is poisoned too).
 * A reader holding a reference checks every stamp it reads: a page freed
 * while referenced shows up as a stale read (or an ASan report).
 *
 * ThreadSanitizer does not see liburcu's grace periods nor the publication
 * inside cds_lfht (the library is not instrumented), so the places that
 * rely on them say so with pc_tsan_release()/pc_tsan_acquire().
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <urcu/urcu-memb.h>
#include <urcu/rculfhash.h>

#include "pagecache.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define pc_asan_poison(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define pc_asan_unpoison(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define pc_asan_poison(p, n) ((void)(p), (void)(n))
#define pc_asan_unpoison(p, n) ((void)(p), (void)(n))
#endif

#if defined(__SANITIZE_THREAD__)
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#define pc_tsan_acquire(p) __tsan_acquire((void *)(p))
#define pc_tsan_release(p) __tsan_release((void *)(p))

/*
 * liburcu's own allocations, frees and mutexes synchronise through its
 * grace periods and queues, which TSan cannot see: ignore what its
 * interceptor calls report (used by the program and the stress test).
 */
const char *__tsan_default_suppressions(void);
const char *__tsan_default_suppressions(void)
{
	return "called_from_lib:liburcu.so\n"
	       "called_from_lib:liburcu-memb.so\n"
	       "called_from_lib:liburcu-cds.so\n"
	       "called_from_lib:liburcu-common.so\n";
}
#else
#define pc_tsan_acquire(p) ((void)(p))
#define pc_tsan_release(p) ((void)(p))
#endif

#define PC_POISON 0xdeadbeefdeadbeefull

/*
 * call_rcu() runs callbacks in batches some milliseconds apart: at a
 * million inserts a second that is thousands of pages waiting for a grace
 * period, whatever the cache size.
 */
#define PC_PENDING_SLACK 16384u

struct pc_stamp {
	uint64_t key;
	uint64_t page;
};

struct pc_pool {
	char *arena;
	size_t arena_bytes;
	size_t page_size;
	uint64_t nr_pages;
	void **free;		/* stack; under the lb_pcp back-end lock */
	uint64_t nr_free;
	struct lb_pcp *pcp;
};

struct pc_cache {
	struct pc_conf conf;
	struct cds_lfht *ht;
	struct lb_lru *lru;
	struct lb_cpubatch *batch;
	struct pc_pool pool;
	uint64_t charged;		/* atomic: pages of live entries */
	uint64_t pending;		/* atomic: evicted pages not yet freed */
	uint64_t entries_alloc;		/* atomic */
	uint64_t entries_freed;		/* atomic */
	uint64_t stale_reads;		/* atomic */
	struct pc_evict_stats ev;	/* evictor only (one at a time) */
	pthread_mutex_t evict_lock;	/* one evictor at a time */
	char grace;			/* TSan token: readers -> RCU frees */
	char rcu_done;			/* TSan token: RCU frees -> barrier */
};

static struct pc_stamp *stamp_of(void *page)
{
	return (struct pc_stamp *)((char *)page + PC_PAGE_LINKS);
}

/* lb_pcp back-end: a stack of free pages, called under its back-end lock. */
static int pool_alloc_bulk(void *ctx, unsigned int order, void **out,
			   unsigned int n)
{
	struct pc_pool *p = ctx;
	unsigned int i;

	(void)order;
	for (i = 0; i < n && p->nr_free; i++)
		out[i] = p->free[--p->nr_free];
	return (int)i;
}

static void pool_free_bulk(void *ctx, unsigned int order, void **objs,
			   unsigned int n)
{
	struct pc_pool *p = ctx;
	unsigned int i;

	(void)order;
	for (i = 0; i < n; i++)
		p->free[p->nr_free++] = objs[i];
}

static int pool_init(struct pc_pool *p, uint64_t nr_pages, size_t page_size)
{
	struct lb_pcp_conf conf = { .tuner = LB_PCP_TUNE_LINUX,
				    .lock_kind = LB_LOCK_MUTEX };
	struct lb_pcp_size sz;
	uint64_t i;
	int err;

	p->page_size = page_size;
	p->nr_pages = nr_pages;
	p->arena_bytes = nr_pages * page_size;
	p->arena = mmap(NULL, p->arena_bytes, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p->arena == MAP_FAILED)
		return -ENOMEM;
	p->free = malloc(nr_pages * sizeof(void *));
	if (!p->free)
		return -ENOMEM;
	for (i = 0; i < nr_pages; i++) {
		void *page = p->arena + (nr_pages - 1 - i) * page_size;

		stamp_of(page)->key = PC_POISON;
		pc_asan_poison((char *)page + PC_PAGE_LINKS,
			       page_size - PC_PAGE_LINKS);
		p->free[p->nr_free++] = page;
	}
	err = lb_pcp_size(nr_pages, 0, lb_cpu_count(), 256, &sz);
	if (err)
		return err;
	conf.batch = sz.batch;
	conf.high_min = sz.high_min;
	conf.high_max = sz.high_max;
	conf.backend = (struct lb_pcp_backend){ pool_alloc_bulk,
						pool_free_bulk, p };
	return lb_pcp_create(&p->pcp, &conf);
}

static void pool_fini(struct pc_pool *p)
{
	if (p->pcp)
		lb_pcp_destroy(p->pcp);
	free(p->free);
	if (p->arena && p->arena != MAP_FAILED) {
		pc_asan_unpoison(p->arena, p->arena_bytes);
		munmap(p->arena, p->arena_bytes);
	}
}

static void page_free(struct pc_pool *p, void *page)
{
	stamp_of(page)->key = PC_POISON;
	pc_asan_poison((char *)page + PC_PAGE_LINKS,
		       p->page_size - PC_PAGE_LINKS);
	lb_pcp_free(p->pcp, page, 0);
}

static void *page_alloc(struct pc_pool *p, uint64_t key, unsigned int idx)
{
	void *page;

	if (lb_pcp_alloc(p->pcp, 0, &page))
		return NULL;
	pc_asan_unpoison((char *)page + PC_PAGE_LINKS,
			 p->page_size - PC_PAGE_LINKS);
	stamp_of(page)->key = key;
	stamp_of(page)->page = idx;
	return page;
}

unsigned int pc_key_pages(uint64_t key)
{
	uint64_t h = (key + 1) * 0x9e3779b97f4a7c15ull;

	return 1 + (unsigned int)((h >> 40) % PC_MAX_PAGES);
}

static unsigned long key_hash(uint64_t key)
{
	uint64_t h = key * 0xbf58476d1ce4e5b9ull;

	return (unsigned long)(h ^ (h >> 31));
}

static int key_match(struct cds_lfht_node *node, const void *key)
{
	const struct pc_entry *e = caa_container_of(node, struct pc_entry,
						    hnode);

	pc_tsan_acquire(e);	/* published by cds_lfht_add_unique() */
	return e->key == *(const uint64_t *)key;
}

/* Batch references (lb_cpubatch get/put) and the settle count. */
static void op_get(void *obj)
{
	__atomic_add_fetch(&((struct pc_entry *)obj)->ref, 1, __ATOMIC_RELAXED);
}

static void op_put(void *obj)
{
	__atomic_sub_fetch(&((struct pc_entry *)obj)->ref, 1, __ATOMIC_RELEASE);
}

static long op_refcount(void *obj)
{
	return __atomic_load_n(&((struct pc_entry *)obj)->ref, __ATOMIC_ACQUIRE);
}

/* The post-unlock phase of eviction (see evict_round()). */
static bool op_release(void *obj, void *arg)
{
	(void)arg;
	return ((struct pc_entry *)obj)->evict;
}

static void free_entry_rcu(struct rcu_head *head)
{
	struct pc_entry *e = caa_container_of(head, struct pc_entry, rcu);
	struct pc_cache *c;
	unsigned int i;

	pc_tsan_acquire(e);		/* handed over by call_rcu() */
	c = e->cache;
	/* The grace period orders every reader's last access before this. */
	pc_tsan_acquire(&c->grace);
	for (i = 0; i < e->nr_pages; i++)
		page_free(&c->pool, e->pages[i]);
	__atomic_sub_fetch(&c->pending, e->nr_pages, __ATOMIC_RELAXED);
	free(e);
	__atomic_add_fetch(&c->entries_freed, 1, __ATOMIC_RELAXED);
	pc_tsan_release(&c->rcu_done);	/* seen after rcu_barrier() */
}

static void op_secondary(void *obj, void *arg)
{
	struct pc_entry *e = obj;
	struct pc_cache *c = arg;

	urcu_memb_read_lock();
	cds_lfht_del(c->ht, &e->hnode);
	urcu_memb_read_unlock();
	pc_tsan_release(e);
	urcu_memb_call_rcu(&e->rcu, free_entry_rcu);
}

static const struct lb_lru_ops pc_lru_ops = {
	.get = op_get,
	.put = op_put,
	.refcount = op_refcount,
	.release = op_release,
	.secondary = op_secondary,
};

static int create_lru(struct pc_cache *c)
{
	struct lb_lru_conf lconf = {
		.lock_kind = LB_LOCK_SPIN, .name = "lru",
		.node_offset = offsetof(struct pc_entry, lru),
		.ops = &pc_lru_ops, .arg = c,
	};
	/*
	 * Entries weigh 1..16 pages. A batch capped at 256 pages (1 MiB)
	 * and 31 entries holds about 30 average entries: the LRU lock is
	 * taken once per batch instead of once per insert.
	 */
	struct lb_cpubatch_conf pconf = {
		.mode = c->conf.baseline ? LB_CPUBATCH_BASELINE : LB_CPUBATCH_WEIGHTED,
		.max_weight = 256,
	};
	int err;

	err = lb_lru_create(&c->lru, &lconf);
	if (!err)
		err = lb_lru_cpubatch_conf(c->lru, &pconf);
	if (!err) {
		pc_order_wrap(&pconf);	/* reports the LRU order error */
		err = lb_cpubatch_create(&c->batch, &pconf);
	}
	return err;
}

int pc_cache_create(struct pc_cache **pcc, const struct pc_conf *conf)
{
	struct pc_cache *c = calloc(1, sizeof(*c));
	/*
	 * Room for the limit, direct reclaim's margin above it, the evicted
	 * pages waiting for a grace period (eviction waits beyond half the
	 * limit plus half the slack), the pcp caches, and an entry per
	 * thread.
	 */
	uint64_t pages = 2 * conf->limit_pages + PC_PENDING_SLACK +
			 (uint64_t)conf->threads * PC_MAX_PAGES;
	int err;

	if (!c)
		return -ENOMEM;
	c->conf = *conf;
	pthread_mutex_init(&c->evict_lock, NULL);
	c->ht = cds_lfht_new_flavor(1024, 1024, 0,
				    CDS_LFHT_AUTO_RESIZE | CDS_LFHT_ACCOUNTING,
				    &urcu_memb_flavor, NULL);
	err = c->ht ? pool_init(&c->pool, pages, conf->page_size) : -ENOMEM;
	if (!err)
		err = create_lru(c);
	if (err) {
		pc_cache_destroy(c, NULL);
		return err;
	}
	*pcc = c;
	return 0;
}

static bool entry_tryget(struct pc_entry *e)
{
	uint32_t r = __atomic_load_n(&e->ref, __ATOMIC_RELAXED);

	do {
		if (!r)
			return false;	/* frozen: being evicted */
	} while (!__atomic_compare_exchange_n(&e->ref, &r, r + 1, true,
					      __ATOMIC_ACQUIRE,
					      __ATOMIC_RELAXED));
	return true;
}

static void entry_put(struct pc_entry *e)
{
	__atomic_sub_fetch(&e->ref, 1, __ATOMIC_RELEASE);
}

/*
 * Read every page of a referenced entry, as a reader of the file would; a
 * hit marks the pages referenced, the read that fills a new entry does not
 * (an entry earns its second chance by being used again).
 */
static void entry_read(struct pc_cache *c, struct pc_entry *e, bool mark)
{
	unsigned int i;

	for (i = 0; i < e->nr_pages; i++) {
		const struct pc_stamp *s = stamp_of(e->pages[i]);

		if (s->key != e->key || s->page != i)
			__atomic_add_fetch(&c->stale_reads, 1, __ATOMIC_RELAXED);
		if (mark)
			lb_refbits_mark(&e->rb, i);
	}
}

static struct pc_entry *lookup_get(struct pc_cache *c, uint64_t key)
{
	struct cds_lfht_iter iter;
	struct cds_lfht_node *node;
	struct pc_entry *e = NULL;

	urcu_memb_read_lock();
	cds_lfht_lookup(c->ht, key_hash(key), key_match, &key, &iter);
	node = cds_lfht_iter_get_node(&iter);
	if (node) {
		e = caa_container_of(node, struct pc_entry, hnode);
		if (!entry_tryget(e))
			e = NULL;
	}
	pc_tsan_release(&c->grace);
	urcu_memb_read_unlock();
	return e;
}

/* A new entry with its pages, not yet published; NULL if the pool is dry. */
static struct pc_entry *entry_new(struct pc_cache *c, uint64_t key)
{
	struct pc_entry *e = calloc(1, sizeof(*e));
	unsigned int i;

	if (!e)
		return NULL;
	e->key = key;
	/*
	 * No activation before insert() has handed it to the LRU: readers
	 * find it in the table first, and a move queued before its add
	 * would make that add fail (the kernel's folio_activate() skips a
	 * folio without PG_lru for the same reason).
	 */
	e->active = 1;
	e->cache = c;
	e->nr_pages = pc_key_pages(key);
	e->ref = 2;		/* the table's and ours */
	lb_refbits_init(&e->rb, e->nr_pages);
	lb_lru_node_init(&e->lru, e->nr_pages);
	cds_lfht_node_init(&e->hnode);
	for (i = 0; i < e->nr_pages; i++) {
		e->pages[i] = page_alloc(&c->pool, key, i);
		if (!e->pages[i]) {
			while (i--)
				page_free(&c->pool, e->pages[i]);
			free(e);
			return NULL;
		}
	}
	__atomic_add_fetch(&c->entries_alloc, 1, __ATOMIC_RELAXED);
	return e;
}

static void entry_discard(struct pc_cache *c, struct pc_entry *e)
{
	unsigned int i;

	for (i = 0; i < e->nr_pages; i++)
		page_free(&c->pool, e->pages[i]);
	free(e);
	__atomic_add_fetch(&c->entries_freed, 1, __ATOMIC_RELAXED);
}

static void insert(struct pc_cache *c, uint64_t key, struct pc_result *tls)
{
	struct pc_entry *e = entry_new(c, key);
	struct cds_lfht_node *old;

	if (!e && c->conf.check) {
		/* One thread, inline eviction: wait for the pending frees. */
		urcu_memb_barrier();
		e = entry_new(c, key);
	}
	if (!e) {
		tls->alloc_fail++;
		return;
	}
	pc_tsan_release(e);
	urcu_memb_read_lock();
	old = cds_lfht_add_unique(c->ht, key_hash(key), key_match, &key,
				  &e->hnode);
	/* key_match() read other entries: a reader's accesses, as in lookup. */
	pc_tsan_release(&c->grace);
	urcu_memb_read_unlock();
	if (old != &e->hnode) {
		/* Another thread inserted the key first; ours was never seen. */
		tls->insert_races++;
		entry_discard(c, e);
		return;
	}
	__atomic_add_fetch(&c->charged, e->nr_pages, __ATOMIC_RELAXED);
	tls->inserts++;
	pc_order_stamp(e);
	lb_lru_add(c->batch, c->lru, e);
	__atomic_store_n(&e->active, 0, __ATOMIC_RELEASE);
	entry_read(c, e, false);
	entry_put(e);
}

/*
 * folio_mark_accessed(): the access of an entry already referenced moves
 * it to the active list, through the op batch (folio_activate()), unless
 * it is active or on its way there already, or still waits in an add
 * batch (not on the LRU yet: the kernel's folio_activate() skips a folio
 * without PG_lru). The flag is the entry's, so the hit path reads no
 * LRU-owned field; aging clears it.
 */
static void activate(struct pc_cache *c, struct pc_entry *e,
		     struct pc_result *tls)
{
	uint32_t zero = 0;

	if (__atomic_load_n(&e->active, __ATOMIC_ACQUIRE) ||
	    __atomic_load_n(&e->lru.batch.slot, __ATOMIC_RELAXED) ||
	    !__atomic_compare_exchange_n(&e->active, &zero, 1, false,
					 __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return;
	if (lb_lru_queue(c->batch, c->lru, e, LB_OP_MOVE) < 0)
		__atomic_store_n(&e->active, 0, __ATOMIC_RELAXED);
	else
		tls->activations++;
}

int pc_cache_access(struct pc_cache *c, uint64_t key, struct pc_result *tls)
{
	struct pc_entry *e = lookup_get(c, key);

	tls->ops++;
	if (e) {
		bool referenced = lb_refbits_count(&e->rb) > 0;

		entry_read(c, e, true);
		if (referenced)
			activate(c, e, tls);
		/* A reader that sleeps on its pages: eviction must skip it. */
		if (c->conf.hold_every && tls->hits % c->conf.hold_every == 0)
			sched_yield();
		entry_put(e);
		tls->hits++;
		return 1;
	}
	tls->misses++;
	insert(c, key, tls);
	return 0;
}

uint64_t pc_cache_charged(const struct pc_cache *c)
{
	return __atomic_load_n(&c->charged, __ATOMIC_RELAXED);
}

bool pc_cache_over_limit(const struct pc_cache *c)
{
	return __atomic_load_n(&c->charged, __ATOMIC_RELAXED) >
	       c->conf.limit_pages;
}

/* The batched referenced check's flush: what a TLB flush would be. */
static void count_flush(void *arg, unsigned int first, unsigned int nr)
{
	(void)first;
	(void)nr;
	((struct pc_cache *)arg)->ev.refbits_flushes++;
}

struct evict_scan {
	uint64_t want;		/* pages over the limit */
	uint64_t got;		/* pages isolated so far */
};

/* Isolate from the tail until the isolated pages cover the excess. */
static enum lb_lru_verdict evict_scan(void *obj, void *arg)
{
	struct evict_scan *s = arg;

	if (s->got >= s->want)
		return LB_LRU_STOP;
	s->got += ((struct pc_entry *)obj)->nr_pages;
	return LB_LRU_ISOLATE;
}

/*
 * Decide about one isolated entry: referenced -> second chance; else
 * settle it (the only references left must be the table's) and freeze its
 * count from 1 to 0, so no reader can take a new one. A reader arriving
 * between settle and freeze makes the freeze fail: the entry stays.
 */
static void judge(struct pc_cache *c, struct pc_entry *e, bool all)
{
	struct pc_evict_stats *ev = &c->ev;
	uint32_t one = 1;
	int rc;

	e->evict = 0;
	/* Its activation, if one was queued, found it isolated: may ask again. */
	__atomic_store_n(&e->active, 0, __ATOMIC_RELAXED);
	if (!all && lb_refbits_test_and_clear(&e->rb, count_flush, c) > 0) {
		ev->rotated++;
		return;
	}
	rc = lb_cpubatch_settle(c->batch, e, &e->lru.batch, 1);
	if (rc == LB_SETTLED)
		ev->settled++;
	else if (rc == LB_DRAINED)
		ev->drained++;
	else if (rc == LB_BUSY)
		ev->busy++;
	else
		ev->settle_errors++;
	if (rc != LB_SETTLED && rc != LB_DRAINED)
		return;
	if (!__atomic_compare_exchange_n(&e->ref, &one, 0, false,
					 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
		ev->freeze_failed++;
		return;
	}
	e->evict = 1;
	__atomic_add_fetch(&c->pending, e->nr_pages, __ATOMIC_RELAXED);
	__atomic_sub_fetch(&c->charged, e->nr_pages, __ATOMIC_RELAXED);
	ev->evicted++;
	ev->evicted_pages += e->nr_pages;
}

/*
 * Aging, as shrink_active_list() when inactive_is_low(): while the active
 * list is the longer one (or, for @all, not empty), a batch from its tail
 * goes back to the inactive list, referenced bits cleared, so activation
 * never pins an entry out of reclaim's reach.
 */
static void age_active(struct pc_cache *c, bool all)
{
	struct cds_list_head iso, *pos;
	struct lb_lru_stats st;

	lb_lru_stats(c->lru, &st);
	if (!st.nr[LB_LRU_ACTIVE] ||
	    (!all && st.nr[LB_LRU_ACTIVE] <= st.nr[LB_LRU_INACTIVE]))
		return;
	CDS_INIT_LIST_HEAD(&iso);
	lb_lru_isolate(c->lru, LB_LRU_ACTIVE, &iso, PC_EVICT_BATCH, NULL, NULL);
	cds_list_for_each(pos, &iso) {
		struct lb_lru_node *n = cds_list_entry(pos, struct lb_lru_node,
						       link);
		struct pc_entry *e = lb_lru_obj_of(c->lru, n);

		lb_refbits_test_and_clear(&e->rb, count_flush, c);
		lb_lru_node_set_active(n, false);
		__atomic_store_n(&e->active, 0, __ATOMIC_RELAXED);
		c->ev.deactivated++;
	}
	lb_lru_putback(c->lru, &iso, 0);
}

/*
 * One reclaim round: isolate up to PC_EVICT_BATCH entries from the tail
 * (one LRU lock hold), judge them with no lock held, put them back (one
 * more hold); the frozen ones leave in putback's post-unlock phase
 * (op_secondary: out of the table, pages freed after a grace period).
 */
uint64_t pc_cache_evict(struct pc_cache *c, bool all)
{
	struct cds_list_head iso, *pos;
	struct evict_scan s = { UINT64_MAX, 0 };
	uint64_t before, charged;
	bool throttle;
	int n;

	pthread_mutex_lock(&c->evict_lock);
	charged = __atomic_load_n(&c->charged, __ATOMIC_RELAXED);
	if (!all && charged <= c->conf.limit_pages) {
		pthread_mutex_unlock(&c->evict_lock);
		return 0;
	}
	/*
	 * Reclaim down to a low watermark below the limit, as kswapd works
	 * from the low to the high watermark: a round then isolates a full
	 * batch instead of the one entry that crossed the limit.
	 */
	if (!all)
		s.want = charged - c->conf.limit_pages +
			 (c->conf.limit_pages >> PC_EVICT_GAP_SHIFT);
	age_active(c, all);
	CDS_INIT_LIST_HEAD(&iso);
	n = lb_lru_isolate(c->lru, LB_LRU_INACTIVE, &iso, PC_EVICT_BATCH,
			   evict_scan, &s);
	c->ev.rounds++;
	c->ev.isolated += n > 0 ? (uint64_t)n : 0;
	before = c->ev.evicted_pages;
	cds_list_for_each(pos, &iso)
		judge(c, lb_lru_obj_of(c->lru, cds_list_entry(pos,
				struct lb_lru_node, link)), all);
	lb_lru_putback(c->lru, &iso, 0);
	before = c->ev.evicted_pages - before;
	/*
	 * Freed pages reach the pool a grace period later. When too many
	 * wait for one, wait for them here (reclaim throttling on its own
	 * backlog) rather than let inserts find the pool empty. The wait is
	 * made after evict_lock is dropped: a grace period is long, and
	 * stats readers and the next evictor need not sit it out.
	 */
	throttle = __atomic_load_n(&c->pending, __ATOMIC_RELAXED) >
		   (c->conf.limit_pages >> 1) + PC_PENDING_SLACK / 2;
	if (throttle)
		c->ev.rcu_waits++;
	pthread_mutex_unlock(&c->evict_lock);
	if (throttle) {
		urcu_memb_barrier();
		pc_tsan_acquire(&c->rcu_done);
	}
	return before;
}

void pc_cache_stats(struct pc_cache *c, struct pc_result *res)
{
	lb_lru_stats(c->lru, &res->lru);
	lb_lock_stats(lb_lru_lock(c->lru), &res->lru_lock);
	lb_lock_stats(lb_pcp_backend_lock(c->pool.pcp), &res->pool_lock);
	lb_pcp_stats(c->pool.pcp, &res->pool, NULL, 0);
	if (c->batch)
		lb_cpubatch_stats(c->batch, &res->batch, NULL, 0);
	pc_order_stats(c->lru, &res->order);
	pthread_mutex_lock(&c->evict_lock);
	res->ev = c->ev;
	pthread_mutex_unlock(&c->evict_lock);
	res->pool_pages = c->pool.nr_pages;
}

/* Everything back: the batches into the LRU, every entry out of it. */
static int evict_everything(struct pc_cache *c)
{
	struct lb_lru_stats st;
	unsigned int idle = 0;
	int err;

	err = lb_cpubatch_drain_all(c->batch);
	if (err < 0)
		return err;
	for (;;) {
		lb_lru_stats(c->lru, &st);
		if (!st.nr[LB_LRU_INACTIVE] && !st.nr[LB_LRU_ACTIVE])
			return 0;
		/* With no reader left nothing stays busy for long. */
		if (!pc_cache_evict(c, true) && ++idle > 1000)
			return -EBUSY;
	}
}

/* After the run: empty the cache, wait for the frees, check the pool. */
static bool teardown_checks(struct pc_cache *c, struct pc_result *res)
{
	bool ok = true;
	long drained;

	if (c->batch && c->lru)
		ok = evict_everything(c) == 0;
	urcu_memb_barrier();		/* every call_rcu() callback has run */
	pc_tsan_acquire(&c->rcu_done);
	drained = lb_pcp_drain_all(c->pool.pcp);
	if (res) {
		res->entries_alloc = c->entries_alloc;
		res->entries_freed = c->entries_freed;
		res->stale_reads = c->stale_reads;
		res->pool_free_at_exit = c->pool.nr_free;
		ok = ok && drained >= 0 && c->stale_reads == 0 &&
		     c->entries_alloc == c->entries_freed &&
		     c->pool.nr_free == c->pool.nr_pages &&
		     __atomic_load_n(&c->charged, __ATOMIC_RELAXED) == 0;
		res->verified = ok;
	}
	return ok;
}

int pc_cache_destroy(struct pc_cache *c, struct pc_result *res)
{
	bool ok = true;

	if (!c)
		return -EINVAL;
	if (c->pool.pcp)
		ok = teardown_checks(c, res);
	if (c->batch)
		lb_cpubatch_destroy(c->batch);
	if (c->lru && lb_lru_destroy(c->lru))
		ok = false;
	if (c->ht && cds_lfht_destroy(c->ht, NULL))
		ok = false;
	pool_fini(&c->pool);
	pthread_mutex_destroy(&c->evict_lock);
	free(c);
	return ok ? 0 : -EIO;
}
