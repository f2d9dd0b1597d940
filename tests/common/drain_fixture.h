/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * A reference-counted test object and a back-end that counts commits, for
 * the drain, settle and drain_all tests. The CPU id is injected per thread
 * (fx_cpu), so a test chooses the slot of every add.
 *
 * Each object starts with one reference (its owner's); the batch takes one
 * more through @get and drops it through @put. Commits are counted per
 * object, so "committed exactly once" is commits == successful adds.
 *
 * Callback order is checked on every call: commit() must run with the
 * back-end lock held by the calling thread, after() without it. Each
 * violation counts in fx.order_errors; fx_teardown() returns the count.
 * The property and stress tests assert it is 0. Criterion 2.4.1 reports a
 * failed check (or an exit) in .fini as a warning and still passes the
 * test, so in a Criterion program each violation also fails the running
 * test on the spot (cr_expect: it records and returns).
 */
#ifndef LB_TEST_DRAIN_FIXTURE_H
#define LB_TEST_DRAIN_FIXTURE_H

#include <stdint.h>
#include <string.h>

#include <lockbatch/lock.h>
#include <lockbatch/cpubatch.h>

struct fx_obj {
	long ref;			/* atomic */
	unsigned int commits;		/* atomic */
	unsigned int adds;		/* atomic: adds that returned >= 0 */
	unsigned int id;
	struct lb_node node;
};

struct fx_env;
typedef void (*fx_hook)(struct fx_env *e, void **objs, unsigned int n);

struct fx_env {
	struct lb_lock lock;
	struct lb_cpubatch *pc;
	unsigned long commits;		/* under lock */
	unsigned long commit_calls;	/* under lock */
	unsigned long order_errors;	/* atomic: callbacks out of order */
	fx_hook on_commit;		/* optional, under the back-end lock */
	fx_hook on_after;			/* optional, before the puts */
	void *arg;
};

/* One back-end per test program: the callbacks find it here. */
static struct fx_env fx;
static __thread int fx_tls_cpu;
/* This thread holds fx.lock (set by fx_lock, cleared by fx_unlock). */
static __thread int fx_tls_held;

static inline void fx_order_error(struct fx_env *e)
{
	__atomic_add_fetch(&e->order_errors, 1, __ATOMIC_RELAXED);
#ifdef CRITERION_H_
	cr_expect(0, "commit() must hold the back-end lock, after() must not");
#endif
}

static inline int fx_cpu(void *arg)
{
	(void)arg;
	return fx_tls_cpu;
}

static inline void fx_set_cpu(int cpu)
{
	fx_tls_cpu = cpu;
}

static inline void fx_lock(void *be)
{
	lb_lock_acquire(&((struct fx_env *)be)->lock);
	fx_tls_held = 1;
}

static inline void fx_unlock(void *be)
{
	fx_tls_held = 0;
	lb_lock_release(&((struct fx_env *)be)->lock);
}

static inline void fx_commit(void *be, void **objs, unsigned int n)
{
	struct fx_env *e = be;
	unsigned int i;

	if (!fx_tls_held)
		fx_order_error(e);
	for (i = 0; i < n; i++)
		__atomic_add_fetch(&((struct fx_obj *)objs[i])->commits, 1,
				   __ATOMIC_RELAXED);
	e->commits += n;
	e->commit_calls++;
	if (e->on_commit)
		e->on_commit(e, objs, n);
}

static inline void fx_after(void *be, void **objs, unsigned int n)
{
	struct fx_env *e = be;

	if (fx_tls_held)
		fx_order_error(e);
	if (e->on_after)
		e->on_after(e, objs, n);
}

static inline void fx_get(void *obj)
{
	__atomic_add_fetch(&((struct fx_obj *)obj)->ref, 1, __ATOMIC_RELAXED);
}

static inline void fx_put(void *obj)
{
	__atomic_sub_fetch(&((struct fx_obj *)obj)->ref, 1, __ATOMIC_RELEASE);
}

static inline long fx_refcount(void *obj)
{
	return __atomic_load_n(&((struct fx_obj *)obj)->ref, __ATOMIC_ACQUIRE);
}

static const struct lb_backend_ops fx_ops = {
	.lock = fx_lock,
	.unlock = fx_unlock,
	.commit = fx_commit,
	.after = fx_after,
	.get = fx_get,
	.put = fx_put,
	.refcount = fx_refcount,
};

/* Create fx.pc: @nr_slots slots, caps @max_nr entries / @max_weight units. */
static inline int fx_setup_ops(unsigned int nr_slots, enum lb_cpubatch_mode mode,
			       unsigned int max_nr, uint32_t max_weight,
			       const struct lb_backend_ops *ops)
{
	struct lb_cpubatch_conf conf = {
		.nr_slots = nr_slots,
		.mode = mode,
		.max_nr = max_nr,
		.max_weight = max_weight,
		.ops = ops,
		.backend = &fx,
		.cpu_fn = fx_cpu,
	};
	int rc;

	memset(&fx, 0, sizeof(fx));
	rc = lb_lock_init(&fx.lock, LB_LOCK_SPIN, "fx");
	if (rc)
		return rc;
	fx_tls_cpu = 0;
	return lb_cpubatch_create(&fx.pc, &conf);
}

static inline int fx_setup(unsigned int nr_slots, unsigned int max_nr)
{
	return fx_setup_ops(nr_slots, LB_CPUBATCH_WEIGHTED, max_nr, 0, &fx_ops);
}

/* A second object on the same back-end, for "node of another lb_cpubatch". */
static inline struct lb_cpubatch *fx_other(const struct lb_backend_ops *ops)
{
	struct lb_cpubatch_conf conf = {
		.nr_slots = 2,
		.mode = LB_CPUBATCH_WEIGHTED,
		.ops = ops,
		.backend = &fx,
		.cpu_fn = fx_cpu,
	};
	struct lb_cpubatch *pc;

	return lb_cpubatch_create(&pc, &conf) ? NULL : pc;
}

/* Destroy fx.pc; returns the callback-order violations seen (want 0). */
static inline unsigned long fx_teardown(void)
{
	if (fx.pc)
		lb_cpubatch_destroy(fx.pc);
	fx.pc = NULL;
	lb_lock_destroy(&fx.lock);
	return __atomic_load_n(&fx.order_errors, __ATOMIC_RELAXED);
}

static inline void fx_obj_init(struct fx_obj *o, unsigned int id)
{
	memset(o, 0, sizeof(*o));
	o->ref = 1;
	o->id = id;
}

/* Add @o of weight @w from slot @cpu; counts the add when it succeeded. */
static inline int fx_add(struct fx_obj *o, int cpu, uint32_t w)
{
	int rc;

	fx_set_cpu(cpu);
	rc = lb_cpubatch_add(fx.pc, o, &o->node, w);
	if (rc >= 0)
		__atomic_add_fetch(&o->adds, 1, __ATOMIC_RELAXED);
	return rc;
}

static inline unsigned int fx_commits(const struct fx_obj *o)
{
	return __atomic_load_n(&o->commits, __ATOMIC_RELAXED);
}

/* Per-slot flush count of @cause, read through lb_cpubatch_stats(). */
static inline uint64_t fx_slot_flushes(unsigned int slot,
				       enum lb_flush_cause cause)
{
	struct lb_cpubatch_slot_stats st[64];

	if (slot >= 64 || lb_cpubatch_stats(fx.pc, NULL, st, 64) < 0)
		return UINT64_MAX;
	return st[slot].flushes[cause];
}

/* Sum over causes of every slot's flushes, into @out[nr_slots]. */
static inline void fx_all_flushes(uint64_t *out, unsigned int nr_slots)
{
	struct lb_cpubatch_slot_stats st[64];
	unsigned int i, c;

	lb_cpubatch_stats(fx.pc, NULL, st, nr_slots < 64 ? nr_slots : 64);
	for (i = 0; i < nr_slots && i < 64; i++) {
		out[i] = 0;
		for (c = 0; c < LB_FLUSH_NR; c++)
			out[i] += st[i].flushes[c];
	}
}

static inline struct lb_cpubatch_stats fx_stats(void)
{
	struct lb_cpubatch_stats st;

	lb_cpubatch_stats(fx.pc, &st, NULL, 0);
	return st;
}

#endif /* LB_TEST_DRAIN_FIXTURE_H */
