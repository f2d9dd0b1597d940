// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * libFuzzer harness for the batch set (lb_cpubatch): three instances with
 * sizes and modes from the input, an injected CPU id (negative, huge and
 * changing ids included), and add, drain_obj, drain_objs, drain_local,
 * settle, drain_all (plain and forced), disable, enable, stats and
 * destroy/re-create in any order. Commit callbacks add to their own
 * instance or to another one (nested callbacks across instances: a flush
 * deferred inside a callback must stay with the instance that deferred
 * it, case C15 of tests/cases.md).
 *
 * The model: every object is out (the user holds it) or in a batch of its
 * instance; a commit must see an object in a batch of the committing
 * instance (never twice, never another instance's), and after every
 * top-level call the nodes, references and stats must agree with it: the
 * stats identities (adds, weights, flushes and objects committed, back-end
 * lock holds = commit calls seen, settle outcomes, drain_all calls and the
 * disable depth) hold whenever no call is in flight.
 *
 * The back-ends are tests/common/backend.h's, one per instance: they check
 * the callback order on every call (commit under the lock, after outside
 * it, put after commit and after) and abort at the first broken rule.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include <lockbatch/cpubatch.h>
#define BACKEND_ERROR_ABORT
#include "../common/backend.h"
#include "fuzz_input.h"

#define NI 3		/* instances */
#define NO 24		/* objects per instance */
#define MAX_DEPTH 3	/* nested adds from commit */
#define QUIET (nested_adds == nested)

enum { OUT, CACHED };

/* t.be is the instance, t.ref the user's one + the batch's. */
struct fobj {
	struct test_obj t;	/* first: the back-end's object */
	int state;
};

/* Instance i commits through back-end i of the fixture. */
struct finst {
	struct lb_cpubatch *pc;
	unsigned int disabled;
	int has_refcount;
	uint64_t settle_rc[3];	/* settles by LB_SETTLED, _DRAINED, _BUSY */
	struct fobj objs[NO];
};

static struct finst fi[NI];
static struct fz_in *g_in;
static int g_cpu;
static unsigned int depth;
static unsigned long nested_adds;	/* made by commit callbacks */
static int destroying;	/* no adds into an instance being destroyed */

static int cpu_fn(void *arg)
{
	(void)arg;
	return g_cpu;
}

static int do_add(unsigned int i, unsigned int id, uint32_t w);

/* The fixture has checked the lock and the instance; the model's part. */
static void on_commit(struct backend_fixture *bf, struct test_backend *be,
		      void **objs, unsigned int n)
{
	unsigned int k;

	(void)bf;
	for (k = 0; k < n; k++) {
		struct fobj *o = objs[k];

		FZ_CHECK(o->state == CACHED, "object %u/%u committed twice",
			 be->idx, o->t.id);
		o->state = OUT;
	}
	/*
	 * The input decides whether this commit adds more, and where. Such an
	 * add is concurrent with the call that flushed: the "nothing left
	 * cached" checks skip calls during which one happened (QUIET).
	 */
	if (!destroying && depth < MAX_DEPTH && fz_more(g_in) &&
	    fz_below(g_in, 4) == 0) {
		unsigned int j = fz_below(g_in, NI);

		depth++;
		nested_adds++;
		do_add(j, fz_below(g_in, NO), 1 + fz_below(g_in, 8));
		depth--;
	}
}

/* backend_ops without @refcount: settle answers -EOPNOTSUPP. */
static struct lb_backend_ops ops_noref;

static void create(unsigned int i, struct fz_in *in)
{
	struct finst *f = &fi[i];
	struct lb_cpubatch_conf c;
	unsigned int k;
	int rc;

	memset(&c, 0, sizeof(c));
	c.nr_slots = 1 + fz_below(in, 4);
	c.mode = (enum lb_cpubatch_mode)fz_below(in, 3);
	c.max_nr = fz_below(in, LB_WBATCH_MAX + 1);
	c.max_weight = fz_below(in, 65);
	f->has_refcount = fz_below(in, 4) != 0;
	c.ops = f->has_refcount ? &backend_ops : &ops_noref;
	c.backend = &backend_fixture.be[i];
	c.cpu_fn = cpu_fn;
	rc = lb_cpubatch_create(&f->pc, &c);
	FZ_CHECK(rc == 0, "create: %d", rc);
	f->disabled = 0;
	/* The model's counters start again with the instance. */
	backend_fixture.be[i].locks = 0;
	backend_fixture.be[i].runs = 0;
	backend_fixture.be[i].objs = 0;
	memset(f->settle_rc, 0, sizeof(f->settle_rc));
	for (k = 0; k < NO; k++) {
		backend_obj_init_at(&f->objs[k].t, k, i, 0);
		f->objs[k].state = OUT;
	}
}

/* An add as the model sees it: in a batch from the call on, unless refused. */
static int do_add(unsigned int i, unsigned int id, uint32_t w)
{
	struct fobj *o = &fi[i].objs[id];
	unsigned long nested = nested_adds;
	int was = o->state, rc;

	if (was == OUT)
		o->state = CACHED;
	rc = backend_add_to(fi[i].pc, &o->t, w);
	if (was == CACHED) {
		FZ_CHECK(rc == -EEXIST, "add of a cached node: %d", rc);
		return rc;
	}
	if (rc < 0) {
		FZ_CHECK(rc == -EAGAIN && depth, "add: %d", rc);
		FZ_CHECK(o->state == CACHED && o->t.ref == 1,
			 "refused add changed it");
		o->state = OUT;
		return rc;
	}
	FZ_CHECK(rc == 0 || rc == 1, "add: %d", rc);
	if (!depth && nested == nested_adds && (rc == 1 || fi[i].disabled))
		FZ_CHECK(o->state == OUT, "add said flushed (or disabled) but "
			 "object %u/%u is not committed (rc %d)", i, id, rc);
	return rc;
}

/* The stats identities that hold between top-level calls. */
static void check_stats(unsigned int i, const struct lb_cpubatch_stats *st)
{
	const struct lb_cpubatch_slot_stats *t = &st->total;
	const struct lb_cpubatch_drain_stats *d = &st->drain;
	const struct test_backend *be = &backend_fixture.be[i];
	const struct finst *f = &fi[i];
	uint64_t flushes = 0;
	unsigned int c;

	for (c = 0; c < LB_FLUSH_NR; c++)
		flushes += t->flushes[c];
	FZ_CHECK(t->adds == t->objs_flushed + t->nr_cached &&
		 t->weight_added == t->weight_flushed + t->weight_cached,
		 "instance %u: adds do not add up", i);
	FZ_CHECK(st->flushes_inflight == 0 && t->flushes_committed == flushes &&
		 t->objs_committed == t->objs_flushed,
		 "instance %u: %llu flushes, %llu committed, %llu in flight", i,
		 (unsigned long long)flushes,
		 (unsigned long long)t->flushes_committed,
		 (unsigned long long)st->flushes_inflight);
	FZ_CHECK(st->backend_locks == be->locks && be->locks == be->runs &&
		 t->objs_committed == be->objs,
		 "instance %u: %llu back-end locks, %llu objects committed; "
		 "back-end saw %lu locks, %lu commit calls, %lu objects", i,
		 (unsigned long long)st->backend_locks,
		 (unsigned long long)t->objs_committed, be->locks, be->runs,
		 be->objs);
	FZ_CHECK(d->settled == f->settle_rc[0] && d->drained == f->settle_rc[1] &&
		 d->busy == f->settle_rc[2], "instance %u: settle outcomes", i);
	FZ_CHECK(d->drain_all_calls == d->drain_all_passes + d->drain_all_coalesced &&
		 d->drain_all_forced <= d->drain_all_passes &&
		 d->disable_depth == f->disabled,
		 "instance %u: drain_all or disable counters", i);
}

static void check_inst(unsigned int i)
{
	struct finst *f = &fi[i];
	struct lb_cpubatch_stats st;
	uint64_t cached = 0;
	unsigned int k;

	FZ_CHECK(!backend_fixture.be[i].holder, "back-end lock left held");
	for (k = 0; k < NO; k++) {
		struct fobj *o = &f->objs[k];
		int in_batch = __atomic_load_n(&o->t.node.slot,
					       __ATOMIC_RELAXED) != 0;

		FZ_CHECK(in_batch == (o->state == CACHED),
			 "object %u/%u: node says %d, model %d", i, k, in_batch,
			 o->state);
		FZ_CHECK(o->t.ref == 1 + (o->state == CACHED),
			 "object %u/%u: %ld references", i, k, o->t.ref);
		cached += o->state == CACHED;
	}
	FZ_CHECK(lb_cpubatch_stats(f->pc, &st, NULL, 0) > 0, "stats");
	FZ_CHECK(st.total.nr_cached == cached, "instance %u: stats %llu cached, "
		 "model %llu", i, (unsigned long long)st.total.nr_cached,
		 (unsigned long long)cached);
	check_stats(i, &st);
}

static int settle_want(const struct finst *f, const struct fobj *o, long exp)
{
	long r = 1 + (o->state == CACHED);

	/* Ownership before what the back-end offers (cpubatch.h DOC). */
	if (!o->t.node.owner)
		return -ENOENT;
	if (!f->has_refcount)
		return -EOPNOTSUPP;
	if (r <= exp)
		return r == exp && o->state == OUT ? LB_SETTLED : -ERANGE;
	if (o->state == CACHED)
		return r - 1 > exp ? LB_BUSY : LB_DRAINED;
	return LB_BUSY;
}

/* Drains and settle of instance @i; @nested: nested_adds before the call. */
static void op_drain(unsigned int op, unsigned int i, struct fobj *o,
		     struct fz_in *in, unsigned long nested)
{
	struct finst *f = &fi[i];
	unsigned int k;
	int rc, want;

	switch (op) {
	case 1:
		want = o->state == CACHED;
		rc = lb_cpubatch_drain_obj(f->pc, &o->t.node);
		FZ_CHECK(rc == want, "drain_obj: %d, model %d", rc, want);
		FZ_CHECK(!QUIET || o->state == OUT, "drain_obj left it cached");
		break;
	case 2: {	/* another instance's node: refused, nothing flushed */
		struct fobj *x = &fi[(i + 1) % NI].objs[o->t.id];

		rc = lb_cpubatch_drain_obj(f->pc, &x->t.node);
		want = x->t.node.owner ? -EXDEV : 0;
		FZ_CHECK(rc == want, "drain_obj of a foreign node: %d, want %d",
			 rc, want);
		break;
	}
	case 3: {
		struct lb_node *nodes[6];
		unsigned int cnt = fz_below(in, 7);

		for (k = 0; k < cnt; k++)
			nodes[k] = &f->objs[fz_below(in, NO)].t.node;
		rc = lb_cpubatch_drain_objs(f->pc, nodes, cnt);
		FZ_CHECK(rc >= 0, "drain_objs: %d", rc);
		for (k = 0; k < cnt; k++)
			FZ_CHECK(!QUIET || !nodes[k]->slot, "drain_objs left a node cached");
		break;
	}
	case 4: {
		long exp = (long)fz_below(in, 4);

		want = settle_want(f, o, exp);
		rc = lb_cpubatch_settle(f->pc, o, &o->t.node, exp);
		FZ_CHECK(rc == want, "settle(expected %ld): %d, model %d "
			 "(cached %d)", exp, rc, want, o->state);
		if (rc == LB_SETTLED || rc == LB_DRAINED || rc == LB_BUSY)
			f->settle_rc[rc == LB_SETTLED ? 0 : rc == LB_DRAINED ? 1 : 2]++;
		if (rc == LB_DRAINED || rc == LB_SETTLED)
			FZ_CHECK(!QUIET || o->state == OUT, "settle left it cached");
		break;
	}
	case 5:
		FZ_CHECK(lb_cpubatch_drain_local(f->pc) >= 0, "drain_local");
		break;
	default:
		rc = op == 6 ? lb_cpubatch_drain_all(f->pc) :
			       lb_cpubatch_drain_all_forced(f->pc);
		FZ_CHECK(rc >= 0, "drain_all: %d", rc);
		for (k = 0; k < NO; k++)
			FZ_CHECK(!QUIET || f->objs[k].state == OUT, "drain_all left %u", k);
		break;
	}
}

/* Disable, enable, destroy + create of instance @i. */
static void op_state(unsigned int op, unsigned int i, struct fz_in *in,
		     unsigned long nested)
{
	struct finst *f = &fi[i];
	unsigned int k;
	int rc, want;

	switch (op) {
	case 8:
		if (f->disabled >= 3)
			break;
		FZ_CHECK(lb_cpubatch_disable(f->pc) == 0, "disable");
		f->disabled++;
		for (k = 0; k < NO; k++)
			FZ_CHECK(!QUIET || f->objs[k].state == OUT, "disable left %u", k);
		break;
	case 9:
		rc = lb_cpubatch_enable(f->pc);
		want = f->disabled ? (int)f->disabled - 1 : -EINVAL;
		FZ_CHECK(rc == want, "enable: %d, model %d", rc, want);
		if (f->disabled)
			f->disabled--;
		break;
	default:	/* destroy commits everything; a fresh one replaces it */
		destroying = 1;
		rc = lb_cpubatch_destroy(f->pc);
		destroying = 0;
		FZ_CHECK(rc == 0, "destroy: %d", rc);
		for (k = 0; k < NO; k++)
			FZ_CHECK(f->objs[k].state == OUT && f->objs[k].t.ref == 1,
				 "destroy lost object %u/%u", i, k);
		create(i, in);
		break;
	}
}

static void one_op(struct fz_in *in)
{
	static const int ids[] = { 0, 1, 2, 3, -1, -2, 4, 7, 1000, INT_MAX,
				   INT_MIN };
	unsigned int op = fz_below(in, 16), i = fz_below(in, NI);
	unsigned long nested = nested_adds;
	struct fobj *o = &fi[i].objs[fz_below(in, NO)];
	uint32_t w;

	if (op == 0) {		/* the CPU id moves, to anything */
		g_cpu = ids[fz_below(in, sizeof(ids) / sizeof(ids[0]))];
	} else if (op <= 7) {
		op_drain(op, i, o, in, nested);
	} else if (op <= 10) {
		op_state(op, i, in, nested);
	} else if (op == 11) {
		FZ_CHECK(lb_cpubatch_add(fi[i].pc, o, &o->t.node, 0) == -EINVAL, "weight 0");
		FZ_CHECK(lb_cpubatch_add(fi[i].pc, o, &o->t.node,
				     LB_WBATCH_WEIGHT_MAX + 1) == -EINVAL, "weight max");
	} else {
		w = fz_below(in, 8) ? 1 + fz_below(in, 8) : 1 + fz_below(in, 200);
		do_add(i, o->t.id, w);
	}
	for (i = 0; i < NI; i++)
		check_inst(i);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = { data, size };
	unsigned int i, k;

	g_in = &in;
	g_cpu = 0;
	depth = 0;
	FZ_CHECK(backend_init() == 0, "back-end init");
	backend_fixture.on_commit = on_commit;
	backend_fixture.one_thread = true;
	ops_noref = backend_ops;
	ops_noref.refcount = NULL;
	for (i = 0; i < NI; i++)
		create(i, &in);
	while (fz_more(&in))
		one_op(&in);
	destroying = 1;
	for (i = 0; i < NI; i++) {
		FZ_CHECK(lb_cpubatch_destroy(fi[i].pc) == 0, "final destroy");
		for (k = 0; k < NO; k++)
			FZ_CHECK(fi[i].objs[k].state == OUT &&
				 fi[i].objs[k].t.ref == 1,
				 "object %u/%u lost at the end", i, k);
	}
	destroying = 0;
	FZ_CHECK(backend_teardown() == 0, "back-end teardown");
	return 0;
}
