// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * LRU order error of lb_cpubatch: how far from its exact position (the
 * add order) each object lands in the back-end (the commit order), with
 * the adds spread over S slots. Not a timing benchmark: the library runs
 * single-threaded with an injected CPU id, and the figures are exact for
 * the seeded sequence.
 *
 * error = commit position - add position: positive means late (objects
 * added after it were committed before it), negative early. The bounds
 * printed next to the measured worst cases are those documented in
 * <lockbatch/cpubatch_wait.h>: early at most (S - 1) * (N - 1); late
 * unbounded without drains, at most D with a drain_all every D adds.
 *
 * Rows: uniform (each add from a random slot), skewed (slot 0 adds one
 * object in 64: its batch waits while the others commit), and skewed with
 * a drain_all every D adds. --json prints one object per row.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lockbatch/lock.h>
#include <lockbatch/cpubatch.h>
#include "../common/prng.h"

#define NR_ADDS 200000u
#define ENTRIES 31u

struct item {
	struct lb_node node;
	unsigned int seq;		/* add position */
};

static struct item *items;
static unsigned int *pos;		/* commit position by add position */
static unsigned int committed;
static int cpu_next;

static void be_lock(void *b)
{
}

static void be_unlock(void *b)
{
}

static void be_commit(void *b, void **objs, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		pos[((struct item *)objs[i])->seq] = committed++;
}

static int backend;	/* one back-end: the commit needs no state */

static const struct lb_backend_ops ops = {
	.lock = be_lock, .unlock = be_unlock, .commit = be_commit,
};

static int cpu_of(void *arg)
{
	return cpu_next;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

struct row {
	const char *name;
	unsigned int slots;
	unsigned int skew;		/* slot 0 adds 1 in @skew (0: uniform) */
	unsigned int drain_every;	/* 0: never */
};

static void run(const struct row *row, int json)
{
	struct lb_cpubatch_conf conf = {
		.nr_slots = row->slots, .mode = LB_CPUBATCH_WEIGHTED,
		.max_nr = ENTRIES, .ops = &ops, .backend = &backend,
		.cpu_fn = cpu_of,
	};
	int *err = malloc(NR_ADDS * sizeof(*err)), *abs_err;
	struct lb_cpubatch *pc;
	struct lb_rng r;
	unsigned int i;
	int early = 0, late = 0;

	abs_err = malloc(NR_ADDS * sizeof(*abs_err));
	if (!err || !abs_err || lb_cpubatch_create(&pc, &conf))
		exit(2);
	memset(items, 0, NR_ADDS * sizeof(*items));
	committed = 0;
	lb_rng_seed(&r, 0x10ad0123u + row->slots);
	for (i = 0; i < NR_ADDS; i++) {
		if (row->skew)
			cpu_next = lb_rng_below(&r, row->skew) ? 1 +
				   (int)lb_rng_below(&r, row->slots - 1) : 0;
		else
			cpu_next = (int)lb_rng_below(&r, row->slots);
		items[i].seq = i;
		lb_cpubatch_add(pc, &items[i], &items[i].node, 1);
		if (row->drain_every && (i + 1) % row->drain_every == 0)
			lb_cpubatch_drain_all(pc);
	}
	lb_cpubatch_drain_all(pc);
	for (i = 0; i < NR_ADDS; i++) {
		err[i] = (int)pos[i] - (int)i;
		abs_err[i] = abs(err[i]);
		early = err[i] < early ? err[i] : early;
		late = err[i] > late ? err[i] : late;
	}
	qsort(abs_err, NR_ADDS, sizeof(*abs_err), cmp_int);
	if (json)
		printf("{\"row\":\"%s\",\"slots\":%u,\"entries\":%u,"
		       "\"drain_every\":%u,\"worst_early\":%d,\"worst_late\":%d,"
		       "\"abs_p50\":%d,\"abs_p90\":%d,\"abs_p99\":%d,"
		       "\"bound_early\":%u}\n", row->name, row->slots, ENTRIES,
		       row->drain_every, -early, late, abs_err[NR_ADDS / 2],
		       abs_err[NR_ADDS / 10 * 9], abs_err[NR_ADDS / 100 * 99],
		       (row->slots - 1) * (ENTRIES - 1));
	else
		printf("%-14s %5u %7u %8d (%6u) %8d %6d %6d %6d\n", row->name,
		       row->slots, row->drain_every, -early,
		       (row->slots - 1) * (ENTRIES - 1), late,
		       abs_err[NR_ADDS / 2], abs_err[NR_ADDS / 10 * 9],
		       abs_err[NR_ADDS / 100 * 99]);
	lb_cpubatch_destroy(pc);
	free(err);
	free(abs_err);
}

int main(int argc, char **argv)
{
	static const struct row rows[] = {
		{ "uniform", 2, 0, 0 }, { "uniform", 4, 0, 0 },
		{ "uniform", 8, 0, 0 }, { "uniform", 16, 0, 0 },
		{ "skewed", 4, 64, 0 }, { "skewed", 16, 64, 0 },
		{ "skewed+drain", 4, 64, 1024 }, { "skewed+drain", 16, 64, 1024 },
	};
	int json = argc > 1 && !strcmp(argv[1], "--json");
	unsigned int i;

	items = malloc(NR_ADDS * sizeof(*items));
	pos = malloc(NR_ADDS * sizeof(*pos));
	if (!items || !pos)
		return 2;
	if (!json)
		printf("LRU order error, %u adds, batches of %u entries "
		       "(error = commit position - add position)\n"
		       "%-14s %5s %7s %17s %8s %6s %6s %6s\n", NR_ADDS, ENTRIES,
		       "row", "slots", "drain/D", "early (bound)", "late",
		       "|p50|", "|p90|", "|p99|");
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		run(&rows[i], json);
	free(items);
	free(pos);
	return 0;
}
