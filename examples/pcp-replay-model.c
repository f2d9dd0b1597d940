// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * pcp-replay's faithful model of the kernel's per-CPU pagesets, to check a
 * tuner against the zone->lock holds a recording counted, hold by hold.
 *
 * What lb_pcp does not model and the kernel does: one list per
 * migratetype and order (order_to_pindex(): three types for orders 0..3,
 * two THP lists), per-CPU decay ticks at the times vmstat_update ran, the
 * pagesets' contents when the window opened (zoneinfo), and the zone's
 * ZONE_BELOW_HIGH flag as the recording saw it ("z" lines). The model
 * keeps counts only: which page a list gives back does not change when
 * the zone lock is taken. The tuner rules are lb_pcp's pure functions
 * (lb_pcp_tune_*()), without lb_pcp's own rules (A)-(C).
 *
 * Holds are counted as the recording counts them too (kmem2pcp.pl): a run
 * of holds of one cause on one CPU with no allocation or free of that CPU
 * in between is one observed hold ("run"); decay_pcp_high()'s chunks of
 * one tick are one run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pcp-replay.h"

#define NR_PCPTYPES 3
#define NR_LOW_LISTS ((int)(NR_PCPTYPES * (LB_PCP_COSTLY_ORDER + 1)))
#define NR_LISTS RP_NR_LISTS
#define MT_MOVABLE 1

static const int hist_max[HIST_NR - 1] = { 63, 126, 252, 504, 1008, 2016 };
static const char *const cause_name[HOLD_NR] = { "refill", "drain", "decay" };

/* The hold run a CPU is in: cause -1 after an allocation or free. */
struct run {
	int cause;
	uint64_t units;
};

struct km_cpu {
	struct lb_pcp_tune_state ts;
	int list[NR_LISTS];
	struct run run;
};

/* order_to_pindex(), with CONFIG_TRANSPARENT_HUGEPAGE. */
static int pindex(unsigned int order, unsigned int mt)
{
	if (mt >= NR_PCPTYPES)
		mt = MT_MOVABLE;
	if (order > LB_PCP_COSTLY_ORDER)
		return NR_LOW_LISTS + (mt == MT_MOVABLE);
	return (int)(NR_PCPTYPES * order + mt);
}

static unsigned int pindex_order(int pi, unsigned int max_order)
{
	if (pi >= NR_LOW_LISTS)
		return max_order;	/* the THP order of the trace */
	return (unsigned int)pi / NR_PCPTYPES;
}

static int hist_bucket(uint64_t units)
{
	int b = 0;

	while (b < HIST_NR - 1 && units > (uint64_t)hist_max[b])
		b++;
	return b;
}

/*
 * Count a hold. @run (NULL for the recording, whose holds are runs
 * already) tracks the CPU's current run: a hold of the same cause with no
 * event in between extends it, and its units move it between buckets.
 */
static void note_hold(struct hold_stats *h, size_t period, struct run *run,
		      unsigned int cpu, int cause, int units)
{
	h->holds[cause]++;
	h->units[cause] += (uint64_t)units;
	h->cpu_units[cpu][cause] += (uint64_t)units;
	if (run && run->cause == cause) {
		h->hist[cause][hist_bucket(run->units)]--;
		run->units += (uint64_t)units;
		h->hist[cause][hist_bucket(run->units)]++;
		return;
	}
	if (run) {
		run->cause = cause;
		run->units = (uint64_t)units;
	}
	h->runs[cause]++;
	h->cpu_runs[cpu][cause]++;
	h->hist[cause][hist_bucket((uint64_t)units)]++;
	if (period < h->nr_periods)
		h->per_period[period]++;
}

static void hold_stats_init(struct hold_stats *h, const struct trace *tr)
{
	memset(h, 0, sizeof(*h));
	h->nr_periods = tr->ticks + 1;
	h->per_period = calloc(h->nr_periods, sizeof(*h->per_period));
	if (!h->per_period)
		h->nr_periods = 0;
}

void hold_stats_fini(struct hold_stats *h)
{
	free(h->per_period);
	h->per_period = NULL;
}

/*
 * free_pcppages_bulk(): whole objects from the lists, round-robin from
 * @pi, until @count units are freed; one zone->lock hold.
 */
static int bulk_free(struct km_cpu *c, int count, int pi, unsigned int mo)
{
	int freed = 0;

	if (count > c->ts.count)
		count = c->ts.count;
	pi--;
	while (count > 0) {
		int w;

		do {
			if (++pi >= NR_LISTS)
				pi = 0;
		} while (!c->list[pi]);
		w = 1 << pindex_order(pi, mo);
		do {
			c->list[pi]--;
			count -= w;
			freed += w;
			c->ts.count -= w;
		} while (count > 0 && c->list[pi]);
	}
	return freed;
}

/*
 * The pagesets when the window opened. zoneinfo gives each CPU's count and
 * high; the trace what each list held (kmem2pcp.pl): exactly, for a list
 * that ran empty in the window, else at least. The rest of the count,
 * pages the window never touched, can only be on the latter lists: it is
 * spread over them in proportion to what they are known to hold (evenly
 * when that is nothing). A trace without the lists gets the count spread
 * in proportion to the units it frees into each list.
 */
static void spread(int *list, const uint64_t *weight, const bool *open,
		   int rest, unsigned int mo)
{
	uint64_t sum = 0, nr = 0;
	int pi;

	for (pi = 0; pi < NR_LISTS; pi++)
		if (open[pi]) {
			sum += weight[pi] << pindex_order(pi, mo);
			nr++;
		}
	for (pi = 0; pi < NR_LISTS && rest > 0 && nr; pi++) {
		int o = (int)pindex_order(pi, mo);
		double share;

		if (!open[pi])
			continue;
		share = sum ? (double)(weight[pi] << o) / (double)sum :
			      1.0 / (double)nr;
		list[pi] += (int)((double)rest * share) >> o;
	}
}

static void warm_lists(const struct trace *tr, unsigned int c, int *list)
{
	uint64_t weight[NR_LISTS];
	bool open[NR_LISTS];
	int pi, known = 0;
	size_t i;

	for (pi = 0; pi < NR_LISTS; pi++) {
		list[pi] = tr->has_lists ? tr->start_list[c][pi] : 0;
		weight[pi] = (uint64_t)list[pi];
		open[pi] = tr->has_lists && tr->start_open[c][pi];
		known += list[pi] << pindex_order(pi, tr->max_order);
	}
	for (i = 0; !tr->has_lists && i < tr->nr; i++) {
		const struct ev *e = &tr->ev[i];

		if (e->op == EV_FREE && e->cpu == c) {
			weight[pindex(e->order, e->mt)]++;
			open[pindex(e->order, e->mt)] = true;
		}
	}
	spread(list, weight, open, tr->start_count[c] - known, tr->max_order);
}

static void warm_start(struct km_cpu *cpus, const struct trace *tr,
		       struct model_result *r)
{
	unsigned int c;
	int pi;

	for (c = 0; c < tr->cpus; c++) {
		warm_lists(tr, c, cpus[c].list);
		for (pi = 0; pi < NR_LISTS; pi++)
			cpus[c].ts.count += cpus[c].list[pi] <<
					    pindex_order(pi, tr->max_order);
		if (tr->start_high[c] > cpus[c].ts.high)
			cpus[c].ts.high = tr->start_high[c];
		r->start_units += cpus[c].ts.count;
	}
}

static int64_t total_count(const struct km_cpu *cpus, unsigned int n)
{
	int64_t sum = 0;
	unsigned int c;

	for (c = 0; c < n; c++)
		sum += cpus[c].ts.count;
	return sum;
}

/* decay_pcp_high(): chunks of batch, each a hold, one run. */
static void tick(struct km_cpu *c, unsigned int cpu, const struct trace *tr,
		 enum lb_pcp_tuner t, struct model_result *r, size_t period)
{
	int to_drain;

	lb_pcp_tune_decay(t, &c->ts, &to_drain);
	while (to_drain > 0) {
		int n = to_drain < c->ts.batch ? to_drain : c->ts.batch;
		int freed = bulk_free(c, n, 0, tr->max_order);

		if (freed)
			note_hold(&r->hs, period, &c->run, cpu, HOLD_DECAY,
				  freed);
		to_drain -= n;
	}
	lb_pcp_tune_tick_end(t, &c->ts);
}

static void step(struct km_cpu *cpus, const struct trace *tr,
		 enum lb_pcp_tuner t, struct model_result *r, const struct ev *e,
		 size_t period)
{
	struct km_cpu *c = &cpus[e->cpu];
	int pi = pindex(e->order, e->mt), n;

	c->run.cause = -1;	/* the event ends the CPU's current run */
	if (e->op == EV_ALLOC) {
		lb_pcp_tune_alloc_start(t, &c->ts);
		if (!c->list[pi]) {
			n = lb_pcp_tune_refill(t, &c->ts, e->order);
			c->list[pi] += n;
			c->ts.count += n << e->order;
			note_hold(&r->hs, period, &c->run, e->cpu, HOLD_REFILL,
				  n << e->order);
		}
		c->list[pi]--;
		lb_pcp_tune_alloc_done(t, &c->ts, e->order);
		return;
	}
	c->list[pi]++;
	n = lb_pcp_tune_free(t, &c->ts, e->order);
	if (n > 0)
		note_hold(&r->hs, period, &c->run, e->cpu, HOLD_DRAIN,
			  bulk_free(c, n, pi, tr->max_order));
}

/* The zone's ZONE_BELOW_HIGH, as the recording saw it, in every pageset. */
static void zone_flag(struct km_cpu *cpus, unsigned int n, bool below_high)
{
	unsigned int c;

	for (c = 0; c < n; c++)
		if (below_high)
			cpus[c].ts.flags |= LB_PCP_TS_ZONE_BELOW_HIGH;
		else
			cpus[c].ts.flags &= (uint8_t)~LB_PCP_TS_ZONE_BELOW_HIGH;
}

int model_replay(const struct trace *tr, enum lb_pcp_tuner t, bool warm,
		 struct model_result *r)
{
	struct period_clock pc = { 0 };
	struct km_cpu *cpus;
	double idle = 0, idle_ev = 0;
	size_t i, period = 0, samples = 0;
	unsigned int c;

	cpus = calloc(tr->cpus, sizeof(*cpus));
	if (!cpus)
		return -1;
	memset(r, 0, sizeof(*r));
	r->t = t;
	r->warm = warm && tr->has_start;
	hold_stats_init(&r->hs, tr);
	for (c = 0; c < tr->cpus; c++) {
		if (lb_pcp_tune_init(&cpus[c].ts, tr->batch, tr->high_min,
				     tr->high_max, false)) {
			free(cpus);
			return -1;
		}
		cpus[c].run.cause = -1;
	}
	if (r->warm)
		warm_start(cpus, tr, r);
	for (i = 0; i < tr->nr; i++) {
		const struct ev *e = &tr->ev[i];

		if ((i & 4095) == 0) {
			idle_ev += (double)total_count(cpus, tr->cpus);
			samples++;
		}
		if (e->op == EV_ZONE) {
			zone_flag(cpus, tr->cpus, e->order);
			continue;
		}
		if (e->op == EV_KHOLD || (e->cpu >= tr->cpus &&
					  e->cpu != EV_ALL_CPUS))
			continue;
		if (e->op != EV_TICK) {
			step(cpus, tr, t, r, e, period);
			continue;
		}
		for (c = 0; c < tr->cpus; c++)
			if (e->cpu == EV_ALL_CPUS || e->cpu == c)
				tick(&cpus[c], c, tr, t, r, period);
		if (period_end(&pc, tr, e)) {
			idle += (double)total_count(cpus, tr->cpus);
			period++;
		}
	}
	r->mean_idle = period ? idle / (double)period : 0;
	r->mean_idle_ev = samples ? idle_ev / (double)samples : 0;
	for (c = 0; c < tr->cpus; c++) {
		r->end_count[c] = cpus[c].ts.count;
		r->end_high[c] = cpus[c].ts.high;
	}
	free(cpus);
	return 0;
}

void model_result_fini(struct model_result *r)
{
	hold_stats_fini(&r->hs);
}

/* The recording's holds, in the same bins as the model's. */
void model_kernel_stats(const struct trace *tr, struct hold_stats *k)
{
	struct period_clock pc = { 0 };
	size_t i, period = 0;

	hold_stats_init(k, tr);
	for (i = 0; i < tr->nr; i++) {
		const struct ev *e = &tr->ev[i];

		if (e->op == EV_TICK && period_end(&pc, tr, e))
			period++;
		if (e->op == EV_KHOLD && e->cpu < tr->cpus)
			note_hold(k, period, NULL, e->cpu, e->order,
				  (int)e->id);
	}
}

static double ratio(double a, double b)
{
	return b > 0 ? a / b : 0;
}

static void print_hist(const char *who, int cause, const struct hold_stats *h)
{
	int b;

	printf("  %-6s %-7s", cause_name[cause], who);
	for (b = 0; b < HIST_NR; b++)
		printf(" %7llu", (unsigned long long)h->hist[cause][b]);
	putchar('\n');
}

/* Timing: holds per tick period, kernel against model. */
static void print_timing(const struct hold_stats *k, const struct hold_stats *m)
{
	uint64_t diff = 0, sum = 0;
	size_t i, n = k->nr_periods < m->nr_periods ? k->nr_periods :
						       m->nr_periods;

	for (i = 0; i < n; i++) {
		uint64_t a = k->per_period[i], b = m->per_period[i];

		diff += a > b ? a - b : b - a;
		sum += a;
	}
	printf("  timing: %zu tick periods; sum over periods of |kernel - model| "
	       "holds = %.3f of the kernel's holds\n", n,
	       ratio((double)diff, (double)sum));
}

void model_print_compare(const struct trace *tr, const struct hold_stats *k,
			 const struct model_result *m)
{
	unsigned int c;
	int cause, b;

	printf("hold by hold: kernel vs model:%s (%s start)\n",
	       lb_pcp_tuner_name(m->t), m->warm ? "zoneinfo" : "empty");
	printf("  %-6s %4s %9s %9s %7s %11s %11s %7s\n", "cause", "cpu",
	       "k-holds", "m-holds", "m/k", "k-units", "m-units", "m/k");
	for (cause = 0; cause < HOLD_NR; cause++)
		for (c = 0; c < tr->cpus; c++)
			printf("  %-6s %4u %9llu %9llu %7.3f %11llu %11llu %7.3f\n",
			       cause_name[cause], c,
			       (unsigned long long)k->cpu_runs[c][cause],
			       (unsigned long long)m->hs.cpu_runs[c][cause],
			       ratio((double)m->hs.cpu_runs[c][cause],
				     (double)k->cpu_runs[c][cause]),
			       (unsigned long long)k->cpu_units[c][cause],
			       (unsigned long long)m->hs.cpu_units[c][cause],
			       ratio((double)m->hs.cpu_units[c][cause],
				     (double)k->cpu_units[c][cause]));
	printf("  units per hold:");
	for (b = 0; b < HIST_NR - 1; b++)
		printf(" %7s", "");
	printf("\n  %-14s", "");
	for (b = 0; b < HIST_NR - 1; b++)
		printf("  <=%-5d", hist_max[b]);
	printf("  >%d\n", hist_max[HIST_NR - 2]);
	for (cause = 0; cause < HOLD_NR; cause++) {
		print_hist("kernel", cause, k);
		print_hist("model", cause, &m->hs);
	}
	print_timing(k, &m->hs);
	for (c = 0; tr->has_end && c < tr->cpus; c++)
		printf("  end state cpu %u: count %d high %d (kernel, zoneinfo), "
		       "%d %d (model)\n", c, tr->end_count[c], tr->end_high[c],
		       m->end_count[c], m->end_high[c]);
}
