// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Batched referenced checks, measured: objects of 16 units (a 64 KiB
 * folio of 4 KiB pages), every unit referenced since the last check, as
 * after a sequential read. lb_refbits_test_and_clear() (one atomic
 * exchange and one flush per object) against
 * lb_refbits_test_and_clear_each() (an atomic bit-test-and-reset and a
 * flush per unit, as Linux 6.12 folio_referenced_one() clears and flushes
 * per PTE). The flush callback stands for the TLB flush: a short fixed
 * cost per call (a full fence and a counter).
 *
 * The objects are re-marked between rounds (not timed); a round checks
 * them all. The median round of each variant gives ns per object (thread
 * CPU time) and the flush calls are counted; the ratio is from this one
 * run. It never fails; it prints a table, or JSON with --json.
 *
 * Source of the idea: "mm: rmap: support batched checks of the references
 * for large folios" (Baolin Wang, 2025).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <lockbatch/refbits.h>

#define UNITS 16

typedef int (*check_fn)(struct lb_refbits *rb, lb_refbits_flush_fn flush,
			void *arg);

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void flush(void *arg, unsigned int first, unsigned int nr)
{
	(void)first;
	(void)nr;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	(*(uint64_t *)arg)++;
}

static double round_ns(struct lb_refbits *objs, size_t n, check_fn fn,
		       uint64_t *flushes, uint64_t *found)
{
	size_t i;
	unsigned int u;
	uint64_t t0;

	for (i = 0; i < n; i++)
		for (u = 0; u < UNITS; u++)
			lb_refbits_mark(&objs[i], u);
	t0 = now_ns();
	for (i = 0; i < n; i++)
		*found += (uint64_t)fn(&objs[i], flush, flushes);
	return (double)(now_ns() - t0) / (double)n;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	static const char *const names[2] = { "batched", "per-unit" };
	check_fn fns[2] = { lb_refbits_test_and_clear,
			    lb_refbits_test_and_clear_each };
	size_t n = 4096, i;
	unsigned int rounds = 51, r, k;
	double ns[2][101], med[2];
	uint64_t flushes[2] = { 0 }, found[2] = { 0 };
	struct lb_refbits *objs;
	int json = 0;

	for (i = 1; i < (size_t)argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = 1;
		else if (!strcmp(argv[i], "--rounds") && i + 1 < (size_t)argc)
			rounds = (unsigned int)strtoul(argv[++i], NULL, 0);
		else {
			fprintf(stderr, "usage: %s [--json] [--rounds N]\n", argv[0]);
			return 2;
		}
	}
	if (rounds < 1 || rounds > 101) {
		fprintf(stderr, "rounds: 1..101\n");
		return 2;
	}
	objs = calloc(n, sizeof(*objs));
	if (!objs)
		return 1;
	for (i = 0; i < n; i++)
		lb_refbits_init(&objs[i], UNITS);
	for (r = 0; r < rounds; r++)
		for (k = 0; k < 2; k++) {
			unsigned int v = (r + k) % 2;

			ns[v][r] = round_ns(objs, n, fns[v], &flushes[v],
					    &found[v]);
		}
	for (k = 0; k < 2; k++) {
		qsort(ns[k], rounds, sizeof(double), cmp_double);
		med[k] = ns[k][rounds / 2];
	}
	if (json) {
		printf("{\"bench\":\"refbits\",\"units\":%u,\"objects\":%zu,"
		       "\"rounds\":%u", UNITS, n, rounds);
		for (k = 0; k < 2; k++)
			printf(",\"%s\":{\"ns_per_object\":%.2f,"
			       "\"flushes_per_object\":%.2f,"
			       "\"referenced_per_object\":%.2f}",
			       k ? "per_unit" : "batched", med[k],
			       (double)flushes[k] / (double)(n * rounds),
			       (double)found[k] / (double)(n * rounds));
		printf(",\"speedup\":%.3f}\n", med[1] / med[0]);
	} else {
		printf("Referenced check, %u-unit objects, all referenced, "
		       "%zu objects x %u rounds\n", UNITS, n, rounds);
		printf("%-10s %12s %14s %14s\n", "variant", "ns/object",
		       "flushes/object", "found/object");
		for (k = 0; k < 2; k++)
			printf("%-10s %12.2f %14.2f %14.2f\n", names[k], med[k],
			       (double)flushes[k] / (double)(n * rounds),
			       (double)found[k] / (double)(n * rounds));
		printf("batched speedup: %.3fx\n", med[1] / med[0]);
	}
	free(objs);
	return 0;
}
