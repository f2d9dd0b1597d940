// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Operation batches against a reference model: random sequences of add,
 * move, rotate and delete (and refused repeats), drain_obj, drain_local,
 * drain_all, unqueue (followed by the caller's own unlink, as memcached's
 * lru_pull_tail() does) and settle, over several slots (injected CPU ids)
 * and several back-ends (real intrusive lists), in the counted and the
 * caller-protected mode. The model keeps one queue of (object, operation)
 * per slot, composes and flushes by the rules of cpubatch_op.h, and
 * applies a flush in two phases (leave, then enter), each in queue order.
 * After every step the lists, their order, every node's slot and every
 * return value must match; at the end, the statistics. Fixed seeds;
 * LB_SEED=<seed> replays one.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "../common/prng.h"
#include "../common/op_backend.h"

#define NOBJ 40
#define MAX_SLOTS 4
#define STEPS 3000
#define NONE (-1)

static const uint64_t seeds[] = {
	0x1, 0x5eed, 0xdecafbad, 0x0123456789abcdefull, 0x2a, 0x600d5eed,
	0xfeedfacecafebeefull, 0x31313131,
};

struct ment {
	unsigned int id, op;
};

struct mslot {
	struct ment e[LB_WBATCH_MAX];
	unsigned int nr;
};

static struct {
	unsigned int nr_slots, max_nr, nr_be;
	bool counted;
	struct mslot slot[MAX_SLOTS];
	unsigned int list[OPB_MAX][NOBJ];	/* ids, head first */
	unsigned int len[OPB_MAX];
	unsigned int cur[NOBJ];
	bool linked[NOBJ];
	int wait_slot[NOBJ];			/* slot, or NONE */
	uint64_t ops[LB_OP_NR], ops_flushed[LB_OP_NR], merged, cancelled;
} M;

static struct opb_obj O[NOBJ];
static struct lb_cpubatch *pc;
static int cpu;
static uint64_t seed;
static unsigned int step;

static int inject_cpu(void *arg)
{
	(void)arg;
	return cpu;
}

static unsigned int this_slot(void)
{
	return (unsigned int)cpu % M.nr_slots;
}

static void list_del(unsigned int l, unsigned int id)
{
	unsigned int i;

	for (i = 0; i < M.len[l]; i++)
		if (M.list[l][i] == id)
			break;
	cr_assert(lt(uint, i, M.len[l]), "model: %u not on list %u", id, l);
	memmove(&M.list[l][i], &M.list[l][i + 1],
		(M.len[l] - i - 1) * sizeof(M.list[l][0]));
	M.len[l]--;
}

static void list_add_head(unsigned int l, unsigned int id)
{
	memmove(&M.list[l][1], &M.list[l][0], M.len[l] * sizeof(M.list[l][0]));
	M.list[l][0] = id;
	M.len[l]++;
}

/* A flush of model slot @s: leave, then enter, each in queue order. */
static void m_flush(unsigned int s)
{
	struct mslot *ms = &M.slot[s];
	unsigned int i;

	for (i = 0; i < ms->nr; i++) {
		struct ment *e = &ms->e[i];

		M.ops_flushed[e->op]++;
		if (e->op == LB_OP_MOVE && M.nr_be == 1) {
			/* A move within its own list: one step, in phase 1. */
			list_del(M.cur[e->id], e->id);
			list_add_head(M.cur[e->id], e->id);
		} else if (e->op == LB_OP_DEL || e->op == LB_OP_MOVE) {
			list_del(M.cur[e->id], e->id);
			M.linked[e->id] = false;
		} else if (e->op == LB_OP_ROTATE) {
			list_del(M.cur[e->id], e->id);
			M.list[M.cur[e->id]][M.len[M.cur[e->id]]++] = e->id;
		}
	}
	for (i = 0; i < ms->nr; i++) {
		struct ment *e = &ms->e[i];

		if (e->op == LB_OP_MOVE && M.nr_be == 1) {
			M.wait_slot[e->id] = NONE;
			continue;
		}
		if (e->op == LB_OP_MOVE)
			M.cur[e->id] = (M.cur[e->id] + 1) % M.nr_be;
		if (e->op == LB_OP_ADD || e->op == LB_OP_MOVE) {
			list_add_head(M.cur[e->id], e->id);
			M.linked[e->id] = true;
		}
		M.wait_slot[e->id] = NONE;
	}
	ms->nr = 0;
}

static unsigned int m_entry(unsigned int s, unsigned int id)
{
	unsigned int k;

	for (k = 0; k < M.slot[s].nr; k++)
		if (M.slot[s].e[k].id == id)
			return k;
	cr_assert(0, "model: %u not in slot %u", id, s);
	return 0;
}

static void m_remove(unsigned int s, unsigned int k)
{
	struct mslot *ms = &M.slot[s];

	M.wait_slot[ms->e[k].id] = NONE;
	memmove(&ms->e[k], &ms->e[k + 1], (ms->nr - k - 1) * sizeof(ms->e[0]));
	ms->nr--;
	M.cancelled++;
}

/* What lb_cpubatch_queue() must return, with the model updated. */
static int m_queue(unsigned int id, unsigned int op)
{
	unsigned int s, k, w;

	if (M.wait_slot[id] != NONE) {
		s = (unsigned int)M.wait_slot[id];
		k = m_entry(s, id);
		w = M.slot[s].e[k].op;
		if ((op == LB_OP_DEL && w == LB_OP_DEL) ||
		    (op == LB_OP_MOVE && w == LB_OP_MOVE) ||
		    (op == LB_OP_ADD && w != LB_OP_DEL))
			return -EEXIST;
		M.ops[op]++;
		if (op == LB_OP_DEL) {
			M.merged++;
			if (w == LB_OP_ADD) {
				m_remove(s, k);
				return LB_OP_CANCELLED;
			}
			M.slot[s].e[k].op = LB_OP_DEL;
			return LB_OP_MERGED;
		}
		if (op == LB_OP_ROTATE && w == LB_OP_ROTATE) {
			M.merged++;
			return LB_OP_MERGED;
		}
		M.ops[op]--;	/* counted again below */
		m_flush(s);
	}
	M.ops[op]++;
	s = this_slot();
	M.slot[s].e[M.slot[s].nr].id = id;
	M.slot[s].e[M.slot[s].nr].op = op;
	M.slot[s].nr++;
	M.wait_slot[id] = (int)s;
	if (M.slot[s].nr == M.max_nr) {
		m_flush(s);
		return LB_OP_FLUSHED;
	}
	return LB_OP_QUEUED;
}

/* The object's state once its waiting entry, if any, is applied. */
static bool m_will_be_linked(unsigned int id)
{
	unsigned int w;

	if (M.wait_slot[id] == NONE)
		return M.linked[id];
	w = M.slot[M.wait_slot[id]].e[m_entry((unsigned int)M.wait_slot[id], id)].op;
	return w != LB_OP_DEL;
}

static void check_all(const char *what)
{
	unsigned int l, i, ids[NOBJ], n;

	cr_assert(eq(uint, opb.errors, 0), "%s at step %u: list rules broken, "
		  LB_SEED_FMT, what, step, LB_SEED_ARGS(seed));
	for (l = 0; l < M.nr_be; l++) {
		n = opb_ids(l, ids, NOBJ);
		cr_assert(eq(uint, n, M.len[l]), "%s at step %u: list %u length, "
			  LB_SEED_FMT, what, step, l, LB_SEED_ARGS(seed));
		for (i = 0; i < n; i++)
			cr_assert(eq(uint, ids[i], M.list[l][i]),
				  "%s at step %u: list %u position %u, " LB_SEED_FMT,
				  what, step, l, i, LB_SEED_ARGS(seed));
	}
	for (i = 0; i < NOBJ; i++) {
		uint32_t want = M.wait_slot[i] == NONE ? 0 :
			(uint32_t)M.wait_slot[i] + 1;

		cr_assert(eq(u32, O[i].node.slot, want),
			  "%s at step %u: object %u's slot, " LB_SEED_FMT, what,
			  step, i, LB_SEED_ARGS(seed));
		cr_assert(eq(int, O[i].ref, M.counted && want ? 2 : 1),
			  "%s at step %u: object %u's count, " LB_SEED_FMT, what,
			  step, i, LB_SEED_ARGS(seed));
	}
}

static void check_stats(void)
{
	struct lb_cpubatch_stats st;
	uint64_t sum = 0;
	unsigned int i;

	cr_assert(eq(int, lb_cpubatch_stats(pc, &st, NULL, 0), (int)M.nr_slots));
	for (i = 0; i < LB_OP_NR; i++) {
		cr_assert(eq(u64, st.total.ops[i], M.ops[i]), "ops[%s], " LB_SEED_FMT,
			  lb_cpubatch_op_name((enum lb_op)i), LB_SEED_ARGS(seed));
		cr_assert(eq(u64, st.total.ops_flushed[i], M.ops_flushed[i]),
			  "ops_flushed[%s], " LB_SEED_FMT,
			  lb_cpubatch_op_name((enum lb_op)i), LB_SEED_ARGS(seed));
		sum += M.ops[i];
	}
	cr_assert(eq(u64, st.total.merged, M.merged), LB_SEED_FMT, LB_SEED_ARGS(seed));
	cr_assert(eq(u64, st.total.cancelled, M.cancelled), LB_SEED_FMT,
		  LB_SEED_ARGS(seed));
	cr_assert(eq(u64, sum, st.total.objs_flushed + st.total.nr_cached +
			       st.total.merged + st.total.cancelled),
		  LB_SEED_FMT, LB_SEED_ARGS(seed));
	cr_assert(eq(u64, st.total.objs_flushed, st.total.objs_committed),
		  LB_SEED_FMT, LB_SEED_ARGS(seed));
}

static void one_step(struct lb_rng *r)
{
	unsigned int id = lb_rng_below(r, NOBJ), op, s, k, x = lb_rng_below(r, 100);
	enum lb_op got;
	int want, rc;

	if (x < 8) {
		cpu = (int)lb_rng_below(r, 2 * M.nr_slots);
		return;
	}
	if (x < 70) {
		/* A valid operation, or now and then a refused repeat. */
		if (!m_will_be_linked(id))
			op = LB_OP_ADD;
		else
			op = LB_OP_MOVE + lb_rng_below(r, 3);
		if (lb_rng_below(r, 10) == 0 && M.wait_slot[id] != NONE)
			op = m_will_be_linked(id) ? LB_OP_ADD : LB_OP_DEL;
		want = m_queue(id, op);
		rc = lb_cpubatch_queue(pc, &O[id], &O[id].node, (enum lb_op)op, 1);
		cr_assert(eq(int, rc, want), "step %u: %s of %u, " LB_SEED_FMT, step,
			  lb_cpubatch_op_name((enum lb_op)op), id, LB_SEED_ARGS(seed));
		check_all("queue");
		return;
	}
	if (x < 76) {
		want = M.wait_slot[id] != NONE;
		if (want)
			m_flush((unsigned int)M.wait_slot[id]);
		cr_assert(eq(int, lb_cpubatch_drain_obj(pc, &O[id].node), want),
			  "step %u, " LB_SEED_FMT, step, LB_SEED_ARGS(seed));
		check_all("drain_obj");
		return;
	}
	if (x < 80) {
		want = (int)M.slot[this_slot()].nr;
		m_flush(this_slot());
		cr_assert(eq(int, lb_cpubatch_drain_local(pc), want),
			  "step %u, " LB_SEED_FMT, step, LB_SEED_ARGS(seed));
		check_all("drain_local");
		return;
	}
	if (x < 83) {
		for (s = 0, want = 0; s < M.nr_slots; s++) {
			want += (int)M.slot[s].nr;
			m_flush(s);
		}
		cr_assert(eq(int, lb_cpubatch_drain_all(pc), want),
			  "step %u, " LB_SEED_FMT, step, LB_SEED_ARGS(seed));
		check_all("drain_all");
		return;
	}
	if (x < 92) {
		/* lru_pull_tail(): under the list lock, unqueue, then unlink. */
		unsigned int l = M.cur[id];

		want = 0;
		if (M.wait_slot[id] != NONE) {
			s = (unsigned int)M.wait_slot[id];
			k = m_entry(s, id);
			op = M.slot[s].e[k].op;
			m_remove(s, k);
			want = 1;
		}
		opb_lock(&opb.l[l]);
		rc = lb_cpubatch_unqueue(pc, &O[id].node, 1, &got);
		cr_assert(eq(int, rc, want), "step %u: unqueue, " LB_SEED_FMT, step,
			  LB_SEED_ARGS(seed));
		if (want)
			cr_assert(eq(int, got, op), "step %u: unqueued op, " LB_SEED_FMT,
				  step, LB_SEED_ARGS(seed));
		if (O[id].linked) {
			opb_unlink(&opb.l[l], &O[id]);
			list_del(l, id);
			M.linked[id] = false;
		}
		opb_unlock(&opb.l[l]);
		check_all("unqueue");
		return;
	}
	/* Settle with the owner's reference as the expectation. */
	want = LB_SETTLED;
	if (M.wait_slot[id] != NONE) {
		m_flush((unsigned int)M.wait_slot[id]);
		want = LB_DRAINED;
	}
	if (!O[id].node.owner)
		want = -ENOENT;
	rc = M.counted ? lb_cpubatch_settle(pc, &O[id], &O[id].node, 1) :
		lb_cpubatch_settle_fn(pc, &O[id], &O[id].node, 1, opb_count, NULL);
	cr_assert(eq(int, rc, want), "step %u: settle of %u, " LB_SEED_FMT, step, id,
		  LB_SEED_ARGS(seed));
	check_all("settle");
}

static void run(uint64_t sd)
{
	struct lb_cpubatch_conf conf = LB_CPUBATCH_CONF_INIT(NULL, NULL);
	struct lb_backend_ops ops;
	struct lb_rng r;
	unsigned int i;

	seed = sd;
	lb_rng_seed(&r, sd);
	memset(&M, 0, sizeof(M));
	M.nr_slots = 1 + lb_rng_below(&r, MAX_SLOTS);
	M.max_nr = 2 + lb_rng_below(&r, 7);
	M.nr_be = 1 + lb_rng_below(&r, OPB_MAX);
	M.counted = lb_rng_below(&r, 2);
	opb_init(M.nr_be);
	opb_hook = NULL;
	ops = opb_ops(M.counted);
	conf.ops = &ops;
	conf.nr_slots = M.nr_slots;
	conf.max_nr = M.max_nr;
	conf.cpu_fn = inject_cpu;
	conf.flags = M.counted ? 0 : LB_CPUBATCH_F_CALLER_REFS;
	cpu = 0;
	for (i = 0; i < NOBJ; i++) {
		M.cur[i] = i % M.nr_be;
		M.wait_slot[i] = NONE;
		opb_obj_init(&O[i], i, M.cur[i]);
	}
	cr_assert(eq(int, lb_cpubatch_create(&pc, &conf), 0));
	for (step = 0; step < STEPS; step++)
		one_step(&r);
	check_stats();
	cr_assert(eq(int, lb_cpubatch_destroy(pc), 0));
	for (i = 0; i < MAX_SLOTS; i++)
		if (i < M.nr_slots)
			m_flush(i);
	check_all("destroy");
	opb_fini();
}

Test(prop_op, random_sequences_match_the_model, .timeout = 60)
{
	lb_each_seed(seeds, sizeof(seeds) / sizeof(seeds[0]), run);
}
