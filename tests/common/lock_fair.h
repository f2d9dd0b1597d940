/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Lock fairness run (case C21), shared by the benchmark and the c21 test:
 * thread 0 re-acquires the lock at once after each release; threads 1..n-1
 * acquire in a loop with a short pause outside. All use a short critical
 * section.
 *
 * Two shares per thread, both counted in acquisitions, in fair shares
 * (1.0 = the thread's 1/n):
 *  - raw: its acquisitions over all acquisitions. On a loaded machine this
 *    mixes the scheduler into the lock: while thread 1 is preempted outside
 *    the lock, thread 0 acquires uncontended thousands of times, whatever
 *    the lock kind.
 *  - contended: its acquisitions a over a + o, o being the acquisitions
 *    other threads made while it waited (overtakes). It counts only what
 *    the lock decides: who got the lock while this thread asked for it. A
 *    FIFO lock lets a waiter be overtaken at most n-1 times per wait, so
 *    every thread scores about 1.0 or more; a lock the re-acquirer keeps
 *    winning scores the looping threads near 0. The one scheduler effect
 *    left is a preemption between reading the counter and the lock's
 *    queueing atomic: the rest of the time slice counts as overtakes, so
 *    on a loaded machine FIFO kinds score below 1.0 (never near 0 in our
 *    runs). This is the share C21 judges.
 */
#ifndef LB_TEST_LOCK_FAIR_H
#define LB_TEST_LOCK_FAIR_H

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include <ck_pr.h>

#include <lockbatch/lock.h>

#define LF_MAX_THREADS 64
#define LF_CS_SPINS 100		/* critical section: ~30 ns of compiler-barrier loop */
#define LF_GAP_SPINS 100	/* pause of threads 1..n-1 outside the lock */

struct lf_result {
	unsigned int nr_threads;
	uint64_t count[LF_MAX_THREADS];	/* acquisitions per thread */
	uint64_t overtaken[LF_MAX_THREADS]; /* others' acquisitions while
					     * this thread waited */
	double share[LF_MAX_THREADS];	/* contended share, fair = 1.0 */
	uint64_t total;
	uint64_t counter;		/* incremented under the lock; read
					 * atomically by waiters */
	unsigned long overlaps;		/* threads seen inside together */
	double seconds;
	double jain;			/* Jain's index of the contended
					 * shares, 1/n .. 1 */
	double min_share;		/* lowest contended share of
					 * threads 1..n-1 */
	double throughput;		/* acquisitions per second */
	struct lb_lock_stats st;
};

struct lf_ctx {
	struct lb_lock lock;
	int go;				/* atomic: start measuring */
	int stop;			/* atomic */
	int inside;			/* under lock */
	struct lf_result *res;
};

struct lf_arg {
	struct lf_ctx *ctx;
	unsigned int id;
};

static inline void lf_spin(unsigned int n)
{
	while (n--)
		ck_pr_barrier();
}

static void *lf_worker(void *p)
{
	struct lf_arg *a = p;
	struct lf_ctx *c = a->ctx;
	uint64_t n = 0, over = 0, seq0, seq;

	while (!__atomic_load_n(&c->go, __ATOMIC_ACQUIRE))
		sched_yield();
	while (!__atomic_load_n(&c->stop, __ATOMIC_RELAXED)) {
		seq0 = __atomic_load_n(&c->res->counter, __ATOMIC_RELAXED);
		lb_lock_acquire(&c->lock);
		if (c->inside++)
			c->res->overlaps++;
		seq = __atomic_load_n(&c->res->counter, __ATOMIC_RELAXED);
		over += seq - seq0;
		__atomic_store_n(&c->res->counter, seq + 1, __ATOMIC_RELAXED);
		lf_spin(LF_CS_SPINS);
		c->inside--;
		lb_lock_release(&c->lock);
		n++;
		if (a->id)
			lf_spin(LF_GAP_SPINS);
	}
	c->res->count[a->id] = n;	/* read after join */
	c->res->overtaken[a->id] = over;
	return NULL;
}

static inline double lf_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Jain's index: (sum x)^2 / (n sum x^2); 1 when all equal, 1/n worst. */
static double lf_jain(const double *x, unsigned int n)
{
	double sum = 0, sq = 0;
	unsigned int i;

	for (i = 0; i < n; i++) {
		sum += x[i];
		sq += x[i] * x[i];
	}
	return sq > 0 ? sum * sum / (n * sq) : 0;
}

static void lf_summarise(struct lf_result *r)
{
	double asked;
	unsigned int i;

	r->total = 0;
	for (i = 0; i < r->nr_threads; i++) {
		r->total += r->count[i];
		asked = (double)(r->count[i] + r->overtaken[i]);
		r->share[i] = asked > 0 ?
			r->nr_threads * (double)r->count[i] / asked : 0;
	}
	r->jain = lf_jain(r->share, r->nr_threads);
	r->min_share = r->share[1];
	for (i = 2; i < r->nr_threads; i++)
		if (r->share[i] < r->min_share)
			r->min_share = r->share[i];
	r->throughput = r->seconds > 0 ? (double)r->total / r->seconds : 0;
}

/* Adds run @r to @sum (same thread count; zeroed first) and re-derives it. */
static inline void lf_accumulate(struct lf_result *sum,
				 const struct lf_result *r)
{
	unsigned int i;

	sum->nr_threads = r->nr_threads;
	for (i = 0; i < r->nr_threads; i++) {
		sum->count[i] += r->count[i];
		sum->overtaken[i] += r->overtaken[i];
	}
	sum->counter += r->counter;
	sum->overlaps += r->overlaps;
	sum->seconds += r->seconds;
	if (r->st.wait_ns_max > sum->st.wait_ns_max)
		sum->st.wait_ns_max = r->st.wait_ns_max;
	lf_summarise(sum);
}

/* Raw share of thread @i: its acquisitions in fair shares. */
static inline double lf_raw_share(const struct lf_result *r, unsigned int i)
{
	return r->total ? r->nr_threads * (double)r->count[i] / r->total : 0;
}

/*
 * Runs @nr_threads (2..LF_MAX_THREADS) on a fresh lock of @kind for about
 * @ms milliseconds. Returns 0 or a negative errno (nothing measured).
 */
static int lf_run(enum lb_lock_kind kind, unsigned int nr_threads,
		  unsigned int ms, struct lf_result *r)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	struct lf_arg arg[LF_MAX_THREADS];
	pthread_t t[LF_MAX_THREADS];
	struct lf_ctx c = { .res = r };
	unsigned int i, started = 0;
	double t0;
	int err;

	if (nr_threads < 2 || nr_threads > LF_MAX_THREADS)
		return -EINVAL;
	*r = (struct lf_result){ .nr_threads = nr_threads };
	if ((err = lb_lock_init(&c.lock, kind, "fair")))
		return err;
	for (i = 0; i < nr_threads; i++) {
		arg[i] = (struct lf_arg){ &c, i };
		if (pthread_create(&t[i], NULL, lf_worker, &arg[i]))
			break;
		started++;
	}
	t0 = lf_now();
	__atomic_store_n(&c.go, 1, __ATOMIC_RELEASE);
	while (started == nr_threads && nanosleep(&ts, &ts) && errno == EINTR)
		;
	__atomic_store_n(&c.stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < started; i++)
		pthread_join(t[i], NULL);
	r->seconds = lf_now() - t0;
	err = started == nr_threads ? lb_lock_stats(&c.lock, &r->st) : -EAGAIN;
	lb_lock_destroy(&c.lock);
	lf_summarise(r);
	return err;
}

#endif /* LB_TEST_LOCK_FAIR_H */
