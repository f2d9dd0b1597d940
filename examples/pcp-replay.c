// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * pcp-replay: replay a page-allocation trace through lb_pcp with each
 * tuner and compare back-end trips and idle cached units.
 *
 *   pcp-replay [--json] [--compare] [--cold] [--tuners a,b] [--name NAME]
 *              [--plot PREFIX] TRACE...
 *   pcp-replay --smoke
 *
 * TRACE is a file in the format of tests/data/README.md ("-" for stdin; a
 * name ending in .xz is read through `xz -dc`). Per tuner it prints the
 * back-end lock acquisitions (trips), the units moved, the mean and peak
 * idle cached units (total count sampled at every tick), the decay holds,
 * ratios against LINUX, refills served by a peer slot (ADAPTIVE; no
 * back-end trip, one remote slot trylock), and the idle ratio against
 * LINUX sampled every 4096 events instead of at ticks (idle-ev/lx).
 *
 * A recorded trace also carries the kernel's own zone->lock holds: every
 * tuner is compared with them (/kernel; refills and drains apart), and
 * the faithful model of the kernel's pagesets (pcp-replay-model.c) runs
 * the LINUX_618 and LINUX rules (m:TUNER rows). --compare adds the model's
 * hold-by-hold comparison with the recording. A recorded trace starts
 * every slot with what its CPU's pageset held (the "@start" counts);
 * --cold starts them empty.
 *
 * --plot PREFIX draws, per trace, high and count (summed over the slots)
 * at every decay period for each tuner into PREFIX-TRACE.png
 * (pcp-replay-plot.c). On a terminal, stderr shows which replay runs.
 *
 * PCP_REPLAY_TRACE_TICKS=1 in the environment prints every slot's count,
 * high, alloc_factor and free_count at every tick on stderr.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lockbatch/pcp.h>

#include "pcp-replay.h"
#include "pcp-replay-plot.h"

struct result {
	enum lb_pcp_tuner t;
	uint64_t trips, refills, flushes, decay_drains, drains, moved, steals;
	double mean_idle, mean_idle_ev;
	int64_t peak_idle;
	uint64_t foreign, failed;
	int64_t start_units;
};

/*
 * The replay back-end: objects are 16-byte cells (the cache only needs
 * their links), handed out from per-order free stacks and created in
 * chunks on demand so addresses stay stable.
 */
#define CELLS_PER_CHUNK 65536

struct cell {
	void *link[2];
};

struct pool {
	struct cell **chunks;
	size_t nr_chunks, used;
	void **stack[LB_PCP_MAX_ORDER + 1];
	size_t top[LB_PCP_MAX_ORDER + 1], cap[LB_PCP_MAX_ORDER + 1];
};

static void *die_oom(void)
{
	fprintf(stderr, "pcp-replay: out of memory\n");
	exit(2);
}

static void *new_cell(struct pool *pl)
{
	if (pl->used % CELLS_PER_CHUNK == 0) {
		struct cell **c = realloc(pl->chunks, (pl->nr_chunks + 1) *
					  sizeof(*c));

		if (!c)
			return die_oom();
		pl->chunks = c;
		c[pl->nr_chunks] = malloc(CELLS_PER_CHUNK * sizeof(struct cell));
		if (!c[pl->nr_chunks])
			return die_oom();
		pl->nr_chunks++;
	}
	pl->used++;
	return &pl->chunks[(pl->used - 1) / CELLS_PER_CHUNK]
			  [(pl->used - 1) % CELLS_PER_CHUNK];
}

static void *pool_take(struct pool *pl, unsigned int order)
{
	return pl->top[order] ? pl->stack[order][--pl->top[order]] :
				new_cell(pl);
}

static int pool_alloc_bulk(void *ctx, unsigned int order, void **out,
			   unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		out[i] = pool_take(ctx, order);
	return (int)n;
}

static void pool_free_bulk(void *ctx, unsigned int order, void **objs,
			   unsigned int n)
{
	struct pool *pl = ctx;
	unsigned int i;

	if (pl->top[order] + n > pl->cap[order]) {
		size_t cap = (pl->cap[order] + n) * 2;
		void **s = realloc(pl->stack[order], cap * sizeof(void *));

		if (!s)
			die_oom();
		pl->stack[order] = s;
		pl->cap[order] = cap;
	}
	for (i = 0; i < n; i++)
		pl->stack[order][pl->top[order]++] = objs[i];
}

static void pool_fini(struct pool *pl)
{
	size_t i;

	for (i = 0; i < pl->nr_chunks; i++)
		free(pl->chunks[i]);
	free(pl->chunks);
	for (i = 0; i <= LB_PCP_MAX_ORDER; i++)
		free(pl->stack[i]);
}

static int replay_cpu;

static int cpu_of_event(void *arg)
{
	return replay_cpu;
}

static void push(struct trace *tr, struct ev e)
{
	if (tr->nr == tr->cap) {
		size_t cap = tr->cap ? tr->cap * 2 : 65536;
		struct ev *v = realloc(tr->ev, cap * sizeof(*v));

		if (!v)
			die_oom();
		tr->ev = v;
		tr->cap = cap;
	}
	tr->ev[tr->nr++] = e;
	if ((e.op == EV_ALLOC || e.op == EV_FREE) && e.id > tr->max_id)
		tr->max_id = e.id;
	if (e.op == EV_KHOLD)
		tr->nr_khold++;
}

static void parse_conf(struct trace *tr, const char *line)
{
	sscanf(line, "@conf cpus=%u batch=%d high_min=%d high_max=%d max_order=%u",
	       &tr->cpus, &tr->batch, &tr->high_min, &tr->high_max,
	       &tr->max_order);
}

static void parse_kernel(struct trace *tr, const char *line)
{
	long *h = tr->k_holds, *u = tr->k_units;

	tr->has_kernel = true;
	sscanf(line, "@kernel refill_holds=%ld refill_units=%ld "
	       "drain_holds=%ld drain_units=%ld decay_holds=%ld decay_units=%ld",
	       &h[HOLD_REFILL], &u[HOLD_REFILL], &h[HOLD_DRAIN], &u[HOLD_DRAIN],
	       &h[HOLD_DECAY], &u[HOLD_DECAY]);
	/* The drain figures of the header include decay's. */
	h[HOLD_DRAIN] -= h[HOLD_DECAY];
	u[HOLD_DRAIN] -= u[HOLD_DECAY];
}

/* "@start cpu=C count=N high=H [known=K lists=PI:N,...]" */
static int parse_start(struct trace *tr, const char *line)
{
	unsigned int cpu, pi;
	int count, high, known, n, used;
	const char *l;

	if (sscanf(line, "@start cpu=%u count=%d high=%d", &cpu, &count,
		   &high) != 3 || cpu >= RP_MAX_CPUS || count < 0 || high < 0)
		return -EINVAL;
	tr->start_count[cpu] = count;
	tr->start_high[cpu] = high;
	tr->has_start = true;
	l = strstr(line, " lists=");
	if (!l || sscanf(line, "%*s %*s %*s %*s known=%d", &known) != 1)
		return 0;
	for (l += 7; sscanf(l, "%u:%d%n", &pi, &n, &used) == 2; l += used) {
		if (pi >= RP_NR_LISTS || n < 0)
			return -EINVAL;
		tr->start_list[cpu][pi] = n;
		tr->has_lists = true;
		if (l[used] == '+') {
			tr->start_open[cpu][pi] = true;
			used++;
		}
		if (l[used] == ',')
			used++;
	}
	return 0;
}

/* "@end cpu=C count=N high=H": the pageset when the window closed. */
static int parse_end(struct trace *tr, const char *line)
{
	unsigned int cpu;
	int count, high;

	if (sscanf(line, "@end cpu=%u count=%d high=%d", &cpu, &count,
		   &high) != 3 || cpu >= RP_MAX_CPUS)
		return -EINVAL;
	tr->end_count[cpu] = count;
	tr->end_high[cpu] = high;
	tr->has_end = true;
	return 0;
}

/* "r|d|D CPU UNITS": a zone->lock hold of the recording. */
static int parse_khold(struct trace *tr, const char *line)
{
	unsigned int cpu;
	unsigned long units;
	char op;

	if (sscanf(line, "%c %u %lu", &op, &cpu, &units) != 3 ||
	    cpu >= RP_MAX_CPUS || units > UINT32_MAX)
		return -EINVAL;
	push(tr, (struct ev){ .op = EV_KHOLD, .cpu = (uint8_t)cpu,
			      .order = op == 'r' ? HOLD_REFILL :
				       op == 'd' ? HOLD_DRAIN : HOLD_DECAY,
			      .id = (uint32_t)units });
	return 0;
}

static int parse_tick(struct trace *tr, const char *line)
{
	unsigned int cpu;

	if (sscanf(line, "t %u", &cpu) != 1) {
		push(tr, (struct ev){ .op = EV_TICK, .cpu = EV_ALL_CPUS });
		return 0;
	}
	if (cpu >= RP_MAX_CPUS)
		return -EINVAL;
	push(tr, (struct ev){ .op = EV_TICK, .cpu = (uint8_t)cpu });
	return 0;
}

static int parse_line(struct trace *tr, const char *line)
{
	unsigned int cpu, order, mt = 1;
	unsigned long id;
	char op;
	int n;

	if (line[0] == '#' || line[0] == '\n')
		return 0;
	if (!strncmp(line, "@conf", 5)) {
		parse_conf(tr, line);
		return 0;
	}
	if (!strncmp(line, "@kernel", 7)) {
		parse_kernel(tr, line);
		return 0;
	}
	if (!strncmp(line, "@start", 6))
		return parse_start(tr, line);
	if (!strncmp(line, "@end", 4))
		return parse_end(tr, line);
	if (line[0] == 't')
		return parse_tick(tr, line);
	if (line[0] == 'r' || line[0] == 'd' || line[0] == 'D')
		return parse_khold(tr, line);
	if (line[0] == 'z') {
		push(tr, (struct ev){ .op = EV_ZONE, .cpu = EV_ALL_CPUS,
				      .order = line[2] == '1' });
		return 0;
	}
	n = sscanf(line, "%c %u %u %lu %u", &op, &cpu, &order, &id, &mt);
	if (n < 4 || (op != 'a' && op != 'f') || cpu >= RP_MAX_CPUS ||
	    order > LB_PCP_MAX_ORDER || id > UINT32_MAX || mt > 255)
		return -EINVAL;
	push(tr, (struct ev){ .op = op == 'a' ? EV_ALLOC : EV_FREE,
			      .cpu = (uint8_t)cpu, .order = (uint8_t)order,
			      .mt = (uint8_t)mt, .id = (uint32_t)id });
	return 0;
}

static int load_stream(struct trace *tr, FILE *f)
{
	char line[256];
	long n = 0;

	while (fgets(line, sizeof(line), f)) {
		n++;
		if (parse_line(tr, line)) {
			fprintf(stderr, "%s:%ld: bad line: %s", tr->name, n, line);
			return -EINVAL;
		}
	}
	return 0;
}

static int load(struct trace *tr, const char *path)
{
	size_t len = strlen(path);
	FILE *f;
	int err;

	memset(tr, 0, sizeof(*tr));
	tr->name = path;
	tr->cpus = 2;
	tr->batch = 63;
	tr->high_min = 252;
	tr->high_max = 16384;
	tr->max_order = 3;
	if (!strcmp(path, "-"))
		return load_stream(tr, stdin);
	if (len > 3 && !strcmp(path + len - 3, ".xz")) {
		char cmd[4096];

		snprintf(cmd, sizeof(cmd), "xz -dc '%s'", path);
		f = popen(cmd, "r");
		if (!f)
			return -errno;
		err = load_stream(tr, f);
		if (pclose(f) != 0 && !err)
			err = -EIO;
		return err;
	}
	f = fopen(path, "r");
	if (!f)
		return -errno;
	err = load_stream(tr, f);
	fclose(f);
	return err;
}

/* Number of periods and of allocations and frees, once loaded. */
static void finish_load(struct trace *tr)
{
	struct period_clock pc = { 0 };
	size_t i;

	tr->ticks = 0;
	for (i = 0; i < tr->nr; i++)
		if (tr->ev[i].op == EV_TICK && period_end(&pc, tr, &tr->ev[i]))
			tr->ticks++;
}

static size_t nr_ops(const struct trace *tr)
{
	size_t i, n = 0;

	for (i = 0; i < tr->nr; i++)
		n += tr->ev[i].op == EV_ALLOC || tr->ev[i].op == EV_FREE;
	return n;
}

static void trace_ticks(const struct trace *tr, struct lb_pcp *p,
			enum lb_pcp_tuner t, size_t ticks)
{
	struct lb_pcp_tune_state s;
	unsigned int k;

	for (k = 0; k < tr->cpus; k++) {
		lb_pcp_slot_state(p, k, &s);
		fprintf(stderr, "%s tick %zu cpu %u count %d high %d af %d fc %d\n",
			lb_pcp_tuner_name(t), ticks, k, s.count, s.high,
			s.alloc_factor, s.free_count);
	}
}

static void replay_op(struct lb_pcp *p, struct pool *pl, void **obj,
		      const struct ev *e, struct result *r)
{
	if (e->op == EV_ALLOC) {
		if (obj[e->id])		/* never freed: a leak in the trace */
			obj[e->id] = NULL;
		if (lb_pcp_alloc(p, e->order, &obj[e->id]))
			r->failed++;
		return;
	}
	if (!obj[e->id]) {
		/* Allocated before the trace began. */
		obj[e->id] = pool_take(pl, e->order);
		r->foreign++;
	}
	if (lb_pcp_free(p, obj[e->id], e->order))
		r->failed++;
	obj[e->id] = NULL;
}

static struct lb_pcp *make_cache(const struct trace *tr, enum lb_pcp_tuner t,
				 struct pool *pl)
{
	struct lb_pcp_conf c = { 0 };
	struct lb_pcp *p;

	c.nr_slots = tr->cpus;
	c.max_order = tr->max_order;
	c.batch = tr->batch;
	c.high_min = tr->high_min;
	c.high_max = tr->high_max;
	c.tuner = t;
	c.lock_kind = LB_LOCK_SPIN;
	c.backend.alloc_bulk = pool_alloc_bulk;
	c.backend.free_bulk = pool_free_bulk;
	c.backend.ctx = pl;
	c.cpu_fn = cpu_of_event;
	return lb_pcp_create(&p, &c) ? NULL : p;
}

/*
 * Warm start: each slot takes what the CPU's pageset held when the window
 * opened (zoneinfo count), by allocating that many units on the CPU and
 * freeing them there (all allocations first, so no slot serves another's
 * with its own prefill). The tuner sets high on the way as it would; the
 * holds this takes are not counted (*@base keeps them).
 */
static void warm_up(const struct trace *tr, struct lb_pcp *p, struct pool *pl,
		    struct lb_pcp_stats *base)
{
	void ***objs = calloc(tr->cpus, sizeof(*objs));
	unsigned int c;
	int i;

	if (!objs)
		die_oom();
	for (c = 0; c < tr->cpus; c++) {
		objs[c] = calloc((size_t)tr->start_count[c] + 1, sizeof(void *));
		if (!objs[c])
			die_oom();
		replay_cpu = (int)c;
		for (i = 0; i < tr->start_count[c]; i++)
			if (lb_pcp_alloc(p, 0, &objs[c][i]))
				objs[c][i] = pool_take(pl, 0);
	}
	for (c = 0; c < tr->cpus; c++) {
		replay_cpu = (int)c;
		for (i = tr->start_count[c] - 1; i >= 0; i--)
			lb_pcp_free(p, objs[c][i], 0);
		free(objs[c]);
	}
	free(objs);
	lb_pcp_stats(p, base, NULL, 0);
}

static bool cold;
/* --plot PREFIX: the series of the trace being replayed, or NULL. */
static const char *plot_prefix;
static FILE *series;

/* The replay's figures: the end statistics less the warm-up's. */
static void fill_result(struct result *r, const struct lb_pcp_stats *st,
			const struct lb_pcp_stats *base)
{
	const struct lb_pcp_slot_stats *t = &st->total, *b = &base->total;

	r->trips = st->backend_locks - base->backend_locks;
	r->refills = t->refills - b->refills;
	r->flushes = t->flushes - b->flushes;
	r->decay_drains = t->decay_drains - b->decay_drains;
	r->drains = t->drains - b->drains;
	r->steals = t->steals - b->steals;
	r->moved = t->refill_units + t->flush_units + t->decay_units +
		   t->drain_units - (b->refill_units + b->flush_units +
				     b->decay_units + b->drain_units);
	r->start_units = b->count;
}

/*
 * One lb_pcp replay, from the recorded start unless --cold. Per-CPU ticks
 * ("t CPU") decay every slot once per period: lb_pcp has one decay for
 * the whole cache.
 */
static int replay(const struct trace *tr, enum lb_pcp_tuner t,
		  struct result *r)
{
	struct period_clock pc = { 0 };
	struct lb_pcp_stats st, base;
	struct pool pl = { 0 };
	struct lb_pcp *p;
	void **obj;
	double idle_sum = 0, ev_sum = 0;
	size_t i, ticks = 0, samples = 0;

	obj = calloc((size_t)tr->max_id + 1, sizeof(*obj));
	if (!obj)
		die_oom();
	p = make_cache(tr, t, &pl);
	if (!p) {
		free(obj);
		return -EINVAL;
	}
	memset(r, 0, sizeof(*r));
	r->t = t;
	memset(&base, 0, sizeof(base));
	if (tr->has_start && !cold)
		warm_up(tr, p, &pl, &base);
	for (i = 0; i < tr->nr; i++) {
		const struct ev *e = &tr->ev[i];

		/* Also sample between ticks, so no tuner can look idle by
		 * draining right at the sampling instants. */
		if ((i & 4095) == 0) {
			lb_pcp_stats(p, &st, NULL, 0);
			ev_sum += (double)st.total.count;
			samples++;
		}
		/* lb_pcp's back-end has no watermarks: no zone flags. */
		if (e->op == EV_KHOLD || e->op == EV_ZONE ||
		    (e->cpu >= tr->cpus && e->cpu != EV_ALL_CPUS))
			continue;
		replay_cpu = e->cpu;
		if (e->op != EV_TICK) {
			replay_op(p, &pl, obj, e, r);
			continue;
		}
		if (!period_end(&pc, tr, e))
			continue;
		lb_pcp_decay(p);
		lb_pcp_stats(p, &st, NULL, 0);
		idle_sum += (double)st.total.count;
		if (st.total.count > r->peak_idle)
			r->peak_idle = st.total.count;
		ticks++;
		if (series)
			pr_series_sample(series, p, tr->cpus, ticks);
		if (getenv("PCP_REPLAY_TRACE_TICKS"))
			trace_ticks(tr, p, t, ticks);
	}
	lb_pcp_stats(p, &st, NULL, 0);
	fill_result(r, &st, &base);
	r->mean_idle = ticks ? idle_sum / (double)ticks : 0;
	r->mean_idle_ev = samples ? ev_sum / (double)samples : 0;
	lb_pcp_destroy(p);
	pool_fini(&pl);
	free(obj);
	return 0;
}

static double ratio(double a, double b)
{
	return b > 0 ? a / b : 0;
}

static const struct result *linux_of(const struct result *r, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (r[i].t == LB_PCP_TUNE_LINUX)
			return &r[i];
	return NULL;
}

static long k_total(const struct trace *tr)
{
	return tr->k_holds[HOLD_REFILL] + tr->k_holds[HOLD_DRAIN] +
	       tr->k_holds[HOLD_DECAY];
}

static long k_drains(const struct trace *tr)
{
	return tr->k_holds[HOLD_DRAIN] + tr->k_holds[HOLD_DECAY];
}

/* One tuner's figures, in the table's or the JSON's format. */
#define ROW_TABLE "%s%-10s %9llu %7.3f %7s %8llu %7s %8llu %7s %7llu %12llu %10.1f %10lld %8.3f %7llu %8.3f\n"
#define ROW_JSON "%s{\"tuner\":\"%s\",\"trips\":%llu,\"trips_vs_linux\":%.4f," \
	"\"trips_vs_kernel\":%.4f,\"refills\":%llu,\"refills_vs_kernel\":%.4f," \
	"\"drains\":%llu,\"drains_vs_kernel\":%.4f,\"decay_drains\":%llu," \
	"\"units_moved\":%llu,\"mean_idle\":%.1f,\"peak_idle\":%lld," \
	"\"idle_vs_linux\":%.4f,\"peer_refills\":%llu,\"idle_ev_vs_linux\":%.4f}"

static void print_row_json(const struct trace *tr, const struct result *r,
			   const struct result *lx, const char *sep)
{
	uint64_t drains = r->flushes + r->decay_drains + r->drains;

	printf(ROW_JSON, sep, lb_pcp_tuner_name(r->t),
	       (unsigned long long)r->trips,
	       lx ? ratio((double)r->trips, (double)lx->trips) : 0,
	       ratio((double)r->trips, (double)k_total(tr)),
	       (unsigned long long)r->refills,
	       ratio((double)r->refills, (double)tr->k_holds[HOLD_REFILL]),
	       (unsigned long long)drains,
	       ratio((double)drains, (double)k_drains(tr)),
	       (unsigned long long)r->decay_drains,
	       (unsigned long long)r->moved, r->mean_idle,
	       (long long)r->peak_idle,
	       lx ? ratio(r->mean_idle, lx->mean_idle) : 0,
	       (unsigned long long)r->steals,
	       lx ? ratio(r->mean_idle_ev, lx->mean_idle_ev) : 0);
}

/* A ratio against the kernel's holds, "-" for a trace without them. */
static const char *kratio(char *buf, const struct trace *tr, double a,
			  double k)
{
	if (!tr->has_kernel)
		return "-";
	snprintf(buf, 16, "%.3f", ratio(a, k));
	return buf;
}

static void print_row(const struct trace *tr, const struct result *r,
		      const struct result *lx, bool json, const char *sep)
{
	uint64_t drains = r->flushes + r->decay_drains + r->drains;
	char k[3][16];

	if (json) {
		print_row_json(tr, r, lx, sep);
		return;
	}
	printf(ROW_TABLE, sep, lb_pcp_tuner_name(r->t),
	       (unsigned long long)r->trips,
	       lx ? ratio((double)r->trips, (double)lx->trips) : 0,
	       kratio(k[0], tr, (double)r->trips, (double)k_total(tr)),
	       (unsigned long long)r->refills,
	       kratio(k[1], tr, (double)r->refills,
		      (double)tr->k_holds[HOLD_REFILL]),
	       (unsigned long long)drains,
	       kratio(k[2], tr, (double)drains, (double)k_drains(tr)),
	       (unsigned long long)r->decay_drains,
	       (unsigned long long)r->moved, r->mean_idle,
	       (long long)r->peak_idle,
	       lx ? ratio(r->mean_idle, lx->mean_idle) : 0,
	       (unsigned long long)r->steals,
	       lx ? ratio(r->mean_idle_ev, lx->mean_idle_ev) : 0);
}

/* The faithful model's rows: holds as the recording counts them. */
static void print_model_row(const struct trace *tr,
			    const struct model_result *m,
			    const struct result *lx)
{
	const struct hold_stats *h = &m->hs;
	uint64_t runs = h->runs[HOLD_REFILL] + h->runs[HOLD_DRAIN] +
			h->runs[HOLD_DECAY];
	uint64_t drains = h->runs[HOLD_DRAIN] + h->runs[HOLD_DECAY];
	char name[32], k[3][16];

	snprintf(name, sizeof(name), "m:%s", lb_pcp_tuner_name(m->t));
	printf(ROW_TABLE, "", name, (unsigned long long)runs,
	       lx ? ratio((double)runs, (double)lx->trips) : 0,
	       kratio(k[0], tr, (double)runs, (double)k_total(tr)),
	       (unsigned long long)h->runs[HOLD_REFILL],
	       kratio(k[1], tr, (double)h->runs[HOLD_REFILL],
		      (double)tr->k_holds[HOLD_REFILL]),
	       (unsigned long long)drains,
	       kratio(k[2], tr, (double)drains, (double)k_drains(tr)),
	       (unsigned long long)h->runs[HOLD_DECAY],
	       (unsigned long long)(h->units[HOLD_REFILL] +
				    h->units[HOLD_DRAIN] + h->units[HOLD_DECAY]),
	       m->mean_idle, 0LL, lx ? ratio(m->mean_idle, lx->mean_idle) : 0,
	       0ULL, lx ? ratio(m->mean_idle_ev, lx->mean_idle_ev) : 0);
}

static void print_header(const struct trace *tr)
{
	printf("trace %s: %zu events, %zu ticks, %u CPUs, batch %d, high %d..%d\n",
	       tr->name, nr_ops(tr), tr->ticks, tr->cpus, tr->batch,
	       tr->high_min, tr->high_max);
	printf("%-10s %9s %7s %7s %8s %7s %8s %7s %7s %12s %10s %10s %8s %7s %8s\n",
	       "tuner", "trips", "/linux", "/kernel", "refills", "/k",
	       "drains", "/k", "decay", "units-moved", "mean-idle",
	       "peak-idle", "idle/lx", "peer", "idle-ev/lx");
}

/*
 * ADAPTIVE against the kernel: its holds over the recorded ones, its mean
 * idle units over the faithful model's (the kernel's tuner, its start).
 */
static void print_verdict(const struct trace *tr, const struct result *r,
			  int n, const struct model_result *m)
{
	const struct hold_stats *h = &m->hs;
	const struct result *lx = NULL;
	int i;

	printf("faithful %s: refills %.3f, drains %.3f of the kernel's "
	       "(goal 0.85..1.15)\n", lb_pcp_tuner_name(m->t),
	       ratio((double)h->runs[HOLD_REFILL],
		     (double)tr->k_holds[HOLD_REFILL]),
	       ratio((double)(h->runs[HOLD_DRAIN] + h->runs[HOLD_DECAY]),
		     (double)k_drains(tr)));
	for (i = 0; i < n; i++)
		if (r[i].t == LB_PCP_TUNE_ADAPTIVE)
			printf("adaptive: holds %.3f of the kernel's (goal <= 0.75), "
			       "mean idle %.3f of faithful %s's (goal <= 1.0), "
			       "sampled every 4096 events %.3f\n",
			       ratio((double)r[i].trips, (double)k_total(tr)),
			       ratio(r[i].mean_idle, m->mean_idle),
			       lb_pcp_tuner_name(m->t),
			       ratio(r[i].mean_idle_ev, m->mean_idle_ev));
	for (i = 0; i < n; i++)
		if (r[i].t == m->t)
			lx = &r[i];
	for (i = 0; lx && i < n; i++)
		if (r[i].t == LB_PCP_TUNE_ADAPTIVE)
			printf("adaptive: mean idle %.3f of lb_pcp %s's (same cache, "
			       "same start: %lld and %lld units)\n",
			       ratio(r[i].mean_idle, lx->mean_idle),
			       lb_pcp_tuner_name(m->t),
			       (long long)r[i].start_units,
			       (long long)lx->start_units);
}

static bool compare;

static void print_table(const struct trace *tr, const struct result *r, int n)
{
	const struct result *lx = linux_of(r, n);
	static const enum lb_pcp_tuner mt[] = { LB_PCP_TUNE_LINUX_618,
						LB_PCP_TUNE_LINUX };
	struct model_result m[2];
	struct hold_stats k;
	int i;

	print_header(tr);
	for (i = 0; i < n; i++)
		print_row(tr, &r[i], lx, false, "");
	if (!tr->has_kernel) {
		putchar('\n');
		return;
	}
	for (i = 0; i < 2; i++) {
		if (model_replay(tr, mt[i], !cold, &m[i]))
			die_oom();
		print_model_row(tr, &m[i], lx);
	}
	printf("%-10s %9ld %7.3f %7.3f %8ld %7s %8ld %7s %7ld %12ld   "
	       "(recorded zone->lock holds)\n", "kernel", k_total(tr),
	       lx ? ratio((double)k_total(tr), (double)lx->trips) : 0, 1.0,
	       tr->k_holds[HOLD_REFILL], "", k_drains(tr), "",
	       tr->k_holds[HOLD_DECAY],
	       tr->k_units[HOLD_REFILL] + tr->k_units[HOLD_DRAIN] +
	       tr->k_units[HOLD_DECAY]);
	if (r[0].foreign || r[0].failed)
		printf("(%llu frees of objects allocated before the trace; %llu failed calls)\n",
		       (unsigned long long)r[0].foreign,
		       (unsigned long long)r[0].failed);
	printf("(m:TUNER: the faithful model, holds counted as the recording "
	       "counts them; it starts with %lld units)\n",
	       (long long)m[0].start_units);
	print_verdict(tr, r, n, &m[0]);
	if (compare && tr->nr_khold) {
		model_kernel_stats(tr, &k);
		model_print_compare(tr, &k, &m[0]);
		hold_stats_fini(&k);
	}
	for (i = 0; i < 2; i++)
		model_result_fini(&m[i]);
	putchar('\n');
}

/* The faithful model's holds (runs) and idle units, for the JSON. */
static void print_model_json(const struct trace *tr)
{
	struct model_result m;
	const struct hold_stats *h = &m.hs;

	if (model_replay(tr, LB_PCP_TUNE_LINUX_618, !cold, &m))
		die_oom();
	printf(",\"faithful\":{\"tuner\":\"%s\",\"refill_holds\":%llu,"
	       "\"drain_holds\":%llu,\"decay_holds\":%llu,"
	       "\"refills_vs_kernel\":%.4f,\"drains_vs_kernel\":%.4f,"
	       "\"mean_idle\":%.1f,\"start_units\":%lld}",
	       lb_pcp_tuner_name(m.t), (unsigned long long)h->runs[HOLD_REFILL],
	       (unsigned long long)h->runs[HOLD_DRAIN],
	       (unsigned long long)h->runs[HOLD_DECAY],
	       ratio((double)h->runs[HOLD_REFILL],
		     (double)tr->k_holds[HOLD_REFILL]),
	       ratio((double)(h->runs[HOLD_DRAIN] + h->runs[HOLD_DECAY]),
		     (double)k_drains(tr)),
	       m.mean_idle, (long long)m.start_units);
	model_result_fini(&m);
}

static void print_json(const struct trace *tr, const struct result *r, int n,
		       int first)
{
	const struct result *lx = linux_of(r, n);
	int i;

	printf("%s{\"trace\":\"%s\",\"events\":%zu,\"ticks\":%zu,\"cpus\":%u,"
	       "\"batch\":%d,\"high_min\":%d,\"high_max\":%d,\"tuners\":[",
	       first ? "" : ",", tr->name, nr_ops(tr), tr->ticks,
	       tr->cpus, tr->batch, tr->high_min, tr->high_max);
	for (i = 0; i < n; i++)
		print_row(tr, &r[i], lx, true, i ? "," : "");
	printf("]");
	if (tr->has_kernel) {
		printf(",\"kernel\":{\"refill_holds\":%ld,\"refill_units\":%ld,"
		       "\"drain_holds\":%ld,\"drain_units\":%ld,"
		       "\"decay_holds\":%ld,\"decay_units\":%ld}",
		       tr->k_holds[HOLD_REFILL], tr->k_units[HOLD_REFILL],
		       tr->k_holds[HOLD_DRAIN], tr->k_units[HOLD_DRAIN],
		       tr->k_holds[HOLD_DECAY], tr->k_units[HOLD_DECAY]);
		print_model_json(tr);
	}
	printf("}");
}

/* A tiny trace for --smoke: two CPUs, a burst, a hand-over, ticks. */
static void smoke_trace(struct trace *tr)
{
	uint32_t id;
	int round;

	memset(tr, 0, sizeof(*tr));
	tr->name = "smoke";
	tr->cpus = 2;
	tr->batch = 7;
	tr->high_min = 28;
	tr->high_max = 256;
	tr->max_order = 3;
	for (round = 0; round < 6; round++) {
		for (id = 0; id < 300; id++)
			push(tr, (struct ev){ .op = EV_ALLOC, .cpu = 0,
					      .order = id % 7 ? 0 : 2,
					      .mt = 1, .id = id });
		for (id = 0; id < 300; id++)
			push(tr, (struct ev){ .op = EV_FREE,
					      .cpu = (uint8_t)(round & 1),
					      .order = id % 7 ? 0 : 2,
					      .mt = 1, .id = id });
		push(tr, (struct ev){ .op = EV_TICK, .cpu = EV_ALL_CPUS });
	}
}

static int parse_tuners(const char *s, enum lb_pcp_tuner *out)
{
	char buf[256], *tok, *save;
	int n = 0, t;

	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, ",", &save); tok && n < LB_PCP_TUNE_NR;
	     tok = strtok_r(NULL, ",", &save)) {
		t = lb_pcp_tuner_parse(tok);
		if (t < 0)
			return t;
		out[n++] = (enum lb_pcp_tuner)t;
	}
	return n;
}

static int run_trace(struct trace *tr, const enum lb_pcp_tuner *tuners,
		     int nt, int json, int first)
{
	int tty = isatty(STDERR_FILENO);
	struct result res[LB_PCP_TUNE_NR];
	int i, err;

	finish_load(tr);
	series = plot_prefix ? pr_series_open(plot_prefix, tr->name) : NULL;
	if (plot_prefix && !series)
		return 1;
	for (i = 0; i < nt; i++) {
		if (tty)
			fprintf(stderr, "\r\033[Kpcp-replay: %s, %s ...",
				tr->name, lb_pcp_tuner_name(tuners[i]));
		err = replay(tr, tuners[i], &res[i]);
		if (err) {
			fprintf(stderr, "pcp-replay: %s: bad conf (%s)\n",
				tr->name, strerror(-err));
			return 1;
		}
		if (series)
			pr_series_end(series, tuners[i]);
	}
	if (tty)
		fputs("\r\033[K", stderr);
	if (series && pr_plot(series, plot_prefix, tr->name, tuners, nt))
		return 1;
	if (json)
		print_json(tr, res, nt, first);
	else
		print_table(tr, res, nt);
	free(tr->ev);
	return 0;
}

struct args {
	enum lb_pcp_tuner tuners[LB_PCP_TUNE_NR];
	int nt, json, smoke;
	const char *name;
};

/* Options into @a; -1 to go on, else the exit code. */
static int parse_args(int argc, char **argv, struct args *a)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "smoke", no_argument, NULL, 's' },
		{ "tuners", required_argument, NULL, 't' },
		{ "name", required_argument, NULL, 'n' },
		{ "compare", no_argument, NULL, 'c' },
		{ "cold", no_argument, NULL, 'C' },
		{ "plot", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "jst:n:cCp:h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			a->json = 1;
			break;
		case 's':
			a->smoke = 1;
			break;
		case 't':
			a->nt = parse_tuners(optarg, a->tuners);
			if (a->nt <= 0) {
				fprintf(stderr, "pcp-replay: bad --tuners\n");
				return 2;
			}
			break;
		case 'n':
			a->name = optarg;
			break;
		case 'c':
			compare = true;
			break;
		case 'C':
			cold = true;
			break;
		case 'p':
			plot_prefix = optarg;
			break;
		default:
			fprintf(stderr, "usage: pcp-replay [--json] [--compare] "
				"[--cold] [--tuners a,b] [--name NAME] [--plot PREFIX] "
				"TRACE... | --smoke\n");
			return c == 'h' ? 0 : 2;
		}
	}
	if (!a->smoke && optind >= argc) {
		fprintf(stderr, "pcp-replay: no trace given\n");
		return 2;
	}
	return -1;
}

int main(int argc, char **argv)
{
	struct args a = {
		.tuners = { LB_PCP_TUNE_FIXED, LB_PCP_TUNE_LINUX,
			    LB_PCP_TUNE_COUNT_MIN, LB_PCP_TUNE_ADAPTIVE,
			    LB_PCP_TUNE_LINUX_618 },
		.nt = LB_PCP_TUNE_NR,
	};
	int k, err = parse_args(argc, argv, &a);

	if (err >= 0)
		return err;
	if (a.json)
		printf("[");
	for (k = 0; a.smoke ? k < 1 : optind + k < argc; k++) {
		struct trace tr;

		if (a.smoke) {
			smoke_trace(&tr);
		} else {
			err = load(&tr, argv[optind + k]);
			if (err) {
				fprintf(stderr, "pcp-replay: %s: %s\n",
					argv[optind + k], strerror(-err));
				return 1;
			}
			if (a.name && argc - optind == 1)
				tr.name = a.name;
		}
		if (run_trace(&tr, a.tuners, a.nt, a.json, k == 0))
			return 1;
	}
	if (a.json)
		printf("]\n");
	return 0;
}
