// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lb_cpubatch add/drain_local against a reference model: one array per slot,
 * the mode's flush rule restated from cpubatch.h, and the exact sequence the
 * back-end must receive. Random modes, caps, slot counts, back-ends,
 * weights (1..40) and CPU ids (negative and out of range included), from
 * several fixed seeds; LB_SEED=<seed> replays one.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <string.h>

#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include <lockbatch/cpubatch.h>
#include "../common/affinity.h"
#include "../common/prng.h"
#include "../common/backend.h"

#define NOBJ 512
#define MAX_SLOTS 8
#define OPS_PER_SEED 4000

static const uint64_t seeds[] = {
	0x1, 0x5eed, 0xdecafbad, 0x0123456789abcdefull, 0xfeedfacecafebeefull,
	0x31313131, 0x2a, 0x600d5eed,
};

struct mslot {
	unsigned int ids[LB_WBATCH_MAX];
	unsigned int nr;
	uint64_t weight;
	uint64_t adds;
	uint64_t flushes[LB_FLUSH_NR];
};

struct model {
	enum lb_cpubatch_mode mode;
	unsigned int nr_slots, max_nr, nr_be;
	uint32_t max_weight;
	struct mslot slot[MAX_SLOTS];
	int cached_in[NOBJ];		/* slot, or -1 */
	unsigned int adds[NOBJ];	/* accepted adds per object */
	unsigned long nr_log;
	unsigned int log[BACKEND_LOG_MAX];	/* what the back-end must receive */
	unsigned long locks;		/* back-end lock acquisitions */
};

static struct test_obj O[NOBJ];
static struct model M;
static int cpu_id;
static unsigned long log_checked;	/* commits compared so far */

static unsigned int fold(int cpu, unsigned int nr_slots)
{
	return cpu < 0 ? 0 : (unsigned int)cpu % nr_slots;
}

/* Hand slot @s's batch to the back-end: one lock per run of a back-end. */
static void model_flush(struct model *m, unsigned int s,
			enum lb_flush_cause cause)
{
	struct mslot *ms = &m->slot[s];
	unsigned int i;

	for (i = 0; i < ms->nr; i++) {
		if (i == 0 || O[ms->ids[i]].be != O[ms->ids[i - 1]].be)
			m->locks++;
		m->log[m->nr_log++] = ms->ids[i];
		m->cached_in[ms->ids[i]] = -1;
	}
	ms->flushes[cause]++;
	ms->nr = 0;
	ms->weight = 0;
}

/* The rule from enum lb_cpubatch_mode and enum lb_flush_cause. */
static int model_add(struct model *m, unsigned int s, unsigned int id,
		     uint32_t w)
{
	struct mslot *ms = &m->slot[s];
	int cause = -1;

	if (m->cached_in[id] >= 0)
		return -EEXIST;
	ms->ids[ms->nr++] = id;
	ms->weight += w;
	m->cached_in[id] = (int)s;
	m->adds[id]++;
	ms->adds++;
	switch (m->mode) {
	case LB_CPUBATCH_BASELINE:
		cause = LB_FLUSH_FULL;
		break;
	case LB_CPUBATCH_BYPASS_LARGE:
		if (w > 1)
			cause = LB_FLUSH_BYPASS;
		else if (ms->nr == m->max_nr)
			cause = LB_FLUSH_FULL;
		break;
	case LB_CPUBATCH_WEIGHTED:
		if (w >= m->max_weight)
			cause = LB_FLUSH_BYPASS;
		else if (ms->nr == m->max_nr)
			cause = LB_FLUSH_FULL;
		else if (ms->weight > m->max_weight)
			cause = LB_FLUSH_WEIGHT;
		break;
	}
	if (cause < 0)
		return 0;
	model_flush(m, s, (enum lb_flush_cause)cause);
	return 1;
}

/*
 * Real-CPU variant: no injected source, a slot per CPU id and then some
 * (the rseq path where the process has it), and the thread pinned to the
 * CPU an operation is to run on, so the model knows the slot.
 */
static int real_cpu;
static cpu_set_t real_set;

static void real_init(void)
{
	if (lb_cpu_count() + 2 > MAX_SLOTS)
		cr_skip_test("more CPUs than the model has slots");
	cr_assert(eq(int, sched_getaffinity(0, sizeof(real_set), &real_set),
		     0));
}

static int real_pin(int cpu)
{
	cr_assert(eq(int, lb_test_pin(cpu, 0), 0));
	return cpu;
}

/* A CPU this thread may run on, below lb_cpu_count(), pinned. */
static int real_random_cpu(struct lb_rng *rng)
{
	int n = (int)lb_cpu_count(), c;

	for (;;) {
		c = (int)lb_rng_below(rng, (uint32_t)n);
		if (CPU_ISSET(c, &real_set))
			return real_pin(c);
	}
}

static int random_cpu(struct lb_rng *rng, unsigned int nr_slots)
{
	switch (lb_rng_below(rng, 16)) {
	case 0:
		return INT_MAX;
	case 1:
		return INT_MIN;
	default:
		return (int)lb_rng_below(rng, 2 * nr_slots + 6) - 3;
	}
}

/*
 * The identities of cpubatch.h's DOC block: nothing is in flight between
 * operations of one thread, so they hold exactly.
 */
static void check_identities(const struct lb_cpubatch_stats *t,
			     const struct lb_cpubatch_slot_stats *st,
			     uint64_t seed, unsigned int op)
{
	uint64_t flushes = 0;
	unsigned int s, c;

	cr_assert(eq(u64, t->flushes_inflight, 0), LB_SEED_FMT,
		  LB_SEED_ARGS(seed));
	for (s = 0; s < M.nr_slots; s++) {
		cr_assert(eq(u64, st[s].adds, M.slot[s].adds),
			  "adds of slot %u at op %u: " LB_SEED_FMT, s, op,
			  LB_SEED_ARGS(seed));
		cr_assert(eq(u64, st[s].adds, st[s].objs_flushed +
			     st[s].nr_cached),
			  "slot %u at op %u: " LB_SEED_FMT, s, op,
			  LB_SEED_ARGS(seed));
		cr_assert(eq(u64, st[s].weight_added, st[s].weight_flushed +
			     st[s].weight_cached), LB_SEED_FMT,
			  LB_SEED_ARGS(seed));
		cr_assert(eq(u64, st[s].objs_flushed, st[s].objs_committed),
			  "slot %u at op %u: " LB_SEED_FMT, s, op,
			  LB_SEED_ARGS(seed));
		for (c = 0; c < LB_FLUSH_NR; c++)
			flushes += st[s].flushes[c];
	}
	cr_assert(eq(u64, flushes, t->total.flushes_committed),
		  "op %u: " LB_SEED_FMT, op, LB_SEED_ARGS(seed));
	/* Each further back-end in a batch adds one lock hold. */
	cr_assert(ge(u64, t->backend_locks, flushes), LB_SEED_FMT,
		  LB_SEED_ARGS(seed));
	if (M.nr_be == 1)
		cr_assert(eq(u64, t->backend_locks, flushes),
			  "one back-end, op %u: " LB_SEED_FMT, op,
			  LB_SEED_ARGS(seed));
}

/* Everything the model predicts, compared after every operation. */
static void check(struct lb_cpubatch *pc, uint64_t seed, unsigned int op)
{
	struct lb_cpubatch_slot_stats st[MAX_SLOTS];
	struct lb_cpubatch_stats t;
	unsigned int s, c, i;

	cr_assert(eq(u64, backend_fixture.errors, 0),
		  "%s at op %u: " LB_SEED_FMT,
		  backend_fixture.first_error, op, LB_SEED_ARGS(seed));
	cr_assert(eq(u64, backend_fixture.nr_log, M.nr_log),
		  "objects committed at op %u: " LB_SEED_FMT, op,
		  LB_SEED_ARGS(seed));
	for (i = log_checked; i < M.nr_log; i++)
		cr_assert(eq(u32, backend_fixture.log[i], M.log[i]),
			  "commit %u at op %u: " LB_SEED_FMT, i, op,
			  LB_SEED_ARGS(seed));
	log_checked = M.nr_log;
	cr_assert(eq(u64, backend_fixture.locks, M.locks),
		  "back-end locks at op %u: " LB_SEED_FMT, op,
		  LB_SEED_ARGS(seed));
	cr_assert(le(u32, backend_fixture.max_run, M.max_nr),
		  "a committed batch over the entry cap: " LB_SEED_FMT,
		  LB_SEED_ARGS(seed));
	lb_cpubatch_stats(pc, &t, st, MAX_SLOTS);
	cr_assert(eq(u64, t.backend_locks, M.locks), LB_SEED_FMT,
		  LB_SEED_ARGS(seed));
	check_identities(&t, st, seed, op);
	for (s = 0; s < M.nr_slots; s++) {
		struct mslot *ms = &M.slot[s];

		cr_assert(eq(u64, st[s].nr_cached, ms->nr),
			  "slot %u at op %u: " LB_SEED_FMT, s, op,
			  LB_SEED_ARGS(seed));
		cr_assert(eq(u64, st[s].weight_cached, ms->weight),
			  "slot %u at op %u: " LB_SEED_FMT, s, op,
			  LB_SEED_ARGS(seed));
		cr_assert(lt(u64, st[s].nr_cached, M.max_nr),
			  "a waiting batch at its entry cap: " LB_SEED_FMT,
			  LB_SEED_ARGS(seed));
		if (M.mode == LB_CPUBATCH_WEIGHTED)
			cr_assert(le(u64, st[s].weight_cached, M.max_weight),
				  "a waiting batch over its weight cap, slot %u "
				  "op %u: " LB_SEED_FMT, s, op,
				  LB_SEED_ARGS(seed));
		for (c = 0; c < LB_FLUSH_NR; c++)
			cr_assert(eq(u64, st[s].flushes[c], ms->flushes[c]),
				  "slot %u cause %s at op %u: " LB_SEED_FMT, s,
				  lb_cpubatch_flush_cause_name(c), op,
				  LB_SEED_ARGS(seed));
	}
}

static void setup_seed(struct lb_rng *rng, enum lb_cpubatch_mode mode, int ones,
		       struct lb_cpubatch **pc)
{
	static struct lb_backend_ops ops;
	struct lb_cpubatch_conf conf;
	unsigned int i;

	cr_assert(eq(int, backend_init(), 0));
	memset(&M, 0, sizeof(M));
	log_checked = 0;
	backend_fixture.one_thread = true;
	ops = backend_ops;
	ops.backend_of = backend_of;
	M.mode = mode;
	M.nr_slots = 1 + lb_rng_below(rng, MAX_SLOTS);
	if (real_cpu)
		M.nr_slots = lb_cpu_count() + lb_rng_below(rng, 3);
	M.max_nr = lb_rng_below(rng, LB_WBATCH_MAX + 1);	/* 0: default */
	M.max_weight = lb_rng_below(rng, 65);			/* 0: default */
	M.nr_be = 1 + lb_rng_below(rng, 3);
	if (ones) {
		M.max_nr = 0;
		M.max_weight = 0;
	}
	if (M.nr_be == 1 && lb_rng_below(rng, 2))
		ops.backend_of = NULL;
	conf = (struct lb_cpubatch_conf){
		.nr_slots = M.nr_slots, .mode = M.mode, .max_nr = M.max_nr,
		.max_weight = M.max_weight, .ops = &ops,
		.backend = &backend_fixture.be[0],
		.cpu_fn = real_cpu ? NULL : backend_cpu_of_arg,
		.cpu_arg = &cpu_id,
	};
	cr_assert(eq(int, lb_cpubatch_create(pc, &conf), 0));
	/* What the zero defaults and the modes make of the caps. */
	if (!M.max_nr)
		M.max_nr = LB_WBATCH_MAX;
	if (!M.max_weight)
		M.max_weight = LB_WBATCH_MAX;
	if (M.mode == LB_CPUBATCH_BASELINE)
		M.max_nr = 1;
	for (i = 0; i < NOBJ; i++) {
		backend_obj_init_at(&O[i], i, lb_rng_below(rng, M.nr_be), 0);
		M.cached_in[i] = -1;
	}
}

static void run_seed(uint64_t seed, enum lb_cpubatch_mode mode, int ones)
{
	struct lb_cpubatch *pc;
	struct lb_rng rng;
	unsigned int op, s, i;

	lb_rng_seed(&rng, seed);
	setup_seed(&rng, mode, ones, &pc);
	for (op = 0; op < OPS_PER_SEED; op++) {
		int want, rc;

		cpu_id = real_cpu ? real_random_cpu(&rng) :
				    random_cpu(&rng, M.nr_slots);
		s = fold(cpu_id, M.nr_slots);
		if (lb_rng_below(&rng, 8) == 0) {
			want = (int)M.slot[s].nr;
			if (want)
				model_flush(&M, s, LB_FLUSH_DRAIN_LOCAL);
			rc = lb_cpubatch_drain_local(pc);
			cr_assert(eq(int, rc, want),
				  "drain_local slot %u op %u: " LB_SEED_FMT, s,
				  op, LB_SEED_ARGS(seed));
		} else {
			uint32_t w = ones ? 1 : 1 + lb_rng_below(&rng, 40);

			i = lb_rng_below(&rng, NOBJ);
			if (M.cached_in[i] < 0)
				O[i].weight = w;
			want = model_add(&M, s, i, w);
			rc = lb_cpubatch_add(pc, &O[i], &O[i].node, w);
			cr_assert(eq(int, rc, want),
				  "add obj %u weight %u slot %u mode %d caps "
				  "%u/%u op %u: " LB_SEED_FMT, i, w, s, M.mode,
				  M.max_nr, M.max_weight, op, LB_SEED_ARGS(seed));
		}
		check(pc, seed, op);
	}
	/* A final drain of every slot: each accepted add committed once. */
	for (s = 0; s < M.nr_slots; s++) {
		cpu_id = (int)s;
		if (real_cpu) {
			if (s >= lb_cpu_count() || !CPU_ISSET(s, &real_set))
				continue;	/* never used: empty */
			real_pin((int)s);
		}
		if (M.slot[s].nr)
			model_flush(&M, s, LB_FLUSH_DRAIN_LOCAL);
		lb_cpubatch_drain_local(pc);
	}
	check(pc, seed, op);
	for (s = 0; s < M.nr_slots && ones; s++)
		cr_assert(eq(u64, M.slot[s].flushes[LB_FLUSH_WEIGHT] +
			     M.slot[s].flushes[LB_FLUSH_BYPASS], 0),
			  "weight 1 flushed by weight: " LB_SEED_FMT,
			  LB_SEED_ARGS(seed));
	for (i = 0; i < NOBJ; i++) {
		cr_assert(eq(u32, O[i].commits, M.adds[i]),
			  "object %u: " LB_SEED_FMT, i, LB_SEED_ARGS(seed));
		cr_assert(eq(long, backend_batch_refs(&O[i]), 0),
			  "object %u: " LB_SEED_FMT, i,
			  LB_SEED_ARGS(seed));
	}
	cr_assert(eq(u64, backend_fixture.gets, backend_fixture.puts),
		  LB_SEED_FMT, LB_SEED_ARGS(seed));
	if (real_cpu) {
		struct lb_cpubatch_stats st;

		lb_cpubatch_stats(pc, &st, NULL, 0);
		/* A batch of one (BASELINE, max_nr 1) stays on the lock path. */
		cr_assert(eq(int, st.path, M.max_nr > 1 ? lb_cpu_path() :
						      LB_CPU_PATH_LOCK));
		sched_setaffinity(0, sizeof(real_set), &real_set);
	}
	cr_assert(eq(int, lb_cpubatch_destroy(pc), 0));
	cr_assert(eq(u64, backend_fixture.nr_log, M.nr_log),
		  "destroy found more: "
		  LB_SEED_FMT, LB_SEED_ARGS(seed));
}

/* Each seed in each mode (weight 1: the two modes that batch). */
static void run_seeds(int ones)
{
	uint64_t seed;
	unsigned int i, nr = sizeof(seeds) / sizeof(seeds[0]);
	int m, env = lb_seed_from_env(&seed);

	for (i = 0; i < (env ? 1 : nr); i++)
		for (m = ones; m <= LB_CPUBATCH_WEIGHTED; m++)
			run_seed(env ? seed : seeds[i], (enum lb_cpubatch_mode)m,
				 ones);
}

Test(prop_cpubatch, random_ops_match_model, .timeout = 30)
{
	run_seeds(0);
}

/*
 * Weight 1 in WEIGHTED and BYPASS_LARGE is Linux 6.12's folio_batch: each
 * slot flushes on its 31st add, never by weight or bypass.
 */
Test(prop_cpubatch, weight_one_is_folio_batch, .timeout = 30)
{
	run_seeds(1);
}

/* Both again on the real CPU: the rseq path where the process has it. */
Test(prop_cpubatch, random_ops_match_model_real_cpu, .timeout = 30)
{
	real_init();
	real_cpu = 1;
	run_seeds(0);
}

Test(prop_cpubatch, weight_one_is_folio_batch_real_cpu, .timeout = 30)
{
	real_init();
	real_cpu = 1;
	run_seeds(1);
}
