// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lb_lru: commit order (splice and per-object), a splice's objects listed
 * only under the lock, isolate verdicts, putback
 * with release and the post-unlock phase, del, adds through lb_cpubatch, path
 * accounting and every error path.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <stddef.h>
#include <string.h>

#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include <ck_spinlock.h>

#include <lockbatch/lru.h>

#define NOBJ 64

struct obj {
	unsigned int id;
	struct lb_lru_node node;
	int refs;
	int secondary_calls;
	int secondary_saw_lock_held;
	int referenced;
};

static struct obj objs[NOBJ];
static struct lb_lru *cur_lru;

static void setup_objs(void)
{
	unsigned int i;

	memset(objs, 0, sizeof(objs));
	for (i = 0; i < NOBJ; i++) {
		objs[i].id = i;
		cr_assert(eq(int, lb_lru_node_init(&objs[i].node, 1 + i % 3), 0));
	}
}

static bool op_release(void *o, void *arg)
{
	struct obj *ob = o;

	(void)arg;
	return --ob->refs == 0;
}

/* Secondary work notes whether the LRU lock (a spinlock here) was held. */
static void op_secondary(void *o, void *arg)
{
	struct obj *ob = o;

	(void)arg;
	ob->secondary_calls++;
	ob->secondary_saw_lock_held =
		lb_lock_is_held(lb_lru_lock(cur_lru)) == 1;
}

static const struct lb_lru_ops test_ops = {
	.release = op_release,
	.secondary = op_secondary,
};

static struct lb_lru *mk(unsigned int flags)
{
	struct lb_lru_conf conf = {
		.lock_kind = LB_LOCK_SPIN,
		.name = "test-lru",
		.node_offset = offsetof(struct obj, node),
		.flags = flags,
		.ops = &test_ops,
	};
	struct lb_lru *lru;

	cr_assert(eq(int, lb_lru_create(&lru, &conf), 0));
	cur_lru = lru;
	return lru;
}

/* Ids on a private list, in list order. */
static unsigned int ids_of(struct lb_lru *lru, struct cds_list_head *list,
			   unsigned int *ids)
{
	struct cds_list_head *pos;
	unsigned int n = 0;

	cds_list_for_each(pos, list) {
		struct lb_lru_node *nd = cds_list_entry(pos, struct lb_lru_node,
							link);
		ids[n++] = ((struct obj *)lb_lru_obj_of(lru, nd))->id;
	}
	return n;
}

/* Empty @list of the LRU, tail first, and return its ids (coldest first). */
static unsigned int take_all(struct lb_lru *lru, enum lb_lru_list list,
			     unsigned int *ids)
{
	struct cds_list_head l;

	CDS_INIT_LIST_HEAD(&l);
	lb_lru_isolate(lru, list, &l, NOBJ, NULL, NULL);
	return ids_of(lru, &l, ids);
}


Test(lru, create_rejects_bad_conf)
{
	struct lb_lru_conf conf = { .lock_kind = LB_LOCK_SPIN };
	struct lb_lru *lru = (void *)0x1;

	cr_assert(eq(int, lb_lru_create(NULL, &conf), -EINVAL));
	cr_assert(eq(int, lb_lru_create(&lru, NULL), -EINVAL));
	conf.flags = 0x80;
	cr_assert(eq(int, lb_lru_create(&lru, &conf), -EINVAL));
	conf.flags = LB_LRU_NO_PREFETCH | LB_LRU_PREFETCH_READ;
	cr_assert(eq(int, lb_lru_create(&lru, &conf), -EINVAL));
	conf.flags = 0;
	conf.lock_kind = (enum lb_lock_kind)7;
	cr_assert(eq(int, lb_lru_create(&lru, &conf), -EINVAL));
	cr_assert(eq(ptr, lru, (void *)0x1), "*lru set on failure");
	cr_assert(eq(int, lb_lru_destroy(NULL), -EINVAL));
}

/* Every lock kind drives the whole API: commit, isolate, putback, del. */
Test(lru, every_lock_kind)
{
	unsigned int k, i, ids[NOBJ];

	for (k = 0; k < LB_LOCK_NR_KINDS; k++) {
		struct lb_lru_conf conf = {
			.lock_kind = (enum lb_lock_kind)k, .name = "kind-lru",
			.node_offset = offsetof(struct obj, node),
			.flags = LB_LRU_HOLD_TIME, .ops = &test_ops,
		};
		struct lb_lru *lru = NULL;
		struct cds_list_head l;
		struct lb_lru_stats st;
		void *v[8];

		setup_objs();
		cr_assert(eq(int, lb_lru_create(&lru, &conf), 0), "kind %u", k);
		cur_lru = lru;
		for (i = 0; i < 8; i++) {
			objs[i].refs = 2;
			v[i] = &objs[i];
		}
		cr_assert(eq(int, lb_lru_commit(lru, v, 8), 8));
		CDS_INIT_LIST_HEAD(&l);
		cr_assert(eq(int, lb_lru_isolate(lru, LB_LRU_INACTIVE, &l, 4,
						 NULL, NULL), 4));
		cr_assert(eq(int, lb_lru_putback(lru, &l, 0), 4));
		cr_assert(eq(int, lb_lru_del(lru, v, 2), 2));
		cr_assert(eq(int, lb_lru_stats(lru, &st), 0));
		cr_assert(eq(u64, st.nr[LB_LRU_INACTIVE], 6), "kind %u", k);
		cr_assert(eq(u64, lb_lru_lock(lru)->st.acquisitions,
			     st.path[LB_LRU_PATH_ADD].acquisitions +
			     st.path[LB_LRU_PATH_ISOLATE].acquisitions +
			     st.path[LB_LRU_PATH_PUTBACK].acquisitions +
			     st.path[LB_LRU_PATH_DEL].acquisitions + 1));
		cr_assert(eq(u32, take_all(lru, LB_LRU_INACTIVE, ids), 6));
		cr_assert(eq(int, lb_lru_destroy(lru), 0), "kind %u", k);
	}
}

Test(lru, bad_arguments_rejected)
{
	struct lb_lru *lru = mk(0);
	struct cds_list_head l;
	struct lb_cpubatch_conf pc = { 0 };
	struct lb_lru_stats st;

	CDS_INIT_LIST_HEAD(&l);
	cr_assert(eq(int, lb_lru_node_init(NULL, 1), -EINVAL));
	cr_assert(eq(int, lb_lru_node_init(&objs[0].node, 0), -EINVAL));
	cr_assert(eq(int, lb_lru_node_init(&objs[0].node,
					   LB_WBATCH_WEIGHT_MAX + 1), -EINVAL));
	cr_assert(eq(int, lb_lru_commit(NULL, NULL, 0), -EINVAL));
	cr_assert(eq(int, lb_lru_commit(lru, NULL, 1), -EINVAL));
	cr_assert(eq(int, lb_lru_isolate(lru, LB_LRU_NR_LISTS, &l, 1, NULL,
					 NULL), -EINVAL));
	cr_assert(eq(int, lb_lru_isolate(lru, LB_LRU_INACTIVE, NULL, 1, NULL,
					 NULL), -EINVAL));
	cr_assert(eq(int, lb_lru_putback(lru, &l, 0x2), -EINVAL));
	cr_assert(eq(int, lb_lru_putback(NULL, &l, 0), -EINVAL));
	cr_assert(eq(int, lb_lru_del(lru, NULL, 2), -EINVAL));
	cr_assert(eq(int, lb_lru_cpubatch_conf(lru, NULL), -EINVAL));
	cr_assert(eq(int, lb_lru_cpubatch_conf(NULL, &pc), -EINVAL));
	cr_assert(eq(int, lb_lru_stats(lru, NULL), -EINVAL));
	cr_assert(eq(int, lb_lru_add(NULL, lru, &objs[0]), -EINVAL));
	cr_assert(eq(ptr, lb_lru_lock(NULL), NULL));
	cr_assert(eq(str, (char *)lb_lru_path_name(LB_LRU_NR_PATHS), "invalid"));
	cr_assert(eq(int, lb_lru_stats(lru, &st), 0));
	cr_assert(eq(u64, st.path[LB_LRU_PATH_ADD].acquisitions, 0),
		  "calls rejected for bad input took the lock");
	cr_assert(eq(int, lb_lru_destroy(lru), 0));
}


/* Both commits leave the last object of a batch at the head (lru_add() order). */
static void check_commit_order(unsigned int flags)
{
	struct lb_lru *lru = mk(flags);
	unsigned int ids[NOBJ], i;
	struct lb_lru_stats st;
	void *v[5];

	setup_objs();
	for (i = 0; i < 5; i++)
		v[i] = &objs[i];
	cr_assert(eq(int, lb_lru_commit(lru, v, 5), 5));
	cr_assert(eq(int, lb_lru_commit(lru, v + 1, 1), 0), "double commit");
	cr_assert(eq(int, lb_lru_stats(lru, &st), 0));
	cr_assert(eq(u64, st.nr[LB_LRU_INACTIVE], 5));
	cr_assert(eq(u64, st.weight[LB_LRU_INACTIVE], 1 + 2 + 3 + 1 + 2));
	cr_assert(eq(u64, st.errors, 1));
	cr_assert(eq(u64, st.path[LB_LRU_PATH_ADD].acquisitions, 2));
	cr_assert(eq(u64, st.path[LB_LRU_PATH_ADD].objs, 5));
	cr_assert(eq(u32, take_all(lru, LB_LRU_INACTIVE, ids), 5));
	for (i = 0; i < 5; i++)
		cr_assert(eq(u32, ids[i], i), "tail first: oldest first");
	cr_assert(eq(int, lb_lru_destroy(lru), 0));
}

Test(lru, commit_splice_order)
{
	check_commit_order(0);
}

Test(lru, commit_each_order)
{
	check_commit_order(LB_LRU_NO_SPLICE);
}

struct committer {
	void *v[8];
	int done;
};

static void *commit_fn(void *arg)
{
	struct committer *c = arg;

	lb_lru_commit(cur_lru, c->v, 8);
	__atomic_store_n(&c->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * A splice commit links its objects into a private chain before it takes
 * the lock. Until the splice, lb_lru_del() under the lock must find them
 * off the LRU (a batch being flushed), not unlink them from that chain.
 */
Test(lru, splice_publishes_objects_under_the_lock, .timeout = 10)
{
	struct lb_lru *lru = mk(0);
	struct committer c = { .done = 0 };
	struct lb_lru_stats st;
	unsigned int i, ids[NOBJ];
	pthread_t th;

	setup_objs();
	for (i = 0; i < 8; i++)
		c.v[i] = &objs[i];
	lb_lock_acquire(lb_lru_lock(lru));
	cr_assert(eq(int, pthread_create(&th, NULL, commit_fn, &c), 0));
	/* Prepared: the last object went to the chain's head, before the 7th. */
	while (__atomic_load_n(&objs[6].node.link.prev, __ATOMIC_ACQUIRE) !=
	       &objs[7].node.link)
		sched_yield();
	for (i = 0; i < 8; i++)
		cr_assert(eq(u32, __atomic_load_n(&objs[i].node.flags,
						  __ATOMIC_RELAXED) &
			     LB_LRU_NODE_ON_LRU, 0), "object %u listed early", i);
	cr_assert(eq(int, __atomic_load_n(&c.done, __ATOMIC_ACQUIRE), 0));
	lb_lock_release(lb_lru_lock(lru));
	pthread_join(th, NULL);
	for (i = 0; i < 8; i++)
		cr_assert(eq(u32, objs[i].node.flags, LB_LRU_NODE_ON_LRU));
	cr_assert(eq(int, lb_lru_del(lru, c.v, 8), 8));
	cr_assert(eq(int, lb_lru_stats(lru, &st), 0));
	cr_assert(eq(u64, st.errors, 0));
	cr_assert(eq(u32, take_all(lru, LB_LRU_INACTIVE, ids), 0));
	cr_assert(eq(int, lb_lru_destroy(lru), 0));
}

Test(lru, destroy_refuses_nonempty)
{
	struct lb_lru *lru = mk(0);
	unsigned int ids[NOBJ];
	void *v = &objs[0];

	setup_objs();
	cr_assert(eq(int, lb_lru_commit(lru, &v, 1), 1));
	cr_assert(eq(int, lb_lru_destroy(lru), -EBUSY));
	cr_assert(eq(u32, take_all(lru, LB_LRU_INACTIVE, ids), 1));
	cr_assert(eq(int, lb_lru_destroy(lru), 0));
}

static enum lb_lru_verdict verdict_by_id(void *o, void *arg)
{
	struct obj *ob = o;

	(void)arg;
	switch (ob->id % 5) {
	case 0:
		return LB_LRU_ISOLATE;
	case 1:
		return LB_LRU_ROTATE;
	case 2:
		return LB_LRU_ACTIVATE;
	case 3:
		return LB_LRU_SKIP;
	default:
		return ob->id == 9 ? LB_LRU_STOP : LB_LRU_SKIP;
	}
}

/*
 * Ids 0..13 committed one by one; tail is 0. Scan stops at id 9. The
 * prefetch (@flags) must not change what the scan does.
 */
static void check_isolate_verdicts(unsigned int flags)
{
	struct lb_lru *lru = mk(flags);
	struct cds_list_head l;
	unsigned int ids[NOBJ], i, n;
	struct lb_lru_stats st;

	setup_objs();
	for (i = 0; i < 14; i++) {
		void *v = &objs[i];

		lb_lru_commit(lru, &v, 1);
	}
	CDS_INIT_LIST_HEAD(&l);
	cr_assert(eq(int, lb_lru_isolate(lru, LB_LRU_INACTIVE, &l, 10,
					 verdict_by_id, NULL), 2));
	n = ids_of(lru, &l, ids);
	cr_assert(eq(u32, n, 2));
	cr_assert(eq(u32, ids[0], 0));
	cr_assert(eq(u32, ids[1], 5));
	cr_assert(not(objs[0].node.flags & LB_LRU_NODE_ON_LRU));
	lb_lru_stats(lru, &st);
	cr_assert(eq(u64, st.scanned, 10));
	cr_assert(eq(u64, st.rotated, 2));	/* 1, 6 */
	cr_assert(eq(u64, st.activated, 2));	/* 2, 7 */
	cr_assert(eq(u64, st.nr[LB_LRU_ACTIVE], 2));
	cr_assert(eq(u64, st.nr[LB_LRU_INACTIVE], 10));
	cr_assert(eq(u64, st.weight[LB_LRU_ACTIVE],
		     objs[2].node.weight + objs[7].node.weight));
	/* Inactive, tail first: 3 4 8 9 (skipped/stopped), 10..13, 1 6 rotated. */
	n = take_all(lru, LB_LRU_INACTIVE, ids);
	{
		static const unsigned int want[] = { 3, 4, 8, 9, 10, 11, 12, 13,
						     1, 6 };
		cr_assert(eq(u32, n, 10));
		for (i = 0; i < n; i++)
			cr_assert(eq(u32, ids[i], want[i]), "at %u", i);
	}
	n = take_all(lru, LB_LRU_ACTIVE, ids);
	cr_assert(eq(u32, n, 2));
	cr_assert(eq(u32, ids[0], 2));
	cr_assert(eq(u32, ids[1], 7));
	cr_assert(eq(int, lb_lru_destroy(lru), 0));
}

Test(lru, isolate_verdicts)
{
	check_isolate_verdicts(0);
}

Test(lru, isolate_verdicts_read_prefetch)
{
	check_isolate_verdicts(LB_LRU_PREFETCH_READ);
}

Test(lru, isolate_verdicts_no_prefetch)
{
	check_isolate_verdicts(LB_LRU_NO_PREFETCH);
}

static enum lb_lru_verdict always_rotate(void *o, void *arg)
{
	(void)o;
	(*(unsigned int *)arg)++;
	return LB_LRU_ROTATE;
}

/* A scan that rotates everything sees each object once, then ends. */
Test(lru, isolate_budget_is_list_length)
{
	struct lb_lru *lru = mk(LB_LRU_NO_PREFETCH);
	struct cds_list_head l;
	unsigned int calls = 0, ids[NOBJ], i;
	void *v[8];

	setup_objs();
	for (i = 0; i < 8; i++)
		v[i] = &objs[i];
	lb_lru_commit(lru, v, 8);
	CDS_INIT_LIST_HEAD(&l);
	cr_assert(eq(int, lb_lru_isolate(lru, LB_LRU_INACTIVE, &l, 100,
					 always_rotate, &calls), 0));
	cr_assert(eq(u32, calls, 8));
	cr_assert(eq(int, lb_lru_isolate(lru, LB_LRU_INACTIVE, &l, 0, NULL,
					 NULL), 0));
	cr_assert(eq(u32, take_all(lru, LB_LRU_INACTIVE, ids), 8));
	for (i = 0; i < 8; i++)
		cr_assert(eq(u32, ids[i], i), "full rotation keeps order");
	cr_assert(eq(int, lb_lru_destroy(lru), 0));
}

static void check_putback(unsigned int pflags)
{
	struct lb_lru *lru = mk(LB_LRU_HOLD_TIME);
	struct cds_list_head l;
	struct lb_lru_stats st;
	unsigned int ids[NOBJ], i;
	void *v[6];

	setup_objs();
	for (i = 0; i < 6; i++) {
		v[i] = &objs[i];
		objs[i].refs = i % 2 ? 1 : 2;	/* odd ids: last ref on putback */
	}
	lb_lru_commit(lru, v, 6);
	CDS_INIT_LIST_HEAD(&l);
	cr_assert(eq(int, lb_lru_isolate(lru, LB_LRU_INACTIVE, &l, 6, NULL,
					 NULL), 6));
	cr_assert(eq(int, lb_lru_node_set_active(&objs[4].node, true), 0));
	cr_assert(eq(int, lb_lru_node_set_active(NULL, true), -EINVAL));
	cr_assert(eq(int, lb_lru_putback(lru, &l, pflags), 3));
	cr_assert(cds_list_empty(&l));
	for (i = 0; i < 6; i++) {
		cr_assert(eq(int, objs[i].secondary_calls, i % 2), "id %u", i);
		if (i % 2)
			cr_assert(eq(int, objs[i].secondary_saw_lock_held,
				     pflags ? 1 : 0), "id %u", i);
	}
	cr_assert(eq(int, lb_lru_node_set_active(&objs[4].node, false),
		     -EINVAL), "on the LRU: refused");
	lb_lru_stats(lru, &st);
	cr_assert(eq(u64, st.released, 3));
	cr_assert(eq(u64, st.nr[LB_LRU_ACTIVE], 1));
	cr_assert(eq(u64, st.path[LB_LRU_PATH_PUTBACK].acquisitions, 1));
	cr_assert(eq(u64, st.path[LB_LRU_PATH_PUTBACK].objs, 6));
	cr_assert(gt(u64, st.path[LB_LRU_PATH_PUTBACK].hold_ns_total, 0));
	/* Head insertion in list order: 0 then 2 at the head; tail is 0. */
	cr_assert(eq(u32, take_all(lru, LB_LRU_INACTIVE, ids), 2));
	cr_assert(eq(u32, ids[0], 0));
	cr_assert(eq(u32, ids[1], 2));
	cr_assert(eq(u32, take_all(lru, LB_LRU_ACTIVE, ids), 1));
	cr_assert(eq(u32, ids[0], 4));
	cr_assert(eq(int, lb_lru_putback(lru, &l, 0), 0), "empty list");
	cr_assert(eq(int, lb_lru_destroy(lru), 0));
}

Test(lru, putback_secondary_after_unlock)
{
	check_putback(0);
}

Test(lru, putback_secondary_locked)
{
	check_putback(LB_LRU_PUTBACK_LOCKED);
}

Test(lru, del_skips_objects_not_on_lru)
{
	struct lb_lru *lru = mk(0);
	struct lb_lru_stats st;
	void *v[4];
	unsigned int i, ids[NOBJ];

	setup_objs();
	for (i = 0; i < 4; i++)
		v[i] = &objs[i];
	lb_lru_commit(lru, v, 3);
	cr_assert(eq(int, lb_lru_del(lru, v, 4), 3));
	cr_assert(eq(int, lb_lru_del(lru, v, 0), 0));
	lb_lru_stats(lru, &st);
	cr_assert(eq(u64, st.errors, 1));
	cr_assert(eq(u64, st.nr[LB_LRU_INACTIVE], 0));
	cr_assert(eq(u64, st.weight[LB_LRU_INACTIVE], 0));
	cr_assert(eq(u32, take_all(lru, LB_LRU_INACTIVE, ids), 0));
	cr_assert(eq(int, lb_lru_destroy(lru), 0));
}

static int fixed_cpu(void *arg)
{
	return *(int *)arg;
}

/* Adds through lb_cpubatch: 31 single-unit adds flush one batch, one lock hold. */
Test(lru, add_through_cpubatch_one_hold_per_batch)
{
	struct lb_lru *lru = mk(0);
	struct lb_cpubatch_conf pconf = {
		.nr_slots = 2, .mode = LB_CPUBATCH_WEIGHTED, .max_weight = 64,
		.cpu_fn = fixed_cpu,
	};
	struct lb_cpubatch *pc;
	struct lb_lru *other;
	struct lb_lru_stats st;
	int cpu = 1, rc;
	unsigned int i, ids[NOBJ];

	setup_objs();
	pconf.cpu_arg = &cpu;
	cr_assert(eq(int, lb_lru_cpubatch_conf(lru, &pconf), 0));
	cr_assert(eq(int, lb_cpubatch_create(&pc, &pconf), 0));
	for (i = 0; i < 31; i++) {
		lb_lru_node_init(&objs[i].node, 1);
		rc = lb_lru_add(pc, lru, &objs[i]);
		cr_assert(eq(int, rc, i == 30 ? 1 : 0), "add %u", i);
	}
	cr_assert(eq(int, lb_lru_add(pc, lru, &objs[3]), 0), "re-add after commit");
	cr_assert(eq(int, lb_lru_add(pc, lru, &objs[3]), -EEXIST));
	other = mk(0);
	cr_assert(eq(int, lb_lru_add(pc, other, &objs[40]), -EINVAL),
		  "a batch set made for another LRU");
	cr_assert(eq(int, lb_lru_destroy(other), 0), "nothing reached the other LRU");
	lb_lru_stats(lru, &st);
	cr_assert(eq(u64, st.path[LB_LRU_PATH_ADD].acquisitions, 1));
	cr_assert(eq(u64, st.nr[LB_LRU_INACTIVE], 31));
	cr_assert(eq(int, lb_cpubatch_destroy(pc), 0));
	lb_lru_stats(lru, &st);
	cr_assert(eq(u64, st.errors, 1), "objs[3] committed twice is misuse");
	cr_assert(eq(u32, take_all(lru, LB_LRU_INACTIVE, ids), 31));
	cr_assert(eq(int, lb_lru_destroy(lru), 0));
}

/* Snapshots take the lock outside every path and say so. */
Test(lru, stats_snapshots_and_lock_totals_agree)
{
	struct lb_lru *lru = mk(LB_LRU_HOLD_TIME);
	struct lb_lock_stats ls;
	struct lb_lru_stats st;
	unsigned int ids[NOBJ];
	uint64_t paths = 0;
	void *v = &objs[0];
	int p;

	setup_objs();
	lb_lru_commit(lru, &v, 1);
	cr_assert(eq(int, lb_lru_stats(lru, &st), 0));
	cr_assert(eq(u64, st.snapshots, 0));
	take_all(lru, LB_LRU_INACTIVE, ids);
	cr_assert(eq(int, lb_lock_stats(lb_lru_lock(lru), &ls), 0));
	cr_assert(eq(int, lb_lru_stats(lru, &st), 0));
	cr_assert(eq(u64, st.snapshots, 1));
	for (p = 0; p < LB_LRU_NR_PATHS; p++) {
		paths += st.path[p].acquisitions;
		cr_assert(le(u64, st.path[p].holds_long,
			     st.path[p].acquisitions));
		cr_assert(le(u64, st.path[p].hold_ns_long,
			     st.path[p].hold_ns_total));
		cr_assert(le(u64, st.path[p].waits_long,
			     st.path[p].contentions));
		cr_assert(le(u64, st.path[p].wait_ns_long,
			     st.path[p].wait_ns_total));
		cr_assert(ge(u64, st.path[p].wait_ns_long,
			     st.path[p].waits_long * LB_LRU_HOLD_LONG_NS));
		cr_assert(le(u64, st.path[p].wait_ns_yield,
			     st.path[p].wait_ns_total));
	}
	cr_assert(eq(u64, paths + st.snapshots, ls.acquisitions));
	cr_assert(eq(int, lb_lru_destroy(lru), 0));
}

/* A scan that sleeps while holding the lock (tests only: @scan may not block). */
static enum lb_lru_verdict slow_scan(void *o, void *arg)
{
	struct timespec ts = { 0, 3 * 1000 * 1000 };

	(void)o;
	__atomic_store_n((int *)arg, 1, __ATOMIC_RELEASE);
	nanosleep(&ts, NULL);
	return LB_LRU_STOP;
}

static void *slow_isolate(void *arg)
{
	struct cds_list_head l;

	CDS_INIT_LIST_HEAD(&l);
	lb_lru_isolate(cur_lru, LB_LRU_INACTIVE, &l, 1, slow_scan, arg);
	return NULL;
}

/*
 * One round: a commit that waits on a holder sleeping in its scan. Returns
 * the LRU with both objects on it; the commit may still miss the hold if
 * this thread is preempted for the whole sleep (a loaded machine).
 */
static struct lb_lru *wait_on_sleeping_holder(struct lb_lru_stats *st)
{
	struct lb_lru *lru = mk(LB_LRU_HOLD_TIME);
	void *v[2] = { &objs[0], &objs[1] };
	pthread_t th;
	int in_scan = 0;

	setup_objs();
	lb_lru_commit(lru, v, 1);
	cr_assert(eq(int, pthread_create(&th, NULL, slow_isolate, &in_scan), 0));
	while (!__atomic_load_n(&in_scan, __ATOMIC_ACQUIRE))
		;
	cr_assert(eq(int, lb_lru_commit(lru, v + 1, 1), 1));
	pthread_join(th, NULL);
	lb_lru_stats(lru, st);
	return lru;
}

/*
 * A wait across a descheduled holder is counted long, on the waiter's
 * path; the spin lock's waiter yielded its CPU during it, and the path
 * carries exactly the lock's yielded time.
 */
Test(lru, long_wait_charged_to_waiting_path)
{
	struct lb_lock_stats ls;
	struct lb_lru_stats st;
	unsigned int ids[NOBJ];
	struct lb_lru *lru;
	int round;

	/* Retried only when the commit came after the hold ended. */
	for (round = 0;; round++) {
		lru = wait_on_sleeping_holder(&st);
		if (st.path[LB_LRU_PATH_ADD].contentions || round == 20)
			break;
		take_all(lru, LB_LRU_INACTIVE, ids);
		cr_assert(eq(int, lb_lru_destroy(lru), 0));
	}
	cr_assert(eq(u64, st.path[LB_LRU_PATH_ADD].contentions, 1));
	cr_assert(eq(u64, st.path[LB_LRU_PATH_ADD].waits_long, 1));
	cr_assert(ge(u64, st.path[LB_LRU_PATH_ADD].wait_ns_long,
		     LB_LRU_HOLD_LONG_NS));
	cr_assert(eq(u64, st.path[LB_LRU_PATH_ADD].wait_ns_long,
		     st.path[LB_LRU_PATH_ADD].wait_ns_total));
	cr_assert(eq(u64, st.path[LB_LRU_PATH_ISOLATE].waits_long, 0));
	cr_assert(eq(u64, st.path[LB_LRU_PATH_ISOLATE].holds_long, 1));
	cr_assert(eq(int, lb_lock_stats(lb_lru_lock(lru), &ls), 0));
	cr_assert(gt(u64, st.path[LB_LRU_PATH_ADD].wait_ns_yield, 0));
	cr_assert(le(u64, st.path[LB_LRU_PATH_ADD].wait_ns_yield,
		     st.path[LB_LRU_PATH_ADD].wait_ns_total));
	cr_assert(eq(u64, st.path[LB_LRU_PATH_ADD].wait_ns_yield,
		     ls.wait_ns_yield));
	cr_assert(eq(u32, take_all(lru, LB_LRU_INACTIVE, ids), 2));
	cr_assert(eq(int, lb_lru_destroy(lru), 0));
}
