// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * bench_pcp: the lb_pcp fast path, an lb_pcp_alloc() + lb_pcp_free() pair
 * on a warm slot (no back-end trip), for each tuner.
 *
 *   bench_pcp [--json] [--tuner NAME] [--cpu0] [--lock] [PAIRS]
 *   bench_pcp --compare [--json] [PAIRS]
 *
 * --lock forces the lock path (LB_PCP_F_LOCK_PATH). --compare measures, in
 * one run, the pair on the rseq path and on the lock path (LINUX tuner)
 * against the floor and a mutex-protected free list with one thread, and
 * prints the ratios. The floor is a thread-local stack, push then pop: no
 * lock, no atomic instruction, no clock read, no call; "/floor" is a
 * variant's time over the floor's. bench_pcp_rseq (make bench-pcp-rseq)
 * measures the owner path with 4 KiB objects, bursts and TCMalloc.
 *
 * --cpu0 injects a CPU-id function returning 0 (a program that pins its
 * threads), leaving out the rseq or sched_getcpu() lookup: valgrind does
 * not support rseq, so under callgrind the default source is
 * sched_getcpu() and its instructions would dominate the count.
 *
 * Prints ns per pair (wall time: noisy, compare within one run).
 * `make bench-pcp-fastpath` runs it twice under callgrind with different
 * PAIRS and divides the instruction difference by the pair difference,
 * which cancels start-up and leaves instructions per pair.
 */
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <lockbatch/pcp.h>

struct cell {
	void *link[2];
};

static struct cell cells[64];

static int be_alloc(void *ctx, unsigned int order, void **out, unsigned int n)
{
	unsigned int *next = ctx, i;

	for (i = 0; i < n && *next < 64; i++)
		out[i] = &cells[(*next)++];
	return (int)i;
}

static void be_free(void *ctx, unsigned int order, void **objs, unsigned int n)
{
}

static int inject_cpu, force_lock;

static int cpu0(void *arg)
{
	return 0;
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static double run(enum lb_pcp_tuner t, unsigned long pairs)
{
	struct lb_pcp_conf c = { 0 };
	struct lb_pcp *p;
	unsigned int next = 0;
	unsigned long i;
	void *o;
	double t0;

	c.max_order = 3;
	c.batch = 8;
	c.high_min = 1024;
	c.high_max = 4096;
	c.tuner = t;
	c.lock_kind = LB_LOCK_SPIN;
	c.backend.alloc_bulk = be_alloc;
	c.backend.free_bulk = be_free;
	c.backend.ctx = &next;
	if (inject_cpu)
		c.cpu_fn = cpu0;
	if (force_lock)
		c.flags = LB_PCP_F_LOCK_PATH;
	if (lb_pcp_create(&p, &c))
		exit(1);
	/* Warm: the slot holds objects, no later call reaches the back-end. */
	if (lb_pcp_alloc(p, 0, &o) || lb_pcp_free(p, o, 0))
		exit(1);
	t0 = now_ns();
	for (i = 0; i < pairs; i++) {
		lb_pcp_alloc(p, 0, &o);
		lb_pcp_free(p, o, 0);
	}
	t0 = now_ns() - t0;
	lb_pcp_destroy(p);
	return t0 / (double)pairs;
}

/*
 * The floor: a thread-local stack, push then pop; no lock, no atomic
 * instruction, no clock read, no call.
 */
static __thread void *tl_stack[64];
static __thread unsigned int tl_top;

static double run_array(unsigned long pairs)
{
	unsigned long i;
	double t0;
	void *o = &cells[0];

	t0 = now_ns();
	for (i = 0; i < pairs; i++) {
		tl_stack[tl_top++] = o;
		__asm__ __volatile__("" : : "r"(tl_stack) : "memory");
		o = tl_stack[--tl_top];
		__asm__ __volatile__("" : "+r"(o) : : "memory");
	}
	return (now_ns() - t0) / (double)pairs;
}

/* One free list behind a pthread mutex, as a single-lock pool would be. */
static double run_mutex(unsigned long pairs)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	struct cell *head = NULL, *o;
	unsigned long i;
	double t0;

	for (i = 0; i < 8; i++) {
		cells[i].link[0] = head;
		head = &cells[i];
	}
	t0 = now_ns();
	for (i = 0; i < pairs; i++) {
		pthread_mutex_lock(&m);
		o = head;
		head = o->link[0];
		pthread_mutex_unlock(&m);
		__asm__ __volatile__("" : "+r"(o) : : "memory");
		pthread_mutex_lock(&m);
		o->link[0] = head;
		head = o;
		pthread_mutex_unlock(&m);
	}
	return (now_ns() - t0) / (double)pairs;
}

static int compare(unsigned long pairs, int json)
{
	double arr, mtx, rs, lk;
	struct lb_pcp_stats st;

	arr = run_array(pairs);
	mtx = run_mutex(pairs);
	rs = run(LB_PCP_TUNE_LINUX, pairs);
	force_lock = 1;
	lk = run(LB_PCP_TUNE_LINUX, pairs);
	force_lock = 0;
	{
		/* Which path the default cache ran. */
		struct lb_pcp_conf c = { 0 };
		struct lb_pcp *p;
		unsigned int next = 0;

		c.batch = 8;
		c.high_min = c.high_max = 64;
		c.lock_kind = LB_LOCK_SPIN;
		c.backend.alloc_bulk = be_alloc;
		c.backend.free_bulk = be_free;
		c.backend.ctx = &next;
		if (lb_pcp_create(&p, &c))
			return 1;
		lb_pcp_stats(p, &st, NULL, 0);
		lb_pcp_destroy(p);
	}
	if (json) {
		printf("{\"pairs\":%lu,\"path\":\"%s\",\"floor_ns\":%.2f,"
		       "\"mutex_ns\":%.2f,\"pcp_ns\":%.2f,\"pcp_lock_ns\":%.2f,"
		       "\"pcp_over_floor\":%.2f,\"mutex_over_pcp\":%.2f,"
		       "\"mutex_over_pcp_lock\":%.2f}\n", pairs,
		       st.rseq ? "rseq" : "lock", arr, mtx, rs, lk, rs / arr,
		       mtx / rs, mtx / lk);
		return 0;
	}
	printf("warm alloc+free pair, %lu pairs, default path: %s\n", pairs,
	       st.rseq ? "rseq" : "lock");
	printf("floor: a thread-local stack, no lock, no atomics, no clock reads, no call\n");
	printf("%-28s %10s %12s %12s\n", "variant", "ns/pair", "/floor",
	       "mutex/this");
	printf("%-28s %10.2f %12.2f %12.2f\n", "floor: thread-local stack",
	       arr, 1.0, mtx / arr);
	printf("%-28s %10.2f %12.2f %12.2f\n", "mutex free list (1 thread)",
	       mtx, mtx / arr, 1.0);
	printf("%-28s %10.2f %12.2f %12.2f\n", "lb_pcp default path", rs,
	       rs / arr, mtx / rs);
	printf("%-28s %10.2f %12.2f %12.2f\n", "lb_pcp lock path", lk,
	       lk / arr, mtx / lk);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "tuner", required_argument, NULL, 't' },
		{ "cpu0", no_argument, NULL, 'c' },
		{ "lock", no_argument, NULL, 'l' },
		{ "compare", no_argument, NULL, 'C' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long pairs = 1000000;
	int json = 0, only = -1, c, t, first = 1, cmp = 0;

	while ((c = getopt_long(argc, argv, "jt:clC", opts, NULL)) != -1) {
		if (c == 'l') {
			force_lock = 1;
		} else if (c == 'C') {
			cmp = 1;
		} else if (c == 'c') {
			inject_cpu = 1;
		} else if (c == 'j') {
			json = 1;
		} else if (c == 't') {
			only = lb_pcp_tuner_parse(optarg);
			if (only < 0)
				return 2;
		} else {
			return 2;
		}
	}
	if (optind < argc)
		pairs = strtoul(argv[optind], NULL, 0);
	if (cmp)
		return compare(pairs, json);
	if (json)
		printf("[");
	else
		printf("%-10s %12s %10s\n", "tuner", "pairs", "ns/pair");
	for (t = 0; t < LB_PCP_TUNE_NR; t++) {
		double ns;

		if (only >= 0 && t != only)
			continue;
		ns = run((enum lb_pcp_tuner)t, pairs);
		if (json)
			printf("%s{\"tuner\":\"%s\",\"pairs\":%lu,\"ns_per_pair\":%.2f}",
			       first ? "" : ",", lb_pcp_tuner_name(t), pairs, ns);
		else
			printf("%-10s %12lu %10.2f\n", lb_pcp_tuner_name(t), pairs, ns);
		first = 0;
	}
	if (json)
		printf("]\n");
	return 0;
}
