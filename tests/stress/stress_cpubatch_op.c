// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Stress for operation batches in the caller-protected mode: objects in
 * cells, each cell behind its own mutex (memcached's item lock), worker
 * threads queueing adds, moves, rotations and deletions of random cells'
 * objects on whatever CPU they run, and freeing objects two ways:
 *
 *  - delete-when-committed: queue %LB_OP_DEL, lb_cpubatch_drain_obj(),
 *    free at once;
 *  - eviction (memcached's lru_pull_tail()): lb_cpubatch_unqueue() (on
 *    -EBUSY the object is left alone), then unlink it by hand under its
 *    list's lock if it is linked, free at once.
 *
 * The batch holds no reference, so a flush that touched an object after
 * either path let it go is a use-after-free (ASan) or a race (TSan); the
 * list callbacks check that no object enters a list while on another and
 * that unlinks and rotations find it where they expect. At the end every
 * object's list state must be what the last operation on it left.
 * Plain pthreads and TAP, so it runs under ThreadSanitizer.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "../common/op_backend.h"
#include "../common/env.h"
#include "../common/prng.h"
#include "../common/tap.h"

#define WORKERS 3
#define CELLS 64
#define LISTS 3

struct cell {
	pthread_mutex_t lock;
	struct opb_obj *o;	/* under @lock; NULL: freed */
	bool linked;		/* under @lock: what the queued operations leave */
};

static struct cell cells[CELLS];
static struct lb_cpubatch *pc;
static struct lb_backend_ops ops;
static unsigned long iters;
static unsigned int next_id;			/* atomic */
static unsigned int unexpected, busy, freed;	/* atomic */
static uint64_t seed;

static void bad(const char *what, int rc)
{
	if (ck_pr_faa_uint(&unexpected, 1) < 5)
		lb_tap_diag("unexpected %s: %d", what, rc);
}

/* memcached's lru_pull_tail() on a cell whose lock is held. */
static void evict(struct cell *c)
{
	struct opb_obj *o = c->o;
	unsigned int l;
	int rc;

	rc = lb_cpubatch_unqueue(pc, &o->node, 1, NULL);
	if (rc == -EBUSY) {
		ck_pr_inc_uint(&busy);
		return;
	}
	if (rc < 0) {
		bad("unqueue", rc);
		return;
	}
	/* No entry waits and none is in flight: where it is, it stays. */
	l = ck_pr_load_uint(&o->cur);
	opb_lock(&opb.l[l]);
	if (o->linked)
		opb_unlink(&opb.l[l], o);
	opb_unlock(&opb.l[l]);
	free(o);
	c->o = NULL;
	ck_pr_inc_uint(&freed);
}

static void one(struct lb_rng *r)
{
	struct cell *c = &cells[lb_rng_below(r, CELLS)];
	unsigned int x = lb_rng_below(r, 100);
	int rc;

	pthread_mutex_lock(&c->lock);
	if (!c->o) {
		c->o = malloc(sizeof(*c->o));
		if (!c->o) {
			bad("malloc", -ENOMEM);
			goto out;
		}
		opb_obj_init(c->o, ck_pr_faa_uint(&next_id, 1),
			     lb_rng_below(r, LISTS));
		c->linked = false;
	}
	if (!c->linked) {
		rc = lb_cpubatch_queue(pc, c->o, &c->o->node, LB_OP_ADD, 1);
		if (rc == LB_OP_QUEUED || rc == LB_OP_FLUSHED)
			c->linked = true;
		else
			bad("add", rc);
		goto out;
	}
	if (x < 30) {
		rc = lb_cpubatch_queue(pc, c->o, &c->o->node, LB_OP_MOVE, 1);
	} else if (x < 55) {
		rc = lb_cpubatch_queue(pc, c->o, &c->o->node, LB_OP_ROTATE, 1);
	} else if (x < 80) {
		rc = lb_cpubatch_queue(pc, c->o, &c->o->node, LB_OP_DEL, 1);
		if (rc >= 0)
			c->linked = false;
		if (rc >= 0 && x < 68) {
			/* Delete, wait until committed, free. */
			rc = lb_cpubatch_drain_obj(pc, &c->o->node);
			if (rc < 0 || c->o->linked)
				bad("drain_obj after del", rc);
			free(c->o);
			c->o = NULL;
			ck_pr_inc_uint(&freed);
			goto out;
		}
	} else {
		evict(c);
		goto out;
	}
	/* -EEXIST: a move after a waiting move, which does it. */
	if (rc < 0 && rc != -EEXIST)
		bad("queue", rc);
out:
	pthread_mutex_unlock(&c->lock);
}

static void *worker(void *arg)
{
	struct lb_rng r;
	unsigned long i;

	lb_rng_seed(&r, seed + (uintptr_t)arg);
	for (i = 0; i < iters; i++) {
		one(&r);
		if (i % 1024 == 1023 && (uintptr_t)arg == 0)
			lb_cpubatch_drain_all(pc);
	}
	return NULL;
}

int main(void)
{
	struct lb_cpubatch_conf conf = LB_CPUBATCH_CONF_INIT(&ops, NULL);
	pthread_t t[WORKERS];
	unsigned long per[LISTS] = { 0 };
	unsigned long mismatched = 0;
	uintptr_t i;
	unsigned int l;

	seed = lb_test_seed(0x0b5eed);
	iters = lb_stress_iters(20000, 2000000);
	lb_tap_plan(4);
	opb_init(LISTS);
	ops = opb_ops(false);
	conf.flags = LB_CPUBATCH_F_CALLER_REFS;
	conf.max_nr = 8;
	if (lb_cpubatch_create(&pc, &conf)) {
		lb_tap_ok(0, "create");
		return lb_tap_done();
	}
	for (i = 0; i < CELLS; i++)
		pthread_mutex_init(&cells[i].lock, NULL);
	for (i = 0; i < WORKERS; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (i = 0; i < WORKERS; i++)
		pthread_join(t[i], NULL);
	lb_tap_ok(lb_cpubatch_drain_all(pc) >= 0, "final drain_all");
	for (i = 0; i < CELLS; i++) {
		struct opb_obj *o = cells[i].o;

		if (!o)
			continue;
		if (o->linked != cells[i].linked || o->node.slot)
			mismatched++;
		if (o->linked)
			per[o->cur]++;
	}
	for (l = 0; l < LISTS; l++)
		if (per[l] != opb.l[l].nr)
			mismatched++;
	lb_tap_ok(!unexpected, "no unexpected return (%u; %u freed, %u busy "
		  "evictions skipped) seed=0x%llx", unexpected, freed, busy,
		  (unsigned long long)seed);
	lb_tap_ok(!mismatched, "every object where its last operation left it "
		  "(%lu wrong)", mismatched);
	lb_tap_ok(!opb.errors, "list rules kept (%u broken)", opb.errors);
	lb_cpubatch_destroy(pc);
	for (i = 0; i < CELLS; i++)
		free(cells[i].o);
	opb_fini();
	return lb_tap_done();
}
