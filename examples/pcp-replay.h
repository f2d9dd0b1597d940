/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * pcp-replay: the loaded trace (format: tests/data/README.md) and the
 * faithful model of the kernel's per-CPU lists (pcp-replay-model.c).
 */
#ifndef PCP_REPLAY_H
#define PCP_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <lockbatch/pcp.h>

enum { EV_ALLOC, EV_FREE, EV_TICK, EV_KHOLD, EV_ZONE };

/* Causes of a back-end hold: refill, drain from the free path, decay. */
enum { HOLD_REFILL, HOLD_DRAIN, HOLD_DECAY, HOLD_NR };

/* Units per hold, histogram bucket upper bounds (the last is open). */
#define HIST_NR 7

/* EV_TICK for every CPU (the "t" of traces without per-CPU ticks). */
#define EV_ALL_CPUS 0xff
#define RP_MAX_CPUS 255
/* The kernel's per-CPU lists: 3 migratetypes x orders 0..3, 2 THP lists. */
#define RP_NR_LISTS 14

/*
 * One trace event. EV_ALLOC/EV_FREE: @mt is the migratetype (1, MOVABLE,
 * when the trace has none). EV_KHOLD: a zone->lock hold the kernel took,
 * @order is its cause (HOLD_*), @id its units. EV_ZONE: the zone's
 * ZONE_BELOW_HIGH flag became @order.
 */
struct ev {
	uint8_t op, cpu, order, mt;
	uint32_t id;
};

struct trace {
	const char *name;
	struct ev *ev;
	size_t nr, cap;
	unsigned int cpus, max_order;
	int batch, high_min, high_max;
	long k_holds[HOLD_NR], k_units[HOLD_NR];
	bool has_kernel, has_start;
	int start_count[RP_MAX_CPUS], start_high[RP_MAX_CPUS];
	int start_list[RP_MAX_CPUS][RP_NR_LISTS];	/* objects, by pindex */
	bool start_open[RP_MAX_CPUS][RP_NR_LISTS];	/* a lower bound */
	int end_count[RP_MAX_CPUS], end_high[RP_MAX_CPUS];
	bool has_end;
	bool has_lists;
	uint32_t max_id;
	size_t ticks, nr_khold;
};

/*
 * Ticks: a trace has either "t" (one period, every CPU) or "t CPU" (that
 * CPU's vmstat_update). A period ends at every "t", or after as many
 * per-CPU ticks as there are CPUs.
 */
struct period_clock {
	unsigned int seen;
};

static inline bool period_end(struct period_clock *pc, const struct trace *tr,
			      const struct ev *e)
{
	if (e->cpu == EV_ALL_CPUS)
		return true;
	if (++pc->seen < tr->cpus)
		return false;
	pc->seen = 0;
	return true;
}

/* Holds of one replay (or of the kernel's record), by cause and CPU. */
struct hold_stats {
	uint64_t runs[HOLD_NR], holds[HOLD_NR], units[HOLD_NR];
	uint64_t cpu_runs[RP_MAX_CPUS][HOLD_NR], cpu_units[RP_MAX_CPUS][HOLD_NR];
	uint64_t hist[HOLD_NR][HIST_NR];
	uint64_t *per_period;	/* runs of every cause in each period */
	size_t nr_periods;
};

/* A faithful replay of the kernel's pagesets under a tuner. */
struct model_result {
	enum lb_pcp_tuner t;
	bool warm;
	struct hold_stats hs;
	double mean_idle, mean_idle_ev;
	int64_t start_units;
	int end_count[RP_MAX_CPUS], end_high[RP_MAX_CPUS];
};

int model_replay(const struct trace *tr, enum lb_pcp_tuner t, bool warm,
		 struct model_result *r);
void model_kernel_stats(const struct trace *tr, struct hold_stats *k);
void model_print_compare(const struct trace *tr, const struct hold_stats *k,
			 const struct model_result *m);
void model_result_fini(struct model_result *r);
void hold_stats_fini(struct hold_stats *h);

#endif /* PCP_REPLAY_H */
