// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lb_lock under concurrency, both kinds: threads increment a plain counter
 * under the lock. The counter must come out exact, no two threads may be
 * inside at once, and the statistics must count every acquisition. Plain
 * pthreads and TAP: runs under TSan, which also checks that the ck shim's
 * annotations order the protected accesses.
 */
#include "config.h"

#include <pthread.h>
#include <stdint.h>

#include <lockbatch/lock.h>
#include "../common/env.h"
#include "../common/tap.h"

#define NR_THREADS 8

static struct lb_lock lock;
static unsigned long counter;	/* under lock */
static int inside;		/* under lock */
static unsigned long overlaps;	/* under lock */
static unsigned long iters;
static pthread_barrier_t start;

static void *worker(void *arg)
{
	unsigned long i;

	pthread_barrier_wait(&start);
	for (i = 0; i < iters; i++) {
		lb_lock_acquire(&lock);
		if (inside++)
			overlaps++;
		counter++;
		inside--;
		lb_lock_release(&lock);
	}
	return NULL;
}

static void run(const char *name, enum lb_lock_kind kind)
{
	pthread_t t[NR_THREADS];
	struct lb_lock_stats s;
	unsigned long total;
	int i;

	counter = overlaps = 0;
	iters = lb_stress_iters(20000, 2000000);
	total = iters * NR_THREADS;
	lb_lock_init(&lock, kind, name);
	pthread_barrier_init(&start, NULL, NR_THREADS);
	for (i = 0; i < NR_THREADS; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (i = 0; i < NR_THREADS; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&start);
	lb_lock_stats(&lock, &s);
	lb_tap_ok(counter == total, "%s: counter %lu == %lu", name, counter,
		  total);
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
}

int main(void)
{
	lb_tap_plan(2 * 5);
	run("spin", LB_LOCK_SPIN);
	run("mutex", LB_LOCK_MUTEX);
	return lb_tap_done();
}
