// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * The worker: one run of one back-end in its own process.
 *
 *   lb-compare --worker BACKEND WORKLOAD SIZE THREADS SECONDS MAX_OPS
 *              ARENA_MIB SEED
 *
 * lb_pcp rows: an lb_pcp cache (max_order 0, sized by lb_pcp_size() from
 * the arena, as Linux sizes a zone, decay thread running) over the stock
 * lb_freelist back-end on a mapped arena; every other field of both confs
 * at its default, as a user would write them. The mutex row: the same free
 * list behind one pthread mutex, one object per hold. Malloc rows: the
 * process's malloc, which the driver replaced with LD_PRELOAD; the worker
 * checks the allocator it got is the one it was asked for, so a missing
 * library cannot pass for a result.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <gnu/libc-version.h>

#include <lockbatch/freelist.h>
#include <lockbatch/pcp.h>
#include <lockbatch/version.h>

#include "compare.h"

/* glibc-notrim: glibc with heap trimming out of the way (1 GiB). */
#define NOTRIM "GLIBC_TUNABLES=glibc.malloc.trim_threshold=1073741824"

const struct cmp_backend cmp_backends[] = {
	{ "pcp-fixed", NULL, NULL, "lockbatch", LB_PCP_TUNE_FIXED, 0 },
	{ "pcp-linux", NULL, NULL, "lockbatch", LB_PCP_TUNE_LINUX, 0 },
	{ "pcp-count_min", NULL, NULL, "lockbatch", LB_PCP_TUNE_COUNT_MIN, 0 },
	{ "pcp-adaptive", NULL, NULL, "lockbatch", LB_PCP_TUNE_ADAPTIVE, 0 },
	{ "mutex", NULL, NULL, "lockbatch", -1, 1 },
	{ "glibc", NULL, NULL, "glibc", -1, 0 },
	{ "glibc-notrim", NULL, NOTRIM, "glibc", -1, 0 },
	{ "jemalloc", "libjemalloc.so.2", NULL, "jemalloc", -1, 0 },
	{ "tcmalloc", "libtcmalloc_minimal.so.4", NULL, "gperftools", -1, 0 },
	{ "mimalloc", "libmimalloc.so.2", NULL, "mimalloc", -1, 0 },
};
const unsigned int cmp_nr_backends =
	sizeof(cmp_backends) / sizeof(cmp_backends[0]);

int cmp_backend_parse(const char *s)
{
	unsigned int i;

	for (i = 0; i < cmp_nr_backends; i++)
		if (!strcmp(s, cmp_backends[i].name))
			return (int)i;
	return -EINVAL;
}

uint64_t cmp_rss_kib(const char *field)
{
	char line[256];
	size_t n = strlen(field);
	uint64_t v = 0;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, field, n) && line[n] == ':')
			v = strtoull(line + n + 1, NULL, 10);
	fclose(f);
	return v;
}

/* lb_pcp rows. */
struct pcp_ctx {
	struct lb_freelist *fl;
	struct lb_pcp *p;
};

static void *pcp_get(void *ctx)
{
	void *o;

	return lb_pcp_alloc(((struct pcp_ctx *)ctx)->p, 0, &o) ? NULL : o;
}

static void pcp_put(void *ctx, void *blk)
{
	lb_pcp_free(((struct pcp_ctx *)ctx)->p, blk, 0);
}

static uint64_t pcp_trips(void *ctx)
{
	struct lb_pcp_stats st;

	return lb_pcp_stats(((struct pcp_ctx *)ctx)->p, &st, NULL, 0) < 0 ?
		       0 : st.backend_locks;
}

/* The mutex row. */
struct mutex_ctx {
	struct lb_freelist *fl;
	pthread_mutex_t lock;
	uint64_t holds;
};

static void *mutex_get(void *ctx)
{
	struct mutex_ctx *m = ctx;
	void *o = NULL;

	pthread_mutex_lock(&m->lock);
	m->holds++;
	lb_freelist_alloc_bulk(m->fl, &o, 1);
	pthread_mutex_unlock(&m->lock);
	return o;
}

static void mutex_put(void *ctx, void *blk)
{
	struct mutex_ctx *m = ctx;

	pthread_mutex_lock(&m->lock);
	m->holds++;
	lb_freelist_free_bulk(m->fl, &blk, 1);
	pthread_mutex_unlock(&m->lock);
}

static uint64_t mutex_trips(void *ctx)
{
	struct mutex_ctx *m = ctx;
	uint64_t n;

	pthread_mutex_lock(&m->lock);
	n = m->holds;
	pthread_mutex_unlock(&m->lock);
	return n;
}

/* Malloc rows. */
static void *malloc_get(void *ctx)
{
	return malloc(*(size_t *)ctx);
}

static void malloc_put(void *ctx, void *blk)
{
	(void)ctx;
	free(blk);
}

/* Which malloc this process runs, from the symbols each one exports. */
static void malloc_identity(char *buf, size_t len)
{
	int (*mallctl)(const char *, void *, size_t *, void *, size_t);
	const char *(*tc_version)(int *, int *, const char **);
	int (*mi_version)(void);
	const char *jv;
	size_t sz = sizeof(jv);

	*(void **)&mallctl = dlsym(RTLD_DEFAULT, "mallctl");
	*(void **)&tc_version = dlsym(RTLD_DEFAULT, "tc_version");
	*(void **)&mi_version = dlsym(RTLD_DEFAULT, "mi_version");
	if (mallctl && !mallctl("version", &jv, &sz, NULL, 0))
		snprintf(buf, len, "jemalloc %.20s", jv);
	else if (tc_version)
		snprintf(buf, len, "%s", tc_version(NULL, NULL, NULL));
	else if (mi_version)
		snprintf(buf, len, "mimalloc %d.%d.%d", mi_version() / 100,
			 mi_version() / 10 % 10, mi_version() % 10);
	else
		snprintf(buf, len, "glibc %s", gnu_get_libc_version());
}

static int make_freelist(const struct cmp_spec *s, struct lb_freelist **fl)
{
	struct lb_freelist_conf c = {
		.obj_size = s->size,
		.arena_size = s->arena_mib << 20,
	};

	return lb_freelist_create(fl, &c);
}

static int make_pcp(const struct cmp_spec *s, struct pcp_ctx *pc)
{
	const struct cmp_backend *be = &cmp_backends[s->backend];
	struct lb_pcp_conf c = { 0 };
	struct lb_pcp_size sz;
	int err;

	err = make_freelist(s, &pc->fl);
	if (err)
		return err;
	err = lb_pcp_size((s->arena_mib << 20) / s->size, 0, lb_cpu_count(),
			  (1u << 20) / s->size, &sz);
	if (err)
		return err;
	c.batch = sz.batch;
	c.high_min = sz.high_min;
	c.high_max = sz.high_max;
	c.tuner = be->pcp_tuner;
	c.lock_kind = LB_LOCK_SPIN;
	lb_freelist_pcp_backend(pc->fl, &c.backend);
	err = lb_pcp_create(&pc->p, &c);
	if (err)
		return err;
	return lb_pcp_decay_thread_start(pc->p);
}

static int parse_spec(int argc, char **argv, struct cmp_spec *s)
{
	int b, w;

	if (argc != 10)
		return -EINVAL;
	b = cmp_backend_parse(argv[2]);
	w = cmp_workload_parse(argv[3]);
	if (b < 0 || w < 0)
		return -EINVAL;
	s->backend = (unsigned int)b;
	s->workload = (enum cmp_workload)w;
	s->size = strtoull(argv[4], NULL, 0);
	s->threads = (unsigned int)strtoul(argv[5], NULL, 0);
	s->seconds = strtod(argv[6], NULL);
	s->max_ops = strtoull(argv[7], NULL, 0);
	s->arena_mib = strtoull(argv[8], NULL, 0);
	s->seed = strtoull(argv[9], NULL, 0);
	if (s->size < LB_FREELIST_MIN_OBJ_SIZE || s->size % sizeof(void *) ||
	    !s->arena_mib || s->seconds <= 0)
		return -EINVAL;
	return 0;
}

static int run_lockbatch(const struct cmp_spec *s, struct cmp_result *r)
{
	struct cmp_alloc a = { .size = s->size };
	struct mutex_ctx m = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct pcp_ctx pc = { 0 };
	struct lb_pcp_stats st;
	int err;

	if (cmp_backends[s->backend].is_mutex) {
		err = make_freelist(s, &m.fl);
		a = (struct cmp_alloc){ mutex_get, mutex_put, mutex_trips, &m,
					s->size };
		snprintf(r->version, sizeof(r->version), "lockbatch mutex");
	} else {
		err = make_pcp(s, &pc);
		a = (struct cmp_alloc){ pcp_get, pcp_put, pcp_trips, &pc,
					s->size };
		snprintf(r->version, sizeof(r->version), "lockbatch %s",
			 LB_VERSION_STRING);
	}
	if (err || cmp_run_workload(s, &a, r))
		return err ? err : -EIO;
	if (m.fl)
		return lb_freelist_destroy(m.fl);
	if (lb_pcp_stats(pc.p, &st, NULL, 0) >= 0) {
		r->refills = st.total.refills;
		r->refill_units = st.total.refill_units;
	}
	/* LB_COMPARE_REPORT=1: the cache's counters on stderr, per slot. */
	if (getenv("LB_COMPARE_REPORT")) {
		struct lb_freelist_stats fs;

		lb_pcp_report(stderr, pc.p);
		if (!lb_freelist_stats(pc.fl, &fs))
			fprintf(stderr, "back-end: touched %llu, peak out %llu, "
				"out %llu objects\n",
				(unsigned long long)fs.touched,
				(unsigned long long)fs.peak_out,
				(unsigned long long)fs.out);
	}
	lb_pcp_destroy(pc.p);
	return lb_freelist_destroy(pc.fl);
}

int cmp_worker_main(int argc, char **argv)
{
	struct cmp_result r = { 0 };
	struct cmp_spec s;
	const char *want;
	char line[512];
	int err;

	if (parse_spec(argc, argv, &s)) {
		fprintf(stderr, "lb-compare --worker: bad arguments\n");
		return 2;
	}
	/* A run that hangs must not hang the comparison. */
	alarm((unsigned int)(s.seconds * 20) + 30);
	r.base_rss_kib = cmp_rss_kib("VmRSS");
	if (cmp_backends[s.backend].pcp_tuner >= 0 ||
	    cmp_backends[s.backend].is_mutex) {
		err = run_lockbatch(&s, &r);
	} else {
		struct cmp_alloc a = { malloc_get, malloc_put, NULL, &s.size,
				       s.size };

		malloc_identity(r.version, sizeof(r.version));
		want = cmp_backends[s.backend].family;
		if (strncmp(r.version, want, strlen(want))) {
			fprintf(stderr, "lb-compare: %s asked, %s loaded\n",
				want, r.version);
			return 3;
		}
		err = cmp_run_workload(&s, &a, &r);
	}
	if (err) {
		fprintf(stderr, "lb-compare --worker: run failed (%d)\n", err);
		return 1;
	}
	r.peak_rss_kib = cmp_rss_kib("VmHWM");
	cmp_result_format(line, sizeof(line), &r);
	puts(line);
	return 0;
}

int cmp_result_format(char *buf, size_t len, const struct cmp_result *r)
{
	return snprintf(buf, len,
			"result ops=%llu secs=%.6f mops=%.6f base_rss_kib=%llu "
			"peak_rss_kib=%llu peak_live_kib=%llu lock_trips=%llu "
			"refills=%llu refill_units=%llu errors=%llu cpu_ns=%llu "
			"csw=%llu version=%s",
			(unsigned long long)r->ops, r->secs, r->mops,
			(unsigned long long)r->base_rss_kib,
			(unsigned long long)r->peak_rss_kib,
			(unsigned long long)r->peak_live_kib,
			(unsigned long long)r->lock_trips,
			(unsigned long long)r->refills,
			(unsigned long long)r->refill_units,
			(unsigned long long)r->errors,
			(unsigned long long)r->cpu_ns,
			(unsigned long long)r->csw, r->version);
}

int cmp_result_parse(const char *line, struct cmp_result *r)
{
	unsigned long long ops, base, peak, live, trips, refills, units, errs;
	unsigned long long cpu, csw;
	const char *v;
	int n;

	n = sscanf(line,
		   "result ops=%llu secs=%lf mops=%lf base_rss_kib=%llu "
		   "peak_rss_kib=%llu peak_live_kib=%llu lock_trips=%llu "
		   "refills=%llu refill_units=%llu errors=%llu cpu_ns=%llu "
		   "csw=%llu",
		   &ops, &r->secs, &r->mops, &base, &peak, &live, &trips,
		   &refills, &units, &errs, &cpu, &csw);
	v = strstr(line, " version=");
	if (n != 12 || !v)
		return -EINVAL;
	r->ops = ops;
	r->base_rss_kib = base;
	r->peak_rss_kib = peak;
	r->peak_live_kib = live;
	r->lock_trips = trips;
	r->refills = refills;
	r->refill_units = units;
	r->errors = errs;
	r->cpu_ns = cpu;
	r->csw = csw;
	snprintf(r->version, sizeof(r->version), "%s", v + 9);
	r->version[strcspn(r->version, "\n")] = '\0';
	return 0;
}
