// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Lock fairness benchmark (case C21): every lb_lock kind under one thread
 * that re-acquires at once after release and n-1 threads that acquire in
 * a loop, for n = 2, 4 and 8 (8 > CPUs on the 2-CPU reference machine).
 * Prints each thread's share of acquisitions in fair shares (1.00 = its
 * 1/n), contended and raw (tests/common/lock_fair.h explains the shares;
 * thread 0 is the re-acquirer), Jain's fairness index of the contended
 * shares, the lowest contended share of the looping threads ("min") and
 * their lowest judged share ("judged", C21's measure; "-" when every
 * block was preempted), throughput and its ratio to the spin kind at the
 * same n, and the longest wait in ms.
 *
 * Usage: bench_lock_fair [--json] [--ms MS] [--threads N]
 *   --ms       run time of each kind and thread count (default 150)
 *   --threads  one thread count instead of 2, 4, 8
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lockbatch/lock.h>
#include "../common/lock_fair.h"

static const struct {
	enum lb_lock_kind kind;
	const char *name;
} kinds[] = {
	{ LB_LOCK_SPIN, "spin" },     { LB_LOCK_MUTEX, "mutex" },
	{ LB_LOCK_TICKET, "ticket" }, { LB_LOCK_MCS, "mcs" },
	{ LB_LOCK_CLH, "clh" },
};
#define NR_KINDS (sizeof(kinds) / sizeof(kinds[0]))

struct opts {
	int json;
	unsigned int ms;
	unsigned int threads[3];
	unsigned int nr_threads;
};

static int parse(int argc, char **argv, struct opts *o)
{
	int i;

	*o = (struct opts){ 0, 150, { 2, 4, 8 }, 3 };
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			o->json = 1;
		} else if (!strcmp(argv[i], "--ms") && i + 1 < argc) {
			o->ms = (unsigned int)strtoul(argv[++i], NULL, 10);
		} else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
			o->threads[0] = (unsigned int)strtoul(argv[++i], NULL, 10);
			o->nr_threads = 1;
		} else {
			return -EINVAL;
		}
	}
	if (!o->ms || o->threads[0] < 2 || o->threads[0] > LF_MAX_THREADS)
		return -EINVAL;
	return 0;
}

/* "a/b/c": each thread's contended (raw = 0) or raw share. */
static void shares(const struct lf_result *r, int raw, char *buf, size_t cap)
{
	size_t n = 0;
	unsigned int i;

	buf[0] = '\0';
	for (i = 0; i < r->nr_threads && n < cap; i++)
		n += (size_t)snprintf(buf + n, cap - n, "%s%.2f", i ? "/" : "",
				      raw ? lf_raw_share(r, i) : r->share[i]);
}

static int exclusive(const struct lf_result *r)
{
	return !r->overlaps && r->counter == r->total;
}

static void json_list(const char *key, const uint64_t *v, unsigned int n)
{
	unsigned int i;

	printf(",\"%s\":[", key);
	for (i = 0; i < n; i++)
		printf("%s%llu", i ? "," : "", (unsigned long long)v[i]);
	printf("]");
}

static void print_json_row(const char *kind, const struct lf_result *r,
			   double base, int first)
{
	printf("%s\n  {\"kind\":\"%s\",\"threads\":%u,\"jain\":%.4f,"
	       "\"min_share\":%.4f,\"min_judged_share\":%.4f,"
	       "\"throughput\":%.0f,\"throughput_vs_spin\":%.4f,"
	       "\"wait_ns_max\":%llu,\"exclusive\":%s",
	       first ? "" : ",", kind, r->nr_threads, r->jain, r->min_share,
	       r->min_judged, r->throughput,
	       base > 0 ? r->throughput / base : 0,
	       (unsigned long long)r->st.wait_ns_max,
	       exclusive(r) ? "true" : "false");
	json_list("acquisitions", r->count, r->nr_threads);
	json_list("overtaken", r->overtaken, r->nr_threads);
	json_list("judged", r->judged, r->nr_threads);
	json_list("judged_overtaken", r->judged_over, r->nr_threads);
	json_list("preempted", r->preempted, r->nr_threads);
	printf("}");
}

static void print_row(const struct opts *o, const char *kind,
		      const struct lf_result *r, double base, int first)
{
	char sh[LF_MAX_THREADS * 6], raw[LF_MAX_THREADS * 6], judged[8];

	if (o->json) {
		print_json_row(kind, r, base, first);
		return;
	}
	shares(r, 0, sh, sizeof(sh));
	shares(r, 1, raw, sizeof(raw));
	if (r->min_judged < 0)
		snprintf(judged, sizeof(judged), "-");
	else
		snprintf(judged, sizeof(judged), "%.2f", r->min_judged);
	printf("%-6s %3u %5.3f %5.2f %6s %7.3f %7.2f %9.2f  %-24s %s%s\n",
	       kind, r->nr_threads, r->jain, r->min_share, judged,
	       r->throughput / 1e6, base > 0 ? r->throughput / base : 0,
	       (double)r->st.wait_ns_max / 1e6, sh, raw,
	       exclusive(r) ? "" : "  MUTUAL EXCLUSION BROKEN");
}

int main(int argc, char **argv)
{
	struct lf_result r;
	struct opts o;
	double base;
	unsigned int t, k;
	int err, first = 1;

	if (parse(argc, argv, &o)) {
		fprintf(stderr, "usage: %s [--json] [--ms MS] [--threads N]\n",
			argv[0]);
		return 2;
	}
	if (o.json)
		printf("[");
	else
		printf("%-6s %3s %5s %5s %6s %7s %7s %9s  %-24s %s\n", "kind",
		       "thr", "jain", "min", "judged", "Macq/s", "vs spin",
		       "maxwaitms", "contended shares", "raw shares");
	for (t = 0; t < o.nr_threads; t++) {
		base = 0;
		for (k = 0; k < NR_KINDS; k++) {
			err = lf_run(kinds[k].kind, o.threads[t], o.ms, &r);
			if (err) {
				fprintf(stderr, "%s: %s\n", kinds[k].name,
					strerror(-err));
				return 1;
			}
			if (k == 0)
				base = r.throughput;
			print_row(&o, kinds[k].name, &r, base, first);
			first = 0;
		}
	}
	if (o.json)
		printf("\n]\n");
	return 0;
}
