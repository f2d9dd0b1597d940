/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * mc-bench: stock against patched memcached, interleaved pairs.
 *
 *   mc-bench --stock BIN [--patched BIN] [--pairs 5] [--sizes 32,1024]
 *            [--server-threads 4] [--seconds S] [--warmup S] [--quick]
 *            [--skew uniform|zipf] [--load-threads 2] [--json]
 *            [--json-out FILE] [--plot FILE.png] [--warm-runs 1]
 *
 * Both servers must carry patch 0001 (they are started with
 * -o lru_lock_stats). Without --patched, stock is paired with itself: a
 * self-check whose ratios must come out near 1, their spread the noise.
 * Pair i runs stock then patched when i is even, patched then stock when
 * odd, so neither side always gets the warmer machine.
 *
 * Nothing is pinned: on a 2-core machine the server's 4 worker threads,
 * its maintainer threads and the load generator share both cores, and the
 * figures are those of that sharing.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: mc-bench --stock BIN [--patched BIN] [--pairs N] "
		   "[--sizes MB,MB]\n"
		   "                [--server-threads N] [--seconds S] "
		   "[--warmup S] [--quick]\n"
		   "                [--skew uniform|zipf] [--load-threads N] "
		   "[--json] [--json-out FILE]\n"
		   "                [--plot FILE.png] [--warm-runs N]\n"
		   "defaults: 5 pairs, -m 32 and -m 1024, 4 server threads, "
		   "4 s measured after a\n"
		   "          1 s warm-up (--quick: 1.5 s after 0.5 s), "
		   "16 SET + 16 GET connections,\n"
		   "          pipeline 8, 400000 keys, 64-byte values; one "
		   "warm-up run per size\n"
		   "          (stock's, not counted)\n");
}

static double bench_real(const char *opt, const char *s, double lo, double hi)
{
	return lg_opt_real("mc-bench", opt, s, lo, hi);
}

static void bench_sizes(struct bench *b, const char *list)
{
	char *copy = strdup(list), *tok, *save = NULL;

	b->nsizes = 0;
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (b->nsizes == BENCH_MAX_SIZES) {
			fprintf(stderr, "mc-bench: at most %d sizes\n",
				BENCH_MAX_SIZES);
			exit(2);
		}
		b->mem_mb[b->nsizes++] =
			(unsigned int)lg_opt_num("mc-bench", "sizes", tok, 1, 65536);
	}
	free(copy);
	if (!b->nsizes) {
		fprintf(stderr, "mc-bench: --sizes is empty\n");
		exit(2);
	}
}

static void bench_loadavg(char *out, size_t len)
{
	FILE *f = fopen("/proc/loadavg", "r");

	out[0] = 0;
	if (f) {
		if (fgets(out, (int)len, f))
			out[strcspn(out, "\n")] = 0;
		fclose(f);
	}
}

static void bench_record(struct bench_side *s, unsigned int i,
			 const struct lg_result *r)
{
	double acq = 0, wait = 0, look = (double)(r->hits + r->misses);
	unsigned int p;

	for (p = 0; p < LG_PATHS; p++) {
		acq += r->acq_per_req[p];
		wait += r->wait_ns_per_req[p];
	}
	s->v[BM_OPS_S][i] = r->ops_s;
	s->v[BM_CPU_US][i] = r->srv_cpu_us_per_req;
	s->v[BM_USER_US][i] = r->srv_user_us_per_req;
	s->v[BM_SYS_US][i] = r->srv_sys_us_per_req;
	s->v[BM_ACQ_LINK][i] = r->acq_per_req[0];
	s->v[BM_ACQ_BUMP][i] = r->acq_per_req[1];
	s->v[BM_ACQ_ALL][i] = acq;
	s->v[BM_WAIT_LINK][i] = r->wait_ns_per_req[0];
	s->v[BM_WAIT_BUMP][i] = r->wait_ns_per_req[1];
	s->v[BM_WAIT_ALL][i] = wait;
	s->v[BM_P99_US][i] = (double)r->p99_ns / 1e3;
	s->v[BM_HIT][i] = look > 0 ? (double)r->hits / look : 0;
}

static int bench_size_run(struct bench *b, struct bench_size *z)
{
	unsigned int i, k;

	/*
	 * The first run after a pause, or after another cache size, meets a
	 * colder machine than the rest (it is always stock's): run it, and
	 * count nothing from it.
	 */
	for (i = 0; i < b->warm_runs; i++) {
		struct lg_result r;
		int err = bench_run_one(b, z->mem_mb, z->side[0].bin, &r);

		if (err)
			return err;
		fprintf(stderr, "mc-bench: -m %u warm-up run: %.0f ops/s (not "
				"counted)\n", z->mem_mb, r.ops_s);
	}
	for (i = 0; i < b->pairs; i++) {
		for (k = 0; k < 2; k++) {
			/* Even pairs: stock first; odd pairs: patched first. */
			unsigned int s = (i % 2) ? 1 - k : k;
			struct lg_result r;
			int err = bench_run_one(b, z->mem_mb, z->side[s].bin, &r);

			if (err)
				return err;
			bench_record(&z->side[s], i, &r);
			fprintf(stderr, "mc-bench: -m %u pair %u %s: %.0f ops/s, "
					"%.3f us CPU/req\n", z->mem_mb, i + 1,
				z->side[s].name, r.ops_s, r.srv_cpu_us_per_req);
		}
		z->pairs = i + 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "stock", 1, 0, 's' }, { "patched", 1, 0, 'p' },
		{ "pairs", 1, 0, 'n' }, { "sizes", 1, 0, 'm' },
		{ "server-threads", 1, 0, 't' }, { "seconds", 1, 0, 'd' },
		{ "warmup", 1, 0, 'w' }, { "quick", 0, 0, 'q' },
		{ "skew", 1, 0, 'z' }, { "load-threads", 1, 0, 'l' },
		{ "json", 0, 0, 'j' }, { "json-out", 1, 0, 'o' },
		{ "plot", 1, 0, 'P' }, { "warm-runs", 1, 0, 'W' },
		{ "help", 0, 0, 'h' }, { 0 }
	};
	static struct bench b;
	const char *json_out = NULL, *plot = NULL;
	int json = 0, o, err = 0, quick = 0, seconds_set = 0, warmup_set = 0;
	unsigned int i;

	lg_conf_default(&b.load);
	b.load.duration_s = 4;
	b.server_threads = 4;
	b.pairs = 5;
	b.warm_runs = 1;
	bench_sizes(&b, "32,1024");
	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 's': b.bin[0] = optarg; break;
		case 'p': b.bin[1] = optarg; break;
		case 'n': b.pairs = (unsigned int)lg_opt_num("mc-bench", "pairs", optarg, 1, BENCH_MAX_PAIRS); break;
		case 'm': bench_sizes(&b, optarg); break;
		case 't': b.server_threads = (unsigned int)lg_opt_num("mc-bench", "server-threads", optarg, 1, 64); break;
		case 'd': b.load.duration_s = bench_real("seconds", optarg, 0.1, 600); seconds_set = 1; break;
		case 'w': b.load.warmup_s = bench_real("warmup", optarg, 0, 600); warmup_set = 1; break;
		case 'q': quick = 1; break;
		case 'z':
			if (!strcmp(optarg, "zipf"))
				b.load.skew = LG_ZIPF;
			else if (!strcmp(optarg, "uniform"))
				b.load.skew = LG_UNIFORM;
			else {
				fprintf(stderr, "mc-bench: --skew is uniform or zipf\n");
				return 2;
			}
			break;
		case 'l': b.load.threads = (unsigned int)lg_opt_num("mc-bench", "load-threads", optarg, 1, 64); break;
		case 'j': json = 1; break;
		case 'o': json_out = optarg; break;
		case 'P': plot = optarg; break;
		case 'W': b.warm_runs = (unsigned int)lg_opt_num("mc-bench", "warm-runs", optarg, 0, 10); break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (quick) {
		if (!seconds_set)
			b.load.duration_s = 1.5;
		if (!warmup_set)
			b.load.warmup_s = 0.5;
	}
	if (!b.bin[0] || optind != argc) {
		usage(stderr);
		return 2;
	}
	for (i = 0; i < 2; i++)
		if (b.bin[i] && access(b.bin[i], X_OK)) {
			fprintf(stderr, "mc-bench: %s is not an executable\n",
				b.bin[i]);
			return 2;
		}
	if (!b.bin[1]) {
		b.bin[1] = b.bin[0];
		b.self_check = 1;
	}
	bench_loadavg(b.load_before, sizeof(b.load_before));
	for (i = 0; i < b.nsizes && !err; i++) {
		struct bench_size *z = &b.size[i];

		z->mem_mb = b.mem_mb[i];
		z->side[0].name = "stock";
		z->side[0].bin = b.bin[0];
		z->side[1].name = b.self_check ? "stock (again)" : "patched";
		z->side[1].bin = b.bin[1];
		err = bench_size_run(&b, z);
	}
	bench_loadavg(b.load_after, sizeof(b.load_after));
	if (err)
		fprintf(stderr, "mc-bench: stopped: %s; what finished follows\n",
			strerror(-err));
	if (json)
		bench_json(stdout, &b);
	else
		bench_print(stdout, &b);
	if (json_out) {
		FILE *f = fopen(json_out, "w");

		if (!f) {
			perror(json_out);
			return 1;
		}
		bench_json(f, &b);
		fclose(f);
	}
	if (plot && bench_plot(&b, plot) < 0)
		return 1;
	return err ? 1 : 0;
}
