// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * bench_pcp_rseq: lb_pcp's owner path (rseq where the process has it)
 * against the floor and against gperftools TCMalloc, one thread, 4 KiB
 * objects, each touched once (one 8-byte store) after it is allocated:
 *
 * - pair:  allocate, touch, free, over and over;
 * - burst: allocate 64, touching each, then free the 64.
 *
 * Variants, all in this one process and run interleaved:
 * - floor: a thread-local stack of blocks, pop to allocate and push to
 *   free: no lock, no atomic instruction, no clock read, no call. The
 *   cheapest program that hands out and takes back blocks.
 * - floor-call: the same stack behind a function call each way, as a
 *   library's allocator is reached (what a call costs, by difference).
 * - pcp: lb_pcp, ADAPTIVE tuner, default path (rseq if registered);
 * - pcp-lock: the same cache forced onto the lock path;
 * - tcmalloc: gperftools' tc_malloc()/tc_free(), from
 *   libtcmalloc_minimal.so.4 opened with dlopen(RTLD_LOCAL) so that it
 *   replaces nothing else in the process (skipped if not installed).
 *
 * Timings on a shared machine are noisy, so every figure printed is a
 * ratio within one repetition (in each repetition every variant runs
 * CHUNKS times, interleaved in an order that rotates, and keeps its
 * fastest chunk; times are the thread's CPU time), reported as the
 * median over the repetitions with the spread (lowest to highest). The reference is named
 * in each column: "/floor" is variant time over the floor's time, and
 * "tcmalloc/pcp" is TCMalloc's time over lb_pcp's (above 1: lb_pcp is
 * faster).
 *
 *   bench_pcp_rseq [--json] [--reps N] [OPS]
 *
 * Exit 0, or 1 if a variant could not be set up or handed out a bad block.
 */
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <lockbatch/pcp.h>

#define OBJ_SIZE 4096u
#define BURST 64u
#define POOL_OBJS 8192u		/* 32 MiB: the cache's high many times over */
#define MAX_REPS 64u
#define CHUNKS 8u		/* rounds per repetition */

enum variant { V_FLOOR, V_FLOOR_CALL, V_PCP, V_PCP_LOCK, V_TCMALLOC, V_NR };
enum workload { W_PAIR, W_BURST, W_NR };

static const char *const vname[V_NR] = {
	"floor", "floor-call", "pcp", "pcp-lock", "tcmalloc",
};
static const char *const wname[W_NR] = { "pair", "burst64" };

/* The back-end of both lb_pcp instances: a stack of blocks (under its lock). */
struct pool {
	void *obj[POOL_OBJS];
	unsigned int nr;
};

static int be_alloc(void *ctx, unsigned int order, void **out, unsigned int n)
{
	struct pool *pl = ctx;
	unsigned int i;

	(void)order;
	for (i = 0; i < n && pl->nr; i++)
		out[i] = pl->obj[--pl->nr];
	return (int)i;
}

static void be_free(void *ctx, unsigned int order, void **objs, unsigned int n)
{
	struct pool *pl = ctx;
	unsigned int i;

	(void)order;
	for (i = 0; i < n; i++)
		pl->obj[pl->nr++] = objs[i];
}

/* The floor's stack, thread-local as an allocator's would be. */
static __thread void *floor_stack[POOL_OBJS];
static __thread unsigned int floor_top;

static __attribute__((noinline)) void *floor_pop(void)
{
	return floor_stack[--floor_top];
}

static __attribute__((noinline)) void floor_push(void *o)
{
	floor_stack[floor_top++] = o;
}

static void *(*tc_malloc_fn)(size_t);
static void (*tc_free_fn)(void *);

struct ctx {
	struct lb_pcp *pcp[2];		/* default path, lock path */
	struct pool pool[2];
	char *mem[2];
	uint64_t bad;
};

/* An allocation of the variant; NULL on failure. */
static inline __attribute__((always_inline)) void *
v_alloc(struct ctx *c, enum variant v)
{
	void *o = NULL;

	switch (v) {
	case V_FLOOR:
		o = floor_stack[--floor_top];
		/*
		 * Keep the stack top in memory, as between an allocator's
		 * calls, and the block opaque (no pop-push folding); nothing
		 * else is forced out of registers.
		 */
		__asm__ __volatile__("" : "+r"(o), "+m"(floor_top));
		break;
	case V_FLOOR_CALL:
		o = floor_pop();
		break;
	case V_PCP:
	case V_PCP_LOCK:
		if (lb_pcp_alloc(c->pcp[v == V_PCP_LOCK], 0, &o))
			o = NULL;
		break;
	default:
		o = tc_malloc_fn(OBJ_SIZE);
		break;
	}
	return o;
}

static inline __attribute__((always_inline)) void
v_free(struct ctx *c, enum variant v, void *o)
{
	switch (v) {
	case V_FLOOR:
		floor_stack[floor_top++] = o;
		__asm__ __volatile__("" : "+m"(floor_top)
				     : "m"(floor_stack[floor_top - 1]));
		break;
	case V_FLOOR_CALL:
		floor_push(o);
		break;
	case V_PCP:
	case V_PCP_LOCK:
		if (lb_pcp_free(c->pcp[v == V_PCP_LOCK], o, 0))
			c->bad++;
		break;
	default:
		tc_free_fn(o);
		break;
	}
}

/* The one touch per object: a store to its first word. */
static inline __attribute__((always_inline)) void touch(void *o, uint64_t i)
{
	*(volatile uint64_t *)o = i;
}

/*
 * The thread's CPU time: time this thread was preempted for another job
 * on the shared machine does not count (a real syscall, per chunk only).
 */
static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/*
 * @ops allocations of the workload (each freed again), ns per allocation
 * plus its free. One instance of the loop per variant: the switch folds.
 */
static inline __attribute__((always_inline)) double
run_one(struct ctx *c, enum variant v, enum workload w, uint64_t ops)
{
	void *held[BURST];
	uint64_t i, j;
	double t0 = now_ns();

	if (w == W_PAIR) {
		for (i = 0; i < ops; i++) {
			void *o = v_alloc(c, v);

			if (!o) {
				c->bad++;
				break;
			}
			touch(o, i);
			v_free(c, v, o);
		}
	} else {
		for (i = 0; i < ops; i += BURST) {
			for (j = 0; j < BURST; j++) {
				held[j] = v_alloc(c, v);
				if (!held[j]) {
					c->bad++;
					return 0;
				}
				touch(held[j], j);
			}
			for (j = 0; j < BURST; j++)
				v_free(c, v, held[BURST - 1 - j]);
		}
	}
	return (now_ns() - t0) / (double)ops;
}

static __attribute__((noinline)) double run_variant(struct ctx *c,
						    enum variant v,
						    enum workload w,
						    uint64_t ops)
{
	switch (v) {
	case V_FLOOR:
		return run_one(c, V_FLOOR, w, ops);
	case V_FLOOR_CALL:
		return run_one(c, V_FLOOR_CALL, w, ops);
	case V_PCP:
		return run_one(c, V_PCP, w, ops);
	case V_PCP_LOCK:
		return run_one(c, V_PCP_LOCK, w, ops);
	default:
		return run_one(c, V_TCMALLOC, w, ops);
	}
}

static int pcp_setup(struct ctx *c, unsigned int k)
{
	struct lb_pcp_conf conf = { 0 };
	unsigned int i;

	c->mem[k] = aligned_alloc(OBJ_SIZE, (size_t)POOL_OBJS * OBJ_SIZE);
	if (!c->mem[k])
		return -ENOMEM;
	for (i = 0; i < POOL_OBJS; i++)
		c->pool[k].obj[i] = c->mem[k] + (size_t)i * OBJ_SIZE;
	c->pool[k].nr = POOL_OBJS;
	conf.tuner = LB_PCP_TUNE_ADAPTIVE;
	conf.lock_kind = LB_LOCK_SPIN;
	conf.backend.alloc_bulk = be_alloc;
	conf.backend.free_bulk = be_free;
	conf.backend.ctx = &c->pool[k];
	conf.flags = k ? LB_PCP_F_LOCK_PATH : 0;
	return lb_pcp_create(&c->pcp[k], &conf);
}

static void floor_setup(void)
{
	static char *mem;
	unsigned int i;

	mem = aligned_alloc(OBJ_SIZE, (size_t)BURST * OBJ_SIZE);
	if (!mem)
		exit(1);
	for (i = 0; i < BURST; i++)
		floor_stack[floor_top++] = mem + (size_t)i * OBJ_SIZE;
}

static void tcmalloc_setup(void)
{
	void *h = dlopen("libtcmalloc_minimal.so.4", RTLD_NOW | RTLD_LOCAL);

	if (!h)
		return;
	tc_malloc_fn = (void *(*)(size_t))dlsym(h, "tc_malloc");
	tc_free_fn = (void (*)(void *))dlsym(h, "tc_free");
	if (!tc_malloc_fn || !tc_free_fn)
		tc_malloc_fn = NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

struct fig {
	double med, lo, hi;
};

static struct fig summarize(double *v, unsigned int n)
{
	struct fig f;

	qsort(v, n, sizeof(*v), cmp_double);
	f.lo = v[0];
	f.hi = v[n - 1];
	f.med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	return f;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "reps", required_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 },
	};
	static double ns[W_NR][V_NR][MAX_REPS];
	static double ratio[W_NR][V_NR][MAX_REPS];
	static double tc_pcp[W_NR][MAX_REPS];
	struct lb_pcp_stats st;
	struct ctx c = { 0 };
	uint64_t ops = 2000000;
	unsigned int reps = 7, r, k, ch, nv = V_NR;
	int json = 0, opt, w, v;

	while ((opt = getopt_long(argc, argv, "jr:", opts, NULL)) != -1) {
		if (opt == 'j')
			json = 1;
		else if (opt == 'r')
			reps = (unsigned int)strtoul(optarg, NULL, 10);
		else
			return 2;
	}
	if (optind < argc)
		ops = strtoull(argv[optind], NULL, 0);
	if (reps < 1 || reps > MAX_REPS || ops < BURST * CHUNKS)
		return 2;
	ops -= ops % (BURST * CHUNKS);
	if (pcp_setup(&c, 0) || pcp_setup(&c, 1)) {
		fprintf(stderr, "bench_pcp_rseq: lb_pcp_create failed\n");
		return 1;
	}
	floor_setup();
	tcmalloc_setup();
	/* Warm every variant once: first refills, tcmalloc's thread cache. */
	for (w = 0; w < W_NR; w++)
		for (v = 0; v < V_NR; v++)
			if (v != V_TCMALLOC || tc_malloc_fn)
				run_variant(&c, (enum variant)v, (enum workload)w,
					    ops / 16);
	for (r = 0; r < reps; r++) {
		for (w = 0; w < W_NR; w++) {
			for (v = 0; v < V_NR; v++)
				ns[w][v][r] = 1e300;
			/*
			 * A repetition: CHUNKS rounds of every variant in a
			 * rotating order, each variant's time its fastest
			 * chunk, so an interruption costs one chunk, not the
			 * repetition.
			 */
			for (ch = 0; ch < CHUNKS; ch++) {
				for (k = 0; k < nv; k++) {
					double t;

					v = (int)((k + r + ch) % nv);
					if (v == V_TCMALLOC && !tc_malloc_fn)
						continue;
					t = run_variant(&c, (enum variant)v,
							(enum workload)w,
							ops / CHUNKS);
					if (t < ns[w][v][r])
						ns[w][v][r] = t;
				}
			}
			for (v = 0; v < V_NR; v++)
				ratio[w][v][r] = ns[w][v][r] / ns[w][V_FLOOR][r];
			tc_pcp[w][r] = ns[w][V_TCMALLOC][r] / ns[w][V_PCP][r];
		}
	}
	lb_pcp_stats(c.pcp[0], &st, NULL, 0);
	if (json)
		printf("{\"bench\":\"pcp_rseq\",\"ops\":%llu,\"reps\":%u,"
		       "\"object_bytes\":%u,\"pcp_path\":\"%s\",\"workloads\":[",
		       (unsigned long long)ops, reps, OBJ_SIZE,
		       st.rseq ? "rseq" : "lock");
	else
		printf("lb_pcp owner path, 1 thread, %u-byte objects touched once, %llu allocations per\n"
		       "repetition (fastest of %u interleaved chunks, thread CPU time), %u repetitions;\n"
		       "lb_pcp default path: %s. Ratios within each repetition: median [lowest, highest].\n"
		       "floor: thread-local stack, no lock, no atomics, no clock reads.\n\n"
		       "%-8s %-10s %9s %22s\n", OBJ_SIZE, (unsigned long long)ops,
		       CHUNKS, reps, st.rseq ? "rseq" : "lock", "workload", "variant",
		       "ns/op", "time / floor");
	for (w = 0; w < W_NR; w++) {
		struct fig tp;

		for (v = 0; v < V_NR; v++) {
			struct fig t, q;

			if (v == V_TCMALLOC && !tc_malloc_fn)
				continue;
			t = summarize(ns[w][v], reps);
			q = summarize(ratio[w][v], reps);
			if (json)
				printf("%s{\"workload\":\"%s\",\"variant\":\"%s\","
				       "\"ns_per_op\":%.3f,\"over_floor\":%.3f,"
				       "\"over_floor_lo\":%.3f,\"over_floor_hi\":%.3f}",
				       w || v ? "," : "", wname[w], vname[v],
				       t.med, q.med, q.lo, q.hi);
			else
				printf("%-8s %-10s %9.2f %8.2fx [%.2f, %.2f]\n",
				       wname[w], vname[v], t.med, q.med, q.lo,
				       q.hi);
		}
		if (!tc_malloc_fn)
			continue;
		tp = summarize(tc_pcp[w], reps);
		if (json)
			printf(",{\"workload\":\"%s\",\"tcmalloc_over_pcp\":%.3f,"
			       "\"lo\":%.3f,\"hi\":%.3f}", wname[w], tp.med,
			       tp.lo, tp.hi);
		else
			printf("%-8s tcmalloc/pcp (time; above 1: lb_pcp faster) %.2fx [%.2f, %.2f]\n",
			       wname[w], tp.med, tp.lo, tp.hi);
	}
	if (json)
		printf("]}\n");
	lb_pcp_destroy(c.pcp[0]);
	lb_pcp_destroy(c.pcp[1]);
	free(c.mem[0]);
	free(c.mem[1]);
	if (c.bad)
		fprintf(stderr, "bench_pcp_rseq: %llu failed calls\n",
			(unsigned long long)c.bad);
	return c.bad ? 1 : 0;
}
