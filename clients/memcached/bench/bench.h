/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * mc-bench: stock against patched memcached, in interleaved pairs, at an
 * eviction-heavy cache and at one that fits; ratios are taken pair by pair
 * (patched / stock of the same pair) and summarised by their median and
 * spread, so that the machine's drift between pairs cancels.
 */
#ifndef LB_MC_BENCH_H
#define LB_MC_BENCH_H

#include "lg.h"

#define BENCH_MAX_PAIRS 64
#define BENCH_MAX_SIZES 4

/* What one run is summarised by; each is also given as a ratio. */
enum bench_metric {
	BM_OPS_S,		/* client-side throughput */
	BM_CPU_US,		/* server CPU time per request, us */
	BM_USER_US,		/* ... of which in user space */
	BM_SYS_US,		/* ... and in the kernel */
	BM_ACQ_LINK,		/* LRU lock acquisitions per request */
	BM_ACQ_BUMP,
	BM_ACQ_ALL,
	BM_WAIT_LINK,		/* LRU lock wait per request, ns */
	BM_WAIT_BUMP,
	BM_WAIT_ALL,
	BM_P99_US,		/* request latency */
	BM_HIT,			/* GET hit ratio */
	BM_COUNT
};

struct bench_metric_info {
	const char *name;	/* JSON key */
	const char *label;	/* table row */
	int prec;		/* decimals of a value in the table */
};

extern const struct bench_metric_info bench_metrics[BM_COUNT];

struct bench_side {
	const char *name;	/* "stock" or "patched" */
	const char *bin;
	double v[BM_COUNT][BENCH_MAX_PAIRS];
};

struct bench_size {
	unsigned int mem_mb;
	unsigned int pairs;	/* pairs that completed */
	struct bench_side side[2];	/* [0] stock, [1] patched */
};

struct bench {
	struct lg_conf load;
	unsigned int server_threads;
	unsigned int pairs;
	unsigned int warm_runs;	/* per size, before the pairs, not counted */
	unsigned int nsizes;
	unsigned int mem_mb[BENCH_MAX_SIZES];
	const char *bin[2];
	int self_check;		/* patched is stock: the ratio must be ~1 */
	char load_before[64], load_after[64];
	struct bench_size size[BENCH_MAX_SIZES];
};

/* Median, extremes and spread ((max - min) / median) of n values. */
struct bench_stat {
	double median, min, max, spread;
	unsigned int n;
};

void bench_stat(const double *v, unsigned int n, struct bench_stat *s);
/* Per-pair ratios patched / stock of metric @m; pairs with stock 0 skip. */
unsigned int bench_ratios(const struct bench_size *z, enum bench_metric m,
			  double *out);

void bench_print(FILE *f, const struct bench *b);
void bench_json(FILE *f, const struct bench *b);
/* 0, or -1 when gnuplot failed (the data file is kept). */
int bench_plot(const struct bench *b, const char *png);

/* Run one server and one load; fills one pair slot of @side. */
int bench_run_one(const struct bench *b, unsigned int mem_mb,
		  const char *bin, struct lg_result *r);

#endif
