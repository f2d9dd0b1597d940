// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * make soak SOAK_SECONDS=N: random mixed operations on every primitive
 * (lb_cpubatch, lb_pcp, lb_wbatch, lb_lock) from more threads than cores.
 * Every LB_SOAK_CHECK_MS (default 1000) the workers pause and the
 * conservation of each primitive is checked; again at the end. Prints
 * operations done and violations; exits 1 on any violation.
 *
 * Usage: soak [seconds [threads]]; LB_SEED replays a seed.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <lockbatch/lock.h>
#include <lockbatch/wbatch.h>
#include "soak.h"

#define CHUNK 256	/* operations between pause points */

uint64_t soak_violations;

static pthread_rwlock_t pause_lock;
static int stop;		/* atomic */
static uint64_t ops;		/* atomic */
static uint64_t seed;

/* lb_lock: two counters that only ever move together under it. */
static struct lb_lock lk;
static uint64_t lk_a, lk_b;

static void lock_op(void)
{
	lb_lock_acquire(&lk);
	SOAK_CHECK(lk_a == lk_b, "lock: %llu != %llu",
		   (unsigned long long)lk_a, (unsigned long long)lk_b);
	lk_a++;
	lk_b++;
	lb_lock_release(&lk);
}

/* lb_wbatch, thread-local: count and weight against a running sum. */
static void wbatch_op(struct lb_wbatch *b, uint64_t *w, struct lb_rng *g)
{
	uint32_t x = 1 + lb_rng_below(g, 40);
	int rc = lb_wbatch_add(b, b, x);

	SOAK_CHECK(rc >= 0, "wbatch add: %d", rc);
	*w += x;
	SOAK_CHECK(lb_wbatch_weight(b) == (long)*w, "wbatch weight");
	if (rc == 1) {		/* flush now */
		lb_wbatch_reinit(b);
		*w = 0;
	}
}

static void *worker(void *arg)
{
	unsigned int t = (unsigned int)(uintptr_t)arg, i;
	struct lb_wbatch b;
	uint64_t w = 0;
	struct lb_rng g;

	lb_rng_seed(&g, seed + t * 0x9e3779b97f4a7c15ull);
	lb_wbatch_init(&b, 31, 31);
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		pthread_rwlock_rdlock(&pause_lock);
		for (i = 0; i < CHUNK; i++) {
			unsigned int x = lb_rng_below(&g, 100);

			if (x < 45)
				soak_cpubatch_op(t, &g);
			else if (x < 90)
				soak_pcp_op(t, &g);
			else if (x < 95)
				wbatch_op(&b, &w, &g);
			else
				lock_op();
		}
		pthread_rwlock_unlock(&pause_lock);
		__atomic_add_fetch(&ops, CHUNK, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void check_all(void)
{
	pthread_rwlock_wrlock(&pause_lock);
	soak_cpubatch_check();
	soak_pcp_check();
	pthread_rwlock_unlock(&pause_lock);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int setup(unsigned int nr)
{
	pthread_rwlockattr_t a;

	/* Writer preference: a pause must not wait for the workers to idle. */
	pthread_rwlockattr_init(&a);
	pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&pause_lock, &a);
	pthread_rwlockattr_destroy(&a);
	if (lb_lock_init(&lk, LB_LOCK_SPIN, "soak") || soak_cpubatch_setup(nr) ||
	    soak_pcp_setup(nr)) {
		fprintf(stderr, "soak: setup failed\n");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 10;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned int nr = argc > 2 ? (unsigned int)atoi(argv[2]) :
				     (unsigned int)(ncpu > 0 ? 2 * ncpu + 2 : 6);
	const char *e = getenv("LB_SOAK_CHECK_MS");
	double period = (e ? atof(e) : 1000) / 1000, t0, next;
	pthread_t *th = calloc(nr, sizeof(*th));
	unsigned int i, checks = 0;

	seed = lb_test_seed((uint64_t)time(NULL));
	if (!th || !nr || setup(nr))
		return 2;
	printf("soak: %u threads on %ld cores, %.0f s, seed 0x%llx\n", nr, ncpu,
	       secs, (unsigned long long)seed);
	for (i = 0; i < nr; i++)
		pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)i);
	t0 = now_s();
	for (next = t0 + period; now_s() < t0 + secs; next += period) {
		while (now_s() < next && now_s() < t0 + secs)
			usleep(20000);
		check_all();
		checks++;
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < nr; i++)
		pthread_join(th[i], NULL);
	check_all();
	soak_cpubatch_teardown();
	soak_pcp_teardown();
	SOAK_CHECK(lk_a == lk_b, "lock counters %llu != %llu",
		   (unsigned long long)lk_a, (unsigned long long)lk_b);
	SOAK_CHECK(lb_lock_destroy(&lk) == 0, "lock destroy");
	printf("soak: %llu operations in %.1f s (%.2f Mops/s), %u checks, "
	       "%llu violations\n", (unsigned long long)ops, now_s() - t0,
	       (double)ops / (now_s() - t0) / 1e6, checks + 1,
	       (unsigned long long)soak_violations);
	free(th);
	return soak_violations ? 1 : 0;
}
