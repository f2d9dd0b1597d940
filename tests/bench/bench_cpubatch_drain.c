// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Drain on demand, measured: 256 slots simulated through the injected CPU
 * id.
 *
 * 1. lb_cpubatch_drain_obj() against lb_cpubatch_drain_all() when every slot holds
 *    a few objects (what a "drain everything" fallback costs compared with
 *    draining the one slot that holds the object), and against a drain_all
 *    that finds only that slot non-empty (the cost of the empty-slot scan).
 * 2. lb_cpubatch_settle() on a cached object (DRAINED: one slot flushed), on a
 *    committed one (SETTLED), and on a cached one someone else also holds
 *    (BUSY: nothing flushed).
 * 3. drain_all calls per pass with 8 threads, each adding a few objects on
 *    its own slot and then calling drain_all (as lru_add_drain_all()
 *    callers have pages of their own cached): with a back-end whose commit
 *    is nearly free (a pass takes a few hundred ns: on a loaded machine
 *    the callers hardly ever overlap), and with one whose commit sleeps
 *    50 us (as lru_add_drain_all() sleeps in flush_work() waiting for the
 *    per-CPU work items): callers then pile up behind a pass and share the
 *    next one.
 *
 * Wall time per call: the median of clock_gettime() around each call (the
 * refill between calls is not timed; the median ignores the calls that
 * were preempted on a shared machine), as ratios within one run. It never
 * fails; it prints a table, or JSON with --json.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <lockbatch/lock.h>
#include <lockbatch/cpubatch.h>
#include "../common/affinity.h"

#define NSLOTS 256
#define PER_SLOT 8
#define CALLERS 8
#define CALLER_OBJS 4

/*
 * A minimal back-end of its own, not tests/common/backend.h: the checking
 * fixture's callbacks would add their own cost to every timed drain and
 * settle. The library's order of callbacks is checked by every test that
 * uses the fixture.
 */
struct bobj {
	long ref;
	struct lb_node node;
};

static struct lb_lock be_lock;
static unsigned long committed;
static __thread int cur_cpu;
static struct lb_cpubatch *pc;
static struct bobj *objs;	/* NSLOTS * PER_SLOT, object i lives in slot i / PER_SLOT */

static int cpu_fn(void *arg)
{
	(void)arg;
	return cur_cpu;
}

static void be_lock_fn(void *be)
{
	lb_lock_acquire(be);
}

static void be_unlock_fn(void *be)
{
	lb_lock_release(be);
}

static uint64_t now_ns(void);
static long commit_sleep_ns;	/* a commit that blocks, simulated */

static void commit(void *be, void **o, unsigned int n)
{
	struct timespec ts = { 0, commit_sleep_ns };

	(void)be;
	(void)o;
	committed += n;
	if (commit_sleep_ns)
		nanosleep(&ts, NULL);
}

static void get(void *o)
{
	__atomic_add_fetch(&((struct bobj *)o)->ref, 1, __ATOMIC_RELAXED);
}

static void put(void *o)
{
	__atomic_sub_fetch(&((struct bobj *)o)->ref, 1, __ATOMIC_RELEASE);
}

static long refcount(void *o)
{
	return __atomic_load_n(&((struct bobj *)o)->ref, __ATOMIC_ACQUIRE);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t *samples;

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double median(unsigned int n)
{
	qsort(samples, n, sizeof(*samples), cmp_u64);
	return (double)samples[n / 2];
}

static void fill_slot(unsigned int s)
{
	unsigned int i;

	cur_cpu = (int)s;
	for (i = s * PER_SLOT; i < (s + 1) * PER_SLOT; i++)
		lb_cpubatch_add(pc, &objs[i], &objs[i].node, 1);
}

static void fill_all(void)
{
	unsigned int s;

	for (s = 0; s < NSLOTS; s++)
		fill_slot(s);
}

struct coalesce {
	unsigned long calls, passes, coalesced, slots_touched;
	double touched_per_pass;
};

struct result {
	double obj_full_ns, all_full_ns, all_one_ns;
	double settle_drained_ns, settle_settled_ns, settle_busy_ns;
	struct coalesce fast, slow;
};

static void bench_drains(struct result *r, unsigned int reps)
{
	struct bobj *target = &objs[(NSLOTS / 2) * PER_SLOT];
	unsigned int i;
	uint64_t t;

	/* drain_obj with every other slot full. */
	fill_all();
	for (i = 0; i < reps; i++) {
		fill_slot(NSLOTS / 2);
		t = now_ns();
		lb_cpubatch_drain_obj(pc, &target->node);
		samples[i] = now_ns() - t;
	}
	r->obj_full_ns = median(reps);
	lb_cpubatch_drain_all(pc);

	/* drain_all with every slot full. */
	for (i = 0; i < reps / 16 + 1; i++) {
		fill_all();
		t = now_ns();
		lb_cpubatch_drain_all(pc);
		samples[i] = now_ns() - t;
	}
	r->all_full_ns = median(reps / 16 + 1);

	/* drain_all when only the target's slot holds anything. */
	for (i = 0; i < reps; i++) {
		fill_slot(NSLOTS / 2);
		t = now_ns();
		lb_cpubatch_drain_all(pc);
		samples[i] = now_ns() - t;
	}
	r->all_one_ns = median(reps);
}

static void bench_settle(struct result *r, unsigned int reps)
{
	struct bobj *o = &objs[3 * PER_SLOT];
	unsigned int i, j;
	uint64_t t;

	fill_all();
	for (i = 0; i < reps; i++) {
		fill_slot(3);
		t = now_ns();
		lb_cpubatch_settle(pc, o, &o->node, 1);
		samples[i] = now_ns() - t;
	}
	r->settle_drained_ns = median(reps);

	/* Cheap calls: time blocks of 16 so the clock does not dominate. */
	for (i = 0; i < reps / 16 + 1; i++) {
		t = now_ns();
		for (j = 0; j < 16; j++)
			lb_cpubatch_settle(pc, o, &o->node, 1);
		samples[i] = now_ns() - t;
	}
	r->settle_settled_ns = median(reps / 16 + 1) / 16;

	fill_slot(3);
	get(o);		/* someone else's reference: BUSY, nothing flushed */
	for (i = 0; i < reps / 16 + 1; i++) {
		t = now_ns();
		for (j = 0; j < 16; j++)
			lb_cpubatch_settle(pc, o, &o->node, 1);
		samples[i] = now_ns() - t;
	}
	r->settle_busy_ns = median(reps / 16 + 1) / 16;
	put(o);
	lb_cpubatch_drain_all(pc);
}

static unsigned int calls_each;
static pthread_barrier_t go;

/* Caller @arg owns slot arg * (NSLOTS / CALLERS) and its objects. */
static void *caller(void *arg)
{
	unsigned int slot = (unsigned int)(uintptr_t)arg * (NSLOTS / CALLERS);
	unsigned int i, j;

	cur_cpu = (int)slot;
	pthread_barrier_wait(&go);
	for (i = 0; i < calls_each; i++) {
		for (j = 0; j < CALLER_OBJS; j++) {
			struct bobj *o = &objs[slot * PER_SLOT + j];

			lb_cpubatch_add(pc, o, &o->node, 1);
		}
		lb_cpubatch_drain_all(pc);
	}
	return NULL;
}

static void bench_coalesce(struct coalesce *r, unsigned int calls,
			   long sleep_ns)
{
	pthread_t c[CALLERS];
	struct lb_cpubatch_stats before, after;
	unsigned int i;

	calls_each = calls / CALLERS + 1;
	commit_sleep_ns = sleep_ns;
	lb_cpubatch_stats(pc, &before, NULL, 0);
	pthread_barrier_init(&go, NULL, CALLERS);
	for (i = 0; i < CALLERS; i++)
		pthread_create(&c[i], NULL, caller, (void *)(uintptr_t)i);
	for (i = 0; i < CALLERS; i++)
		pthread_join(c[i], NULL);
	pthread_barrier_destroy(&go);
	lb_cpubatch_stats(pc, &after, NULL, 0);
	r->calls = after.drain.drain_all_calls - before.drain.drain_all_calls;
	r->passes = after.drain.drain_all_passes - before.drain.drain_all_passes;
	r->coalesced = after.drain.drain_all_coalesced -
		       before.drain.drain_all_coalesced;
	r->slots_touched = after.drain.drain_all_slots_touched -
			   before.drain.drain_all_slots_touched;
	r->touched_per_pass = r->passes ? (double)r->slots_touched / r->passes : 0;
	lb_cpubatch_drain_all(pc);
	commit_sleep_ns = 0;
}

static void print_coalesce(const char *name, const struct coalesce *c)
{
	printf("  %-40s %8lu %8lu %10lu %10.2f %12.1f\n", name, c->calls,
	       c->passes, c->coalesced,
	       c->passes ? (double)c->calls / c->passes : 0, c->touched_per_pass);
}

static void json_coalesce(const char *name, const struct coalesce *c, int last)
{
	printf("  \"%s\": {\"callers\": %u, \"calls\": %lu, \"passes\": %lu, "
	       "\"coalesced\": %lu, \"calls_per_pass\": %.3f, "
	       "\"slots_touched_per_pass\": %.2f}%s\n",
	       name, CALLERS, c->calls, c->passes, c->coalesced,
	       c->passes ? (double)c->calls / c->passes : 0, c->touched_per_pass,
	       last ? "" : ",");
}

static void print_table(const struct result *r)
{
	printf("lb_cpubatch drain on demand, %u slots (injected CPU ids), %u objects per slot\n\n",
	       NSLOTS, PER_SLOT);
	printf("%-44s %12s %10s\n", "operation", "ns/call", "vs drain_obj");
	printf("%-44s %12.0f %10s\n", "drain_obj (every slot full)", r->obj_full_ns, "1.0x");
	printf("%-44s %12.0f %9.1fx\n", "drain_all (every slot full)", r->all_full_ns,
	       r->all_full_ns / r->obj_full_ns);
	printf("%-44s %12.0f %9.1fx\n", "drain_all (only the object's slot full)",
	       r->all_one_ns, r->all_one_ns / r->obj_full_ns);
	printf("\n%-44s %12s %10s\n", "settle", "ns/call", "vs SETTLED");
	printf("%-44s %12.0f %10s\n", "not cached (SETTLED)", r->settle_settled_ns, "1.0x");
	printf("%-44s %12.0f %9.1fx\n", "cached, batch ref only (DRAINED, 1 slot)",
	       r->settle_drained_ns, r->settle_drained_ns / r->settle_settled_ns);
	printf("%-44s %12.0f %9.1fx\n", "cached, another holder (BUSY, no flush)",
	       r->settle_busy_ns, r->settle_busy_ns / r->settle_settled_ns);
	printf("\ndrain_all, %u callers (add %u, drain_all)  %8s %8s %10s %10s %12s\n",
	       CALLERS, CALLER_OBJS, "calls", "passes", "coalesced", "calls/pass",
	       "slots/pass");
	print_coalesce("back-end commit ~free", &r->fast);
	print_coalesce("back-end commit sleeps 50 us", &r->slow);
}

static void print_json(const struct result *r)
{
	printf("{\"slots\": %u, \"objs_per_slot\": %u,\n", NSLOTS, PER_SLOT);
	printf(" \"drain_obj_ns\": %.1f, \"drain_all_full_ns\": %.1f, \"drain_all_one_ns\": %.1f,\n",
	       r->obj_full_ns, r->all_full_ns, r->all_one_ns);
	printf(" \"drain_all_over_drain_obj\": %.2f, \"drain_all_one_over_drain_obj\": %.2f,\n",
	       r->all_full_ns / r->obj_full_ns, r->all_one_ns / r->obj_full_ns);
	printf(" \"settle_settled_ns\": %.1f, \"settle_drained_ns\": %.1f, \"settle_busy_ns\": %.1f,\n",
	       r->settle_settled_ns, r->settle_drained_ns, r->settle_busy_ns);
	printf(" \"coalesce\": {\n");
	json_coalesce("commit_free", &r->fast, 0);
	json_coalesce("commit_sleeps_50us", &r->slow, 1);
	printf(" }}\n");
}

/*
 * The same costs on the real CPU, with 256 slots (the rseq path where the
 * process has it: every remote access stops the slot and fences its CPU
 * when it holds objects). A helper thread pinned to another CPU fills its
 * slot and keeps running there, so the fence interrupts a thread of ours.
 */
struct rseq_result {
	int rseq, two_cpus;
	double remote_obj_ns, own_obj_ns, settle_ns, all_ns, forced_ns;
};

static int helper_cmd;		/* atomic: 1 = fill, 2 = quit */
static struct lb_cpubatch *rpc;

static void pin(int cpu)
{
	lb_test_pin(cpu, 0);
}

static void fill_real(unsigned int first)
{
	unsigned int i;

	for (i = first; i < first + PER_SLOT; i++)
		lb_cpubatch_add(rpc, &objs[i], &objs[i].node, 1);
}

static void *helper(void *arg)
{
	int c;

	pin(1);
	while ((c = __atomic_load_n(&helper_cmd, __ATOMIC_ACQUIRE)) != 2)
		if (c == 1) {
			fill_real(PER_SLOT);
			__atomic_store_n(&helper_cmd, 0, __ATOMIC_RELEASE);
		}
	return arg;
}

static void bench_real(struct rseq_result *r, const struct lb_cpubatch_conf *c,
		       unsigned int reps)
{
	struct lb_cpubatch_conf conf = *c;
	struct lb_cpubatch_stats st;
	pthread_t h;
	unsigned int i;
	uint64_t t;

	conf.cpu_fn = NULL;
	if (lb_cpubatch_create(&rpc, &conf))
		exit(1);
	lb_cpubatch_stats(rpc, &st, NULL, 0);
	r->rseq = st.path == LB_CPU_PATH_RSEQ;
	pin(0);
	for (i = 0; i < reps; i++) {
		fill_real(0);
		t = now_ns();
		lb_cpubatch_drain_obj(rpc, &objs[0].node);
		samples[i] = now_ns() - t;
	}
	r->own_obj_ns = median(reps);
	for (i = 0; i < reps; i++) {
		fill_real(0);
		t = now_ns();
		lb_cpubatch_settle(rpc, &objs[0], &objs[0].node, 1);
		samples[i] = now_ns() - t;
	}
	r->settle_ns = median(reps);
	for (i = 0; i < reps; i++) {
		fill_real(0);
		t = now_ns();
		lb_cpubatch_drain_all(rpc);
		samples[i] = now_ns() - t;
	}
	r->all_ns = median(reps);
	for (i = 0; i < reps; i++) {
		fill_real(0);
		t = now_ns();
		lb_cpubatch_drain_all_forced(rpc);
		samples[i] = now_ns() - t;
	}
	r->forced_ns = median(reps);
	r->two_cpus = CPU_SETSIZE > 1 && lb_cpu_count() > 1 &&
		      !pthread_create(&h, NULL, helper, NULL);
	for (i = 0; r->two_cpus && i < reps; i++) {
		__atomic_store_n(&helper_cmd, 1, __ATOMIC_RELEASE);
		while (__atomic_load_n(&helper_cmd, __ATOMIC_ACQUIRE))
			;
		t = now_ns();
		lb_cpubatch_drain_obj(rpc, &objs[PER_SLOT].node);
		samples[i] = now_ns() - t;
	}
	if (r->two_cpus) {
		r->remote_obj_ns = median(reps);
		__atomic_store_n(&helper_cmd, 2, __ATOMIC_RELEASE);
		pthread_join(h, NULL);
	}
	lb_cpubatch_destroy(rpc);
}

static void print_real(const struct rseq_result *r, int json)
{
	if (json) {
		printf("{\"bench\":\"cpubatch_drain_real_cpu\",\"path\":\"%s\","
		       "\"slots\":%d,\"drain_obj_own_ns\":%.0f,"
		       "\"drain_obj_remote_ns\":%.0f,\"settle_cached_ns\":%.0f,"
		       "\"drain_all_ns\":%.0f,\"drain_all_forced_ns\":%.0f}\n",
		       r->rseq ? "rseq" : "lock", NSLOTS, r->own_obj_ns,
		       r->remote_obj_ns, r->settle_ns, r->all_ns, r->forced_ns);
		return;
	}
	printf("\nreal CPU, %d slots, %s path (median ns per call):\n", NSLOTS,
	       r->rseq ? "rseq" : "lock");
	printf("  drain_obj, own CPU's slot                 %10.0f\n", r->own_obj_ns);
	printf("  drain_obj, slot of a CPU running our thread %8.0f%s\n",
	       r->remote_obj_ns, r->two_cpus ? "" : " (needs 2 CPUs)");
	printf("  settle, cached object (DRAINED)           %10.0f\n", r->settle_ns);
	printf("  drain_all, one slot holding objects       %10.0f\n", r->all_ns);
	printf("  drain_all_forced, every slot visited      %10.0f\n", r->forced_ns);
}

int main(int argc, char **argv)
{
	static const struct lb_backend_ops ops = {
		.lock = be_lock_fn, .unlock = be_unlock_fn, .commit = commit,
		.get = get, .put = put, .refcount = refcount,
	};
	struct lb_cpubatch_conf conf = {
		.nr_slots = NSLOTS, .mode = LB_CPUBATCH_WEIGHTED, .ops = &ops,
		.backend = &be_lock, .cpu_fn = cpu_fn,
	};
	unsigned int reps = 20000, i;
	struct result r;
	int json = 0;

	for (i = 1; i < (unsigned int)argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = 1;
		else if (!strcmp(argv[i], "--quick"))
			reps = 500;
		else if (!strcmp(argv[i], "--reps") && i + 1 < (unsigned int)argc)
			reps = (unsigned int)strtoul(argv[++i], NULL, 0);
		else {
			fprintf(stderr, "usage: %s [--json] [--quick] [--reps N]\n", argv[0]);
			return 2;
		}
	}
	if (!reps)
		reps = 1;
	objs = calloc(NSLOTS * PER_SLOT, sizeof(*objs));
	samples = calloc(reps, sizeof(*samples));
	if (!objs || !samples || lb_lock_init(&be_lock, LB_LOCK_SPIN, "backend") ||
	    lb_cpubatch_create(&pc, &conf))
		return 1;
	for (i = 0; i < NSLOTS * PER_SLOT; i++)
		objs[i].ref = 1;
	memset(&r, 0, sizeof(r));
	bench_drains(&r, reps);
	bench_settle(&r, reps);
	bench_coalesce(&r.fast, reps, 0);
	bench_coalesce(&r.slow, reps / 50 + 16, 50000);
	if (json)
		print_json(&r);
	else
		print_table(&r);
	lb_cpubatch_destroy(pc);
	{
		struct rseq_result rr;

		memset(&rr, 0, sizeof(rr));
		bench_real(&rr, &conf, reps / 10 + 1);
		print_real(&rr, json);
	}
	lb_lock_destroy(&be_lock);
	free(objs);
	free(samples);
	return 0;
}
