/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The back-end of the operation batch tests: OPB_MAX intrusive lists
 * (urcu/list.h), each behind its own lb_lock, and objects that sit on at
 * most one of them. Every callback checks what the list rules demand and
 * counts each broken rule in opb_fix.errors (the tests assert it is 0):
 *
 *  - commit() and apply() run with that list's lock held by the caller;
 *  - an add or the link half of a move finds the object on no list (an
 *    intrusive node on two lists is the corruption leave-before-enter
 *    prevents), an unlink or a rotation finds it on this list;
 *  - the object is still alive (not marked freed).
 *
 * backend_of() is the list the object is on, or last was (its add goes
 * back there); target_of() is the next list, (cur + 1) % nr: a mapping
 * fixed by where the object is, as memcached's COLD -> WARM. Lists are
 * read by the tests with the locks held or single-threaded.
 */
#ifndef LB_TEST_OP_BACKEND_H
#define LB_TEST_OP_BACKEND_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <urcu/list.h>
#include <ck_pr.h>

#include <lockbatch/lock.h>
#include <lockbatch/cpubatch.h>

#define OPB_MAX 4

struct opb_obj {
	struct lb_node node;
	struct cds_list_head link;
	unsigned int id;
	unsigned int cur;	/* list it is on or last was; written under its lock */
	bool linked;		/* under the lock of list @cur */
	bool freed;		/* a stress test's "freed" mark */
	int ref;		/* atomic: owner's 1 + the batch's */
};

struct opb_list {
	struct lb_lock lock;
	struct cds_list_head head;
	unsigned int idx;
	void *holder;		/* under @lock */
	unsigned long nr;	/* under @lock */
};

struct opb_fix {
	struct opb_list l[OPB_MAX];
	unsigned int nr;
	unsigned int errors;	/* atomic */
};

/* One fixture per process: the callbacks find it here. */
static struct opb_fix opb;
static __thread char opb_self;
/*
 * Called by opb_apply() for every object after its step, and by
 * opb_commit() (as %LB_STEP_LINK) after each add (may be NULL).
 */
static void (*opb_hook)(struct opb_obj *o, enum lb_op_step step);

static inline void opb_err(void)
{
	ck_pr_inc_uint(&opb.errors);
}

static inline void opb_init(unsigned int nr)
{
	unsigned int i;

	opb.nr = nr;
	opb.errors = 0;
	for (i = 0; i < nr; i++) {
		lb_lock_init(&opb.l[i].lock, LB_LOCK_SPIN, "opb");
		CDS_INIT_LIST_HEAD(&opb.l[i].head);
		opb.l[i].idx = i;
		opb.l[i].holder = NULL;
		opb.l[i].nr = 0;
	}
}

static inline void opb_fini(void)
{
	unsigned int i;

	for (i = 0; i < opb.nr; i++)
		lb_lock_destroy(&opb.l[i].lock);
}

static inline void opb_obj_init(struct opb_obj *o, unsigned int id,
				unsigned int list)
{
	struct lb_node z = LB_NODE_INIT;

	o->node = z;
	CDS_INIT_LIST_HEAD(&o->link);
	o->id = id;
	o->cur = list;
	o->linked = false;
	o->freed = false;
	o->ref = 1;
}

static void *opb_backend_of(void *obj)
{
	return &opb.l[ck_pr_load_uint(&((struct opb_obj *)obj)->cur)];
}

static void *opb_target_of(void *obj)
{
	struct opb_obj *o = obj;

	return &opb.l[(ck_pr_load_uint(&o->cur) + 1) % opb.nr];
}

static void opb_lock(void *be)
{
	struct opb_list *l = be;

	lb_lock_acquire(&l->lock);
	if (l->holder)
		opb_err();
	l->holder = &opb_self;
}

static void opb_unlock(void *be)
{
	struct opb_list *l = be;

	if (l->holder != &opb_self)
		opb_err();
	l->holder = NULL;
	lb_lock_release(&l->lock);
}

static inline bool opb_held(struct opb_list *l)
{
	return l->holder == &opb_self;
}

static void opb_link(struct opb_list *l, struct opb_obj *o)
{
	if (o->linked || o->freed)
		opb_err();
	cds_list_add(&o->link, &l->head);
	o->linked = true;
	ck_pr_store_uint(&o->cur, l->idx);
	l->nr++;
}

static void opb_unlink(struct opb_list *l, struct opb_obj *o)
{
	if (!o->linked || o->cur != l->idx || o->freed) {
		opb_err();
		return;
	}
	cds_list_del(&o->link);
	o->linked = false;
	l->nr--;
}

static void opb_commit(void *be, void **objs, unsigned int n)
{
	unsigned int i;

	if (!opb_held(be))
		opb_err();
	for (i = 0; i < n; i++) {
		opb_link(be, objs[i]);
		if (opb_hook)
			opb_hook(objs[i], LB_STEP_LINK);
	}
}

static void opb_apply(void *be, enum lb_op_step step, void **objs,
		      unsigned int n)
{
	struct opb_list *l = be;
	unsigned int i;

	if (!opb_held(l))
		opb_err();
	for (i = 0; i < n; i++) {
		struct opb_obj *o = objs[i];

		switch (step) {
		case LB_STEP_UNLINK:
			opb_unlink(l, o);
			break;
		case LB_STEP_LINK:
			opb_link(l, o);
			break;
		case LB_STEP_MOVE:
			/* Within one list: to its head, as a link would. */
			opb_unlink(l, o);
			opb_link(l, o);
			break;
		case LB_STEP_ROTATE:
			/* To the tail, as lru_move_tail(). */
			if (!o->linked || o->cur != l->idx) {
				opb_err();
				break;
			}
			cds_list_del(&o->link);
			cds_list_add_tail(&o->link, &l->head);
			break;
		default:
			opb_err();
		}
		if (opb_hook)
			opb_hook(o, step);
	}
}

static void opb_get(void *obj)
{
	ck_pr_inc_int(&((struct opb_obj *)obj)->ref);
}

static void opb_put(void *obj)
{
	if (ck_pr_faa_int(&((struct opb_obj *)obj)->ref, -1) <= 1)
		opb_err();
}

static long opb_refcount(void *obj)
{
	return ck_pr_load_int(&((struct opb_obj *)obj)->ref);
}

/* Caller-protected: the count the caller's lock protects (no batch ref). */
static inline long opb_count(void *obj, void *arg)
{
	(void)arg;
	return ck_pr_load_int(&((struct opb_obj *)obj)->ref);
}

/* Counted references, or (@counted false) the caller-protected mode. */
static inline struct lb_backend_ops opb_ops(bool counted)
{
	struct lb_backend_ops ops;

	memset(&ops, 0, sizeof(ops));
	ops.backend_of = opb_backend_of;
	ops.lock = opb_lock;
	ops.unlock = opb_unlock;
	ops.commit = opb_commit;
	ops.apply = opb_apply;
	ops.target_of = opb_target_of;
	if (counted) {
		ops.get = opb_get;
		ops.put = opb_put;
		ops.refcount = opb_refcount;
	}
	return ops;
}

/* The ids on list @i, head first, into @ids (at most @max); returns count. */
static inline unsigned int opb_ids(unsigned int i, unsigned int *ids,
				   unsigned int max)
{
	struct opb_obj *o;
	unsigned int k = 0;

	cds_list_for_each_entry(o, &opb.l[i].head, link) {
		if (k < max)
			ids[k] = o->id;
		k++;
	}
	return k;
}

#endif /* LB_TEST_OP_BACKEND_H */
