// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lb_lock under concurrency, every kind: threads increment a plain counter
 * under the lock. The counter must come out exact, no two threads may be
 * inside at once, and the statistics must count every acquisition. Then
 * the two queue kinds nested (CLH outside MCS, released outer first), so
 * per-thread node tables and migrating CLH nodes run concurrently. Plain
 * pthreads and TAP: runs under TSan, which also checks that the ck shim's
 * annotations order the protected accesses.
 *
 * Each kind runs for a fixed time, not a fixed count: FIFO kinds hand the
 * lock to preempted waiters, and with 8 threads on a loaded 2-CPU machine
 * a fixed count took minutes.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include <lockbatch/lock.h>
#include "../common/env.h"
#include "../common/tap.h"

#define NR_THREADS 8

static struct lb_lock lock, inner;
static unsigned long counter;	/* under lock */
static int inside;		/* under lock */
static unsigned long overlaps;	/* under lock */
static unsigned long done[NR_THREADS];	/* per thread, read after join */
static int nested;
static int stop;		/* atomic */
static pthread_barrier_t start;

/* Work inside and outside the lock, so the threads overlap in time. */
static void spin(unsigned int n)
{
	while (n--)
		__asm__ __volatile__("" ::: "memory");
}

static void *worker(void *arg)
{
	unsigned long *n = arg;

	pthread_barrier_wait(&start);
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		lb_lock_acquire(&lock);
		if (nested)
			lb_lock_acquire(&inner);
		if (inside++)
			overlaps++;
		counter++;
		spin(20);
		inside--;
		lb_lock_release(&lock);	/* outer first: any order works */
		if (nested)
			lb_lock_release(&inner);
		(*n)++;
		spin(200);
	}
	return NULL;
}

static void sleep_ms(unsigned long ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Returns the number of critical sections run. */
static unsigned long run(const char *name, enum lb_lock_kind kind)
{
	pthread_t t[NR_THREADS];
	struct lb_lock_stats s;
	unsigned long total = 0;
	int i;

	counter = overlaps = 0;
	stop = 0;
	lb_lock_init(&lock, kind, name);
	pthread_barrier_init(&start, NULL, NR_THREADS + 1);
	for (i = 0; i < NR_THREADS; i++) {
		done[i] = 0;
		pthread_create(&t[i], NULL, worker, &done[i]);
	}
	pthread_barrier_wait(&start);
	sleep_ms(lb_stress_iters(300, 5000));
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < NR_THREADS; i++) {
		pthread_join(t[i], NULL);
		total += done[i];
	}
	pthread_barrier_destroy(&start);
	lb_lock_stats(&lock, &s);
	lb_tap_ok(counter == total && total > 0, "%s: counter %lu == %lu", name,
		  counter, total);
	lb_tap_ok(overlaps == 0, "%s: mutual exclusion (%lu overlaps)", name,
		  overlaps);
	lb_tap_ok(s.acquisitions == total,
		  "%s: acquisitions %llu == operations %lu", name,
		  (unsigned long long)s.acquisitions, total);
	lb_tap_ok(s.contentions <= s.acquisitions &&
		  (s.contentions == 0 ?
		   s.wait_ns_total == 0 && s.wait_ns_max == 0 :
		   s.wait_ns_min <= s.wait_ns_max &&
		   s.wait_ns_max <= s.wait_ns_total &&
		   s.wait_ns_min <= s.wait_ns_total / s.contentions),
		  "%s: wait statistics consistent (%llu contended, max %llu ns)",
		  name, (unsigned long long)s.contentions,
		  (unsigned long long)s.wait_ns_max);
	lb_tap_ok(lb_lock_destroy(&lock) == 0, "%s: destroy", name);
	return total;
}

int main(void)
{
	struct lb_lock_stats s;
	unsigned long total;

	lb_tap_plan(6 * 5 + 2);
	run("spin", LB_LOCK_SPIN);
	run("mutex", LB_LOCK_MUTEX);
	run("ticket", LB_LOCK_TICKET);
	run("mcs", LB_LOCK_MCS);
	run("clh", LB_LOCK_CLH);
	/* Nested: the outer CLH lock is the one checked by run(). */
	nested = 1;
	lb_lock_init(&inner, LB_LOCK_MCS, "inner");
	total = run("clh+mcs", LB_LOCK_CLH);
	lb_lock_stats(&inner, &s);
	lb_tap_ok(s.acquisitions == total, "clh+mcs: inner acquisitions %llu",
		  (unsigned long long)s.acquisitions);
	lb_tap_ok(lb_lock_destroy(&inner) == 0, "clh+mcs: inner destroy");
	return lb_tap_done();
}
