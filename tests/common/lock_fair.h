/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Lock fairness run (case C21), shared by the benchmark and the c21 test:
 * thread 0 re-acquires the lock at once after each release; threads 1..n-1
 * acquire in a loop with a short pause outside. All use a short critical
 * section; threads 1..n-1 also read their context-switch count once per
 * LF_BLOCK rounds (a system call outside the lock).
 *
 * Three shares per thread, all counted in acquisitions, in fair shares
 * (1.0 = the thread's 1/n):
 *  - raw: its acquisitions over all acquisitions. On a loaded machine this
 *    mixes the scheduler into the lock: while thread 1 is preempted outside
 *    the lock, thread 0 acquires uncontended thousands of times, whatever
 *    the lock kind.
 *  - contended: its acquisitions a over a + o, o being the acquisitions
 *    other threads made while it waited (overtakes): who got the lock
 *    while this thread asked for it. A FIFO lock lets a waiter be
 *    overtaken at most n-1 times per wait, so every thread scores 1.0 or
 *    more; a lock the re-acquirer keeps winning scores the looping threads
 *    near 0. One scheduler effect remains: a waiter preempted between
 *    reading the counter and queueing counts a whole time slice of the
 *    re-acquirer as overtakes, so under load FIFO kinds may score low.
 *  - judged (threads 1..n-1): the contended share over the blocks of
 *    LF_BLOCK rounds in which the thread was never switched out
 *    involuntarily (ru_nivcsw did not move); the others are counted in
 *    @preempted. This removes that scheduler effect. It also removes a
 *    spin waiter's rounds that yielded and were switched out, so on a
 *    loaded machine the spin kind's unfairness shows in the contended and
 *    raw shares rather than here; on an idle one sched_yield() does not
 *    switch and nothing is removed. This is the share C21 judges: the lock
 *    cannot be blamed for the scheduler.
 */
#ifndef LB_TEST_LOCK_FAIR_H
#define LB_TEST_LOCK_FAIR_H

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include <ck_pr.h>

#include <lockbatch/lock.h>

#define LF_MAX_THREADS 64
#define LF_CS_SPINS 100		/* critical section: ~30 ns of compiler-barrier loop */
#define LF_GAP_SPINS 100	/* pause of threads 1..n-1 outside the lock */
#define LF_BLOCK 64		/* rounds judged together, see lf_worker() */

struct lf_result {
	unsigned int nr_threads;
	uint64_t count[LF_MAX_THREADS];	/* acquisitions per thread */
	uint64_t overtaken[LF_MAX_THREADS]; /* others' acquisitions while
					     * this thread waited */
	uint64_t judged[LF_MAX_THREADS];  /* acquisitions in judged blocks */
	uint64_t judged_over[LF_MAX_THREADS]; /* overtakes in those */
	uint64_t preempted[LF_MAX_THREADS]; /* rounds left out */
	double share[LF_MAX_THREADS];	/* contended share, fair = 1.0 */
	double judged_share[LF_MAX_THREADS]; /* judged share; -1: none */
	uint64_t total;
	uint64_t counter;		/* incremented under the lock; read
					 * atomically by waiters */
	unsigned long overlaps;		/* threads seen inside together */
	double seconds;
	double jain;			/* Jain's index of the contended
					 * shares, 1/n .. 1 */
	double min_share;		/* lowest contended share of
					 * threads 1..n-1 */
	double min_judged;		/* lowest judged share (-1: none) */
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

/* Involuntary context switches of the calling thread so far. */
static inline long lf_nivcsw(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_THREAD, &ru) ? -1 : ru.ru_nivcsw;
}

/* One thread's counts; the open block waits for its verdict. */
struct lf_tally {
	uint64_t over, judged, judged_over, skipped;
	uint64_t blk_n, blk_over;	/* the open block */
	long sw;			/* nivcsw when the block opened */
};

/* Closes the open block: judged if the thread was never switched out. */
static void lf_close_block(struct lf_tally *t)
{
	long sw = lf_nivcsw();

	if (sw == t->sw) {
		t->judged += t->blk_n;
		t->judged_over += t->blk_over;
	} else {
		t->skipped += t->blk_n;
	}
	t->blk_n = t->blk_over = 0;
	t->sw = sw;
}

static void *lf_worker(void *p)
{
	struct lf_arg *a = p;
	struct lf_ctx *c = a->ctx;
	struct lf_tally t = { 0 };
	uint64_t n = 0, seq0, seq;

	while (!__atomic_load_n(&c->go, __ATOMIC_ACQUIRE))
		sched_yield();
	t.sw = lf_nivcsw();
	while (!__atomic_load_n(&c->stop, __ATOMIC_RELAXED)) {
		seq0 = __atomic_load_n(&c->res->counter, __ATOMIC_RELAXED);
		lb_lock_acquire(&c->lock);
		if (c->inside++)
			c->res->overlaps++;
		seq = __atomic_load_n(&c->res->counter, __ATOMIC_RELAXED);
		__atomic_store_n(&c->res->counter, seq + 1, __ATOMIC_RELAXED);
		lf_spin(LF_CS_SPINS);
		c->inside--;
		lb_lock_release(&c->lock);
		n++;
		t.over += seq - seq0;
		if (!a->id)
			continue;
		t.blk_n++;
		t.blk_over += seq - seq0;
		if (t.blk_n == LF_BLOCK)
			lf_close_block(&t);
		lf_spin(LF_GAP_SPINS);
	}
	if (a->id)
		lf_close_block(&t);
	c->res->count[a->id] = n;	/* read after join */
	c->res->overtaken[a->id] = t.over;
	c->res->judged[a->id] = t.judged;
	c->res->judged_over[a->id] = t.judged_over;
	c->res->preempted[a->id] = t.skipped;
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

/* @a acquisitions overtaken @o times, in fair shares of @n; -1 if none. */
static double lf_share(uint64_t a, uint64_t o, unsigned int n)
{
	return a ? n * (double)a / (double)(a + o) : -1;
}

static void lf_summarise(struct lf_result *r)
{
	unsigned int i;

	r->total = 0;
	r->min_share = 1e9;
	r->min_judged = -1;
	for (i = 0; i < r->nr_threads; i++) {
		r->total += r->count[i];
		r->share[i] = lf_share(r->count[i], r->overtaken[i],
				       r->nr_threads);
		r->judged_share[i] = i ? lf_share(r->judged[i],
						  r->judged_over[i],
						  r->nr_threads) : -1;
		if (r->share[i] < 0)
			r->share[i] = 0;	/* never got the lock */
		if (i && r->share[i] < r->min_share)
			r->min_share = r->share[i];
		if (i && r->judged_share[i] >= 0 &&
		    (r->min_judged < 0 || r->judged_share[i] < r->min_judged))
			r->min_judged = r->judged_share[i];
	}
	r->jain = lf_jain(r->share, r->nr_threads);
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
		sum->judged[i] += r->judged[i];
		sum->judged_over[i] += r->judged_over[i];
		sum->preempted[i] += r->preempted[i];
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
