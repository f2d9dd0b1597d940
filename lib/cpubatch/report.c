// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lb_cpubatch statistics as a table and as JSON, from lb_cpubatch_stats()
 * alone: one row per slot that saw an add or holds objects, then the total.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>

#include <lockbatch/cpubatch.h>
#include "report/report.h"

static int stats(void *pc, void *st, void *slots, unsigned int nr)
{
	return lb_cpubatch_stats(pc, st, slots, nr);
}

/* Arguments checked, then the snapshot: 0 or -errno. */
static int snapshot(struct lbi_report *r, FILE *f, struct lb_cpubatch *pc,
		    struct lb_cpubatch_stats *st)
{
	if (!f || !pc)
		return -EINVAL;
	return lbi_report_snapshot(r, stats, pc, st,
				   sizeof(struct lb_cpubatch_slot_stats));
}

static bool used(const void *slot)
{
	const struct lb_cpubatch_slot_stats *s = slot;

	return s->adds || s->nr_cached;
}

static unsigned long long flushes(const struct lb_cpubatch_slot_stats *s)
{
	unsigned long long sum = 0;

	for (int c = 0; c < LB_FLUSH_NR; c++)
		sum += s->flushes[c];
	return sum;
}

static void row(FILE *f, const char *label, const void *slot)
{
	const struct lb_cpubatch_slot_stats *s = slot;
	unsigned long long fl = flushes(s);

	fprintf(f, "%8s %12llu %12llu %10llu %8.2f %12llu %8llu %8llu\n", label,
		(unsigned long long)s->adds, (unsigned long long)s->weight_added,
		fl, fl ? (double)s->objs_flushed / (double)fl : 0.0,
		(unsigned long long)s->objs_committed,
		(unsigned long long)s->nr_cached,
		(unsigned long long)s->weight_cached);
}

static void causes_table(FILE *f, const struct lb_cpubatch_slot_stats *t)
{
	fputs("\nflushes by cause:", f);
	for (int c = 0; c < LB_FLUSH_NR; c++)
		fprintf(f, " %s %llu", lb_cpubatch_flush_cause_name((enum lb_flush_cause)c),
			(unsigned long long)t->flushes[c]);
	fputc('\n', f);
}

static void table(FILE *f, const struct lbi_report *r,
		  const struct lb_cpubatch_stats *st)
{
	fprintf(f, "%8s %12s %12s %10s %8s %12s %8s %8s\n", "slot", "adds",
		"weight", "flushes", "objs/fl", "committed", "cached", "cachedw");
	lbi_report_rows(f, r, used, row);
	row(f, "total", &st->total);
	causes_table(f, &st->total);
	fprintf(f, "slots %u, cpu-id %s, back-end lock holds %llu, flushes in flight %llu\n"
		   "settle: settled %llu drained %llu busy %llu waits %llu; "
		   "drain_all: calls %llu passes %llu coalesced %llu forced %llu; "
		   "disabled %u\n",
		st->nr_slots, lb_cpu_source_name(st->cpu_src),
		(unsigned long long)st->backend_locks,
		(unsigned long long)st->flushes_inflight,
		(unsigned long long)st->drain.settled,
		(unsigned long long)st->drain.drained,
		(unsigned long long)st->drain.busy,
		(unsigned long long)st->drain.settle_waits,
		(unsigned long long)st->drain.drain_all_calls,
		(unsigned long long)st->drain.drain_all_passes,
		(unsigned long long)st->drain.drain_all_coalesced,
		(unsigned long long)st->drain.drain_all_forced,
		st->drain.disable_depth);
}

/* Arguments checked, the snapshot, @body, then the end: 0 or -errno. */
static int report(FILE *f, struct lb_cpubatch *pc,
		  void (*body)(FILE *f, const struct lbi_report *r,
			       const struct lb_cpubatch_stats *st))
{
	struct lbi_report r;
	struct lb_cpubatch_stats st;
	int err;

	err = snapshot(&r, f, pc, &st);
	if (err)
		return err;
	body(f, &r, &st);
	return lbi_report_end(f, &r);
}

int lb_cpubatch_report(FILE *f, struct lb_cpubatch *pc)
{
	return report(f, pc, table);
}

static void json_slot(FILE *f, const void *slot)
{
	const struct lb_cpubatch_slot_stats *s = slot;

	fprintf(f, "{\"adds\":%llu,\"weight_added\":%llu,\"flushes\":{",
		(unsigned long long)s->adds, (unsigned long long)s->weight_added);
	for (int c = 0; c < LB_FLUSH_NR; c++)
		fprintf(f, "%s\"%s\":%llu", c ? "," : "",
			lb_cpubatch_flush_cause_name((enum lb_flush_cause)c),
			(unsigned long long)s->flushes[c]);
	fprintf(f, "},\"flushes_committed\":%llu,\"objs_flushed\":%llu,"
		   "\"objs_committed\":%llu,\"weight_flushed\":%llu,"
		   "\"nr_cached\":%llu,\"weight_cached\":%llu,"
		   "\"flushes_abandoned\":%llu,\"objs_abandoned\":%llu}",
		(unsigned long long)s->flushes_committed,
		(unsigned long long)s->objs_flushed,
		(unsigned long long)s->objs_committed,
		(unsigned long long)s->weight_flushed,
		(unsigned long long)s->nr_cached,
		(unsigned long long)s->weight_cached,
		(unsigned long long)s->flushes_abandoned,
		(unsigned long long)s->objs_abandoned);
}

static void json_drain(FILE *f, const struct lb_cpubatch_drain_stats *d)
{
	fprintf(f, "{\"settled\":%llu,\"drained\":%llu,\"busy\":%llu,"
		   "\"settle_waits\":%llu,\"drain_all_calls\":%llu,"
		   "\"drain_all_passes\":%llu,\"drain_all_forced\":%llu,"
		   "\"drain_all_coalesced\":%llu,\"drain_all_slots_touched\":%llu,"
		   "\"drain_all_slots_max\":%llu,\"disable_depth\":%u}",
		(unsigned long long)d->settled, (unsigned long long)d->drained,
		(unsigned long long)d->busy, (unsigned long long)d->settle_waits,
		(unsigned long long)d->drain_all_calls,
		(unsigned long long)d->drain_all_passes,
		(unsigned long long)d->drain_all_forced,
		(unsigned long long)d->drain_all_coalesced,
		(unsigned long long)d->drain_all_slots_touched,
		(unsigned long long)d->drain_all_slots_max, d->disable_depth);
}

static void json(FILE *f, const struct lbi_report *r,
		 const struct lb_cpubatch_stats *st)
{
	fprintf(f, "{\"nr_slots\":%u,\"cpu_src\":\"%s\",\"backend_locks\":%llu,"
		   "\"flushes_inflight\":%llu,\"total\":", st->nr_slots,
		lb_cpu_source_name(st->cpu_src),
		(unsigned long long)st->backend_locks,
		(unsigned long long)st->flushes_inflight);
	json_slot(f, &st->total);
	fputs(",\"drain\":", f);
	json_drain(f, &st->drain);
	fputc(',', f);
	lbi_report_json_slots(f, r, json_slot);
	fputs("}\n", f);
}

int lb_cpubatch_report_json(FILE *f, struct lb_cpubatch *pc)
{
	return report(f, pc, json);
}
