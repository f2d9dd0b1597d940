// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lb_pcp statistics as a table and as JSON, from lb_pcp_stats() alone:
 * one row per slot that saw an operation or holds objects, then the total.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>

#include <lockbatch/pcp.h>
#include "report/report.h"

static int stats(void *p, void *st, void *slots, unsigned int nr)
{
	return lb_pcp_stats(p, st, slots, nr);
}

/* Arguments checked, then the snapshot: 0 or -errno. */
static int snapshot(struct lbi_report *r, FILE *f, struct lb_pcp *p,
		    struct lb_pcp_stats *st)
{
	if (!f || !p)
		return -EINVAL;
	return lbi_report_snapshot(r, stats, p, st,
				   sizeof(struct lb_pcp_slot_stats));
}

static bool used(const void *slot)
{
	const struct lb_pcp_slot_stats *s = slot;

	return s->allocs || s->frees || s->count;
}

static void row(FILE *f, const char *label, const void *slot)
{
	const struct lb_pcp_slot_stats *s = slot;

	fprintf(f, "%8s %11llu %11llu %9llu %9llu %8llu %8llu %7llu %7llu %8lld %8lld\n",
		label, (unsigned long long)s->allocs,
		(unsigned long long)s->frees, (unsigned long long)s->refills,
		(unsigned long long)s->flushes,
		(unsigned long long)s->decay_drains,
		(unsigned long long)s->drains, (unsigned long long)s->steals,
		(unsigned long long)s->max_hold_units, (long long)s->count,
		(long long)s->high);
}

int lb_pcp_report(FILE *f, struct lb_pcp *p)
{
	struct lbi_report r;
	struct lb_pcp_stats st;
	const struct lb_pcp_slot_stats *t = &st.total;
	int err;

	err = snapshot(&r, f, p, &st);
	if (err)
		return err;
	fprintf(f, "%8s %11s %11s %9s %9s %8s %8s %7s %7s %8s %8s\n", "slot",
		"allocs", "frees", "refills", "flushes", "decays", "drains",
		"steals", "maxhold", "count", "high");
	lbi_report_rows(f, &r, used, row);
	row(f, "total", t);
	fprintf(f, "units moved: refill %llu flush %llu decay %llu drain %llu steal %llu\n"
		   "slots %u, ticks %llu, back-end lock holds %llu, retries %llu, "
		   "expiries %llu, double frees %llu\n",
		(unsigned long long)t->refill_units,
		(unsigned long long)t->flush_units,
		(unsigned long long)t->decay_units,
		(unsigned long long)t->drain_units,
		(unsigned long long)t->steal_units, st.nr_slots,
		(unsigned long long)st.ticks,
		(unsigned long long)st.backend_locks,
		(unsigned long long)t->retries, (unsigned long long)t->expiries,
		(unsigned long long)t->double_frees);
	return lbi_report_end(f, &r);
}

static void json_slot(FILE *f, const void *slot)
{
	const struct lb_pcp_slot_stats *s = slot;

	fprintf(f, "{\"allocs\":%llu,\"frees\":%llu,\"refills\":%llu,"
		   "\"refill_units\":%llu,\"flushes\":%llu,\"flush_units\":%llu,"
		   "\"decay_drains\":%llu,\"decay_units\":%llu,\"drains\":%llu,"
		   "\"drain_units\":%llu,\"steals\":%llu,\"steal_units\":%llu,"
		   "\"retries\":%llu,\"expiries\":%llu,\"double_frees\":%llu,"
		   "\"max_hold_units\":%llu,\"count\":%lld,\"high\":%lld}",
		(unsigned long long)s->allocs, (unsigned long long)s->frees,
		(unsigned long long)s->refills,
		(unsigned long long)s->refill_units,
		(unsigned long long)s->flushes,
		(unsigned long long)s->flush_units,
		(unsigned long long)s->decay_drains,
		(unsigned long long)s->decay_units,
		(unsigned long long)s->drains,
		(unsigned long long)s->drain_units,
		(unsigned long long)s->steals,
		(unsigned long long)s->steal_units,
		(unsigned long long)s->retries,
		(unsigned long long)s->expiries,
		(unsigned long long)s->double_frees,
		(unsigned long long)s->max_hold_units, (long long)s->count,
		(long long)s->high);
}

int lb_pcp_report_json(FILE *f, struct lb_pcp *p)
{
	struct lbi_report r;
	struct lb_pcp_stats st;
	int err;

	err = snapshot(&r, f, p, &st);
	if (err)
		return err;
	fprintf(f, "{\"nr_slots\":%u,\"ticks\":%llu,\"backend_locks\":%llu,"
		   "\"total\":", st.nr_slots, (unsigned long long)st.ticks,
		(unsigned long long)st.backend_locks);
	json_slot(f, &st.total);
	fputc(',', f);
	lbi_report_json_slots(f, &r, json_slot);
	fputs("}\n", f);
	return lbi_report_end(f, &r);
}
