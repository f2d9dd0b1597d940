// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lru-fault output: one table row per (size, mode) run, then the ratios
 * of weighted mode against the others measured in the same invocation;
 * or, with --json, one JSON object per run.
 */
#include <stdio.h>

#include "lru-fault.h"

static const char *const mode_names[LF_NR_MODES] = {
	[LF_BASELINE] = "baseline",
	[LF_BYPASS] = "bypass",
	[LF_WEIGHTED] = "weighted",
	[LF_LIMIT] = "limit",
};

const char *lf_mode_name(enum lf_mode mode)
{
	return (unsigned int)mode < LF_NR_MODES ? mode_names[mode] : "invalid";
}

static const char *lock_name(enum lb_lock_kind kind)
{
	return kind == LB_LOCK_MUTEX ? "mutex" : "spin";
}

/* 4096 -> "4K", 1048576 -> "1M", others in bytes. */
static const char *size_str(size_t size, char *buf, size_t len)
{
	if (size % (1u << 20) == 0)
		snprintf(buf, len, "%zuM", size >> 20);
	else if (size % 1024 == 0)
		snprintf(buf, len, "%zuK", size >> 10);
	else
		snprintf(buf, len, "%zu", size);
	return buf;
}

static const struct lf_result *find(const struct lf_result *res,
				    unsigned int nr, size_t size,
				    enum lf_mode mode)
{
	unsigned int i;

	for (i = 0; i < nr; i++)
		if (res[i].size == size && res[i].mode == mode)
			return &res[i];
	return NULL;
}

static uint64_t contended(const struct lf_result *r)
{
	return r->path[LF_PATH_ADD].contentions +
	       r->path[LF_PATH_RELEASE].contentions;
}

static uint64_t wait_total(const struct lf_result *r)
{
	return r->path[LF_PATH_ADD].wait_ns_total +
	       r->path[LF_PATH_RELEASE].wait_ns_total;
}

static uint64_t wait_max(const struct lf_result *r)
{
	uint64_t a = r->path[LF_PATH_ADD].wait_ns_max;
	uint64_t b = r->path[LF_PATH_RELEASE].wait_ns_max;

	return a > b ? a : b;
}

static uint64_t wait_avg(const struct lf_result *r)
{
	uint64_t c = contended(r);

	return c ? wait_total(r) / c : 0;
}

static double ratio(double a, double b)
{
	return b > 0 ? a / b : 0;
}

static double add_acq(const struct lf_result *r)
{
	return (double)r->path[LF_PATH_ADD].acquisitions;
}

/* One table cell: "-" when the mode compared against was not run. */
static void cell(bool have, double v, int prec, char unit)
{
	if (have)
		printf("  %11.*f%c", prec, v, unit);
	else
		printf("  %11s%c", "-", ' ');
}

static void print_ratios(const struct lf_result *res, unsigned int nr)
{
	const struct lf_result *w, *base, *byp, *lim;
	bool header = false;
	char sz[32];
	unsigned int i;

	for (i = 0; i < nr; i++) {
		if (res[i].mode != LF_WEIGHTED)
			continue;
		w = &res[i];
		base = find(res, nr, w->size, LF_BASELINE);
		byp = find(res, nr, w->size, LF_BYPASS);
		lim = find(res, nr, w->size, LF_LIMIT);
		if (!base && !byp && !lim)
			continue;
		if (!header) {
			printf("\nweighted against the other modes (same size, this run; - = not run):\n");
			printf("%6s  %-26s  %-26s  %s\n", "",
			       "ops/s: weighted / other",
			       "add acq: weighted / other", "ops/s:");
			printf("%6s  %12s  %12s  %12s  %12s  %14s\n", "size",
			       "baseline", "bypass", "baseline", "bypass",
			       "limit/weighted");
			header = true;
		}
		printf("%6s", size_str(w->size, sz, sizeof(sz)));
		cell(base, base ? ratio(w->ops_per_sec, base->ops_per_sec) : 0, 2, 'x');
		cell(byp, byp ? ratio(w->ops_per_sec, byp->ops_per_sec) : 0, 2, 'x');
		cell(base, base ? ratio(add_acq(w), add_acq(base)) : 0, 4, ' ');
		cell(byp, byp ? ratio(add_acq(w), add_acq(byp)) : 0, 4, ' ');
		cell(lim, lim ? ratio(lim->ops_per_sec, w->ops_per_sec) : 0, 2, 'x');
		printf("\n");
	}
}

void lf_report_table(const struct lf_conf *conf, const struct lf_result *res,
		     unsigned int nr)
{
	char sz[32], mem[32];
	unsigned int i;

	if (!nr)
		return;
	printf("lru-fault: %u threads x %s, %u loops, %s lock, %u slots (cpu id: %s)\n\n",
	       conf->threads, size_str(conf->mem, mem, sizeof(mem)),
	       conf->loops, lock_name(conf->lock_kind), res[0].nr_slots,
	       lb_cpu_source_name(res[0].cpu_src));
	printf("%6s %-9s %12s %12s %12s %11s %13s %10s %12s\n", "size", "mode",
	       "ops/s", "add acq", "release acq", "contended", "wait total",
	       "avg wait", "max wait");
	for (i = 0; i < nr; i++) {
		const struct lf_result *r = &res[i];

		printf("%6s %-9s %12.0f %12llu %12llu %11llu %11.1fms %8lluns %10lluus%s\n",
		       size_str(r->size, sz, sizeof(sz)), lf_mode_name(r->mode),
		       r->ops_per_sec,
		       (unsigned long long)r->path[LF_PATH_ADD].acquisitions,
		       (unsigned long long)r->path[LF_PATH_RELEASE].acquisitions,
		       (unsigned long long)contended(r),
		       (double)wait_total(r) / 1e6,
		       (unsigned long long)wait_avg(r),
		       (unsigned long long)(wait_max(r) / 1000),
		       r->verified ? "" : "  VERIFY FAILED");
	}
	print_ratios(res, nr);
}

static void json_ratios(const struct lf_result *w, const struct lf_result *res,
			unsigned int nr)
{
	const struct lf_result *base = find(res, nr, w->size, LF_BASELINE);
	const struct lf_result *byp = find(res, nr, w->size, LF_BYPASS);
	const struct lf_result *lim = find(res, nr, w->size, LF_LIMIT);

	if (base)
		printf(",\"ops_vs_baseline\":%.4f,\"add_acquisitions_vs_baseline\":%.6f",
		       ratio(w->ops_per_sec, base->ops_per_sec),
		       ratio(add_acq(w), add_acq(base)));
	if (byp)
		printf(",\"ops_vs_bypass\":%.4f,\"add_acquisitions_vs_bypass\":%.6f",
		       ratio(w->ops_per_sec, byp->ops_per_sec),
		       ratio(add_acq(w), add_acq(byp)));
	if (lim)
		printf(",\"limit_ops_vs_weighted\":%.4f",
		       ratio(lim->ops_per_sec, w->ops_per_sec));
}

static void json_path(const char *p, const struct lf_path_stats *s)
{
	printf(",\"%s_contended\":%llu,\"%s_wait_ns_total\":%llu,\"%s_wait_ns_max\":%llu",
	       p, (unsigned long long)s->contentions,
	       p, (unsigned long long)s->wait_ns_total,
	       p, (unsigned long long)s->wait_ns_max);
}

void lf_report_json(const struct lf_result *res, unsigned int nr)
{
	unsigned int i;

	printf("[");
	for (i = 0; i < nr; i++) {
		const struct lf_result *r = &res[i];

		printf("%s\n{\"size_bytes\":%zu,\"mode\":\"%s\",\"threads\":%u,"
		       "\"loops\":%u,\"mem_bytes\":%zu,\"lock\":\"%s\","
		       "\"slots\":%u,\"cpu_source\":\"%s\",\"objects\":%llu,"
		       "\"elapsed_ns\":%llu,\"ops_per_sec\":%.0f,"
		       "\"add_acquisitions\":%llu,\"release_acquisitions\":%llu,"
		       "\"contended\":%llu,\"wait_ns_total\":%llu,"
		       "\"wait_ns_max\":%llu,\"wait_ns_avg\":%llu",
		       i ? "," : "", r->size, lf_mode_name(r->mode), r->threads,
		       r->loops, r->mem, lock_name(r->lock_kind), r->nr_slots,
		       lb_cpu_source_name(r->cpu_src),
		       (unsigned long long)r->objects,
		       (unsigned long long)r->elapsed_ns, r->ops_per_sec,
		       (unsigned long long)r->path[LF_PATH_ADD].acquisitions,
		       (unsigned long long)r->path[LF_PATH_RELEASE].acquisitions,
		       (unsigned long long)contended(r),
		       (unsigned long long)wait_total(r),
		       (unsigned long long)wait_max(r),
		       (unsigned long long)wait_avg(r));
		json_path("add", &r->path[LF_PATH_ADD]);
		json_path("release", &r->path[LF_PATH_RELEASE]);
		printf(",\"pool_stalls\":%llu,\"verified\":%s",
		       (unsigned long long)r->pool_stalls,
		       r->verified ? "true" : "false");
		if (r->mode == LF_WEIGHTED)
			json_ratios(r, res, nr);
		printf("}");
	}
	printf("\n]\n");
}
