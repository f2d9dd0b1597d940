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
	[LF_OWN_LRU] = "own-lru",
};

const char *lf_mode_name(enum lf_mode mode)
{
	return (unsigned int)mode < LF_NR_MODES ? mode_names[mode] : "invalid";
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

static bool find_mode(const struct lf_result *res, unsigned int nr,
		      enum lf_mode mode)
{
	unsigned int i;

	for (i = 0; i < nr; i++)
		if (res[i].mode == mode)
			return true;
	return false;
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

/*
 * Average LRU lock hold of one add-path acquisition, in ns, leaving out
 * the holds where the holder was descheduled (see LB_LRU_HOLD_LONG_NS).
 */
static uint64_t add_hold_avg(const struct lf_result *r)
{
	const struct lf_path_stats *a = &r->path[LF_PATH_ADD];
	uint64_t n = a->acquisitions - a->holds_long;

	return n ? a->hold_ns_total / n : 0;
}

static double ratio(double a, double b)
{
	return b > 0 ? a / b : 0;
}

static double m_ops(const struct lf_result *r)
{
	return r->ops_per_sec;
}

static double m_cpu(const struct lf_result *r)
{
	return r->ops_per_cpu_sec;
}

static double m_add(const struct lf_result *r)
{
	return (double)r->path[LF_PATH_ADD].acquisitions;
}

/* One ratio a / b of a metric; "-" when one of the modes was not run. */
static void cell(const struct lf_result *a, const struct lf_result *b,
		 double (*metric)(const struct lf_result *), int prec,
		 char unit)
{
	if (a && b)
		printf(" %10.*f%c", prec, ratio(metric(a), metric(b)), unit);
	else
		printf(" %10s ", "-");
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
			printf("\nweighted (w) against the other modes, same size, this run (- = not run):\n");
			printf("%6s  %-35s  %-35s  %s\n", "", "ops/s",
			       "ops/cpu-s", "add-path acquisitions");
			printf("%6s", "size");
			printf(" %11s %11s %11s ", "w/baseline", "w/bypass", "limit/w");
			printf(" %11s %11s %11s ", "w/baseline", "w/bypass", "limit/w");
			printf(" %11s %11s\n", "w/baseline", "w/bypass");
			header = true;
		}
		printf("%6s", size_str(w->size, sz, sizeof(sz)));
		cell(w, base, m_ops, 2, 'x');
		cell(w, byp, m_ops, 2, 'x');
		cell(lim, lim ? w : NULL, m_ops, 2, 'x');
		printf(" ");
		cell(w, base, m_cpu, 2, 'x');
		cell(w, byp, m_cpu, 2, 'x');
		cell(lim, lim ? w : NULL, m_cpu, 2, 'x');
		printf(" ");
		cell(w, base, m_add, 4, ' ');
		cell(w, byp, m_add, 4, ' ');
		printf("\n");
	}
	if (header && find_mode(res, nr, LF_LIMIT))
		printf("limit: the floor, a plain list per thread: no lock, no atomic instruction, no clock read per object\n");
}

static double per(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : 0;
}

/* --split-every: settle outcomes and slots flushed per settle, by outcome. */
static void print_splits(const struct lf_result *res, unsigned int nr)
{
	const struct lf_split_stats *s;
	bool header = false;
	char sz[32];
	unsigned int i;

	for (i = 0; i < nr; i++) {
		if (!res[i].split_every)
			continue;
		if (!header) {
			printf("\nsplits: every %u-th object settled by another thread "
			       "(every other one also pinned by a third party)\n",
			       res[i].split_every);
			printf("%6s %-9s %9s %9s %9s %9s %6s %13s %13s %13s %9s %9s\n",
			       "size", "mode", "settles", "SETTLED", "DRAINED", "BUSY",
			       "errors", "slots/SETTLED", "slots/DRAINED",
			       "slots/BUSY", "max slots", "drain_all");
			header = true;
		}
		s = &res[i].split;
		printf("%6s %-9s %9llu %9llu %9llu %9llu %6llu %13.2f %13.2f %13.2f %9llu %9llu\n",
		       size_str(res[i].size, sz, sizeof(sz)),
		       lf_mode_name(res[i].mode),
		       (unsigned long long)s->settles,
		       (unsigned long long)s->outcome[0],
		       (unsigned long long)s->outcome[1],
		       (unsigned long long)s->outcome[2],
		       (unsigned long long)s->errors,
		       per(s->slots[0], s->outcome[0]),
		       per(s->slots[1], s->outcome[1]),
		       per(s->slots[2], s->outcome[2]),
		       (unsigned long long)s->slots_max,
		       (unsigned long long)s->drain_all_passes);
	}
}

static void json_split(const struct lf_result *r)
{
	const struct lf_split_stats *s = &r->split;

	printf(",\"split_every\":%u,\"settles\":%llu,\"settled\":%llu,"
	       "\"drained\":%llu,\"busy\":%llu,\"settle_errors\":%llu,"
	       "\"slots_per_settled\":%.4f,\"slots_per_drained\":%.4f,"
	       "\"slots_per_busy\":%.4f,\"slots_max_per_settle\":%llu,"
	       "\"drain_all_passes\":%llu",
	       r->split_every, (unsigned long long)s->settles,
	       (unsigned long long)s->outcome[0],
	       (unsigned long long)s->outcome[1],
	       (unsigned long long)s->outcome[2],
	       (unsigned long long)s->errors,
	       per(s->slots[0], s->outcome[0]), per(s->slots[1], s->outcome[1]),
	       per(s->slots[2], s->outcome[2]),
	       (unsigned long long)s->slots_max,
	       (unsigned long long)s->drain_all_passes);
}

void lf_report_table(const struct lf_conf *conf, const struct lf_result *res,
		     unsigned int nr, const struct lf_causes *causes)
{
	char sz[32], mem[32];
	unsigned int i;

	if (!nr)
		return;
	printf("lru-fault: %u threads x %s, %u loops, %s lock, %u slots (cpu id: %s), %s commit\n\n",
	       conf->threads, size_str(conf->mem, mem, sizeof(mem)),
	       conf->loops, lf_lock_name(conf->lock_kind), res[0].nr_slots,
	       lb_cpu_source_name(res[0].cpu_src),
	       res[0].splice ? "splice" : "per-object");
	printf("%6s %-9s %12s %12s %12s %12s %9s %11s %13s %10s %12s\n", "size",
	       "mode", "ops/s", "ops/cpu-s", "add acq", "release acq",
	       "add hold", "contended", "wait total", "avg wait", "max wait");
	for (i = 0; i < nr; i++) {
		const struct lf_result *r = &res[i];

		printf("%6s %-9s %12.0f %12.0f %12llu %12llu %7lluns %11llu %11.1fms %8lluns %10lluus%s\n",
		       size_str(r->size, sz, sizeof(sz)), lf_mode_name(r->mode),
		       r->ops_per_sec, r->ops_per_cpu_sec,
		       (unsigned long long)r->path[LF_PATH_ADD].acquisitions,
		       (unsigned long long)r->path[LF_PATH_RELEASE].acquisitions,
		       (unsigned long long)add_hold_avg(r),
		       (unsigned long long)contended(r),
		       (double)wait_total(r) / 1e6,
		       (unsigned long long)wait_avg(r),
		       (unsigned long long)(wait_max(r) / 1000),
		       r->verified ? "" : "  VERIFY FAILED");
	}
	print_ratios(res, nr);
	print_splits(res, nr);
	if (causes)
		lf_causes_table(causes, conf->nr_sizes);
}

/* Ratios of weighted mode against the other modes run at its size. */
static void json_ratios(const struct lf_result *w, const struct lf_result *res,
			unsigned int nr)
{
	static const struct {
		enum lf_mode mode;
		const char *name;
	} other[] = { { LF_BASELINE, "baseline" }, { LF_BYPASS, "bypass" } };
	const struct lf_result *o;
	unsigned int i;

	for (i = 0; i < 2; i++) {
		o = find(res, nr, w->size, other[i].mode);
		if (!o)
			continue;
		printf(",\"ops_vs_%s\":%.4f,\"cpu_ops_vs_%s\":%.4f,"
		       "\"add_acquisitions_vs_%s\":%.6f",
		       other[i].name, ratio(m_ops(w), m_ops(o)),
		       other[i].name, ratio(m_cpu(w), m_cpu(o)),
		       other[i].name, ratio(m_add(w), m_add(o)));
	}
	o = find(res, nr, w->size, LF_LIMIT);
	if (o)
		printf(",\"limit_ops_vs_weighted\":%.4f,"
		       "\"limit_cpu_ops_vs_weighted\":%.4f",
		       ratio(m_ops(o), m_ops(w)), ratio(m_cpu(o), m_cpu(w)));
}

static void json_path(const char *p, const struct lf_path_stats *s)
{
	printf(",\"%s_contended\":%llu,\"%s_wait_ns_total\":%llu,\"%s_wait_ns_max\":%llu",
	       p, (unsigned long long)s->contentions,
	       p, (unsigned long long)s->wait_ns_total,
	       p, (unsigned long long)s->wait_ns_max);
}

void lf_report_json(const struct lf_result *res, unsigned int nr,
		    const struct lf_causes *causes, unsigned int nr_causes)
{
	unsigned int i;

	printf("[");
	for (i = 0; i < nr; i++) {
		const struct lf_result *r = &res[i];

		printf("%s\n{\"size_bytes\":%zu,\"mode\":\"%s\",\"threads\":%u,"
		       "\"loops\":%u,\"mem_bytes\":%zu,\"lock\":\"%s\","
		       "\"slots\":%u,\"cpu_source\":\"%s\",\"objects\":%llu,"
		       "\"elapsed_ns\":%llu,\"ops_per_sec\":%.0f,"
		       "\"cpu_ns\":%llu,\"ops_per_cpu_sec\":%.0f,"
		       "\"add_acquisitions\":%llu,\"release_acquisitions\":%llu,"
		       "\"contended\":%llu,\"wait_ns_total\":%llu,"
		       "\"wait_ns_max\":%llu,\"wait_ns_avg\":%llu",
		       i ? "," : "", r->size, lf_mode_name(r->mode), r->threads,
		       r->loops, r->mem, lf_lock_name(r->lock_kind), r->nr_slots,
		       lb_cpu_source_name(r->cpu_src),
		       (unsigned long long)r->objects,
		       (unsigned long long)r->elapsed_ns, r->ops_per_sec,
		       (unsigned long long)r->cpu_ns, r->ops_per_cpu_sec,
		       (unsigned long long)r->path[LF_PATH_ADD].acquisitions,
		       (unsigned long long)r->path[LF_PATH_RELEASE].acquisitions,
		       (unsigned long long)contended(r),
		       (unsigned long long)wait_total(r),
		       (unsigned long long)wait_max(r),
		       (unsigned long long)wait_avg(r));
		json_path("add", &r->path[LF_PATH_ADD]);
		json_path("release", &r->path[LF_PATH_RELEASE]);
		printf(",\"splice\":%s,\"release_hold_ns_total\":%llu,"
		       "\"add_hold_ns_total\":%llu,"
		       "\"add_holds_long\":%llu,\"add_hold_ns_avg\":%llu",
		       r->splice ? "true" : "false",
		       (unsigned long long)r->path[LF_PATH_RELEASE].hold_ns_total,
		       (unsigned long long)r->path[LF_PATH_ADD].hold_ns_total,
		       (unsigned long long)r->path[LF_PATH_ADD].holds_long,
		       (unsigned long long)add_hold_avg(r));
		printf(",\"pool_stalls\":%llu,\"verified\":%s",
		       (unsigned long long)r->pool_stalls,
		       r->verified ? "true" : "false");
		if (r->mode == LF_WEIGHTED)
			json_ratios(r, res, nr);
		if (r->split_every)
			json_split(r);
		printf("}");
	}
	if (causes)
		lf_causes_json(causes, nr_causes);
	printf("\n]\n");
}
