// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Add-path cost of a node in a side table (lb_nodetab_add()) against an
 * embedded node (lb_cpubatch_add()), single thread, lock path with an
 * injected CPU id (what callgrind can run). Two loops per kind, each its
 * own function so callgrind attributes the calls by caller
 * (tests/bench/bench-nodetab-add.sh reads the inclusive cost per call):
 *
 * - *_noflush: 30 adds into a 31-entry batch, then a local drain (not
 *   counted): the add alone. For the table: lookup, an entry from the
 *   bucket's free list, the add.
 * - *_all: adds back to back, a flush every 31st: the amortised cost with
 *   the commit and, for the table, the release from @put.
 *
 * Run directly it prints wall-clock ns per add (noisy on shared machines:
 * compare rows of one run); `--callgrind` runs fewer iterations.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <lockbatch/lock.h>
#include <lockbatch/cpubatch.h>
#include <lockbatch/nodetab.h>

#define NOFLUSH_BATCH 30
#define ALL_OBJS (31 * 64)

struct item {
	struct lb_node node;	/* used by the embedded loops only */
};

static struct lb_lock lock;
static struct lb_nodetab *tab;

static void be_lock(void *b)
{
	lb_lock_acquire(&lock);
}

static void be_unlock(void *b)
{
	lb_lock_release(&lock);
}

static void be_commit(void *b, void **objs, unsigned int n)
{
}

/* The table's lifetime rule: the last callback releases. */
static void be_put_release(void *obj)
{
	lb_nodetab_release(tab, obj);
}

/* The embedded node's instance pays for a put callback too. */
static __attribute__((noinline)) void be_put(void *obj)
{
	__asm__ volatile("" : : "r"(obj) : "memory");
}

static const struct lb_backend_ops ops = {
	.lock = be_lock, .unlock = be_unlock, .commit = be_commit,
	.put = be_put,
};

static const struct lb_backend_ops table_ops = {
	.lock = be_lock, .unlock = be_unlock, .commit = be_commit,
	.put = be_put_release,
};

static int cpu_zero(void *arg)
{
	return 0;
}

static inline __attribute__((always_inline)) void
adds(struct lb_cpubatch *pc, struct item *it, unsigned int n, int table)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (table)
			lb_nodetab_add(tab, pc, &it[i], 1);
		else
			lb_cpubatch_add(pc, &it[i], &it[i].node, 1);
}

static __attribute__((noinline)) void loop_embedded_noflush(
	struct lb_cpubatch *pc, struct item *it, unsigned long rounds)
{
	while (rounds--) {
		adds(pc, it, NOFLUSH_BATCH, 0);
		lb_cpubatch_drain_local(pc);
	}
}

static __attribute__((noinline)) void loop_table_noflush(
	struct lb_cpubatch *pc, struct item *it, unsigned long rounds)
{
	while (rounds--) {
		adds(pc, it, NOFLUSH_BATCH, 1);
		lb_cpubatch_drain_local(pc);
	}
}

static __attribute__((noinline)) void loop_embedded_all(
	struct lb_cpubatch *pc, struct item *it, unsigned long rounds)
{
	while (rounds--)
		adds(pc, it, ALL_OBJS, 0);
}

static __attribute__((noinline)) void loop_table_all(
	struct lb_cpubatch *pc, struct item *it, unsigned long rounds)
{
	while (rounds--)
		adds(pc, it, ALL_OBJS, 1);
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		void (*loop)(struct lb_cpubatch *, struct item *, unsigned long);
		unsigned int per_round;
	} rows[] = {
		{ "embedded_noflush", loop_embedded_noflush, NOFLUSH_BATCH },
		{ "table_noflush", loop_table_noflush, NOFLUSH_BATCH },
		{ "embedded_all", loop_embedded_all, ALL_OBJS },
		{ "table_all", loop_table_all, ALL_OBJS },
	};
	struct lb_cpubatch_conf conf = {
		.mode = LB_CPUBATCH_WEIGHTED, .ops = &ops, .backend = &lock,
		.cpu_fn = cpu_zero,
	};
	struct lb_cpubatch *pcs[2];
	unsigned long n = 3000000;
	struct item *it = calloc(ALL_OBJS, sizeof(*it));
	struct lb_cpubatch *pc;
	double ns[4];
	unsigned int i;

	if (argc > 1 && !strcmp(argv[1], "--callgrind"))
		n = 60000;
	else if (argc > 1) {
		fprintf(stderr, "usage: %s [--callgrind]\n", argv[0]);
		return 2;
	}
	lb_lock_init(&lock, LB_LOCK_SPIN, "backend");
	if (!it || lb_nodetab_create(&tab, 0) ||
	    lb_cpubatch_create(&pcs[0], &conf))
		return 2;
	conf.ops = &table_ops;
	if (lb_cpubatch_create(&pcs[1], &conf))
		return 2;
	/* Interleaved: each row runs once in turn. */
	for (i = 0; i < 4; i++) {
		double t0 = now_ns();

		pc = pcs[i & 1];	/* rows alternate embedded, table */
		rows[i].loop(pc, it, n / rows[i].per_round);
		lb_cpubatch_drain_all(pc);
		ns[i] = (now_ns() - t0) / (double)(n / rows[i].per_round *
						  rows[i].per_round);
	}
	for (i = 0; i < 4; i++)
		printf("%-18s %8.2f ns/add (wall clock, drains included)\n",
		       rows[i].name, ns[i]);
	lb_cpubatch_destroy(pcs[0]);
	lb_cpubatch_destroy(pcs[1]);
	lb_nodetab_destroy(tab);
	free(it);
	return 0;
}
