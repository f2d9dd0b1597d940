// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * One run of the page cache: N worker threads look up zipf-distributed
 * keys (inserting on a miss), an eviction thread keeps the pages of live
 * entries under the limit (workers that find the cache far over it reclaim
 * directly, as allocating tasks do), and at the end the cache is emptied
 * and checked. Check mode runs one worker that evicts inline, so the key
 * sequence is fixed, and replays the same sequence through an exact-LRU
 * model of the same capacity.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <urcu/urcu-memb.h>

#include "pagecache.h"

/* Over the limit by this fraction, a worker reclaims itself. */
#define PC_DIRECT_RECLAIM_SHIFT 3

struct zipf {
	uint32_t n;
	double *cdf;
};

struct worker {
	pthread_t tid;
	struct pc_run *run;
	unsigned int idx;
	struct pc_result st;
};

struct pc_run {
	const struct pc_conf *conf;
	struct pc_cache *cache;
	struct zipf z;
	pthread_barrier_t start;
	uint64_t done_ops;	/* atomic, for the progress line */
	int stop_evictor;	/* atomic */
	uint64_t evictor_cpu_ns;	/* written by the evictor before it exits */
	struct worker *w;
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

/* CPU time of the calling thread: steadier than wall time on a shared machine. */
static uint64_t thread_cpu_ns(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

/* splitmix64: each worker's stream of keys. */
static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static int zipf_init(struct zipf *z, uint32_t n, double skew)
{
	double sum = 0;
	uint32_t i;

	z->n = n;
	z->cdf = malloc(n * sizeof(double));
	if (!z->cdf)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		sum += skew > 0 ? 1.0 / pow((double)(i + 1), skew) : 1.0;
		z->cdf[i] = sum;
	}
	for (i = 0; i < n; i++)
		z->cdf[i] /= sum;
	return 0;
}

/* Key of rank r is r: popularity and size (pc_key_pages()) are unrelated. */
static uint64_t zipf_next(const struct zipf *z, uint64_t *rng)
{
	double u = (double)(rng_next(rng) >> 11) * 0x1.0p-53;
	uint32_t lo = 0, hi = z->n - 1;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (z->cdf[mid] < u)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static uint64_t worker_seed(const struct pc_conf *conf, unsigned int idx)
{
	return conf->seed * 0x100000001b3ull + idx;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct pc_run *run = w->run;
	const struct pc_conf *conf = run->conf;
	uint64_t rng = worker_seed(conf, w->idx), i;
	uint64_t far = conf->limit_pages + (conf->limit_pages >>
					    PC_DIRECT_RECLAIM_SHIFT);
	unsigned int r;

	urcu_memb_register_thread();
	pthread_barrier_wait(&run->start);
	for (i = 0; i < conf->ops; i++) {
		pc_cache_access(run->cache, zipf_next(&run->z, &rng), &w->st);
		if (conf->check) {
			/* Inline: the cache never runs past the limit. */
			for (r = 0; r < 64 && pc_cache_over_limit(run->cache); r++)
				pc_cache_evict(run->cache, false);
		} else if ((i & 15) == 0 && pc_cache_charged(run->cache) > far) {
			pc_cache_evict(run->cache, false);
		}
		if ((i & 1023) == 1023)
			__atomic_add_fetch(&run->done_ops, 1024, __ATOMIC_RELAXED);
	}
	w->st.cpu_ns = thread_cpu_ns();
	urcu_memb_unregister_thread();
	return NULL;
}

static void *evictor_main(void *arg)
{
	struct pc_run *run = arg;
	const struct timespec nap = { 0, 50000 };

	urcu_memb_register_thread();
	while (!__atomic_load_n(&run->stop_evictor, __ATOMIC_ACQUIRE))
		if (!pc_cache_over_limit(run->cache) ||
		    !pc_cache_evict(run->cache, false))
			nanosleep(&nap, NULL);
	run->evictor_cpu_ns = thread_cpu_ns();
	urcu_memb_unregister_thread();
	return NULL;
}

/* On a terminal: one line, rewritten in place, while the workers run. */
static void progress(struct pc_run *run, uint64_t t0)
{
	uint64_t total = run->conf->ops * run->conf->threads;
	uint64_t done = __atomic_load_n(&run->done_ops, __ATOMIC_RELAXED);
	double s = (double)(now_ns() - t0) / 1e9;

	fprintf(stderr, "\rpagecache: %llu/%llu ops, %.0f ops/s   ",
		(unsigned long long)done, (unsigned long long)total,
		s > 0 ? (double)done / s : 0);
}

static void wait_workers(struct pc_run *run, struct pc_result *res)
{
	const struct timespec tick = { 0, 250000000 };
	uint64_t t0 = now_ns();
	unsigned int t;

	if (run->conf->progress) {
		while (__atomic_load_n(&run->done_ops, __ATOMIC_RELAXED) +
		       1024ull * run->conf->threads <
		       run->conf->ops * run->conf->threads) {
			progress(run, t0);
			nanosleep(&tick, NULL);
		}
	}
	for (t = 0; t < run->conf->threads; t++) {
		struct pc_result *s = &run->w[t].st;

		pthread_join(run->w[t].tid, NULL);
		res->ops += s->ops;
		res->hits += s->hits;
		res->activations += s->activations;
		res->misses += s->misses;
		res->inserts += s->inserts;
		res->insert_races += s->insert_races;
		res->alloc_fail += s->alloc_fail;
		res->cpu_ns += s->cpu_ns;
	}
	res->elapsed_ns = now_ns() - t0;
	if (run->conf->progress)
		fputs("\r\033[K", stderr);
}

static int start_threads(struct pc_run *run, pthread_t *evictor)
{
	unsigned int t;
	int err;

	for (t = 0; t < run->conf->threads; t++) {
		run->w[t].run = run;
		run->w[t].idx = t;
		err = pthread_create(&run->w[t].tid, NULL, worker_main,
				     &run->w[t]);
		if (err) {
			fprintf(stderr, "pagecache: pthread_create: %s\n",
				strerror(err));
			exit(1);	/* the barrier can never open now */
		}
	}
	if (run->conf->check)
		return 0;
	return -pthread_create(evictor, NULL, evictor_main, run);
}

int pc_run(const struct pc_conf *conf, struct pc_result *res)
{
	struct pc_run run = { .conf = conf };
	pthread_t evictor;
	int err, derr;

	memset(res, 0, sizeof(*res));
	run.w = calloc(conf->threads, sizeof(*run.w));
	err = run.w ? zipf_init(&run.z, conf->keys, conf->skew) : -ENOMEM;
	if (!err)
		err = pc_cache_create(&run.cache, conf);
	if (!err)
		err = -pthread_barrier_init(&run.start, NULL, conf->threads + 1);
	if (err)
		goto out;
	err = start_threads(&run, &evictor);
	pthread_barrier_wait(&run.start);
	wait_workers(&run, res);
	if (!err && !conf->check) {
		__atomic_store_n(&run.stop_evictor, 1, __ATOMIC_RELEASE);
		pthread_join(evictor, NULL);
		res->cpu_ns += run.evictor_cpu_ns;
	}
	pc_cache_stats(run.cache, res);
	derr = pc_cache_destroy(run.cache, res);
	run.cache = NULL;
	if (!err && derr)
		res->verified = false;
	res->hit_ratio = res->ops ? (double)res->hits / (double)res->ops : 0;
	res->ops_per_sec = res->elapsed_ns ? (double)res->ops * 1e9 /
					     (double)res->elapsed_ns : 0;
	res->ops_per_cpu_sec = res->cpu_ns ? (double)res->ops * 1e9 /
					     (double)res->cpu_ns : 0;
	if (conf->check) {
		res->model_hit_ratio = pc_model_hit_ratio(conf);
		res->model_run = true;
	}
	pthread_barrier_destroy(&run.start);
out:
	if (run.cache)
		pc_cache_destroy(run.cache, NULL);
	free(run.z.cdf);
	free(run.w);
	return err;
}

/*
 * Exact LRU over pages, the reference the cache is compared with: the same
 * keys in the same order (worker 0's stream), a hit moves the key to the
 * front, a miss inserts it there and evicts from the back while the pages
 * exceed the limit.
 */
struct lru_model {
	uint32_t *prev, *next;	/* index n is the list head */
	uint8_t *present;
	uint64_t used;
};

static void model_unlink(struct lru_model *m, uint32_t k)
{
	m->next[m->prev[k]] = m->next[k];
	m->prev[m->next[k]] = m->prev[k];
}

static void model_push(struct lru_model *m, uint32_t head, uint32_t k)
{
	m->next[k] = m->next[head];
	m->prev[k] = head;
	m->prev[m->next[head]] = k;
	m->next[head] = k;
}

double pc_model_hit_ratio(const struct pc_conf *conf)
{
	struct lru_model m = { 0 };
	struct zipf z = { 0 };
	uint32_t n = conf->keys, k;
	uint64_t rng = worker_seed(conf, 0), i, hits = 0;

	m.prev = calloc(n + 1, sizeof(uint32_t));
	m.next = calloc(n + 1, sizeof(uint32_t));
	m.present = calloc(n, 1);
	if (!m.prev || !m.next || !m.present || zipf_init(&z, n, conf->skew))
		goto out;
	m.prev[n] = m.next[n] = n;
	for (i = 0; i < conf->ops; i++) {
		k = (uint32_t)zipf_next(&z, &rng);
		if (m.present[k]) {
			hits++;
			model_unlink(&m, k);
			model_push(&m, n, k);
			continue;
		}
		m.present[k] = 1;
		m.used += pc_key_pages(k);
		model_push(&m, n, k);
		while (m.used > conf->limit_pages) {
			uint32_t victim = m.prev[n];

			model_unlink(&m, victim);
			m.present[victim] = 0;
			m.used -= pc_key_pages(victim);
		}
	}
out:
	free(m.prev);
	free(m.next);
	free(m.present);
	free(z.cdf);
	return conf->ops ? (double)hits / (double)conf->ops : 0;
}
