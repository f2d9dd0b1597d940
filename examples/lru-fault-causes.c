// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lru-fault --causes: why the limit (the floor: a plain list per thread,
 * no lock, no atomics, no clock read per object) and weighted mode differ at
 * N threads, in CPU ns per op (one object added or released), split into
 * three parts that add up to the gap:
 *
 * - fast path: weighted against limit with 1 thread, where nothing is
 *   shared. What the per-CPU batch (add, flush, the batch's reference)
 *   and the list lock cost against the floor.
 * - lock hold growth: the time weighted spends holding the shared list
 *   lock per op at N threads less at 1 (holds where the holder was
 *   descheduled left out): lines of the list the holder finds in another
 *   CPU's cache.
 * - the rest of sharing: weighted's growth from 1 to N threads outside
 *   the lock hold (the lock word, objects and slots last written by
 *   another CPU, CPU spent waiting), less limit's own growth from 1 to N,
 *   which shares nothing and so measures the machine (caches, scheduler).
 *
 * CPU time, not wall time: on a shared machine the wall clock says more
 * about the other jobs than about this code.
 */
#include <stdio.h>

#include "lru-fault.h"

static double cpu_ns_per_op(const struct lf_result *r)
{
	return r->ops_per_cpu_sec > 0 ? 1e9 / r->ops_per_cpu_sec : 0;
}

/* Time the list lock was held, per op (both paths). */
static double hold_ns_per_op(const struct lf_result *r)
{
	double ops = 2.0 * (double)r->objects;
	uint64_t h = r->path[LF_PATH_ADD].hold_ns_total +
		     r->path[LF_PATH_RELEASE].hold_ns_total;

	return ops > 0 ? (double)h / ops : 0;
}

void lf_causes_split(const struct lf_result *w, const struct lf_result *l,
		     const struct lf_result *w1, const struct lf_result *l1,
		     struct lf_causes *out)
{
	double cw = cpu_ns_per_op(w), cl = cpu_ns_per_op(l);
	double cw1 = cpu_ns_per_op(w1), cl1 = cpu_ns_per_op(l1);

	out->valid = true;
	out->size = w->size;
	out->threads = w->threads;
	out->limit_vs_w_ops = w->ops_per_sec > 0 ?
			      l->ops_per_sec / w->ops_per_sec : 0;
	out->limit_vs_w_cpu = cl > 0 ? cw / cl : 0;
	out->gap_ns = cw - cl;
	out->fast_path_ns = cw1 - cl1;
	out->hold_ns_n = hold_ns_per_op(w);
	out->hold_ns_1 = hold_ns_per_op(w1);
	out->hold_growth_ns = out->hold_ns_n - out->hold_ns_1;
	out->sharing_rest_ns = (cw - cw1) - (cl - cl1) - out->hold_growth_ns;
}

void lf_causes_table(const struct lf_causes *c, unsigned int nr)
{
	unsigned int i;

	for (i = 0; i < nr; i++) {
		if (!c[i].valid)
			continue;
		printf("\nlimit/w at %u threads, %zuK: ops/s %.2fx, ops/cpu-s %.2fx; "
		       "CPU ns per op, w - limit = %.2f:\n"
		       "  fast path (1 thread, nothing shared)   %8.2f\n"
		       "  list lock hold growth (%.2f -> %.2f)  %8.2f\n"
		       "  rest of sharing (lines, waits)        %8.2f\n",
		       c[i].threads, c[i].size >> 10, c[i].limit_vs_w_ops,
		       c[i].limit_vs_w_cpu, c[i].gap_ns, c[i].fast_path_ns,
		       c[i].hold_ns_1, c[i].hold_ns_n, c[i].hold_growth_ns,
		       c[i].sharing_rest_ns);
	}
}

void lf_causes_json(const struct lf_causes *c, unsigned int nr)
{
	unsigned int i;
	const char *sep = "";

	printf(",\n{\"causes\":[");
	for (i = 0; i < nr; i++) {
		if (!c[i].valid)
			continue;
		printf("%s{\"size_bytes\":%zu,\"threads\":%u,"
		       "\"limit_ops_vs_weighted\":%.4f,"
		       "\"weighted_cpu_ns_vs_limit\":%.4f,\"gap_ns\":%.3f,"
		       "\"fast_path_ns\":%.3f,\"hold_ns_per_op\":%.3f,"
		       "\"hold_ns_per_op_1t\":%.3f,\"hold_growth_ns\":%.3f,"
		       "\"sharing_rest_ns\":%.3f}", sep, c[i].size, c[i].threads,
		       c[i].limit_vs_w_ops, c[i].limit_vs_w_cpu, c[i].gap_ns,
		       c[i].fast_path_ns, c[i].hold_ns_n, c[i].hold_ns_1,
		       c[i].hold_growth_ns, c[i].sharing_rest_ns);
		sep = ",";
	}
	printf("]}");
}
