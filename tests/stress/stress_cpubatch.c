// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lb_cpubatch under concurrency: threads add their own objects through the
 * per-CPU batches into one back-end behind an lb_lock, re-add them round
 * after round (an object may still be cached or in flight: -EEXIST and
 * re-adds racing a remote flush both happen), and drain their local slot
 * now and then. Afterwards every accepted add must have been committed
 * exactly once, get/put must balance, and the statistics must agree with
 * what the back-end saw. Plain pthreads and TAP: runs under TSan.
 *
 * The test's own counters use GCC __atomic builtins rather than ck_pr:
 * ThreadSanitizer sees the former and cannot see ck's inline assembly.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <lockbatch/lock.h>
#include <lockbatch/cpubatch.h>
#include "../common/env.h"
#include "../common/prng.h"
#include "../common/tap.h"

#define NR_THREADS 8
/* Few objects, many rounds: re-adds often find an object still cached. */
#define OBJS_PER_THREAD 48

struct obj {
	struct lb_node node;
	uint32_t weight;
	int refs;		/* atomic: batch references */
	unsigned int commits;	/* under the back-end lock */
	unsigned int accepted;	/* owner thread only: adds that returned >= 0 */
};

struct backend {
	struct lb_lock lock;
	int inside;		/* under the lock: mutual exclusion check */
	unsigned long overlaps;
	unsigned long committed;
	unsigned long runs;
	unsigned long bad_commits;
};

static struct backend be;
static pthread_barrier_t start;
static struct obj *objs;	/* NR_THREADS * OBJS_PER_THREAD */
static unsigned long nr_gets, nr_puts, after_objs, eexist, errors;

static void be_lock(void *b)
{
	struct backend *x = b;

	lb_lock_acquire(&x->lock);
	if (x->inside++)
		x->overlaps++;
}

static void be_unlock(void *b)
{
	struct backend *x = b;

	x->inside--;
	lb_lock_release(&x->lock);
}

static void be_commit(void *b, void **o, unsigned int n)
{
	struct backend *x = b;
	unsigned int i;

	if (n == 0 || n > LB_WBATCH_MAX)
		x->bad_commits++;
	for (i = 0; i < n; i++)
		((struct obj *)o[i])->commits++;
	x->committed += n;
	x->runs++;
}

static void be_after(void *b, void **o, unsigned int n)
{
	__atomic_fetch_add(&after_objs, n, __ATOMIC_RELAXED);
}

static void obj_get(void *o)
{
	__atomic_fetch_add(&((struct obj *)o)->refs, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&nr_gets, 1, __ATOMIC_RELAXED);
}

static void obj_put(void *o)
{
	if (__atomic_fetch_sub(&((struct obj *)o)->refs, 1,
			       __ATOMIC_RELAXED) <= 0)
		__atomic_fetch_add(&errors, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&nr_puts, 1, __ATOMIC_RELAXED);
}

static const struct lb_backend_ops ops = {
	.lock = be_lock,
	.unlock = be_unlock,
	.commit = be_commit,
	.after = be_after,
	.get = obj_get,
	.put = obj_put,
};

/* An injected CPU id that changes on every call, out of range included. */
static __thread unsigned int calls;

static int cpu_hopping(void *arg)
{
	unsigned int nr_slots = *(const unsigned int *)arg;

	return (int)(calls++ * 5u % (2 * nr_slots + 2)) - 1;
}

struct worker {
	pthread_t t;
	struct lb_cpubatch *pc;
	unsigned int id;
	unsigned long rounds;
};

static void *worker_fn(void *arg)
{
	struct worker *w = arg;
	struct obj *mine = objs + (size_t)w->id * OBJS_PER_THREAD;
	struct lb_rng rng;
	unsigned long r;
	unsigned int i;

	lb_rng_seed(&rng, 0x5eed0000u + w->id);
	pthread_barrier_wait(&start);
	for (r = 0; r < w->rounds; r++) {
		for (i = 0; i < OBJS_PER_THREAD; i++) {
			struct obj *o = &mine[lb_rng_below(&rng,
							   OBJS_PER_THREAD)];
			int rc = lb_cpubatch_add(w->pc, o, &o->node, o->weight);

			if (rc >= 0)
				o->accepted++;
			else if (rc == -EEXIST)
				__atomic_fetch_add(&eexist, 1, __ATOMIC_RELAXED);
			else
				__atomic_fetch_add(&errors, 1, __ATOMIC_RELAXED);
			if (lb_rng_below(&rng, 64) == 0 &&
			    lb_cpubatch_drain_local(w->pc) < 0)
				__atomic_fetch_add(&errors, 1, __ATOMIC_RELAXED);
		}
	}
	return NULL;
}

static void run(const char *name, enum lb_cpubatch_mode mode,
		enum lb_lock_kind kind, int hop)
{
	static unsigned int nr_slots = 4;
	struct worker w[NR_THREADS];
	struct lb_cpubatch_conf conf = {
		.nr_slots = hop ? nr_slots : 0, .mode = mode, .ops = &ops,
		.backend = &be, .cpu_fn = hop ? cpu_hopping : NULL,
		.cpu_arg = &nr_slots,
	};
	struct lb_cpubatch_stats st;
	struct lb_lock_stats ls;
	struct lb_cpubatch *pc;
	unsigned long rounds = lb_stress_iters(300, 30000), accepted = 0;
	unsigned long lost = 0, refs = 0;
	unsigned int i, n = NR_THREADS * OBJS_PER_THREAD;

	memset(&be, 0, sizeof(be));
	nr_gets = nr_puts = after_objs = eexist = errors = 0;
	lb_lock_init(&be.lock, kind, name);
	objs = calloc(n, sizeof(*objs));
	for (i = 0; i < n; i++)
		objs[i].weight = 1 + i % 7 * (i % 3);	/* 1..13, mostly small */
	if (!lb_tap_ok(lb_cpubatch_create(&pc, &conf) == 0, "%s: create", name))
		exit(1);
	pthread_barrier_init(&start, NULL, NR_THREADS);
	for (i = 0; i < NR_THREADS; i++) {
		w[i] = (struct worker){ .pc = pc, .id = i, .rounds = rounds };
		pthread_create(&w[i].t, NULL, worker_fn, &w[i]);
	}
	for (i = 0; i < NR_THREADS; i++)
		pthread_join(w[i].t, NULL);
	pthread_barrier_destroy(&start);

	lb_cpubatch_stats(pc, &st, NULL, 0);
	for (i = 0; i < n; i++)
		accepted += objs[i].accepted;
	lb_tap_ok(errors == 0, "%s: no unexpected errors (%lu)", name, errors);
	lb_tap_ok(st.total.adds == accepted,
		  "%s: stats count every accepted add (%llu == %lu, %lu -EEXIST)",
		  name, (unsigned long long)st.total.adds, accepted, eexist);
	lb_tap_ok(st.total.objs_flushed + st.total.nr_cached == accepted,
		  "%s: flushed + cached == added", name);
	lb_tap_ok(st.total.objs_flushed == be.committed &&
		  st.backend_locks == be.runs,
		  "%s: the back-end got what the batches flushed, in %lu runs",
		  name, be.runs);
	lb_tap_ok(lb_cpubatch_destroy(pc) == 0, "%s: destroy", name);
	lb_lock_stats(&be.lock, &ls);
	for (i = 0; i < n; i++) {
		lost += objs[i].commits != objs[i].accepted;
		refs += objs[i].refs != 0;
	}
	lb_tap_ok(lost == 0, "%s: every accepted add committed exactly once "
		  "(%lu objects off)", name, lost);
	lb_tap_ok(be.committed == accepted, "%s: committed %lu == added %lu",
		  name, be.committed, accepted);
	lb_tap_ok(nr_gets == accepted && nr_puts == nr_gets && refs == 0,
		  "%s: get/put balanced (%lu/%lu, %lu objects hold refs)", name,
		  nr_gets, nr_puts, refs);
	lb_tap_ok(after_objs == accepted, "%s: after() saw every object", name);
	lb_tap_ok(ls.acquisitions == be.runs,
		  "%s: lock acquisitions %llu == runs %lu", name,
		  (unsigned long long)ls.acquisitions, be.runs);
	lb_tap_ok(be.overlaps == 0 && be.bad_commits == 0,
		  "%s: back-end exclusive, commits within the cap", name);
	lb_tap_diag("%s: %lu adds, %llu lock acquisitions, %llu contended, "
		    "%lu -EEXIST", name, accepted,
		    (unsigned long long)ls.acquisitions,
		    (unsigned long long)ls.contentions, eexist);
	lb_lock_destroy(&be.lock);
	free(objs);
}

int main(void)
{
	lb_tap_plan(4 * 12);
	run("weighted-rseq-spin", LB_CPUBATCH_WEIGHTED, LB_LOCK_SPIN, 0);
	run("weighted-hop-mutex", LB_CPUBATCH_WEIGHTED, LB_LOCK_MUTEX, 1);
	run("bypass-hop-spin", LB_CPUBATCH_BYPASS_LARGE, LB_LOCK_SPIN, 1);
	run("baseline-rseq-mutex", LB_CPUBATCH_BASELINE, LB_LOCK_MUTEX, 0);
	return lb_tap_done();
}
