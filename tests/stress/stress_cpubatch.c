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
#include "../common/backend.h"
#include "../common/env.h"
#include "../common/prng.h"
#include "../common/tap.h"

#define NR_THREADS 8
/* Few objects, many rounds: re-adds often find an object still cached. */
#define OBJS_PER_THREAD 48

static pthread_barrier_t start;
static struct test_obj *objs;	/* NR_THREADS * OBJS_PER_THREAD */
static unsigned long eexist, errors;

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
	struct test_obj *mine = objs + (size_t)w->id * OBJS_PER_THREAD;
	struct lb_rng rng;
	unsigned long r;
	unsigned int i;

	lb_rng_seed(&rng, 0x5eed0000u + w->id);
	pthread_barrier_wait(&start);
	for (r = 0; r < w->rounds; r++) {
		for (i = 0; i < OBJS_PER_THREAD; i++) {
			struct test_obj *o = &mine[lb_rng_below(&rng,
							OBJS_PER_THREAD)];
			int rc = lb_cpubatch_add(w->pc, o, &o->node, o->weight);

			if (rc >= 0)
				o->adds++;
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
		.nr_slots = hop ? nr_slots : 0, .mode = mode,
		.ops = &backend_ops, .backend = &backend_fixture.be[0],
		.cpu_fn = hop ? cpu_hopping : NULL,
		.cpu_arg = &nr_slots,
	};
	struct lb_cpubatch_stats st;
	struct lb_lock_stats ls;
	struct lb_cpubatch *pc;
	unsigned long rounds = lb_stress_iters(300, 30000), accepted = 0;
	unsigned long lost = 0, refs = 0;
	unsigned int i, n = NR_THREADS * OBJS_PER_THREAD;
	struct backend_fixture *f = &backend_fixture;
	struct test_backend *be = &f->be[0];

	eexist = errors = 0;
	if (!lb_tap_ok(backend_init_kind(kind) == 0, "%s: back-end", name))
		exit(1);
	objs = calloc(n, sizeof(*objs));
	for (i = 0; i < n; i++)		/* weight 1..13, mostly small */
		backend_obj_init_at(&objs[i], i, 0, 1 + i % 7 * (i % 3));
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
		accepted += objs[i].adds;
	lb_tap_ok(errors == 0, "%s: no unexpected errors (%lu)", name, errors);
	lb_tap_ok(st.total.adds == accepted,
		  "%s: stats count every accepted add (%llu == %lu, %lu -EEXIST)",
		  name, (unsigned long long)st.total.adds, accepted, eexist);
	lb_tap_ok(st.total.objs_flushed + st.total.nr_cached == accepted,
		  "%s: flushed + cached == added", name);
	lb_tap_ok(st.total.objs_flushed == f->commits &&
		  st.backend_locks == be->runs,
		  "%s: the back-end got what the batches flushed, in %lu runs",
		  name, be->runs);
	lb_tap_ok(lb_cpubatch_destroy(pc) == 0, "%s: destroy", name);
	lb_lock_stats(&be->lock, &ls);
	for (i = 0; i < n; i++) {
		lost += objs[i].commits != objs[i].adds;
		refs += backend_batch_refs(&objs[i]) != 0;
	}
	lb_tap_ok(lost == 0, "%s: every accepted add committed exactly once "
		  "(%lu objects off)", name, lost);
	lb_tap_ok(f->commits == accepted, "%s: committed %lu == added %lu",
		  name, f->commits, accepted);
	lb_tap_ok(f->gets == accepted && f->puts == f->gets && refs == 0,
		  "%s: get/put balanced (%lu/%lu, %lu objects hold refs)", name,
		  f->gets, f->puts, refs);
	lb_tap_ok(f->after_objs == accepted, "%s: after() saw every object",
		  name);
	lb_tap_ok(ls.acquisitions == be->runs,
		  "%s: lock acquisitions %llu == runs %lu", name,
		  (unsigned long long)ls.acquisitions, be->runs);
	lb_tap_diag("%s: %lu adds, %llu lock acquisitions, %llu contended, "
		    "%lu -EEXIST", name, accepted,
		    (unsigned long long)ls.acquisitions,
		    (unsigned long long)ls.contentions, eexist);
	lb_tap_ok(backend_teardown() == 0,
		  "%s: back-end exclusive, callbacks in order, commits within "
		  "the cap (first error: %s)", name,
		  f->first_error ? f->first_error : "none");
	free(objs);
}

int main(void)
{
	lb_tap_plan(4 * 13);
	run("weighted-rseq-spin", LB_CPUBATCH_WEIGHTED, LB_LOCK_SPIN, 0);
	run("weighted-hop-mutex", LB_CPUBATCH_WEIGHTED, LB_LOCK_MUTEX, 1);
	run("bypass-hop-spin", LB_CPUBATCH_BYPASS_LARGE, LB_LOCK_SPIN, 1);
	run("baseline-rseq-mutex", LB_CPUBATCH_BASELINE, LB_LOCK_MUTEX, 0);
	return lb_tap_done();
}
