// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * libFuzzer harness for the batch set (lb_cpubatch): three instances with
 * sizes and modes from the input, an injected CPU id (negative, huge and
 * changing ids included), and add, drain_obj, drain_objs, drain_local,
 * settle, drain_all (plain and forced), disable, enable, stats and
 * destroy/re-create in any order. Commit callbacks add to their own
 * instance; with LB_FUZZ_NESTED=1 they also add to the other instances
 * (nested callbacks across instances, issue 8 fault 1).
 *
 * The model: every object is out (the user holds it) or in a batch of its
 * instance; a commit must see an object in a batch of the committing
 * instance (never twice, never another instance's), and after every
 * top-level call the nodes, references and stats must agree with it.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include <lockbatch/cpubatch.h>
#include "fuzz_input.h"

#define NI 3		/* instances */
#define NO 24		/* objects per instance */
#define MAX_DEPTH 3	/* nested adds from commit */
#define QUIET (nested_adds == nested)

enum { OUT, CACHED };

struct fobj {
	struct lb_node node;
	unsigned int inst, id;
	int state;
	long refs;	/* the user's one + the batch's */
};

struct finst {
	struct lb_cpubatch *pc;
	int locked;		/* back-end lock held */
	unsigned int disabled;
	int has_refcount;
	struct fobj objs[NO];
};

static struct finst fi[NI];
static struct fz_in *g_in;
static int g_cpu;
static unsigned int depth;
static int nested_cross;
static unsigned long nested_adds;	/* made by commit callbacks */
static int destroying;	/* no adds into an instance being destroyed */

static int cpu_fn(void *arg)
{
	(void)arg;
	return g_cpu;
}

static void be_lock(void *be)
{
	struct finst *f = be;

	FZ_CHECK(!f->locked, "back-end lock of instance %ld taken twice",
		 (long)(f - fi));
	f->locked = 1;
}

static void be_unlock(void *be)
{
	((struct finst *)be)->locked = 0;
}

static void get(void *obj)
{
	((struct fobj *)obj)->refs++;
}

static void put(void *obj)
{
	struct fobj *o = obj;

	FZ_CHECK(o->refs > 1, "put without get: object %u/%u", o->inst, o->id);
	o->refs--;
}

static long refcount(void *obj)
{
	return ((struct fobj *)obj)->refs;
}

static int do_add(unsigned int i, unsigned int id, uint32_t w);

static void commit(void *be, void **objs, unsigned int n)
{
	struct finst *f = be;
	unsigned int k;

	FZ_CHECK(f->locked, "commit without the back-end lock");
	for (k = 0; k < n; k++) {
		struct fobj *o = objs[k];

		FZ_CHECK(o->inst == (unsigned int)(f - fi),
			 "object %u/%u committed to instance %ld", o->inst,
			 o->id, (long)(f - fi));
		FZ_CHECK(o->state == CACHED, "object %u/%u committed twice",
			 o->inst, o->id);
		o->state = OUT;
	}
	/*
	 * The input decides whether this commit adds more, and where. Such an
	 * add is concurrent with the call that flushed: the "nothing left
	 * cached" checks skip calls during which one happened (QUIET).
	 */
	if (!destroying && depth < MAX_DEPTH && fz_more(g_in) &&
	    fz_below(g_in, 4) == 0) {
		unsigned int j = (unsigned int)(f - fi);

		if (nested_cross)
			j = fz_below(g_in, NI);
		depth++;
		nested_adds++;
		do_add(j, fz_below(g_in, NO), 1 + fz_below(g_in, 8));
		depth--;
	}
}

static const struct lb_backend_ops ops_ref = {
	.lock = be_lock, .unlock = be_unlock, .commit = commit,
	.get = get, .put = put, .refcount = refcount,
};
static const struct lb_backend_ops ops_noref = {
	.lock = be_lock, .unlock = be_unlock, .commit = commit,
	.get = get, .put = put,
};

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
	c.ops = f->has_refcount ? &ops_ref : &ops_noref;
	c.backend = f;
	c.cpu_fn = cpu_fn;
	rc = lb_cpubatch_create(&f->pc, &c);
	FZ_CHECK(rc == 0, "create: %d", rc);
	f->disabled = 0;
	for (k = 0; k < NO; k++) {
		struct fobj *o = &f->objs[k];

		memset(o, 0, sizeof(*o));
		o->inst = i;
		o->id = k;
		o->refs = 1;
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
	rc = lb_cpubatch_add(fi[i].pc, o, &o->node, w);
	if (was == CACHED) {
		FZ_CHECK(rc == -EEXIST, "add of a cached node: %d", rc);
		return rc;
	}
	if (rc < 0) {
		FZ_CHECK(rc == -EAGAIN && depth, "add: %d", rc);
		FZ_CHECK(o->state == CACHED && o->refs == 1, "refused add changed it");
		o->state = OUT;
		return rc;
	}
	FZ_CHECK(rc == 0 || rc == 1, "add: %d", rc);
	if (!depth && nested == nested_adds && (rc == 1 || fi[i].disabled))
		FZ_CHECK(o->state == OUT, "add said flushed (or disabled) but "
			 "object %u/%u is not committed (rc %d)", i, id, rc);
	return rc;
}

static void check_inst(unsigned int i)
{
	struct finst *f = &fi[i];
	struct lb_cpubatch_stats st;
	uint64_t cached = 0;
	unsigned int k;

	FZ_CHECK(!f->locked, "back-end lock left held");
	for (k = 0; k < NO; k++) {
		struct fobj *o = &f->objs[k];
		int in_batch = __atomic_load_n(&o->node.slot, __ATOMIC_RELAXED) != 0;

		FZ_CHECK(in_batch == (o->state == CACHED),
			 "object %u/%u: node says %d, model %d", i, k, in_batch,
			 o->state);
		FZ_CHECK(o->refs == 1 + (o->state == CACHED),
			 "object %u/%u: %ld references", i, k, o->refs);
		cached += o->state == CACHED;
	}
	FZ_CHECK(lb_cpubatch_stats(f->pc, &st, NULL, 0) > 0, "stats");
	FZ_CHECK(st.total.nr_cached == cached, "instance %u: stats %llu cached, "
		 "model %llu", i, (unsigned long long)st.total.nr_cached,
		 (unsigned long long)cached);
	FZ_CHECK(st.total.adds == st.total.objs_flushed + st.total.nr_cached,
		 "instance %u: adds do not add up", i);
}

static int settle_want(const struct finst *f, const struct fobj *o, long exp)
{
	long r = 1 + (o->state == CACHED);

	if (!f->has_refcount)
		return -EOPNOTSUPP;
	if (!o->node.owner)
		return -ENOENT;
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
		rc = lb_cpubatch_drain_obj(f->pc, &o->node);
		FZ_CHECK(rc == want, "drain_obj: %d, model %d", rc, want);
		FZ_CHECK(!QUIET || o->state == OUT, "drain_obj left it cached");
		break;
	case 2: {	/* another instance's node: refused, nothing flushed */
		struct fobj *x = &fi[(i + 1) % NI].objs[o->id];

		rc = lb_cpubatch_drain_obj(f->pc, &x->node);
		want = x->node.owner ? -EXDEV : 0;
		FZ_CHECK(rc == want, "drain_obj of a foreign node: %d, want %d",
			 rc, want);
		break;
	}
	case 3: {
		struct lb_node *nodes[6];
		unsigned int cnt = fz_below(in, 7);

		for (k = 0; k < cnt; k++)
			nodes[k] = &f->objs[fz_below(in, NO)].node;
		rc = lb_cpubatch_drain_objs(f->pc, nodes, cnt);
		FZ_CHECK(rc >= 0, "drain_objs: %d", rc);
		for (k = 0; k < cnt; k++)
			FZ_CHECK(!QUIET || !nodes[k]->slot, "drain_objs left a node cached");
		break;
	}
	case 4: {
		long exp = (long)fz_below(in, 4);

		want = settle_want(f, o, exp);
		rc = lb_cpubatch_settle(f->pc, o, &o->node, exp);
		FZ_CHECK(rc == want, "settle(expected %ld): %d, model %d "
			 "(cached %d)", exp, rc, want, o->state);
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
			FZ_CHECK(f->objs[k].state == OUT && f->objs[k].refs == 1,
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
		FZ_CHECK(lb_cpubatch_add(fi[i].pc, o, &o->node, 0) == -EINVAL, "weight 0");
		FZ_CHECK(lb_cpubatch_add(fi[i].pc, o, &o->node,
				     LB_WBATCH_WEIGHT_MAX + 1) == -EINVAL, "weight max");
	} else {
		w = fz_below(in, 8) ? 1 + fz_below(in, 8) : 1 + fz_below(in, 200);
		do_add(i, o->id, w);
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
	nested_cross = fz_option("LB_FUZZ_NESTED");
	for (i = 0; i < NI; i++)
		create(i, &in);
	while (fz_more(&in))
		one_op(&in);
	destroying = 1;
	for (i = 0; i < NI; i++) {
		FZ_CHECK(lb_cpubatch_destroy(fi[i].pc) == 0, "final destroy");
		for (k = 0; k < NO; k++)
			FZ_CHECK(fi[i].objs[k].state == OUT &&
				 fi[i].objs[k].refs == 1,
				 "object %u/%u lost at the end", i, k);
	}
	destroying = 0;
	return 0;
}
