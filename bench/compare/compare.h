/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * lb-compare: lb_pcp against the allocators a user would pick instead.
 *
 * One program, two roles. The driver (driver.c) plans the runs, executes
 * itself once per run as a worker (worker.c, workload.c) with the peer
 * allocator under test in LD_PRELOAD, so each allocator is alone in its
 * process, reads the worker's one result line, and reports (report.c).
 */
#ifndef LB_COMPARE_H
#define LB_COMPARE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CMP_MAX_THREADS 64

enum cmp_workload { CMP_BURST, CMP_PRODCONS, CMP_LARSON, CMP_NR_WORKLOADS };

/* A back-end: lb_pcp (one tuner), the mutex free list, or a malloc. */
struct cmp_backend {
	const char *name;	/* "pcp-adaptive", "mutex", "glibc", "jemalloc" */
	const char *preload;	/* soname for LD_PRELOAD, NULL for none */
	const char *env;	/* NAME=VALUE set in the worker, or NULL */
	const char *family;	/* what the worker must find loaded */
	int pcp_tuner;		/* enum lb_pcp_tuner, or -1 */
	int is_mutex;
};

extern const struct cmp_backend cmp_backends[];
extern const unsigned int cmp_nr_backends;
/* Index of the reference back-end (pcp-adaptive) in cmp_backends. */
#define CMP_REF_BACKEND 3

const char *cmp_workload_name(enum cmp_workload w);
int cmp_workload_parse(const char *s);
int cmp_backend_parse(const char *s);

/* One run: what the driver asks a worker for. */
struct cmp_spec {
	unsigned int backend;
	enum cmp_workload workload;
	size_t size;
	unsigned int threads;
	double seconds;
	uint64_t max_ops;	/* per thread */
	size_t arena_mib;
	uint64_t seed;
};

/* What a worker measured. */
struct cmp_result {
	uint64_t ops;		/* allocations, each freed */
	double secs;
	double mops;
	uint64_t base_rss_kib;	/* before the back-end existed */
	uint64_t peak_rss_kib;	/* VmHWM at the end */
	uint64_t peak_live_kib;	/* most bytes the workload held (sampled) */
	uint64_t lock_trips;	/* back-end lock holds while timed; 0 for a malloc */
	uint64_t refills;	/* lb_pcp: back-end refills over the run */
	uint64_t refill_units;	/* objects they brought */
	uint64_t errors;	/* corrupted blocks, failed allocations */
	uint64_t cpu_ns;	/* CPU time of the workload threads while timed */
	uint64_t csw;		/* their context switches while timed */
	char version[48];	/* the allocator that actually ran */
};

/* workload.c: the block-level interface and the workload runner. */
struct cmp_alloc {
	void *(*alloc)(void *ctx);
	void (*free)(void *ctx, void *blk);
	uint64_t (*lock_trips)(void *ctx);	/* back-end holds so far; may be NULL */
	void *ctx;
	size_t size;
};

int cmp_run_workload(const struct cmp_spec *s, const struct cmp_alloc *a,
		     struct cmp_result *r);

/* worker.c */
int cmp_worker_main(int argc, char **argv);
int cmp_result_format(char *buf, size_t len, const struct cmp_result *r);
int cmp_result_parse(const char *line, struct cmp_result *r);

/* Resident-set figures of this process, KiB (0 if unknown). */
uint64_t cmp_rss_kib(const char *field);

/* report.c */
struct cmp_cell {			/* one back-end in one configuration */
	double mops[16];
	double cpu_ns[16];		/* CPU ns per allocation, per run */
	unsigned int rep[16];		/* the repetition of each run */
	unsigned int n;
	struct cmp_result last;		/* the run with the highest peak RSS */
	uint64_t live_max_kib;		/* most live KiB any run sampled */
	uint64_t errors;		/* over all runs */
	int skipped;
};

struct cmp_report {
	unsigned int nw, ns, nt, nb;
	enum cmp_workload wl[CMP_NR_WORKLOADS];
	size_t sizes[8];
	unsigned int threads[8];
	unsigned int be[16];
	struct cmp_cell *cells;		/* [w][s][t][b] */
	unsigned int reps;
	double seconds;
	unsigned int ncpu;
	char versions[16][48];
	char when[32], machine[160];
};

struct cmp_cell *cmp_cell(struct cmp_report *r, unsigned int w,
			  unsigned int s, unsigned int t, unsigned int b);
double cmp_median(const double *v, unsigned int n);
double cmp_spread(const double *v, unsigned int n);
double cmp_paired_ratio(const struct cmp_cell *c, const struct cmp_cell *ref,
			int cpu, double *spread);
void cmp_print_tables(FILE *f, struct cmp_report *r);
void cmp_print_json(FILE *f, struct cmp_report *r);
int cmp_plot(struct cmp_report *r, const char *png);

#endif /* LB_COMPARE_H */
