// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * pcp-replay: replay a page-allocation trace through lb_pcp with each
 * tuner and compare back-end trips and idle cached units.
 *
 *   pcp-replay [--json] [--tuners a,b] [--name NAME] [--plot PREFIX] TRACE...
 *   pcp-replay --smoke
 *
 * TRACE is a file in the format of tests/data/README.md ("-" for stdin; a
 * name ending in .xz is read through `xz -dc`). Per tuner it prints the
 * back-end lock acquisitions (trips), the units moved, the mean and peak
 * idle cached units (total count sampled at every tick), the decay holds,
 * ratios against LINUX, refills served by a peer slot (ADAPTIVE; no
 * back-end trip, one remote slot trylock), and the idle ratio against
 * LINUX sampled every 4096 events instead of at ticks (idle-ev/lx). A recorded trace also carries the kernel's own
 * zone->lock holds, printed next to the LINUX replay.
 *
 * --plot PREFIX draws, per trace, high and count (summed over the slots)
 * at every tick for each tuner into PREFIX-TRACE.png (pcp-replay-plot.c).
 * On a terminal, stderr shows which replay is running.
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

enum { EV_ALLOC, EV_FREE, EV_TICK };

struct ev {
	uint8_t op, cpu, order;
	uint32_t id;
};

struct trace {
	const char *name;
	struct ev *ev;
	size_t nr, cap;
	unsigned int cpus, max_order;
	int batch, high_min, high_max;
	long k_refill_holds, k_refill_units, k_drain_holds, k_drain_units;
	uint32_t max_id;
	size_t ticks;
};

struct result {
	enum lb_pcp_tuner t;
	uint64_t trips, refills, flushes, decay_drains, moved, steals;
	double mean_idle, mean_idle_ev;
	int64_t peak_idle;
	uint64_t foreign, failed;
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
	if (e.op != EV_TICK && e.id > tr->max_id)
		tr->max_id = e.id;
	if (e.op == EV_TICK)
		tr->ticks++;
}

static void parse_conf(struct trace *tr, const char *line)
{
	sscanf(line, "@conf cpus=%u batch=%d high_min=%d high_max=%d max_order=%u",
	       &tr->cpus, &tr->batch, &tr->high_min, &tr->high_max,
	       &tr->max_order);
}

static int parse_line(struct trace *tr, const char *line)
{
	unsigned int cpu, order;
	unsigned long id;
	char op;

	if (line[0] == '#' || line[0] == '\n')
		return 0;
	if (!strncmp(line, "@conf", 5)) {
		parse_conf(tr, line);
		return 0;
	}
	if (!strncmp(line, "@kernel", 7)) {
		sscanf(line, "@kernel refill_holds=%ld refill_units=%ld "
		       "drain_holds=%ld drain_units=%ld", &tr->k_refill_holds,
		       &tr->k_refill_units, &tr->k_drain_holds,
		       &tr->k_drain_units);
		return 0;
	}
	if (line[0] == 't') {
		push(tr, (struct ev){ .op = EV_TICK });
		return 0;
	}
	if (sscanf(line, "%c %u %u %lu", &op, &cpu, &order, &id) != 4 ||
	    (op != 'a' && op != 'f') || cpu > 255 || order > LB_PCP_MAX_ORDER ||
	    id > UINT32_MAX)
		return -EINVAL;
	push(tr, (struct ev){ .op = op == 'a' ? EV_ALLOC : EV_FREE,
			      .cpu = (uint8_t)cpu, .order = (uint8_t)order,
			      .id = (uint32_t)id });
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

static int replay(const struct trace *tr, enum lb_pcp_tuner t,
		  struct result *r, FILE *series)
{
	struct lb_pcp_conf c = { 0 };
	struct lb_pcp_stats st;
	struct pool pl = { 0 };
	struct lb_pcp *p;
	void **obj;
	double idle_sum = 0, ev_sum = 0;
	size_t i, ticks = 0, samples = 0;
	int err;

	obj = calloc((size_t)tr->max_id + 1, sizeof(*obj));
	if (!obj)
		die_oom();
	c.nr_slots = tr->cpus;
	c.max_order = tr->max_order;
	c.batch = tr->batch;
	c.high_min = tr->high_min;
	c.high_max = tr->high_max;
	c.tuner = t;
	c.lock_kind = LB_LOCK_SPIN;
	c.backend.alloc_bulk = pool_alloc_bulk;
	c.backend.free_bulk = pool_free_bulk;
	c.backend.ctx = &pl;
	c.cpu_fn = cpu_of_event;
	err = lb_pcp_create(&p, &c);
	if (err)
		return err;
	memset(r, 0, sizeof(*r));
	r->t = t;
	for (i = 0; i < tr->nr; i++) {
		const struct ev *e = &tr->ev[i];

		replay_cpu = e->cpu;
		/* Also sample between ticks, so no tuner can look idle by
		 * draining right at the sampling instants. */
		if ((i & 4095) == 0) {
			lb_pcp_stats(p, &st, NULL, 0);
			ev_sum += (double)st.total.count;
			samples++;
		}
		switch (e->op) {
		case EV_TICK:
			lb_pcp_decay(p);
			lb_pcp_stats(p, &st, NULL, 0);
			idle_sum += (double)st.total.count;
			if (st.total.count > r->peak_idle)
				r->peak_idle = st.total.count;
			ticks++;
			if (series)
				pr_series_sample(series, p, tr->cpus, ticks);
			if (getenv("PCP_REPLAY_TRACE_TICKS")) {
				struct lb_pcp_tune_state s;
				unsigned int k;

				for (k = 0; k < tr->cpus; k++) {
					lb_pcp_slot_state(p, k, &s);
					fprintf(stderr, "%s tick %zu cpu %u count %d high %d af %d fc %d\n",
						lb_pcp_tuner_name(t), ticks, k,
						s.count, s.high, s.alloc_factor,
						s.free_count);
				}
			}
			break;
		case EV_ALLOC:
			if (obj[e->id])		/* never freed: a leak in the trace */
				obj[e->id] = NULL;
			if (lb_pcp_alloc(p, e->order, &obj[e->id]))
				r->failed++;
			break;
		case EV_FREE:
			if (!obj[e->id]) {
				/* Allocated before the trace began. */
				obj[e->id] = pool_take(&pl, e->order);
				r->foreign++;
			}
			if (lb_pcp_free(p, obj[e->id], e->order))
				r->failed++;
			obj[e->id] = NULL;
			break;
		}
	}
	lb_pcp_stats(p, &st, NULL, 0);
	r->trips = st.backend_locks;
	r->refills = st.total.refills;
	r->flushes = st.total.flushes;
	r->decay_drains = st.total.decay_drains;
	r->steals = st.total.steals;
	r->moved = st.total.refill_units + st.total.flush_units +
		   st.total.decay_units + st.total.drain_units;
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

/* One tuner's figures, in the table's or the JSON's format. */
#define ROW_TABLE "%s%-10s %10llu %8.3f %9llu %9llu %9llu %12llu %11.1f %11lld %9.3f %8llu %9.3f\n"
#define ROW_JSON "%s{\"tuner\":\"%s\",\"trips\":%llu,\"trips_vs_linux\":%.4f," \
	"\"refills\":%llu,\"flushes\":%llu,\"decay_drains\":%llu," \
	"\"units_moved\":%llu,\"mean_idle\":%.1f,\"peak_idle\":%lld," \
	"\"idle_vs_linux\":%.4f,\"peer_refills\":%llu,\"idle_ev_vs_linux\":%.4f}"

static void print_row(const struct result *r, const struct result *lx,
		      bool json, const char *sep)
{
	printf(json ? ROW_JSON : ROW_TABLE, sep, lb_pcp_tuner_name(r->t), (unsigned long long)r->trips,
	       lx ? ratio((double)r->trips, (double)lx->trips) : 0,
	       (unsigned long long)r->refills, (unsigned long long)r->flushes,
	       (unsigned long long)r->decay_drains,
	       (unsigned long long)r->moved, r->mean_idle,
	       (long long)r->peak_idle,
	       lx ? ratio(r->mean_idle, lx->mean_idle) : 0,
	       (unsigned long long)r->steals,
	       lx ? ratio(r->mean_idle_ev, lx->mean_idle_ev) : 0);
}

static void print_table(const struct trace *tr, const struct result *r, int n)
{
	const struct result *lx = linux_of(r, n);
	int i;

	printf("trace %s: %zu events, %zu ticks, %u CPUs, batch %d, high %d..%d\n",
	       tr->name, tr->nr - tr->ticks, tr->ticks, tr->cpus, tr->batch,
	       tr->high_min, tr->high_max);
	printf("%-10s %10s %8s %9s %9s %9s %12s %11s %11s %9s %8s %9s\n",
	       "tuner", "trips", "/linux", "refills", "flushes", "decay",
	       "units-moved", "mean-idle", "peak-idle", "idle/lx", "peer",
	       "idle-ev/lx");
	for (i = 0; i < n; i++)
		print_row(&r[i], lx, false, "");
	if (tr->k_refill_holds || tr->k_drain_holds)
		printf("%-10s %10ld %8.3f %9ld %9s %9s %12ld   (recorded zone->lock holds)\n",
		       "kernel", tr->k_refill_holds + tr->k_drain_holds,
		       lx ? ratio((double)(tr->k_refill_holds + tr->k_drain_holds),
				  (double)lx->trips) : 0,
		       tr->k_refill_holds, "-", "-",
		       tr->k_refill_units + tr->k_drain_units);
	if (r[0].foreign || r[0].failed)
		printf("(%llu frees of objects allocated before the trace; %llu failed calls)\n",
		       (unsigned long long)r[0].foreign,
		       (unsigned long long)r[0].failed);
	putchar('\n');
}

static void print_json(const struct trace *tr, const struct result *r, int n,
		       int first)
{
	const struct result *lx = linux_of(r, n);
	int i;

	printf("%s{\"trace\":\"%s\",\"events\":%zu,\"ticks\":%zu,\"cpus\":%u,"
	       "\"batch\":%d,\"high_min\":%d,\"high_max\":%d,\"tuners\":[",
	       first ? "" : ",", tr->name, tr->nr - tr->ticks, tr->ticks,
	       tr->cpus, tr->batch, tr->high_min, tr->high_max);
	for (i = 0; i < n; i++)
		print_row(&r[i], lx, true, i ? "," : "");
	printf("]");
	if (tr->k_refill_holds || tr->k_drain_holds)
		printf(",\"kernel\":{\"refill_holds\":%ld,\"refill_units\":%ld,"
		       "\"drain_holds\":%ld,\"drain_units\":%ld}",
		       tr->k_refill_holds, tr->k_refill_units, tr->k_drain_holds,
		       tr->k_drain_units);
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
			push(tr, (struct ev){ EV_ALLOC, 0, id % 7 ? 0 : 2, id });
		for (id = 0; id < 300; id++)
			push(tr, (struct ev){ EV_FREE, (uint8_t)(round & 1),
					      id % 7 ? 0 : 2, id });
		push(tr, (struct ev){ .op = EV_TICK });
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

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "smoke", no_argument, NULL, 's' },
		{ "tuners", required_argument, NULL, 't' },
		{ "name", required_argument, NULL, 'n' },
		{ "plot", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	enum lb_pcp_tuner tuners[LB_PCP_TUNE_NR] = {
		LB_PCP_TUNE_FIXED, LB_PCP_TUNE_LINUX, LB_PCP_TUNE_COUNT_MIN,
		LB_PCP_TUNE_ADAPTIVE,
	};
	struct result res[LB_PCP_TUNE_NR];
	int nt = LB_PCP_TUNE_NR, json = 0, smoke = 0, c, i, k, err;
	const char *name = NULL, *plot = NULL;
	int tty = isatty(STDERR_FILENO);

	while ((c = getopt_long(argc, argv, "jst:n:p:h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = 1;
			break;
		case 's':
			smoke = 1;
			break;
		case 't':
			nt = parse_tuners(optarg, tuners);
			if (nt <= 0) {
				fprintf(stderr, "pcp-replay: bad --tuners\n");
				return 2;
			}
			break;
		case 'n':
			name = optarg;
			break;
		case 'p':
			plot = optarg;
			break;
		default:
			fprintf(stderr, "usage: pcp-replay [--json] [--tuners a,b] "
				"[--name NAME] [--plot PREFIX] TRACE... | --smoke\n");
			return c == 'h' ? 0 : 2;
		}
	}
	if (!smoke && optind >= argc) {
		fprintf(stderr, "pcp-replay: no trace given\n");
		return 2;
	}
	if (json)
		printf("[");
	for (k = 0; smoke ? k < 1 : optind + k < argc; k++) {
		struct trace tr;
		FILE *series;

		if (smoke) {
			smoke_trace(&tr);
		} else {
			err = load(&tr, argv[optind + k]);
			if (err) {
				fprintf(stderr, "pcp-replay: %s: %s\n",
					argv[optind + k], strerror(-err));
				return 1;
			}
			if (name && argc - optind == 1)
				tr.name = name;
		}
		series = plot ? pr_series_open(plot, tr.name) : NULL;
		if (plot && !series)
			return 1;
		for (i = 0; i < nt; i++) {
			if (tty)
				fprintf(stderr, "\r\033[Kpcp-replay: %s, %s ...",
					tr.name, lb_pcp_tuner_name(tuners[i]));
			err = replay(&tr, tuners[i], &res[i], series);
			if (err) {
				fprintf(stderr, "pcp-replay: %s: bad conf (%s)\n",
					tr.name, strerror(-err));
				return 1;
			}
			if (series)
				pr_series_end(series, tuners[i]);
		}
		if (tty)
			fputs("\r\033[K", stderr);
		if (series && pr_plot(series, plot, tr.name, tuners, nt))
			return 1;
		if (json)
			print_json(&tr, res, nt, k == 0);
		else
			print_table(&tr, res, nt);
		free(tr.ev);
	}
	if (json)
		printf("]\n");
	return 0;
}
