/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * mc-bench's output: a table per cache size, JSON, a gnuplot PNG. Every
 * ratio is patched / stock, taken within a pair, then summarised by the
 * median over the pairs; spread = (max - min) / median.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "bench.h"

const struct bench_metric_info bench_metrics[BM_COUNT] = {
	[BM_OPS_S] = { "ops_s", "ops/s", 0 },
	[BM_CPU_US] = { "cpu_us_per_req", "server CPU us/req", 3 },
	[BM_USER_US] = { "user_us_per_req", "  of which user", 3 },
	[BM_SYS_US] = { "sys_us_per_req", "  of which system", 3 },
	[BM_ACQ_LINK] = { "lru_lock_acq_link_per_req", "LRU lock acq/req link", 4 },
	[BM_ACQ_BUMP] = { "lru_lock_acq_bump_per_req", "LRU lock acq/req bump", 4 },
	[BM_ACQ_ALL] = { "lru_lock_acq_per_req", "LRU lock acq/req all", 4 },
	[BM_WAIT_LINK] = { "lru_lock_wait_ns_link_per_req", "LRU wait ns/req link", 2 },
	[BM_WAIT_BUMP] = { "lru_lock_wait_ns_bump_per_req", "LRU wait ns/req bump", 2 },
	[BM_WAIT_ALL] = { "lru_lock_wait_ns_per_req", "LRU wait ns/req all", 2 },
	[BM_P99_US] = { "p99_us", "p99 latency us", 0 },
	[BM_HIT] = { "get_hit_ratio", "GET hit ratio", 3 },
};

static int bench_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

void bench_stat(const double *v, unsigned int n, struct bench_stat *s)
{
	double sorted[BENCH_MAX_PAIRS];

	memset(s, 0, sizeof(*s));
	s->n = n;
	if (!n)
		return;
	memcpy(sorted, v, n * sizeof(*v));
	qsort(sorted, n, sizeof(*sorted), bench_cmp);
	s->min = sorted[0];
	s->max = sorted[n - 1];
	s->median = n % 2 ? sorted[n / 2] :
			    (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
	s->spread = s->median > 0 ? (s->max - s->min) / s->median : 0;
}

unsigned int bench_ratios(const struct bench_size *z, enum bench_metric m,
			  double *out)
{
	unsigned int i, n = 0;

	for (i = 0; i < z->pairs; i++)
		if (z->side[0].v[m][i] > 0)
			out[n++] = z->side[1].v[m][i] / z->side[0].v[m][i];
	return n;
}

static void bench_cell(FILE *f, int prec, const struct bench_stat *s)
{
	char cell[112];

	snprintf(cell, sizeof(cell), "%.*f [%.*f..%.*f]", prec, s->median,
		 prec, s->min, prec, s->max);
	fprintf(f, " %-27s", cell);
}

void bench_print(FILE *f, const struct bench *b)
{
	unsigned int i, m;

	fprintf(f, "mc-bench: %s vs %s%s\n", b->bin[1], b->bin[0],
		b->self_check ? " (self-check: stock paired with itself, "
				"ratios must be ~1)" : "");
	fprintf(f, "  %u server threads; load: %u SET + %u GET connections, "
		   "pipeline %u, %u keys (%s), %u-byte values, %u threads;\n"
		   "  %.1f s measured after %.1f s warm-up and a prefill; "
		   "%u uncounted run(s) per size first;\n"
		   "  nothing pinned (server and load share the cores)\n",
		b->server_threads, b->load.set_conns, b->load.get_conns,
		b->load.pipeline, b->load.keys,
		b->load.skew == LG_ZIPF ? "zipf" : "uniform",
		b->load.value_size, b->load.threads, b->load.duration_s,
		b->load.warmup_s, b->warm_runs);
	fprintf(f, "  loadavg before: %s; after: %s\n", b->load_before,
		b->load_after);
	for (i = 0; i < b->nsizes; i++) {
		const struct bench_size *z = &b->size[i];

		fprintf(f, "\n-m %u: %u pairs, median [min..max]; ratio = "
			   "%s/stock per pair, +-spread\n", z->mem_mb, z->pairs,
			z->side[1].name);
		fprintf(f, "  %-24s %-27s %-27s %s\n", "", "stock",
			z->side[1].name, "ratio");
		for (m = 0; m < BM_COUNT; m++) {
			struct bench_stat s0, s1, r;
			double q[BENCH_MAX_PAIRS];
			unsigned int n = bench_ratios(z, m, q);

			bench_stat(z->side[0].v[m], z->pairs, &s0);
			bench_stat(z->side[1].v[m], z->pairs, &s1);
			bench_stat(q, n, &r);
			fprintf(f, "  %-24s", bench_metrics[m].label);
			bench_cell(f, bench_metrics[m].prec, &s0);
			bench_cell(f, bench_metrics[m].prec, &s1);
			if (n)
				fprintf(f, " %.3f +-%.0f%% [%.3f..%.3f]\n",
					r.median, r.spread * 100, r.min, r.max);
			else
				fprintf(f, " - (stock is 0)\n");
		}
	}
}

static void bench_json_stat(FILE *f, const char *key, const double *v,
			    unsigned int n)
{
	struct bench_stat s;
	unsigned int i;

	bench_stat(v, n, &s);
	fprintf(f, "\"%s\":{\"median\":%.6g,\"min\":%.6g,\"max\":%.6g,"
		   "\"spread\":%.4f,\"runs\":[", key, s.median, s.min, s.max,
		s.spread);
	for (i = 0; i < n; i++)
		fprintf(f, "%s%.6g", i ? "," : "", v[i]);
	fprintf(f, "]}");
}

void bench_json(FILE *f, const struct bench *b)
{
	unsigned int i, m;

	fprintf(f, "{\"stock\":\"%s\",\"patched\":\"%s\",\"self_check\":%d,"
		   "\"server_threads\":%u,\"warm_runs\":%u,\"pinned\":false,"
		   "\"loadavg_before\":\"%s\",\"loadavg_after\":\"%s\","
		   "\"load\":{\"set_conns\":%u,\"get_conns\":%u,\"pipeline\":%u,"
		   "\"keys\":%u,\"value_size\":%u,\"skew\":\"%s\","
		   "\"threads\":%u,\"seconds\":%.2f,\"warmup\":%.2f},"
		   "\"ratio\":\"patched/stock per pair\",\"sizes\":[",
		b->bin[0], b->bin[1], b->self_check, b->server_threads,
		b->warm_runs, b->load_before, b->load_after, b->load.set_conns,
		b->load.get_conns, b->load.pipeline, b->load.keys,
		b->load.value_size, b->load.skew == LG_ZIPF ? "zipf" : "uniform",
		b->load.threads, b->load.duration_s, b->load.warmup_s);
	for (i = 0; i < b->nsizes; i++) {
		const struct bench_size *z = &b->size[i];

		fprintf(f, "%s{\"mem_mb\":%u,\"pairs\":%u,\"metrics\":{",
			i ? "," : "", z->mem_mb, z->pairs);
		for (m = 0; m < BM_COUNT; m++) {
			double q[BENCH_MAX_PAIRS];
			unsigned int n = bench_ratios(z, m, q);

			fprintf(f, "%s\"%s\":{", m ? "," : "",
				bench_metrics[m].name);
			bench_json_stat(f, "stock", z->side[0].v[m], z->pairs);
			fputc(',', f);
			bench_json_stat(f, "patched", z->side[1].v[m], z->pairs);
			fputc(',', f);
			bench_json_stat(f, "ratio", q, n);
			fputc('}', f);
		}
		fprintf(f, "}}");
	}
	fprintf(f, "]}\n");
}

/*
 * One cluster per metric, a point per cache size: the median ratio with
 * its min..max as the error bar; 1 is "same as stock". Lock counts can
 * fall by orders of magnitude, so the y axis is logarithmic.
 */
int bench_plot(const struct bench *b, const char *png)
{
	char dat[4096];
	FILE *d, *g;
	unsigned int i, m;
	int st;

	snprintf(dat, sizeof(dat), "%s.dat", png);
	d = fopen(dat, "w");
	if (!d) {
		perror(dat);
		return -1;
	}
	for (i = 0; i < b->nsizes; i++) {
		fprintf(d, "# -m %u: metric median min max\n", b->size[i].mem_mb);
		for (m = 0; m < BM_COUNT; m++) {
			double q[BENCH_MAX_PAIRS];
			struct bench_stat r;

			bench_stat(q, bench_ratios(&b->size[i], m, q), &r);
			if (r.n)
				fprintf(d, "%u \"%s\" %.6g %.6g %.6g\n", m,
					bench_metrics[m].label, r.median, r.min,
					r.max);
		}
		fprintf(d, "\n\n");
	}
	fclose(d);
	g = popen("gnuplot 2>&1", "w");
	if (!g)
		return -1;
	fprintf(g, "set terminal png size 1200,600\nset output '%s'\n"
		   "set title 'memcached %s / stock, per pair: median and "
		   "min..max of %u pairs'\n"
		   "set logscale y\nset ylabel 'ratio (1 = stock)'\n"
		   "set xtics rotate by -30\nset grid y\nset key top left\n"
		   "set xrange [-0.5:%d.5]\n",
		png, b->self_check ? "stock (self-check)" : "patched", b->pairs,
		BM_COUNT - 1);
	fprintf(g, "plot 1 with lines lt 0 title 'stock'");
	for (i = 0; i < b->nsizes; i++)
		/* The metric names label the axis once, from the first size. */
		fprintf(g, ", '%s' index %u using ($1+%.2f):3:4:5%s "
			   "with yerrorbars pt 7 title '-m %u'", dat, i,
			(double)i * 0.2 - 0.1, i ? "" : ":xtic(2)",
			b->size[i].mem_mb);
	fprintf(g, "\n");
	st = pclose(g);
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "mc-bench: gnuplot failed; data in %s\n", dat);
		return -1;
	}
	fprintf(stderr, "mc-bench: plot in %s\n", png);
	return 0;
}
