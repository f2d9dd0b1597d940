// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Several lb_cpubatch instances whose callbacks add to random other instances
 * (chains, and cycles bounded by a hop count per object), against a model:
 * each object is committed by each back-end exactly as often as it was
 * added to that back-end's instance. The callbacks also drain other
 * instances. After every top-level operation the stats identities of
 * cpubatch.h hold for every instance and nothing is in flight. Fixed seeds;
 * LB_SEED=<seed> replays one.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include <lockbatch/cpubatch.h>
#include "../common/backend.h"
#include "../common/prng.h"

#define NINST 4
#define NOBJ 128
#define MAX_SLOTS 6
#define MAX_HOPS 12
#define OPS_PER_SEED 3000

static const uint64_t seeds[] = {
	0x1, 0x5eed, 0xdecafbad, 0x0123456789abcdefull, 0x2a, 0x600d5eed,
};

enum readd_from { FROM_COMMIT, FROM_AFTER, FROM_PUT, FROM_NR };

/* A fixture object (first member: the callbacks get its address). */
struct nobj {
	struct test_obj t;
	unsigned int hops;		/* re-adds still to make */
	unsigned int route[MAX_HOPS];	/* instance of each re-add */
	enum readd_from from;		/* which callback re-adds it */
	unsigned int readd_pending;	/* committed, re-add not made yet */
	unsigned int adds[NINST];	/* accepted adds (the model) */
	unsigned int commits[NINST];	/* commits by each back-end */
};

/* Instance i batches into the fixture's back-end i. */
struct ninst {
	struct lb_cpubatch *pc;
	unsigned int nr_slots;
};

static struct ninst BE[NINST];
static struct nobj OB[NOBJ];
static struct lb_rng rng;
static uint64_t cur_seed;
static int locks_held;		/* back-end locks held on this thread */
static unsigned long eagain, edeadlk, eloop, nested_drains;

/* The rule this test is about: no back-end lock taken under another. */
static void nested_lock(void *p)
{
	cr_assert(eq(int, locks_held, 0),
		  "an add took a back-end lock under another: " LB_SEED_FMT,
		  LB_SEED_ARGS(cur_seed));
	backend_lock(p);
	locks_held++;
}

static void nested_unlock(void *p)
{
	locks_held--;
	backend_unlock(p);
}

/* Add @o to instance @i; the model counts the add when it was accepted. */
static int nadd(struct nobj *o, unsigned int i)
{
	int rc;

	backend_set_cpu((int)lb_rng_below(&rng, MAX_SLOTS + 2) - 1);
	o->t.be = i;
	rc = lb_cpubatch_add(BE[i].pc, o, &o->t.node,
			     1 + lb_rng_below(&rng, 4));
	if (rc >= 0) {
		o->adds[i]++;
		return rc;
	}
	cr_assert(eq(int, rc, -EAGAIN), "add to %u: %d: " LB_SEED_FMT, i, rc,
		  LB_SEED_ARGS(cur_seed));
	eagain++;
	return rc;
}

static void readd(struct nobj *o, enum readd_from where)
{
	if (!o->readd_pending || o->from != where)
		return;
	o->readd_pending = 0;
	o->hops--;
	nadd(o, o->route[o->hops]);
}

static void nested_commit(struct backend_fixture *f, struct test_backend *be,
			  void **objs, unsigned int n)
{
	unsigned int k;

	(void)f;
	for (k = 0; k < n; k++) {
		struct nobj *o = objs[k];

		o->commits[be->idx]++;
		if (o->hops)
			o->readd_pending = 1;
		readd(o, FROM_COMMIT);
	}
}

/* Re-adds, and now and then a drain of another instance. */
static void nested_after(struct backend_fixture *f, struct test_backend *be,
			 void **objs, unsigned int n)
{
	unsigned int k, j;
	int rc;

	(void)f;
	for (k = 0; k < n; k++)
		readd(objs[k], FROM_AFTER);
	if (lb_rng_below(&rng, 4))
		return;
	j = lb_rng_below(&rng, NINST);
	rc = lb_rng_below(&rng, 2) ? lb_cpubatch_drain_local(BE[j].pc) :
				     lb_cpubatch_drain_all(BE[j].pc);
	if (j == be->idx)
		cr_assert(eq(int, rc, -EDEADLK), "own instance: " LB_SEED_FMT,
			  LB_SEED_ARGS(cur_seed));
	nested_drains++;
	if (rc == -EDEADLK)
		edeadlk++;
	else if (rc == -ELOOP)
		eloop++;
	else
		cr_assert(ge(int, rc, 0), "drain of %u from %u's after: %d: "
			  LB_SEED_FMT, j, be->idx, rc, LB_SEED_ARGS(cur_seed));
}

/* The fixture's put, then a re-add: the object is free to go again. */
static void nested_put(void *obj)
{
	backend_put(obj);
	readd(obj, FROM_PUT);
}

/*
 * The fixture's back-end with two additions: lock() asserts no other
 * back-end lock is held (the rule under test; the fixture checks each
 * lock on its own), and put() re-adds.
 */
static struct lb_backend_ops nested_ops(void)
{
	struct lb_backend_ops ops = backend_ops;

	ops.lock = nested_lock;
	ops.unlock = nested_unlock;
	ops.put = nested_put;
	ops.refcount = NULL;
	return ops;
}

/* The model, then the stats identities of every instance. */
static void check(unsigned int op)
{
	struct lb_cpubatch_slot_stats st[MAX_SLOTS];
	struct lb_cpubatch_stats t;
	unsigned int i, k, s, c;

	cr_assert(eq(int, locks_held, 0));
	for (k = 0; k < NOBJ; k++) {
		struct nobj *o = &OB[k];

		cr_assert(not(o->readd_pending), "object %u: " LB_SEED_FMT, k,
			  LB_SEED_ARGS(cur_seed));
		for (i = 0; i < NINST; i++) {
			/* At most the one add still waiting in a batch. */
			unsigned int waiting = o->adds[i] - o->commits[i];

			cr_assert(le(u32, o->commits[i], o->adds[i]),
				  "object %u back-end %u op %u: " LB_SEED_FMT,
				  k, i, op, LB_SEED_ARGS(cur_seed));
			cr_assert(le(u32, waiting, 1));
			cr_assert(backend_batch_refs(&o->t) >= (long)waiting);
		}
	}
	for (i = 0; i < NINST; i++) {
		uint64_t flushes = 0;

		cr_assert(eq(int, lb_cpubatch_stats(BE[i].pc, &t, st, MAX_SLOTS),
			     (int)BE[i].nr_slots));
		cr_assert(eq(u64, t.flushes_inflight, 0),
			  "instance %u op %u: " LB_SEED_FMT, i, op,
			  LB_SEED_ARGS(cur_seed));
		for (s = 0; s < BE[i].nr_slots; s++) {
			cr_assert(eq(u64, st[s].adds,
				     st[s].objs_flushed + st[s].nr_cached),
				  "instance %u slot %u op %u: " LB_SEED_FMT, i,
				  s, op, LB_SEED_ARGS(cur_seed));
			cr_assert(eq(u64, st[s].objs_flushed,
				     st[s].objs_committed));
			for (c = 0; c < LB_FLUSH_NR; c++)
				flushes += st[s].flushes[c];
		}
		cr_assert(eq(u64, flushes, t.total.flushes_committed));
		cr_assert(eq(u64, t.drain.drain_all_calls,
			     t.drain.drain_all_passes +
			     t.drain.drain_all_coalesced));
		/* One back-end per instance: one lock hold per flush. */
		cr_assert(eq(u64, t.backend_locks, flushes),
			  "instance %u op %u: " LB_SEED_FMT, i, op,
			  LB_SEED_ARGS(cur_seed));
	}
}

static void setup(void)
{
	static struct lb_backend_ops ops;
	unsigned int i, k, h;

	cr_assert(eq(int, backend_init(), 0));
	backend_fixture.one_thread = true;
	backend_fixture.on_commit = nested_commit;
	backend_fixture.on_after = nested_after;
	ops = nested_ops();
	for (i = 0; i < NINST; i++) {
		struct lb_cpubatch_conf conf = backend_conf(
			1 + lb_rng_below(&rng, MAX_SLOTS), LB_CPUBATCH_WEIGHTED,
			1 + lb_rng_below(&rng, 6), 2 + lb_rng_below(&rng, 12),
			&ops);

		conf.backend = &backend_fixture.be[i];
		BE[i] = (struct ninst){ .nr_slots = conf.nr_slots };
		cr_assert(eq(int, lb_cpubatch_create(&BE[i].pc, &conf), 0));
	}
	memset(OB, 0, sizeof(OB));
	for (k = 0; k < NOBJ; k++) {
		backend_obj_init(&OB[k].t, k);
		OB[k].from = (enum readd_from)lb_rng_below(&rng, FROM_NR);
		for (h = 0; h < MAX_HOPS; h++)
			OB[k].route[h] = lb_rng_below(&rng, NINST);
	}
}

/* Drain until no batch holds anything: re-adds may refill drained ones. */
static void drain_everything(void)
{
	struct lb_cpubatch_stats t;
	unsigned int i, round, busy = 1;

	for (round = 0; busy && round < 4 * MAX_HOPS; round++) {
		busy = 0;
		for (i = 0; i < NINST; i++) {
			cr_assert(ge(int, lb_cpubatch_drain_all(BE[i].pc), 0));
			lb_cpubatch_stats(BE[i].pc, &t, NULL, 0);
		}
		for (i = 0; i < NINST; i++) {
			lb_cpubatch_stats(BE[i].pc, &t, NULL, 0);
			busy |= t.total.nr_cached != 0;
		}
	}
	cr_assert(not(busy), "batches keep refilling: " LB_SEED_FMT,
		  LB_SEED_ARGS(cur_seed));
}

static void run_seed(uint64_t seed)
{
	unsigned int op, i, k;
	struct nobj *o;
	int rc;

	cur_seed = seed;
	lb_rng_seed(&rng, seed);
	setup();
	for (op = 0; op < OPS_PER_SEED; op++) {
		i = lb_rng_below(&rng, NINST);
		o = &OB[lb_rng_below(&rng, NOBJ)];
		switch (lb_rng_below(&rng, 8)) {
		case 0:
			backend_set_cpu((int)lb_rng_below(&rng, MAX_SLOTS));
			cr_assert(ge(int, lb_cpubatch_drain_local(BE[i].pc), 0));
			break;
		case 1:
			rc = lb_cpubatch_drain_obj(BE[i].pc, &o->t.node);
			cr_assert(rc >= 0 || rc == -EXDEV, "drain_obj: %d", rc);
			break;
		case 2:
			cr_assert(ge(int, lb_cpubatch_drain_all(BE[i].pc), 0));
			break;
		default:
			if (o->t.node.slot)
				break;	/* cached: the add would be -EEXIST */
			o->hops = lb_rng_below(&rng, MAX_HOPS + 1);
			nadd(o, i);
			break;
		}
		check(op);
	}
	drain_everything();
	check(op);
	for (k = 0; k < NOBJ; k++) {
		for (i = 0; i < NINST; i++)
			cr_assert(eq(u32, OB[k].commits[i], OB[k].adds[i]),
				  "object %u back-end %u: " LB_SEED_FMT, k, i,
				  LB_SEED_ARGS(seed));
		cr_assert(eq(long, backend_batch_refs(&OB[k].t), 0));
	}
	for (i = 0; i < NINST; i++)
		cr_assert(eq(int, lb_cpubatch_destroy(BE[i].pc), 0), "destroy %u", i);
	cr_assert(eq(ulong, backend_teardown(), 0), "%s: " LB_SEED_FMT,
		  backend_fixture.first_error, LB_SEED_ARGS(seed));
}

Test(prop_cpubatch_nested, callbacks_add_to_other_instances, .timeout = 60)
{
	lb_each_seed(seeds, sizeof(seeds) / sizeof(seeds[0]), run_seed);
	/* The bounds were reached, so their paths ran too. */
	cr_log_info("eagain %lu edeadlk %lu eloop %lu nested drains %lu",
		    eagain, edeadlk, eloop, nested_drains);
	cr_assert(gt(u64, nested_drains, 0));
}
