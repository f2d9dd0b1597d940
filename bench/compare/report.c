// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lb-compare's output: text tables, JSON and a gnuplot PNG, all from the
 * same cells (median of the repetitions, spread = (max - min) / median).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "compare.h"

struct cmp_cell *cmp_cell(struct cmp_report *r, unsigned int w,
			  unsigned int s, unsigned int t, unsigned int b)
{
	return &r->cells[((w * r->ns + s) * r->nt + t) * r->nb + b];
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double cmp_median(const double *v, unsigned int n)
{
	double s[16];

	if (!n)
		return 0;
	memcpy(s, v, n * sizeof(*v));
	qsort(s, n, sizeof(*s), cmp_double);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

double cmp_spread(const double *v, unsigned int n)
{
	double lo = v[0], hi = v[0], m = cmp_median(v, n);
	unsigned int i;

	if (!n)
		return 0;
	for (i = 1; i < n; i++) {
		lo = v[i] < lo ? v[i] : lo;
		hi = v[i] > hi ? v[i] : hi;
	}
	return m > 0 ? (hi - lo) / m : 0;
}

/*
 * The ratio of @c to @ref as the median, over the repetitions both ran, of
 * the ratio within one repetition (its back-ends ran one after the other);
 * *@spread gets (max - min) / median of those ratios. This machine's
 * speed moves in steps that last many runs (2 vCPUs: the same
 * prodcons configuration ran at about 38 or about 90 M/s for every
 * back-end alike, for tens of seconds at a time): a ratio of two medians
 * taken from different runs compared one back-end's slow runs with
 * another's fast ones, a ratio within one repetition compares runs that
 * saw the same machine. 0 (and *@spread 0) when no repetition has both.
 */
double cmp_paired_ratio(const struct cmp_cell *c, const struct cmp_cell *ref,
			int cpu, double *spread)
{
	const double *v = cpu ? c->cpu_ns : c->mops;
	const double *v0 = cpu ? ref->cpu_ns : ref->mops;
	double q[16];
	unsigned int i, j, n = 0;

	for (i = 0; i < c->n; i++)
		for (j = 0; j < ref->n; j++)
			if (ref->rep[j] == c->rep[i] && v0[j] > 0) {
				q[n++] = v[i] / v0[j];
				break;
			}
	*spread = n ? cmp_spread(q, n) : 0;
	return n ? cmp_median(q, n) : 0;
}

/* Column of the reference back-end (pcp-adaptive), else the first. */
static unsigned int ref_col(const struct cmp_report *r)
{
	unsigned int b;

	for (b = 0; b < r->nb; b++)
		if (r->be[b] == CMP_REF_BACKEND)
			return b;
	return 0;
}

static const char *bname(const struct cmp_report *r, unsigned int b)
{
	return cmp_backends[r->be[b]].name;
}

static int is_lockbatch(const struct cmp_report *r, unsigned int b)
{
	return cmp_backends[r->be[b]].pcp_tuner >= 0 ||
	       cmp_backends[r->be[b]].is_mutex;
}

static void header(FILE *f, struct cmp_report *r)
{
	unsigned int b;

	fprintf(f, "lb-compare, %s, %s\n", r->when, r->machine);
	fprintf(f, "%g s per run, median of %u runs; back-ends interleaved; "
		   "spread = (max - min) / median; a ratio is the median of "
		   "the ratios within one repetition\n", r->seconds, r->reps);
	for (b = 0; b < r->nb; b++)
		fprintf(f, "  %-14s %s\n", bname(r, b), r->versions[b]);
}

static void col_heads(FILE *f, struct cmp_report *r, int lockbatch_only)
{
	unsigned int b;

	fprintf(f, "%-16s %4s", "workload size", "thr");
	for (b = 0; b < r->nb; b++)
		if (!lockbatch_only || is_lockbatch(r, b))
			fprintf(f, " %13s", bname(r, b));
	fputc('\n', f);
}

/* The per-run figures of one metric: throughput, or CPU time per op. */
static const double *metric(const struct cmp_cell *c, int cpu)
{
	return cpu ? c->cpu_ns : c->mops;
}

static void metric_table(FILE *f, struct cmp_report *r, int cpu)
{
	unsigned int w, s, t, b, ref = ref_col(r), over = 0;

	if (cpu)
		fprintf(f, "\nCPU time per allocation (each freed), summed over "
			   "the workload threads: %s column in ns", bname(r, ref));
	else
		fprintf(f, "\nThroughput: %s column in M allocations/s (each "
			   "freed)", bname(r, ref));
	fprintf(f, ", others as ratio to it%s; +-spread (of the ratios)\n",
		cpu ? " (below 1 = cheaper)" : "");
	col_heads(f, r, 0);
	for (w = 0; w < r->nw; w++)
	for (s = 0; s < r->ns; s++)
	for (t = 0; t < r->nt; t++) {
		struct cmp_cell *c0 = cmp_cell(r, w, s, t, ref);

		over |= r->threads[t] > r->ncpu;
		fprintf(f, "%-9s %6zu %3u%s", cmp_workload_name(r->wl[w]),
			r->sizes[s], r->threads[t],
			r->threads[t] > r->ncpu ? "*" : " ");
		for (b = 0; b < r->nb; b++) {
			struct cmp_cell *c = cmp_cell(r, w, s, t, b);
			double m = cmp_median(metric(c, cpu), c->n);
			double sp = cmp_spread(metric(c, cpu), c->n);

			if (b != ref)
				m = cmp_paired_ratio(c, c0, cpu, &sp);
			if (!c->n)
				fprintf(f, " %13s", "failed");
			else if (b == ref)
				fprintf(f, " %7.2f%s+-%2.0f%%", m,
					cpu ? "n" : "M", 100 * sp);
			else
				fprintf(f, " %7.2fx+-%2.0f%%", m, 100 * sp);
		}
		fputc('\n', f);
	}
	if (over)
		fprintf(f, "* oversubscribed: more threads than the %u CPUs of "
			   "this machine\n", r->ncpu);
}

/*
 * The workload's peak live bytes in one configuration: the most any run
 * of any back-end sampled. A run samples every 2 ms and its own figure
 * missed the run's peak by up to a third (a burst lasts microseconds), so
 * a ratio over it moved with the sampling more than with the allocator;
 * over the common figure the columns differ by their peak RSS alone.
 */
static double config_live_kib(struct cmp_report *r, unsigned int w,
			      unsigned int s, unsigned int t)
{
	uint64_t live = 0;
	unsigned int b;

	for (b = 0; b < r->nb; b++)
		if (cmp_cell(r, w, s, t, b)->live_max_kib > live)
			live = cmp_cell(r, w, s, t, b)->live_max_kib;
	return (double)live;
}

static void memory_table(FILE *f, struct cmp_report *r)
{
	unsigned int w, s, b, t = r->nt - 1;

	fprintf(f, "\nMemory at %u threads: peak RSS growth over the start / "
		   "peak live bytes, the most any run sampled (1.00 = no "
		   "overhead); live MiB\n", r->threads[t]);
	col_heads(f, r, 0);
	for (w = 0; w < r->nw; w++)
	for (s = 0; s < r->ns; s++) {
		double live = config_live_kib(r, w, s, t);

		fprintf(f, "%-9s %6zu %3u ", cmp_workload_name(r->wl[w]),
			r->sizes[s], r->threads[t]);
		for (b = 0; b < r->nb; b++) {
			struct cmp_result *x = &cmp_cell(r, w, s, t, b)->last;
			double grow = (double)x->peak_rss_kib - x->base_rss_kib;

			fprintf(f, " %6.2f/%5.1fM", live > 0 ? grow / live : 0,
				live / 1024);
		}
		fputc('\n', f);
	}
}

static void lock_table(FILE *f, struct cmp_report *r)
{
	unsigned int w, s, t, b;

	fprintf(f, "\nBack-end lock holds per 1000 allocations (lockbatch rows)\n");
	col_heads(f, r, 1);
	for (w = 0; w < r->nw; w++)
	for (s = 0; s < r->ns; s++)
	for (t = 0; t < r->nt; t++) {
		fprintf(f, "%-9s %6zu %3u ", cmp_workload_name(r->wl[w]),
			r->sizes[s], r->threads[t]);
		for (b = 0; b < r->nb; b++) {
			struct cmp_result *x = &cmp_cell(r, w, s, t, b)->last;

			if (is_lockbatch(r, b))
				fprintf(f, " %13.2f", x->ops ?
					1000.0 * x->lock_trips / x->ops : 0);
		}
		fputc('\n', f);
	}
}

void cmp_print_tables(FILE *f, struct cmp_report *r)
{
	unsigned int i, errs = 0;

	header(f, r);
	metric_table(f, r, 0);
	metric_table(f, r, 1);
	memory_table(f, r);
	lock_table(f, r);
	for (i = 0; i < r->nw * r->ns * r->nt * r->nb; i++)
		errs += r->cells[i].errors > 0 || r->cells[i].skipped;
	if (errs)
		fprintf(f, "\n%u configurations had failed runs or corrupted "
			   "blocks (see --json)\n", errs);
}

static void json_cell(FILE *f, struct cmp_report *r, unsigned int w,
		      unsigned int s, unsigned int t, unsigned int b)
{
	struct cmp_cell *c = cmp_cell(r, w, s, t, b);
	struct cmp_cell *ref = cmp_cell(r, w, s, t, ref_col(r));
	double m = cmp_median(c->mops, c->n), n = cmp_median(c->cpu_ns, c->n);
	double rsp, csp, ratio = cmp_paired_ratio(c, ref, 0, &rsp);
	double cpu_ratio = cmp_paired_ratio(c, ref, 1, &csp);
	unsigned int i;

	fprintf(f, "{\"workload\":\"%s\",\"size\":%zu,\"threads\":%u,"
		   "\"oversubscribed\":%s,\"backend\":\"%s\",\"mops_runs\":[",
		cmp_workload_name(r->wl[w]), r->sizes[s], r->threads[t],
		r->threads[t] > r->ncpu ? "true" : "false", bname(r, b));
	for (i = 0; i < c->n; i++)
		fprintf(f, "%s%.4f", i ? "," : "", c->mops[i]);
	fprintf(f, "],\"cpu_ns_runs\":[");
	for (i = 0; i < c->n; i++)
		fprintf(f, "%s%.3f", i ? "," : "", c->cpu_ns[i]);
	fprintf(f, "],\"cpu_ns_median\":%.3f,\"cpu_spread\":%.4f,"
		   "\"cpu_ratio\":%.4f,\"cpu_ratio_spread\":%.4f,"
		   "\"csw\":%llu", n, cmp_spread(c->cpu_ns, c->n), cpu_ratio,
		csp, (unsigned long long)c->last.csw);
	fprintf(f, ",\"mops_median\":%.4f,\"spread\":%.4f,\"ratio\":%.4f,"
		   "\"ratio_spread\":%.4f,"
		   "\"base_rss_kib\":%llu,\"peak_rss_kib\":%llu,"
		   "\"peak_live_kib\":%llu,\"lock_trips\":%llu,\"ops\":%llu,"
		   "\"refills\":%llu,\"refill_units\":%llu,"
		   "\"errors\":%llu,\"failed_runs\":%s}",
		m, cmp_spread(c->mops, c->n), ratio, rsp,
		(unsigned long long)c->last.base_rss_kib,
		(unsigned long long)c->last.peak_rss_kib,
		(unsigned long long)c->last.peak_live_kib,
		(unsigned long long)c->last.lock_trips,
		(unsigned long long)c->last.ops,
		(unsigned long long)c->last.refills,
		(unsigned long long)c->last.refill_units,
		(unsigned long long)c->errors, c->skipped ? "true" : "false");
}

void cmp_print_json(FILE *f, struct cmp_report *r)
{
	unsigned int w, s, t, b, first = 1;

	fprintf(f, "{\"date\":\"%s\",\"machine\":\"%s\",\"cpus\":%u,"
		   "\"seconds\":%g,\"reps\":%u,\"reference\":\"%s\","
		   "\"backends\":[", r->when, r->machine, r->ncpu, r->seconds,
		r->reps, bname(r, ref_col(r)));
	for (b = 0; b < r->nb; b++)
		fprintf(f, "%s{\"name\":\"%s\",\"version\":\"%s\"}",
			b ? "," : "", bname(r, b), r->versions[b]);
	fputs("],\"results\":[\n", f);
	for (w = 0; w < r->nw; w++)
	for (s = 0; s < r->ns; s++)
	for (t = 0; t < r->nt; t++)
	for (b = 0; b < r->nb; b++) {
		fputs(first ? "" : ",\n", f);
		json_cell(f, r, w, s, t, b);
		first = 0;
	}
	fputs("\n]}\n", f);
}

/* Ten colours that stay apart; line styles cycle through them. */
static const char *const colours[] = {
	"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
	"#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
};

/*
 * One panel per workload (rows) and size (columns): M allocs/s by threads;
 * the key once, in the first panel. The lockbatch rows are solid, the
 * malloc rows dashed.
 */
static void plot_script(FILE *g, struct cmp_report *r, const char *png,
			const char *dat)
{
	unsigned int w, s, b, k = 0;

	fprintf(g, "set terminal pngcairo noenhanced size %u,%u font ',9'\n",
		420 * r->ns, 320 * r->nw);
	fprintf(g, "set output '%s'\nset logscale x 2\nset logscale y 10\n",
		png);
	fprintf(g, "set xlabel 'threads (%u CPUs)'\nset ylabel 'M allocs/s'\n"
		   "set key top right font ',7'\nnames = \"", r->ncpu);
	for (b = 0; b < r->nb; b++)
		fprintf(g, "%s%s", b ? " " : "", bname(r, b));
	fputs("\"\n", g);
	for (b = 0; b < r->nb; b++)
		fprintf(g, "set style line %u lc rgb '%s' lw 1.5 pt %u dt %u\n",
			b + 1, colours[b % 10], b % 14 + 1,
			is_lockbatch(r, b) ? 1 : 2);
	fprintf(g, "set multiplot layout %u,%u title 'lb-compare, %s, %g s x %u'\n",
		r->nw, r->ns, r->when, r->seconds, r->reps);
	for (w = 0; w < r->nw; w++)
	for (s = 0; s < r->ns; s++, k++) {
		fprintf(g, "set title '%s, %zu B'\n", cmp_workload_name(r->wl[w]),
			r->sizes[s]);
		fprintf(g, "plot for [i=2:%u] '%s' index %u using 1:i with "
			   "linespoints ls (i-1) title word(names, i-1)\n",
			r->nb + 1, dat, k);
		if (!k)
			fputs("unset key\n", g);
	}
	fputs("unset multiplot\n", g);
}

int cmp_plot(struct cmp_report *r, const char *png)
{
	char dat[512];
	unsigned int w, s, t, b;
	FILE *d, *g;
	int st;

	snprintf(dat, sizeof(dat), "%s.dat", png);
	d = fopen(dat, "w");
	if (!d)
		return -1;
	for (w = 0; w < r->nw; w++)
	for (s = 0; s < r->ns; s++) {
		fprintf(d, "# %s %zu\n", cmp_workload_name(r->wl[w]), r->sizes[s]);
		for (t = 0; t < r->nt; t++) {
			fprintf(d, "%u", r->threads[t]);
			for (b = 0; b < r->nb; b++) {
				struct cmp_cell *c = cmp_cell(r, w, s, t, b);

				fprintf(d, " %.4f", cmp_median(c->mops, c->n));
			}
			fputc('\n', d);
		}
		fputs("\n\n", d);
	}
	fclose(d);
	g = popen("gnuplot 2>&1", "w");
	if (!g)
		return -1;
	plot_script(g, r, png, dat);
	st = pclose(g);
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "lb-compare: gnuplot failed or is not installed; "
			"data in %s\n", dat);
		return WIFEXITED(st) && WEXITSTATUS(st) == 127 ? 0 : -1;
	}
	fprintf(stderr, "lb-compare: plot in %s\n", png);
	return 0;
}
