// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lb_lru's ready-made operation batches (lb_lru_queue()): activation to
 * the head of the active list, rotation to the tail of a list, deletion,
 * each applied at the flush under the LRU lock and charged to the "op"
 * path; operations on an isolated object are dropped, as the kernel's
 * move functions skip a folio off the LRU.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include <lockbatch/lru.h>

#define NOBJ 8

struct obj {
	unsigned int id;
	struct lb_lru_node node;
};

static struct obj O[NOBJ];
static struct lb_lru *lru;
static struct lb_cpubatch *pc;

static int cpu0(void *arg)
{
	(void)arg;
	return 0;
}

static void setup(void)
{
	struct lb_lru_conf conf = LB_LRU_CONF_INIT(struct obj, node);
	struct lb_cpubatch_conf bconf = LB_CPUBATCH_CONF_INIT(NULL, NULL);
	unsigned int i;

	for (i = 0; i < NOBJ; i++) {
		O[i].id = i;
		cr_assert(eq(int, lb_lru_node_init(&O[i].node, 1), 0));
	}
	cr_assert(eq(int, lb_lru_create(&lru, &conf), 0));
	cr_assert(eq(int, lb_lru_cpubatch_conf(lru, &bconf), 0));
	bconf.nr_slots = 2;
	bconf.cpu_fn = cpu0;
	cr_assert(eq(int, lb_cpubatch_create(&pc, &bconf), 0));
	for (i = 0; i < NOBJ; i++)
		cr_assert(ge(int, lb_lru_add(pc, lru, &O[i]), 0));
	cr_assert(ge(int, lb_cpubatch_drain_all(pc), 0));
}

static void teardown(void)
{
	struct cds_list_head iso;
	unsigned int l;

	cr_expect(ge(int, lb_cpubatch_drain_all(pc), 0));
	for (l = 0; l < LB_LRU_NR_LISTS; l++) {
		CDS_INIT_LIST_HEAD(&iso);
		lb_lru_isolate(lru, (enum lb_lru_list)l, &iso, NOBJ, NULL, NULL);
	}
	cr_expect(eq(int, lb_cpubatch_destroy(pc), 0));
	cr_expect(eq(int, lb_lru_destroy(lru), 0));
}

TestSuite(lru_op, .init = setup, .fini = teardown, .timeout = 10);

struct scan_rec {
	unsigned int ids[NOBJ];
	unsigned int n;
};

/* Record and leave in place: the scan walks from the tail. */
static enum lb_lru_verdict record(void *obj, void *arg)
{
	struct scan_rec *r = arg;

	if (r->n < NOBJ)
		r->ids[r->n++] = ((struct obj *)obj)->id;
	return LB_LRU_SKIP;
}

/* The ids of list @l from the head. */
static unsigned int ids(enum lb_lru_list l, unsigned int *out)
{
	struct scan_rec r = { .n = 0 };
	struct cds_list_head iso;
	unsigned int i;

	CDS_INIT_LIST_HEAD(&iso);
	cr_assert(eq(int, lb_lru_isolate(lru, l, &iso, NOBJ + 1, record, &r), 0));
	for (i = 0; i < r.n; i++)
		out[i] = r.ids[r.n - 1 - i];
	return r.n;
}

static void expect(enum lb_lru_list l, const unsigned int *want, unsigned int nr)
{
	unsigned int got[NOBJ], n = ids(l, got), i;

	cr_assert(eq(uint, n, nr), "list %d holds %u, want %u", l, n, nr);
	for (i = 0; i < nr; i++)
		cr_assert(eq(uint, got[i], want[i]), "list %d position %u", l, i);
}

Test(lru_op, activate_rotate_delete)
{
	unsigned int act[] = { 5, 2 }, inact[] = { 6, 4, 3, 1, 0, 7 };
	unsigned int inact2[] = { 6, 3, 1, 0, 7 };
	struct lb_lru_stats st;

	/* Added 0..7: inactive reads 7 6 5 4 3 2 1 0 from the head. */
	cr_assert(eq(int, lb_lru_queue(pc, lru, &O[2], LB_OP_MOVE), LB_OP_QUEUED));
	cr_assert(eq(int, lb_lru_queue(pc, lru, &O[5], LB_OP_MOVE), LB_OP_QUEUED));
	cr_assert(eq(int, lb_lru_queue(pc, lru, &O[7], LB_OP_ROTATE), LB_OP_QUEUED));
	cr_assert(eq(int, lb_cpubatch_drain_local(pc), 3));
	expect(LB_LRU_ACTIVE, act, 2);
	expect(LB_LRU_INACTIVE, inact, 6);
	cr_assert(eq(int, lb_lru_queue(pc, lru, &O[4], LB_OP_DEL), LB_OP_QUEUED));
	cr_assert(eq(int, lb_cpubatch_drain_local(pc), 1));
	expect(LB_LRU_INACTIVE, inact2, 5);
	cr_assert(eq(int, lb_lru_stats(lru, &st), 0));
	cr_assert(ge(u64, st.path[LB_LRU_PATH_OP].acquisitions, 3));
	cr_assert(eq(u64, st.errors, 0));
	/* Deleted and off the LRU: it can be added again. */
	cr_assert(ge(int, lb_lru_add(pc, lru, &O[4]), 0));
}

Test(lru_op, an_isolated_object_is_skipped)
{
	struct cds_list_head iso;
	unsigned int inact[] = { 7, 6, 5, 4, 3, 2, 1 };
	struct lb_lru_stats st;

	cr_assert(eq(int, lb_lru_queue(pc, lru, &O[0], LB_OP_MOVE), LB_OP_QUEUED));
	/* Reclaim takes 0 (the tail) off the LRU before the flush. */
	CDS_INIT_LIST_HEAD(&iso);
	cr_assert(eq(int, lb_lru_isolate(lru, LB_LRU_INACTIVE, &iso, 1, NULL, NULL), 1));
	cr_assert(eq(int, lb_cpubatch_drain_local(pc), 1));
	expect(LB_LRU_ACTIVE, NULL, 0);
	expect(LB_LRU_INACTIVE, inact, 7);
	cr_assert(eq(int, lb_lru_stats(lru, &st), 0));
	cr_assert(eq(u64, st.errors, 0));
	lb_lru_putback(lru, &iso, 0);
}

Test(lru_op, delete_of_a_waiting_add_cancels)
{
	struct obj extra = { .id = 99 };

	cr_assert(eq(int, lb_lru_node_init(&extra.node, 1), 0));
	cr_assert(eq(int, lb_lru_add(pc, lru, &extra), 0));
	cr_assert(eq(int, lb_lru_queue(pc, lru, &extra, LB_OP_DEL), LB_OP_CANCELLED));
	cr_assert(eq(int, lb_cpubatch_drain_all(pc), 0));
	cr_assert(eq(uint, extra.node.flags & LB_LRU_NODE_ON_LRU, 0));
}

Test(lru_op, bad_arguments)
{
	cr_assert(eq(int, lb_lru_queue(NULL, lru, &O[0], LB_OP_MOVE), -EINVAL));
	cr_assert(eq(int, lb_lru_queue(pc, NULL, &O[0], LB_OP_MOVE), -EINVAL));
	cr_assert(eq(int, lb_lru_queue(pc, lru, NULL, LB_OP_MOVE), -EINVAL));
	cr_assert(eq(int, lb_lru_queue(pc, lru, &O[0], LB_OP_NR), -EINVAL));
	cr_assert(eq(str, (char *)lb_lru_path_name(LB_LRU_PATH_OP), "op"));
}
