// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * A client of the installed library (tests/staged-install.sh): an lb_pcp
 * page pool over lb_freelist used by four threads, whose last pages hold
 * the entries of a tiny cache: an lb_lru fed through weighted lb_cpubatch
 * batches, shrunk by isolate + lb_refbits second chance + putback.
 * Written from the README and the header comments only. Exit 0 when every
 * page came back to the free list and every entry was evicted once.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lockbatch/lockbatch.h>

#define PAGE 4096
#define NPAGES 4096u			/* a 16 MiB arena */
#define NTHREADS 4
#define ROUNDS 300
#define ENTRIES 100			/* per thread */
#define CACHE_LIMIT 150

struct entry {				/* one pool page */
	struct lb_lru_node lru;
	struct lb_refbits rb;
	unsigned int npages;
};

static struct lb_lock pool_lock;	/* the pool's back-end lock, ours */
static struct lb_freelist *fl;
static struct lb_pcp *pool;
static struct lb_lru *lru;
static struct lb_cpubatch *pc;
static atomic_long allocs, frees, inserted, evicted, bad;

static void *page_alloc(void)
{
	void *p;

	if (lb_pcp_alloc(pool, 0, &p))
		return NULL;
	atomic_fetch_add(&allocs, 1);
	return p;
}

static void page_free(void *p)
{
	if (lb_pcp_free(pool, p, 0))
		atomic_fetch_add(&bad, 1);
	else
		atomic_fetch_add(&frees, 1);
}

/* Bursts of 1..64 pages, written and checked before they go back. */
static int churn(unsigned int *seed)
{
	unsigned char *held[64];

	for (int round = 0; round < ROUNDS; round++) {
		unsigned int n = 1 + rand_r(seed) % 64;

		for (unsigned int i = 0; i < n; i++) {
			if (!(held[i] = page_alloc()))
				return -1;
			memset(held[i], (int)((i + round) & 0xff), PAGE);
		}
		for (unsigned int i = 0; i < n; i++) {
			if (held[i][PAGE - 1] != ((i + round) & 0xff))
				return -1;
			page_free(held[i]);
		}
	}
	return 0;
}

static void *worker(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg;

	if (churn(&seed))
		return (void *)1;
	for (unsigned int i = 0; i < ENTRIES; i++) {
		struct entry *e = page_alloc();

		if (!e)
			return (void *)1;
		memset(e, 0, sizeof(*e));
		e->npages = 1 + rand_r(&seed) % 4;
		if (lb_lru_node_init(&e->lru, e->npages) ||
		    lb_refbits_init(&e->rb, e->npages) ||
		    lb_lru_add(pc, lru, e) < 0)
			return (void *)1;
		if (i % 2)	/* touched once before reclaim sees it */
			lb_refbits_mark(&e->rb, e->npages - 1);
		atomic_fetch_add(&inserted, 1);
	}
	return NULL;
}

static long lru_size(void)
{
	struct lb_lru_stats st;

	return lb_lru_stats(lru, &st) ? -1 : (long)(st.nr[0] + st.nr[1]);
}

/*
 * Isolate, give referenced entries a second chance, free the others,
 * until at most @limit entries are left (0: free every entry).
 */
static int shrink(long limit)
{
	enum lb_lru_list list = LB_LRU_INACTIVE;

	while (lru_size() > limit) {
		CDS_LIST_HEAD(victims);
		struct lb_lru_node *n, *tmp;
		int got = lb_lru_isolate(lru, list, &victims, 16, NULL, NULL);

		if (got < 0)
			return -1;
		if (got == 0)	/* this list is empty: take from the other */
			list = list == LB_LRU_INACTIVE ? LB_LRU_ACTIVE : LB_LRU_INACTIVE;
		cds_list_for_each_entry_safe(n, tmp, &victims, link) {
			struct entry *e = lb_lru_obj_of(lru, n);

			if (limit && lb_refbits_test_and_clear(&e->rb, NULL, NULL) > 0) {
				lb_lru_node_set_active(n, true);
				continue;
			}
			cds_list_del(&n->link);
			page_free(e);
			atomic_fetch_add(&evicted, 1);
		}
		if (lb_lru_putback(lru, &victims, 0) < 0)
			return -1;
	}
	return 0;
}

static int run(void)
{
	struct lb_freelist_stats mid;
	pthread_t t[NTHREADS];
	void *ret;
	int err = 0;

	for (uintptr_t i = 0; i < NTHREADS; i++)
		pthread_create(&t[i], NULL, worker, (void *)(i + 1));
	for (int i = 0; i < NTHREADS; i++) {
		pthread_join(t[i], &ret);
		err |= ret != NULL;
	}
	/* The free list is the cache's back-end: read it under that lock. */
	lb_lock_acquire(&pool_lock);
	err |= lb_freelist_stats(fl, &mid) != 0;
	lb_lock_release(&pool_lock);
	if (mid.out < (uint64_t)atomic_load(&inserted))	/* cached pages too */
		err = 1;
	if (err || lb_cpubatch_drain_all(pc) < 0 || shrink(CACHE_LIMIT) ||
	    lru_size() > CACHE_LIMIT || shrink(0))
		return -1;
	return 0;
}

int main(void)
{
	struct lb_freelist_conf fc = LB_FREELIST_CONF_INIT(PAGE, (size_t)NPAGES * PAGE);
	struct lb_pcp_conf pconf = { .tuner = LB_PCP_TUNE_ADAPTIVE };
	struct lb_lru_conf lconf = LB_LRU_CONF_INIT(struct entry, lru);
	struct lb_cpubatch_conf bconf = { .mode = LB_CPUBATCH_WEIGHTED };
	struct lb_freelist_stats fst;
	struct lb_pcp_size sz;
	int err;

	if (lb_lock_init(&pool_lock, LB_LOCK_DEFAULT, "pool") ||
	    lb_freelist_create(&fl, &fc) ||
	    lb_pcp_size(NPAGES, 0, lb_cpu_count(), 256, &sz))
		return 1;
	pconf.batch = sz.batch;
	pconf.high_min = sz.high_min;
	pconf.high_max = sz.high_max;
	pconf.lock = &pool_lock;
	if (lb_freelist_pcp_backend(fl, &pconf.backend) ||
	    lb_pcp_create(&pool, &pconf) || lb_pcp_decay_thread_start(pool) ||
	    lb_lru_create(&lru, &lconf) || lb_lru_cpubatch_conf(lru, &bconf) ||
	    lb_cpubatch_create(&pc, &bconf))
		return 1;
	err = run();
	if (lb_cpubatch_destroy(pc) || lb_lru_destroy(lru) || lb_pcp_destroy(pool))
		return 1;
	lb_freelist_stats(fl, &fst);	/* no cache left: nothing else uses fl */
	printf("pages allocated %ld freed %ld, free list %llu/%llu; entries %ld evicted %ld\n",
	       atomic_load(&allocs), atomic_load(&frees),
	       (unsigned long long)fst.free, (unsigned long long)fst.capacity,
	       atomic_load(&inserted), atomic_load(&evicted));
	lb_freelist_destroy(fl);
	lb_lock_destroy(&pool_lock);
	return err || atomic_load(&bad) || fst.out || fst.rejected ||
	       atomic_load(&allocs) != atomic_load(&frees) ||
	       atomic_load(&inserted) != atomic_load(&evicted);
}
