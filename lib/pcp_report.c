// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lb_pcp statistics as a table and as JSON, from lb_pcp_stats() alone:
 * one row per slot that saw an operation or holds objects, then the total.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <lockbatch/pcp.h>

/* Totals and every slot's counters; *@slots is malloc'd. */
static int snapshot(struct lb_pcp *p, struct lb_pcp_stats *st,
		    struct lb_pcp_slot_stats **slots)
{
	int n = lb_pcp_stats(p, st, NULL, 0);

	if (n < 0)
		return n;
	*slots = calloc((size_t)n ? (size_t)n : 1, sizeof(**slots));
	if (!*slots)
		return -ENOMEM;
	return lb_pcp_stats(p, st, *slots, (unsigned int)n);
}

static void row(FILE *f, const char *label, const struct lb_pcp_slot_stats *s)
{
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
	struct lb_pcp_slot_stats *slots;
	struct lb_pcp_stats st;
	const struct lb_pcp_slot_stats *t = &st.total;
	char label[16];
	int n;

	if (!f || !p)
		return -EINVAL;
	n = snapshot(p, &st, &slots);
	if (n < 0)
		return n;
	fprintf(f, "%8s %11s %11s %9s %9s %8s %8s %7s %7s %8s %8s\n", "slot",
		"allocs", "frees", "refills", "flushes", "decays", "drains",
		"steals", "maxhold", "count", "high");
	for (int i = 0; i < n; i++) {
		if (!slots[i].allocs && !slots[i].frees && !slots[i].count)
			continue;
		snprintf(label, sizeof(label), "%d", i);
		row(f, label, &slots[i]);
	}
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
	free(slots);
	return ferror(f) ? -EIO : 0;
}

static void json_slot(FILE *f, const struct lb_pcp_slot_stats *s)
{
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
	struct lb_pcp_slot_stats *slots;
	struct lb_pcp_stats st;
	int n;

	if (!f || !p)
		return -EINVAL;
	n = snapshot(p, &st, &slots);
	if (n < 0)
		return n;
	fprintf(f, "{\"nr_slots\":%u,\"ticks\":%llu,\"backend_locks\":%llu,"
		   "\"total\":", st.nr_slots, (unsigned long long)st.ticks,
		(unsigned long long)st.backend_locks);
	json_slot(f, &st.total);
	fputs(",\"slots\":[", f);
	for (int i = 0; i < n; i++) {
		fputs(i ? "," : "", f);
		json_slot(f, &slots[i]);
	}
	fputs("]}\n", f);
	free(slots);
	return ferror(f) ? -EIO : 0;
}
