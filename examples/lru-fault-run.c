// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * One timed run of lru-fault for one (object size, mode): start the
 * threads together, let each map and unmap its memory conf->loops times,
 * then check that every object went onto the list exactly once per add
 * and came off again.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ck_pr.h>

#include "lru-fault.h"

/*
 * One per thread, in one array: on lines of its own, or a worker's
 * pool cursor and unmap batch (written per object) share a line with the
 * next worker's fields, which that worker reads per object.
 */
struct lf_worker {
	struct lf_run *run;
	pthread_t tid;
	struct lf_lru *lru;		/* the shared list, or own */
	struct lf_obj *pool;
	unsigned int nr_pool;
	unsigned int cursor;
	struct lf_obj **live;		/* mapped in this loop */
	struct lf_lru own;		/* own-lru mode's private lb_lru */
	struct lf_limit lim;		/* limit mode's private plain list */
	struct lf_relq relq;
	uint64_t stalls;
	uint64_t add_errors;
	uint64_t t_start, t_end;	/* ns, this thread's loops */
	uint64_t cpu_ns;		/* CPU time this thread used */
} __attribute__((aligned(64)));

struct lf_run {
	const struct lf_conf *conf;
	enum lf_mode mode;
	uint32_t weight;
	unsigned int nr_live;		/* objects mapped per loop */
	struct lf_lru lru;
	struct lb_cpubatch *pc;		/* NULL in limit and own-lru mode */
	struct lf_hooks hooks;
	pthread_barrier_t start;
	struct lf_worker *w;
};

static uint64_t clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/*
 * The next free object of the pool, in ring order (a fault allocating a
 * fresh folio). Objects unmapped earlier may still wait in an lb_cpubatch
 * batch or in some thread's unmap batch; the pool's slack (see
 * pool_slack()) bounds those, so a full scan always finds one and the
 * fallback below only guards against a wrong bound.
 */
static struct lf_obj *pool_take(struct lf_worker *w)
{
	unsigned int scanned;

	for (;;) {
		for (scanned = 0; scanned < w->nr_pool; scanned++) {
			struct lf_obj *o = &w->pool[w->cursor];

			if (++w->cursor == w->nr_pool)
				w->cursor = 0;
			if (ck_pr_load_32(&o->free)) {
				/* Pairs with the store fence in lf_lru_release(). */
				ck_pr_fence_load();
				ck_pr_store_32(&o->free, 0);
				return o;
			}
		}
		w->stalls++;
		lf_relq_flush(&w->relq);
		if (w->run->pc)
			lb_cpubatch_drain_local(w->run->pc);
		sched_yield();
	}
}

/*
 * Objects that may be neither mapped nor free at one instant, over all
 * threads: a full batch in every slot, one swapped-out batch and one
 * unmap batch per thread. A pool of nr_live plus this never runs dry.
 */
static unsigned int pool_slack(unsigned int nr_slots, unsigned int threads)
{
	return LB_WBATCH_MAX * nr_slots + 2 * LF_RELEASE_BATCH * threads;
}

/* The fault pass: map every object and hand it to the LRU. */
static void populate(struct lf_worker *w)
{
	struct lf_run *run = w->run;
	unsigned int i;

	for (i = 0; i < run->nr_live; i++) {
		struct lf_obj *o = pool_take(w);

		ck_pr_store_32(&o->ref, 1);	/* the mapping's reference */
		o->adds++;
		w->live[i] = o;
		lb_lru_node_init(&o->lru, run->weight);
		if (run->pc) {
			if (lb_lru_add(run->pc, w->lru->lb, o) < 0)
				w->add_errors++;
		} else {
			void *one = o;

			lf_lru_commit(w->lru, &one, 1);
		}
		if (run->hooks.added)
			run->hooks.added(run, o, run->hooks.arg);
	}
}

/*
 * MADV_DONTNEED: free_pages_and_swap_cache() first drains this CPU's
 * batches (lru_add_drain(), local only), then drops the mapping's
 * references in batches of 31. Objects still held by another slot's batch
 * are released by whoever flushes that batch.
 */
static void unmap(struct lf_worker *w)
{
	unsigned int i;

	if (w->run->pc)
		lb_cpubatch_drain_local(w->run->pc);
	for (i = 0; i < w->run->nr_live; i++)
		lf_obj_put(w->live[i]);
	lf_relq_flush(&w->relq);
}

struct lb_cpubatch *lf_run_cpubatch(struct lf_run *run)
{
	return run->pc;
}

struct lf_lru *lf_run_lru(struct lf_run *run)
{
	return &run->lru;
}

/*
 * Limit mode's loops: the floor (lru-fault-limit.c). The clock is read
 * before and after all loops, as in the other modes, never per object.
 */
static void limit_loops(struct lf_worker *w)
{
	unsigned int loop, nr = w->run->nr_live;

	for (loop = 0; loop < w->run->conf->loops; loop++) {
		lf_limit_populate(&w->lim, w->live, nr);
		lf_limit_unmap(&w->lim, w->live, nr);
	}
}

/* Every other mode: through the lb_cpubatch, or an lb_lru of its own. */
static void lru_loops(struct lf_worker *w)
{
	unsigned int loop;

	for (loop = 0; loop < w->run->conf->loops; loop++) {
		populate(w);
		if (w->run->hooks.unmapping)
			w->run->hooks.unmapping(w->run, w->run->hooks.arg);
		unmap(w);
	}
}

static void *worker_main(void *arg)
{
	struct lf_worker *w = arg;

	lf_relq_attach(&w->relq, w->lru);
	pthread_barrier_wait(&w->run->start);
	w->t_start = now_ns();
	if (w->run->mode == LF_LIMIT)
		limit_loops(w);
	else
		lru_loops(w);
	lf_relq_detach(&w->relq);
	w->t_end = now_ns();
	w->cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	return NULL;
}

static void workers_free(struct lf_run *run)
{
	unsigned int t;

	if (!run->w)
		return;
	for (t = 0; t < run->conf->threads; t++) {
		free(run->w[t].pool);
		free(run->w[t].live);
		lf_lru_destroy(&run->w[t].own);
	}
	free(run->w);
}

static int workers_alloc(struct lf_run *run, unsigned int nr_slots)
{
	unsigned int t, i, threads = run->conf->threads;
	unsigned int nr_pool = run->nr_live + pool_slack(nr_slots, threads);
	int err;

	run->w = aligned_alloc(_Alignof(struct lf_worker),
			       threads * sizeof(*run->w));
	if (!run->w)
		return -ENOMEM;
	memset(run->w, 0, threads * sizeof(*run->w));
	for (t = 0; t < threads; t++) {
		struct lf_worker *w = &run->w[t];

		w->run = run;
		if (run->mode == LF_OWN_LRU) {
			err = lf_lru_init(&w->own, run->conf->lock_kind, true);
			if (err)
				return err;
		}
		w->lru = run->mode == LF_OWN_LRU ? &w->own : &run->lru;
		w->nr_pool = nr_pool;
		w->pool = calloc(nr_pool, sizeof(*w->pool));
		w->live = calloc(run->nr_live, sizeof(*w->live));
		if (!w->pool || !w->live)
			return -ENOMEM;
		for (i = 0; i < nr_pool; i++)
			w->pool[i].free = 1;
		/* The same pool as the other modes: the same lines cycle. */
		lf_limit_init(&w->lim, w->pool, nr_pool, run->weight);
	}
	return 0;
}

static int expect_eq(const char *what, unsigned long long got,
		     unsigned long long want)
{
	if (got == want)
		return 0;
	fprintf(stderr, "lru-fault: verification failed: %s: %llu, expected %llu\n",
		what, got, want);
	return 1;
}

static int check_object(const struct lf_obj *o, unsigned int t, unsigned int i)
{
	unsigned int on_lru = !!(o->lru.flags & LB_LRU_NODE_ON_LRU);

	if (o->commits == o->adds && o->releases == o->adds && !on_lru &&
	    !o->ref && o->free)
		return 0;
	fprintf(stderr, "lru-fault: verification failed: object %u of thread %u: added %llu, committed %llu, released %llu, on list %u, refs %u, free %u\n",
		i, t, (unsigned long long)o->adds,
		(unsigned long long)o->commits,
		(unsigned long long)o->releases, on_lru, o->ref, o->free);
	return 1;
}

static int check_list(struct lf_lru *lru)
{
	struct lf_lru_state st;

	lf_lru_state(lru, &st);
	return expect_eq("list errors", st.errors, 0) |
	       expect_eq("objects left on a list", st.nr_listed, 0);
}

/* Lists empty, every object added, committed and released equally often. */
static int check_objects(struct lf_run *run, uint64_t want_adds)
{
	uint64_t adds = 0;
	unsigned int t, i;
	int bad = check_list(&run->lru);

	for (t = 0; t < run->conf->threads; t++) {
		struct lf_worker *w = &run->w[t];

		bad |= expect_eq("failed adds", w->add_errors, 0);
		if (run->mode == LF_OWN_LRU)
			bad |= check_list(&w->own);
		if (run->mode == LF_LIMIT)
			bad |= expect_eq("objects left on a private list",
					 w->lim.nr_listed, 0) |
			       expect_eq("private list empty",
					 cds_list_empty(&w->lim.head), 1);
		for (i = 0; i < w->nr_pool; i++) {
			adds += w->pool[i].adds;
			if (check_object(&w->pool[i], t, i))
				return 1;
		}
	}
	return bad | expect_eq("objects added", adds, want_adds);
}

/*
 * The per-path sums must add up to the lock's own statistics. The lock's
 * snapshot comes first: lb_lru_stats() takes the lock itself, an
 * acquisition no path made.
 */
static int check_lock(struct lf_run *run)
{
	struct lf_lru_state ls;
	const struct lf_path_stats *a = &ls.path[LF_PATH_ADD];
	const struct lf_path_stats *r = &ls.path[LF_PATH_RELEASE];
	struct lb_lock_stats st;

	lb_lock_stats(lb_lru_lock(run->lru.lb), &st);
	lf_lru_state(&run->lru, &ls);
	/* Earlier snapshots took the lock too, uncontended (workers are gone). */
	return expect_eq("acquisitions by path",
			 a->acquisitions + r->acquisitions + ls.snapshots,
			 st.acquisitions) |
	       expect_eq("contentions by path",
			 a->contentions + r->contentions, st.contentions) |
	       expect_eq("wait by path", a->wait_ns_total + r->wait_ns_total,
			 st.wait_ns_total);
}

/*
 * With every worker gone: the lb_cpubatch counted every add, and each of its
 * back-end lock holds is one add-path acquisition.
 */
static int check_cpubatch(struct lf_run *run, uint64_t want_adds)
{
	struct lf_lru_state ls;
	struct lb_cpubatch_stats ps;

	lf_lru_state(&run->lru, &ls);
	if (lb_cpubatch_stats(run->pc, &ps, NULL, 0) < 0)
		return expect_eq("lb_cpubatch_stats", 1, 0);
	return expect_eq("lb_cpubatch adds", ps.total.adds, want_adds) |
	       expect_eq("lb_cpubatch objects flushed + cached",
			 ps.total.objs_flushed + ps.total.nr_cached, want_adds) |
	       expect_eq("lb_cpubatch back-end locks vs add-path acquisitions",
			 ps.backend_locks, ls.path[LF_PATH_ADD].acquisitions);
}

/* Destroy drains the slots; the last references then fall to this thread. */
static int drain_and_destroy(struct lf_run *run)
{
	struct lf_relq q;
	int err;

	lf_relq_attach(&q, &run->lru);
	err = lb_cpubatch_destroy(run->pc);
	lf_relq_detach(&q);
	run->pc = NULL;
	return err;
}

/*
 * Start the workers together, wait for them, and record the time from the
 * first thread's start to the last one's end: the main thread may wake
 * from the barrier late, so it does not time the run itself.
 */
static void run_workers(struct lf_run *run, struct lf_result *res)
{
	unsigned int t, threads = run->conf->threads;
	uint64_t t0 = UINT64_MAX, t1 = 0;
	int err;

	for (t = 0; t < threads; t++) {
		err = pthread_create(&run->w[t].tid, NULL, worker_main,
				     &run->w[t]);
		if (err) {
			/* The barrier can never open now: nothing to measure. */
			fprintf(stderr, "lru-fault: pthread_create: %s\n",
				strerror(err));
			exit(1);
		}
	}
	pthread_barrier_wait(&run->start);
	for (t = 0; t < threads; t++) {
		const struct lf_worker *w = &run->w[t];

		pthread_join(w->tid, NULL);
		res->pool_stalls += w->stalls;
		res->cpu_ns += w->cpu_ns;
		if (w->t_start < t0)
			t0 = w->t_start;
		if (w->t_end > t1)
			t1 = w->t_end;
	}
	res->elapsed_ns = t1 > t0 ? t1 - t0 : 1;
	if (!res->cpu_ns)
		res->cpu_ns = 1;
}

/* After the workers: drain what the slots still hold, then check it all. */
static bool verify(struct lf_run *run, uint64_t want)
{
	int bad = 0, err;

	if (run->pc) {
		bad |= check_cpubatch(run, want);
		err = drain_and_destroy(run);
		bad |= expect_eq("lb_cpubatch_destroy error",
				 (unsigned long long)-err, 0);
	}
	bad |= check_objects(run, want);
	bad |= check_lock(run);
	return !bad;
}

/* own-lru mode: the per-thread lists' locks are the ones taken. */
static void add_own_locks(struct lf_run *run, struct lf_result *res)
{
	struct lf_lru_state ls;
	unsigned int t, p;

	for (t = 0; t < run->conf->threads; t++) {
		lf_lru_state(&run->w[t].own, &ls);
		for (p = 0; p < LF_NR_PATHS; p++) {
			struct lf_path_stats *d = &res->path[p];
			const struct lf_path_stats *s = &ls.path[p];

			d->acquisitions += s->acquisitions;
			d->contentions += s->contentions;
			d->wait_ns_total += s->wait_ns_total;
			if (s->wait_ns_max > d->wait_ns_max)
				d->wait_ns_max = s->wait_ns_max;
			d->hold_ns_total += s->hold_ns_total;
			d->holds_long += s->holds_long;
		}
	}
}

static void fill_result(struct lf_run *run, size_t size,
			struct lf_result *res)
{
	const struct lf_conf *conf = run->conf;
	struct lf_lru_state ls;

	res->size = size;
	res->mode = run->mode;
	res->threads = conf->threads;
	res->loops = conf->loops;
	res->mem = conf->mem;
	res->lock_kind = conf->lock_kind;
	res->objects = (uint64_t)conf->threads * conf->loops * run->nr_live;
	res->ops_per_sec = 2.0 * (double)res->objects * 1e9 /
			   (double)res->elapsed_ns;
	res->ops_per_cpu_sec = 2.0 * (double)res->objects * 1e9 /
			       (double)res->cpu_ns;
	res->splice = !conf->no_splice;
	lf_lru_state(&run->lru, &ls);
	memcpy(res->path, ls.path, sizeof(res->path));
	if (run->mode == LF_OWN_LRU)
		add_own_locks(run, res);
}

static const enum lb_cpubatch_mode cpubatch_mode[] = {
	[LF_BASELINE] = LB_CPUBATCH_BASELINE,
	[LF_BYPASS] = LB_CPUBATCH_BYPASS_LARGE,
	[LF_WEIGHTED] = LB_CPUBATCH_WEIGHTED,
};

static int create_cpubatch(struct lf_run *run, struct lf_result *res)
{
	struct lb_cpubatch_conf pconf = {
		.mode = cpubatch_mode[run->mode],
	};
	struct lb_cpubatch_stats ps;
	int err;

	err = lf_lru_cpubatch_conf(&run->lru, &pconf);
	if (!err)
		err = lb_cpubatch_create(&run->pc, &pconf);
	if (err)
		return err;
	lb_cpubatch_stats(run->pc, &ps, NULL, 0);
	res->nr_slots = ps.nr_slots;
	res->cpu_src = ps.cpu_src;
	return 0;
}

/*
 * Return: 0 with *res filled (res->verified says whether the checks
 * passed), or a negative errno if the run could not be set up.
 */
int lf_run(const struct lf_conf *conf, size_t size, enum lf_mode mode,
	   const struct lf_hooks *hooks, struct lf_result *res)
{
	struct lf_run run = { .conf = conf, .mode = mode };
	uint64_t want;
	int err;

	memset(res, 0, sizeof(*res));
	run.weight = (uint32_t)(size / LF_UNIT);
	run.nr_live = (unsigned int)(conf->mem / size);
	if (hooks && lf_mode_batched(mode))
		run.hooks = *hooks;
	want = (uint64_t)conf->threads * conf->loops * run.nr_live;
	err = lf_lru_init(&run.lru, conf->lock_kind, !conf->no_splice);
	if (err)
		return err;
	res->cpu_src = lb_cpu_source();
	res->nr_slots = lb_cpu_count();
	if (lf_mode_batched(mode)) {
		err = create_cpubatch(&run, res);
		if (err)
			goto out_lru;
	}
	err = workers_alloc(&run, res->nr_slots);
	if (!err)
		err = -pthread_barrier_init(&run.start, NULL, conf->threads + 1);
	if (err)
		goto out_workers;

	if (run.pc && run.hooks.start) {
		err = run.hooks.start(&run, run.hooks.arg);
		if (err)
			goto out_barrier;
	}
	run_workers(&run, res);
	if (run.pc && run.hooks.stop)
		run.hooks.stop(&run, res, run.hooks.arg);
	res->verified = verify(&run, want);
	fill_result(&run, size, res);
out_barrier:
	pthread_barrier_destroy(&run.start);
out_workers:
	workers_free(&run);
	if (run.pc)
		lb_cpubatch_destroy(run.pc);
out_lru:
	lf_lru_destroy(&run.lru);
	return err;
}
