// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Single-thread cost of lb_cpubatch_add().
 *
 * Three loops, each its own function so callgrind can attribute the
 * calls to lb_cpubatch_add() by caller (tests/bench/bench-cpubatch-add.sh reads
 * the inclusive cost per call):
 *
 * - loop_noflush_injected: 30 adds of weight 1 into a 31-entry WEIGHTED
 *   batch, then a local drain (not counted: it is another function), so
 *   no counted add ever flushes. CPU id from an injected function.
 * - loop_noflush_cpu: the same with the library's own CPU-id source.
 * - loop_all_injected: weight-1 adds back to back, a flush every 31st:
 *   the amortised cost including commit under the back-end lock.
 * - loop_floor_all: the floor of that loop, floor_add(): a plain
 *   per-thread array append, and every 31st a plain list splice of the 31
 *   onto one list (no lock, no atomic instruction, no clock read).
 *
 * Run directly it prints wall-clock ns per add (noisy on shared machines:
 * compare rows of one run, never runs); --json prints the same as JSON.
 * `--callgrind` runs fewer iterations, for `make bench-cpubatch-add`.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <urcu/list.h>

#include <lockbatch/lock.h>
#include <lockbatch/cpubatch.h>

#define NOFLUSH_BATCH 30	/* adds that fit a 31-entry batch */
#define ALL_OBJS (31 * 64)	/* a multiple of 31: each pass ends flushed */

struct item {
	struct lb_node node;
};

/*
 * A minimal back-end of its own, not tests/common/backend.h: the checking
 * fixture's callbacks (atomic counters, order checks, the commit log)
 * would be part of what callgrind counts per add. The library's order of
 * callbacks is checked by every test that uses the fixture.
 */
static struct lb_lock lock;
static unsigned long committed;

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
	committed += n;
}

static const struct lb_backend_ops ops = {
	.lock = be_lock,
	.unlock = be_unlock,
	.commit = be_commit,
};

static int cpu_zero(void *arg)
{
	return 0;
}

static struct lb_cpubatch *make(int injected)
{
	struct lb_cpubatch_conf conf = {
		.mode = LB_CPUBATCH_WEIGHTED,
		.ops = &ops,
		.backend = &lock,
		.cpu_fn = injected ? cpu_zero : NULL,
	};
	struct lb_cpubatch *pc;

	if (lb_cpubatch_create(&pc, &conf)) {
		fprintf(stderr, "lb_cpubatch_create failed\n");
		exit(2);
	}
	return pc;
}

/* Inlined into each caller below, so each shows as its own caller. */
static inline __attribute__((always_inline)) void noflush(struct lb_cpubatch *pc,
							  struct item *it,
							  unsigned long rounds)
{
	unsigned long r;
	unsigned int i;

	for (r = 0; r < rounds; r++) {
		for (i = 0; i < NOFLUSH_BATCH; i++)
			lb_cpubatch_add(pc, &it[i], &it[i].node, 1);
		lb_cpubatch_drain_local(pc);
	}
}

/* Separate symbols so callgrind tells the CPU-id sources apart. */
static __attribute__((noinline)) void loop_noflush_injected(
	struct lb_cpubatch *pc, struct item *it, unsigned long rounds)
{
	noflush(pc, it, rounds);
}

static __attribute__((noinline)) void loop_noflush_cpu(
	struct lb_cpubatch *pc, struct item *it, unsigned long rounds)
{
	noflush(pc, it, rounds);
}

static __attribute__((noinline)) void loop_all_injected(
	struct lb_cpubatch *pc, struct item *it, unsigned long rounds)
{
	unsigned long r;
	unsigned int i;

	for (r = 0; r < rounds; r++)
		for (i = 0; i < ALL_OBJS; i++)
			lb_cpubatch_add(pc, &it[i], &it[i].node, 1);
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* The floor: a plain per-thread array append (object and node). */
static __thread struct {
	void *objs[NOFLUSH_BATCH];
	struct lb_node *nodes[NOFLUSH_BATCH];
	unsigned int nr;
} tl_array;

static __attribute__((noinline)) int array_add(void *obj, struct lb_node *n)
{
	tl_array.objs[tl_array.nr] = obj;
	tl_array.nodes[tl_array.nr++] = n;
	return 0;
}

/*
 * The floor of a flush every 31st: append to a per-thread array; the 31st
 * links the 31 objects into a chain and splices it onto one plain list,
 * as a flush commits a batch (lb_lru's splice commit), with no lock.
 */
#define FLOOR_BATCH 31

struct floor_item {
	struct cds_list_head link;
};

static CDS_LIST_HEAD(floor_list);
static __thread struct {
	struct floor_item *objs[FLOOR_BATCH];
	unsigned int nr;
} floor_batch;

static __attribute__((noinline)) int floor_add(struct floor_item *obj)
{
	struct cds_list_head chain;
	unsigned int i;

	floor_batch.objs[floor_batch.nr++] = obj;
	if (floor_batch.nr < FLOOR_BATCH)
		return 0;
	CDS_INIT_LIST_HEAD(&chain);
	for (i = 0; i < FLOOR_BATCH; i++)
		cds_list_add_tail(&floor_batch.objs[i]->link, &chain);
	cds_list_splice(&chain, &floor_list);
	committed += FLOOR_BATCH;
	floor_batch.nr = 0;
	return 0;
}

/* The objects go back to nobody's list between passes: reuse them. */
static __attribute__((noinline)) void loop_floor_all(struct floor_item *fi,
						     unsigned long rounds)
{
	unsigned long r;
	unsigned int i;

	for (r = 0; r < rounds; r++) {
		for (i = 0; i < ALL_OBJS; i++)
			floor_add(&fi[i]);
		CDS_INIT_LIST_HEAD(&floor_list);
	}
}

static double thread_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/*
 * All adds with a flush every 31st on the real CPU (the default path: rseq
 * where registered; and the lock path forced), against the floor: per
 * repetition every loop runs CHUNKS times interleaved and keeps its
 * fastest chunk (thread CPU time: time preempted by other jobs does not
 * count); the ratios are within a repetition, median and spread printed.
 */
#define FLOOR_REPS 5
#define FLOOR_CHUNKS 8

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void print_floor(struct item *it, unsigned long adds, int json)
{
	struct lb_cpubatch_conf conf = {
		.mode = LB_CPUBATCH_WEIGHTED, .ops = &ops, .backend = &lock,
	};
	struct floor_item *fi = calloc(ALL_OBJS, sizeof(*fi));
	unsigned long rounds = adds / ALL_OBJS / FLOOR_CHUNKS;
	double rs[FLOOR_REPS], lk[FLOOR_REPS], fl[FLOOR_REPS];
	double qr[FLOOR_REPS], ql[FLOOR_REPS];
	struct lb_cpubatch *pc[2];
	struct lb_cpubatch_stats st;
	int rep, ch, k;

	if (!fi)
		exit(2);
	if (!rounds)
		rounds = 1;
	if (lb_cpubatch_create(&pc[0], &conf))
		exit(2);
	conf.flags = LB_CPUBATCH_F_LOCK_PATH;
	if (lb_cpubatch_create(&pc[1], &conf))
		exit(2);
	lb_cpubatch_stats(pc[0], &st, NULL, 0);
	for (rep = 0; rep < FLOOR_REPS; rep++) {
		double best[3] = { 1e300, 1e300, 1e300 };

		for (ch = 0; ch < FLOOR_CHUNKS; ch++) {
			for (k = 0; k < 3; k++) {
				int v = (k + rep + ch) % 3;
				double t0 = thread_ns(), t;

				if (v == 2)
					loop_floor_all(fi, rounds);
				else
					loop_all_injected(pc[v], it, rounds);
				t = (thread_ns() - t0) / (double)(rounds * ALL_OBJS);
				if (t < best[v])
					best[v] = t;
			}
		}
		rs[rep] = best[0];
		lk[rep] = best[1];
		fl[rep] = best[2];
		qr[rep] = best[0] / best[2];
		ql[rep] = best[1] / best[2];
	}
	qsort(rs, FLOOR_REPS, sizeof(double), cmp_double);
	qsort(lk, FLOOR_REPS, sizeof(double), cmp_double);
	qsort(fl, FLOOR_REPS, sizeof(double), cmp_double);
	qsort(qr, FLOOR_REPS, sizeof(double), cmp_double);
	qsort(ql, FLOOR_REPS, sizeof(double), cmp_double);
	k = FLOOR_REPS / 2;
	if (json)
		printf("{\"floor\":\"array append, plain list splice per 31\","
		       "\"path\":\"%s\",\"floor_ns\":%.2f,\"default_ns\":%.2f,"
		       "\"lock_path_ns\":%.2f,\"default_over_floor\":%.3f,"
		       "\"default_over_floor_lo\":%.3f,\"default_over_floor_hi\":%.3f,"
		       "\"lock_path_over_floor\":%.3f}\n",
		       st.path == LB_CPU_PATH_RSEQ ? "rseq" : "lock", fl[k],
		       rs[k], lk[k], qr[k], qr[0], qr[FLOOR_REPS - 1], ql[k]);
	else
		printf("all adds, a flush every 31st (real CPU), ns/add, median of %d\n"
		       "(ratios within a repetition, [lowest, highest]); floor: array append\n"
		       "plus a plain list splice per 31, no lock, no atomics, no clock reads:\n"
		       "  floor %.2f, default path (%s) %.2f = %.2fx [%.2f, %.2f] the floor,\n"
		       "  lock path %.2f = %.2fx [%.2f, %.2f]\n", FLOOR_REPS,
		       fl[k], st.path == LB_CPU_PATH_RSEQ ? "rseq" : "lock",
		       rs[k], qr[k], qr[0], qr[FLOOR_REPS - 1], lk[k], ql[k],
		       ql[0], ql[FLOOR_REPS - 1]);
	lb_cpubatch_destroy(pc[0]);
	lb_cpubatch_destroy(pc[1]);
	free(fi);
}

/*
 * ns per no-flush add, the adds alone: each round of 30 adds is timed on
 * its own and the drain that empties the batch is left out. @pc NULL
 * times array_add(). The clock's cost is in every row alike.
 */
static double timed_noflush(struct lb_cpubatch *pc, struct item *it,
			    unsigned long rounds)
{
	double sum = 0;
	unsigned long r;
	unsigned int i;

	for (r = 0; r < rounds; r++) {
		double t0 = now_ns();

		for (i = 0; i < NOFLUSH_BATCH; i++)
			if (pc)
				lb_cpubatch_add(pc, &it[i], &it[i].node, 1);
			else
				array_add(&it[i], &it[i].node);
		sum += now_ns() - t0;
		if (pc)
			lb_cpubatch_drain_local(pc);
		else
			tl_array.nr = 0;
	}
	return sum / ((double)rounds * NOFLUSH_BATCH);
}

/* Real CPU: rseq path where available, and the lock path forced. */
static void print_paths(struct item *it, unsigned long adds, int json)
{
	struct lb_cpubatch_conf conf = {
		.mode = LB_CPUBATCH_WEIGHTED, .ops = &ops, .backend = &lock,
	};
	struct lb_cpubatch *rs, *lk;
	struct lb_cpubatch_stats st;
	unsigned long rounds = adds / NOFLUSH_BATCH;
	double arr = 1e300, r = 1e300, l = 1e300, x;
	int rep;

	conf.flags = LB_CPUBATCH_F_LOCK_PATH;
	if (lb_cpubatch_create(&lk, &conf))
		exit(2);
	conf.flags = 0;
	if (lb_cpubatch_create(&rs, &conf))
		exit(2);
	lb_cpubatch_stats(rs, &st, NULL, 0);
	for (rep = 0; rep < 3; rep++) {	/* best of 3, interleaved */
		x = timed_noflush(NULL, it, rounds);
		arr = x < arr ? x : arr;
		x = timed_noflush(rs, it, rounds);
		r = x < r ? x : r;
		x = timed_noflush(lk, it, rounds);
		l = x < l ? x : l;
	}
	if (json)
		printf("{\"path\":\"%s\",\"array_ns\":%.2f,\"default_ns\":%.2f,"
		       "\"lock_path_ns\":%.2f,\"default_vs_array\":%.2f}\n",
		       st.path == LB_CPU_PATH_RSEQ ? "rseq" : "lock", arr, r, l,
		       r / arr);
	else
		printf("no-flush adds alone (real CPU), ns/add: array append "
		       "%.2f, default path (%s) %.2f = %.2fx, lock path %.2f "
		       "= %.2fx\n", arr,
		       st.path == LB_CPU_PATH_RSEQ ? "rseq" : "lock", r,
		       r / arr, l, l / arr);
	lb_cpubatch_destroy(rs);
	lb_cpubatch_destroy(lk);
}

struct row {
	const char *name;
	void (*loop)(struct lb_cpubatch *, struct item *, unsigned long);
	int injected;
	unsigned int adds_per_round;
	double ns_per_add;
};

int main(int argc, char **argv)
{
	struct row rows[] = {
		{ "noflush_injected", loop_noflush_injected, 1, NOFLUSH_BATCH, 0 },
		{ "noflush_cpu", loop_noflush_cpu, 0, NOFLUSH_BATCH, 0 },
		{ "all_injected", loop_all_injected, 1, ALL_OBJS, 0 },
	};
	int json = 0, cg = 0, i, rep;
	unsigned long adds = 3000000;
	struct item *it = calloc(ALL_OBJS, sizeof(*it));

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			json = 1;
		} else if (!strcmp(argv[i], "--callgrind")) {
			cg = 1;
			adds = 60000;
		} else {
			fprintf(stderr, "usage: %s [--json] [--callgrind]\n",
				argv[0]);
			return 2;
		}
	}
	lb_lock_init(&lock, LB_LOCK_SPIN, "backend");
	for (i = 0; i < 3; i++) {
		struct lb_cpubatch *pc = make(rows[i].injected);
		unsigned long rounds = adds / rows[i].adds_per_round;
		double best = 0;

		/* Best of 3 against noise; one pass under callgrind. */
		for (rep = 0; rep < (cg ? 1 : 3); rep++) {
			double t0 = now_ns(), ns;

			rows[i].loop(pc, it, rounds);
			ns = (now_ns() - t0) / (rounds * rows[i].adds_per_round);
			if (rep == 0 || ns < best)
				best = ns;
		}
		rows[i].ns_per_add = best;
		lb_cpubatch_destroy(pc);
	}
	if (cg) {
		struct floor_item *fi = calloc(ALL_OBJS, sizeof(*fi));

		if (!fi)
			return 2;
		loop_floor_all(fi, adds / ALL_OBJS);
		free(fi);
		/* For the report: valgrind may not support rseq. */
		printf("cpu_source=%s\n", lb_cpu_source_name(lb_cpu_source()));
		return 0;
	}
	print_paths(it, adds, json);
	print_floor(it, adds, json);
	if (json) {
		printf("[");
		for (i = 0; i < 3; i++)
			printf("%s{\"loop\":\"%s\",\"ns_per_add\":%.2f}",
			       i ? "," : "", rows[i].name, rows[i].ns_per_add);
		printf("]\n");
	} else {
		printf("%-20s %12s   (CPU-id source: %s)\n", "loop", "ns/add",
		       lb_cpu_source_name(lb_cpu_source()));
		for (i = 0; i < 3; i++)
			printf("%-20s %12.2f\n", rows[i].name,
			       rows[i].ns_per_add);
	}
	free(it);
	return committed ? 0 : 1;
}
