// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * A ThreadSanitizer-built client of the REGULAR (uninstrumented) library:
 * every callback kind reads and writes plain, unsynchronised user data
 * that only the library's own synchronisation orders (ck locks, in-flight
 * counts), which TSan cannot see inside the library. The library announces
 * those orderings through weak __tsan_acquire/__tsan_release calls, so the
 * run must be clean. tests/tsan-client.sh builds and runs it.
 *
 *   client          the workload; exits 0, or TSan's exit code on a report
 *   client --race   a real race of the client's own, to prove TSan watches
 */
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lockbatch/lockbatch.h>

#define NT 4
#define NOBJ 1500

static _Thread_local int my_slot;
static int cpu_of(void *arg) { (void)arg; return my_slot; }

static int failures;
#define CHECK(c) do { if (!(c)) { fprintf(stderr, "FAIL: %s (line %d)\n", #c, __LINE__); \
	__atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED); } } while (0)

/* --- lb_cpubatch: every lb_backend_ops callback ------------------------ */

struct obj {
	struct lb_node node;
	unsigned long payload;		/* written before add, read in commit */
	unsigned long seen_commit;	/* written in commit, read after drains */
	unsigned long seen_after;	/* written in after */
	long refs;			/* atomic: get/put/refcount */
};

struct backend {
	struct lb_lock lock;		/* first: lb_lock_op_* take the backend */
	unsigned long committed, sum;	/* plain, under the lock */
};

static struct backend be[2];
static struct obj objs[NT][NOBJ];
static struct lb_cpubatch *pc;
static int adders_done;

static void *backend_of(void *o)
{
	return &be[((struct obj *)o)->payload & 1];
}

static void commit(void *b, void **v, unsigned int n)
{
	struct backend *bk = b;

	for (unsigned int i = 0; i < n; i++) {
		struct obj *o = v[i];

		bk->committed++;
		bk->sum += o->payload;
		o->seen_commit++;
	}
}

static void after(void *b, void **v, unsigned int n)
{
	(void)b;
	for (unsigned int i = 0; i < n; i++)
		((struct obj *)v[i])->seen_after++;
}

/*
 * The reference count is the client's own synchronisation, as a folio's
 * is: put() releases (commit and after ran before it) and refcount()
 * acquires, so a settle that finds the batch's reference gone sees their
 * writes without the library waiting for anything.
 */
static void get(void *o) { __atomic_add_fetch(&((struct obj *)o)->refs, 1, __ATOMIC_RELAXED); }
static void put(void *o) { __atomic_sub_fetch(&((struct obj *)o)->refs, 1, __ATOMIC_RELEASE); }
static long refcount(void *o) { return __atomic_load_n(&((struct obj *)o)->refs, __ATOMIC_ACQUIRE); }

static const struct lb_backend_ops ops = {
	.backend_of = backend_of, .lock = lb_lock_op_acquire,
	.unlock = lb_lock_op_release, .commit = commit, .after = after,
	.get = get, .put = put, .refcount = refcount,
};

static void *adder(void *arg)
{
	int t = (int)(long)arg;

	my_slot = t % 2;	/* two threads per slot: slot lock hand-offs */
	for (int i = 0; i < NOBJ; i++) {
		struct obj *o = &objs[t][i];

		o->payload = (unsigned long)(t * NOBJ + i + 1);
		CHECK(lb_cpubatch_add(pc, o, &o->node, 1 + i % 4) >= 0);
		if (i % 97 == 0) {
			/* Settled or drained: commit and after ran, maybe elsewhere. */
			CHECK(lb_cpubatch_settle(pc, o, &o->node, 0) >= 0);
			CHECK(o->seen_commit == 1 && o->seen_after == 1);
		} else if (i % 31 == 0) {
			CHECK(lb_cpubatch_drain_obj(pc, &o->node) >= 0);
			CHECK(o->seen_commit == 1 && o->seen_after == 1);
		}
	}
	__atomic_add_fetch(&adders_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void *drainer(void *arg)
{
	(void)arg;
	while (__atomic_load_n(&adders_done, __ATOMIC_ACQUIRE) < NT)
		lb_cpubatch_drain_all(pc);
	return NULL;
}

static void run_cpubatch(enum lb_lock_kind kind)
{
	struct lb_cpubatch_conf c;
	pthread_t th[NT + 1];
	unsigned long total = 0, sum = 0;

	memset(&c, 0, sizeof(c));
	memset(objs, 0, sizeof(objs));
	memset(be, 0, sizeof(be));
	adders_done = 0;
	c.nr_slots = 2;
	c.mode = LB_CPUBATCH_WEIGHTED;
	c.ops = &ops;
	c.cpu_fn = cpu_of;
	for (int b = 0; b < 2; b++)
		CHECK(lb_lock_init(&be[b].lock, kind, "client") == 0);
	CHECK(lb_cpubatch_create(&pc, &c) == 0);
	for (long t = 0; t < NT; t++)
		pthread_create(&th[t], NULL, adder, (void *)t);
	pthread_create(&th[NT], NULL, drainer, NULL);
	for (int t = 0; t <= NT; t++)
		pthread_join(th[t], NULL);
	CHECK(lb_cpubatch_destroy(pc) == 0);
	for (int b = 0; b < 2; b++) {
		total += be[b].committed;
		sum += be[b].sum;
		CHECK(lb_lock_destroy(&be[b].lock) == 0);
	}
	CHECK(total == NT * NOBJ);
	CHECK(sum == (unsigned long)NT * NOBJ * (NT * NOBJ + 1) / 2);
}

/* --- lb_pcp: alloc_bulk/free_bulk, cpu_fn, clock_fn -------------------- */

#define CELL 64
#define NCELL 4096
static unsigned char arena[NCELL][CELL] __attribute__((aligned(64)));
static void *pool[NCELL];
static unsigned int pool_n;		/* plain: under the pcp's back-end lock */
static unsigned long clock_now;		/* plain: read by lb_pcp_tick() only */

static int pool_alloc(void *ctx, unsigned int order, void **out, unsigned int n)
{
	unsigned int i;

	(void)ctx;
	(void)order;
	for (i = 0; i < n && pool_n; i++)
		out[i] = pool[--pool_n];
	return (int)i;
}

static void pool_free(void *ctx, unsigned int order, void **objs_, unsigned int n)
{
	(void)ctx;
	(void)order;
	for (unsigned int i = 0; i < n; i++)
		pool[pool_n++] = objs_[i];
}

static uint64_t clock_fn(void *arg) { (void)arg; return clock_now; }

static struct lb_pcp *pcp;

static void *pcp_worker(void *arg)
{
	int t = (int)(long)arg;
	void *o[24];

	my_slot = t % 2;
	for (int r = 0; r < 400; r++) {
		for (int i = 0; i < 24; i++) {
			CHECK(lb_pcp_alloc(pcp, 0, &o[i]) == 0);
			/* Whoever had the cell last wrote its stamp: plain. */
			unsigned long *stamp = (unsigned long *)((char *)o[i] + 16);
			*stamp = *stamp + 1;
		}
		for (int i = 0; i < 24; i++)
			CHECK(lb_pcp_free(pcp, o[i], 0) == 0);
		if (t == 0 && r % 50 == 0)
			lb_pcp_decay(pcp);
	}
	return NULL;
}

/*
 * @real_cpu: no cpu_fn, one slot per CPU id, so that without a TSan client
 * the cache would run its rseq sections, which TSan cannot see: under a
 * TSan client the cache must choose the annotated lock path instead.
 */
static void run_pcp(enum lb_lock_kind kind, int real_cpu)
{
	struct lb_pcp_conf c;
	struct lb_pcp_stats st;
	pthread_t th[NT];

	memset(&c, 0, sizeof(c));
	memset(arena, 0, sizeof(arena));
	for (pool_n = 0; pool_n < NCELL; pool_n++)
		pool[pool_n] = arena[pool_n];
	c.batch = 8;
	c.high_min = 8;
	c.high_max = 64;
	c.tuner = LB_PCP_TUNE_ADAPTIVE;
	c.lock_kind = kind;
	c.backend.alloc_bulk = pool_alloc;
	c.backend.free_bulk = pool_free;
	c.cpu_fn = real_cpu ? NULL : cpu_of;
	c.nr_slots = real_cpu ? LB_PCP_MAX_SLOTS : 2;
	c.clock_fn = clock_fn;
	CHECK(lb_pcp_create(&pcp, &c) == 0);
	CHECK(lb_pcp_stats(pcp, &st, NULL, 0) > 0);
	CHECK(st.rseq == 0);
	for (long t = 0; t < NT; t++)
		pthread_create(&th[t], NULL, pcp_worker, (void *)t);
	for (int t = 0; t < NT; t++)
		pthread_join(th[t], NULL);
	clock_now += 1000000000ull;
	lb_pcp_tick(pcp);
	CHECK(lb_pcp_destroy(pcp) == 0);
	CHECK(pool_n == NCELL);
}

/* --- lb_lru: release/secondary, and lb_refbits' flush ------------------ */

struct page {
	struct lb_lru_node lru;
	struct lb_refbits rb;
	unsigned long payload, secondary_seen;
	long refs;
};

static struct page pages[NT][256];
static struct lb_lru *lru;
static struct lb_cpubatch *lru_pc;
static unsigned long flushed_units[NT];

static bool release(void *o, void *arg) { (void)arg; return __atomic_sub_fetch(&((struct page *)o)->refs, 1, __ATOMIC_ACQ_REL) == 0; }
static void secondary(void *o, void *arg) { (void)arg; ((struct page *)o)->secondary_seen++; }
static void flush_fn(void *arg, unsigned int first, unsigned int nr) { (void)first; flushed_units[(long)arg] += nr; }

static const struct lb_lru_ops lru_ops = { .release = release, .secondary = secondary };

static void *lru_worker(void *arg)
{
	long t = (long)arg;
	struct cds_list_head victims;

	my_slot = (int)t % 2;
	for (int i = 0; i < 256; i++) {
		struct page *p = &pages[t][i];

		p->payload = (unsigned long)i;
		p->refs = 2;	/* one stays with us, one goes with isolation */
		lb_refbits_init(&p->rb, 4);
		lb_refbits_mark(&p->rb, (unsigned int)i % 4);
		lb_lru_node_init(&p->lru, 4);
		CHECK(lb_lru_add(lru_pc, lru, p) >= 0);
		if (i % 32 != 31)
			continue;
		lb_cpubatch_drain_all(lru_pc);
		CDS_INIT_LIST_HEAD(&victims);
		lb_lru_isolate(lru, LB_LRU_INACTIVE, &victims, 16, NULL, NULL);
		struct lb_lru_node *n;
		cds_list_for_each_entry(n, &victims, link) {
			struct page *v = lb_lru_obj_of(lru, n);

			(void)v->payload;	/* written by another thread before its add */
			lb_refbits_test_and_clear(&v->rb, flush_fn, (void *)t);
		}
		lb_lru_putback(lru, &victims, 0);
	}
	return NULL;
}

static void run_lru(enum lb_lock_kind kind)
{
	struct lb_lru_conf lc;
	struct lb_cpubatch_conf bc;
	struct cds_list_head all;
	pthread_t th[NT];

	memset(&lc, 0, sizeof(lc));
	memset(&bc, 0, sizeof(bc));
	memset(pages, 0, sizeof(pages));
	/* lb_lru takes the spin and mutex kinds only. */
	lc.lock_kind = kind == LB_LOCK_SPIN ? LB_LOCK_SPIN : LB_LOCK_MUTEX;
	lc.node_offset = offsetof(struct page, lru);
	lc.ops = &lru_ops;
	if (lb_lru_create(&lru, &lc)) {
		CHECK(!"lb_lru_create");
		return;
	}
	bc.nr_slots = 2;
	bc.mode = LB_CPUBATCH_WEIGHTED;
	bc.cpu_fn = cpu_of;
	CHECK(lb_lru_cpubatch_conf(lru, &bc) == 0);
	CHECK(lb_cpubatch_create(&lru_pc, &bc) == 0);
	for (long t = 0; t < NT; t++)
		pthread_create(&th[t], NULL, lru_worker, (void *)t);
	for (int t = 0; t < NT; t++)
		pthread_join(th[t], NULL);
	CHECK(lb_cpubatch_destroy(lru_pc) == 0);
	for (int l = LB_LRU_INACTIVE; l <= LB_LRU_ACTIVE; l++) {
		CDS_INIT_LIST_HEAD(&all);
		while (lb_lru_isolate(lru, (enum lb_lru_list)l, &all, 1024, NULL, NULL) > 0)
			;
	}
	CHECK(lb_lru_destroy(lru) == 0);
}

/* --- the negative control ---------------------------------------------- */

static unsigned long racy;
static void *race(void *arg) { (void)arg; for (int i = 0; i < 1000; i++) racy++; return NULL; }

int main(int argc, char **argv)
{
	static const enum lb_lock_kind kinds[] = {
		LB_LOCK_SPIN, LB_LOCK_MUTEX, LB_LOCK_TICKET, LB_LOCK_MCS, LB_LOCK_CLH,
	};

	if (argc > 1 && !strcmp(argv[1], "--race")) {
		pthread_t a, b;

		pthread_create(&a, NULL, race, NULL);
		pthread_create(&b, NULL, race, NULL);
		pthread_join(a, NULL);
		pthread_join(b, NULL);
		return 0;
	}
	/* The instances below take the lock path: the process says so too. */
	CHECK(lb_cpu_path() == LB_CPU_PATH_LOCK);
	CHECK(strstr(lb_cpu_path_name(), "ThreadSanitizer") != NULL);
	for (unsigned int k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		run_cpubatch(kinds[k]);
		run_pcp(kinds[k], 0);
		run_pcp(kinds[k], 1);
		run_lru(kinds[k]);
	}
	printf("tsan client: cpubatch, pcp and lru callbacks on %zu lock kinds, %d failures\n",
	       sizeof(kinds) / sizeof(kinds[0]), failures);
	return failures != 0;
}
