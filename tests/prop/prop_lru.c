// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lb_lru against a reference model (two arrays, head first): random
 * commits, isolates with random verdicts, putbacks with random releases
 * and list choices, and deletions of objects in any state. After every
 * operation the return value and the counters must match the model; every
 * few operations the full order of both lists is compared too (isolate
 * everything, then put it back, which restores the order). Each seed runs
 * with splice and per-object commits, prefetch on and off.
 * LB_SEED=<seed> replays one seed.
 */
#include "config.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include <lockbatch/lru.h>
#include "../common/prng.h"

#define NOBJ 48
#define OPS 3000
#define CHECK_EVERY 25

static const uint64_t seeds[] = { 0x1, 0x5eed, 0xdecafbad, 0x0123456789abcdefull };

enum where { FREE, ON, ISOL };

struct obj {
	struct lb_lru_node node;
	unsigned int id;
	enum lb_lru_verdict verdict;	/* what the next scan says */
	bool last_ref;			/* what the next release says */
	unsigned int secondary;
};

struct model {
	unsigned int list[LB_LRU_NR_LISTS][NOBJ];	/* head first */
	unsigned int len[LB_LRU_NR_LISTS];
	unsigned int priv[NOBJ];			/* private list */
	unsigned int npriv;
	enum where where[NOBJ];
	bool active[NOBJ];
	struct lb_lru_stats st;
};

static struct obj objs[NOBJ];
static bool releases_on;
static uint64_t cur_seed;

#define CHECK(cond, ...) cr_assert(cond, LB_SEED_FMT " " __VA_ARGS__, \
				   LB_SEED_ARGS(cur_seed))

static bool op_release(void *o, void *arg)
{
	(void)arg;
	return releases_on && ((struct obj *)o)->last_ref;
}

static void op_secondary(void *o, void *arg)
{
	(void)arg;
	((struct obj *)o)->secondary++;
}

static enum lb_lru_verdict op_scan(void *o, void *arg)
{
	(void)arg;
	return ((struct obj *)o)->verdict;
}

static const struct lb_lru_ops ops = {
	.release = op_release,
	.secondary = op_secondary,
};

static void m_insert_head(struct model *m, enum lb_lru_list l, unsigned int id)
{
	memmove(&m->list[l][1], &m->list[l][0], m->len[l] * sizeof(unsigned int));
	m->list[l][0] = id;
	m->len[l]++;
	m->st.nr[l]++;
	m->st.weight[l] += objs[id].node.weight;
	m->where[id] = ON;
}

static void m_remove(struct model *m, enum lb_lru_list l, unsigned int pos)
{
	unsigned int id = m->list[l][pos];

	memmove(&m->list[l][pos], &m->list[l][pos + 1],
		(m->len[l] - pos - 1) * sizeof(unsigned int));
	m->len[l]--;
	m->st.nr[l]--;
	m->st.weight[l] -= objs[id].node.weight;
}

static enum lb_lru_list m_list_of(const struct model *m, unsigned int id)
{
	return m->active[id] ? LB_LRU_ACTIVE : LB_LRU_INACTIVE;
}

static void do_commit(struct lb_lru *lru, struct model *m, struct lb_rng *r)
{
	void *v[NOBJ];
	unsigned int n = 0, i, k = 1 + lb_rng_below(r, 31);

	for (i = 0; i < NOBJ && n < k; i++) {
		unsigned int id = lb_rng_below(r, NOBJ);

		if (m->where[id] != FREE)
			continue;
		m->where[id] = ON;	/* no duplicates in this batch */
		v[n++] = &objs[id];
	}
	for (i = 0; i < n; i++) {
		unsigned int id = ((struct obj *)v[i])->id;

		m->active[id] = false;
		m_insert_head(m, LB_LRU_INACTIVE, id);
	}
	if (n) {
		m->st.path[LB_LRU_PATH_ADD].acquisitions++;
		m->st.path[LB_LRU_PATH_ADD].objs += n;
	}
	CHECK(eq(int, lb_lru_commit(lru, v, n), (int)n));
}

static void do_isolate(struct lb_lru *lru, struct model *m, struct lb_rng *r,
		       struct cds_list_head *priv)
{
	enum lb_lru_list l = lb_rng_below(r, 2) ? LB_LRU_ACTIVE : LB_LRU_INACTIVE;
	unsigned int nr = lb_rng_below(r, 20), i, taken = 0, seen = 0, budget;
	int pos;

	for (i = 0; i < NOBJ; i++)
		objs[i].verdict = (enum lb_lru_verdict)(lb_rng_below(r, 40) ?
			lb_rng_below(r, 4) : LB_LRU_STOP);
	budget = m->len[l];
	/* Walk a copy of the order: moves to the head never revisit. */
	{
		unsigned int order[NOBJ], len = m->len[l];

		memcpy(order, m->list[l], sizeof(order));
		for (pos = (int)len - 1; nr && pos >= 0 && taken < nr &&
		     seen < budget; pos--) {
			unsigned int id = order[pos], p;
			enum lb_lru_verdict v = objs[id].verdict;

			seen++;
			if (v == LB_LRU_STOP)
				break;
			if (v == LB_LRU_SKIP)
				continue;
			for (p = 0; m->list[l][p] != id; p++)
				;
			m_remove(m, l, p);
			if (v == LB_LRU_ISOLATE) {
				m->where[id] = ISOL;
				m->priv[m->npriv++] = id;
				taken++;
				continue;
			}
			if (v == LB_LRU_ACTIVATE) {
				m->active[id] = true;
				m->st.activated++;
			} else {
				m->st.rotated++;
			}
			m_insert_head(m, m_list_of(m, id), id);
		}
	}
	if (nr) {
		m->st.scanned += seen;
		m->st.path[LB_LRU_PATH_ISOLATE].acquisitions++;
		m->st.path[LB_LRU_PATH_ISOLATE].objs += taken;
	}
	CHECK(eq(int, lb_lru_isolate(lru, l, priv, nr, op_scan, NULL),
		 (int)taken));
}

static void do_putback(struct lb_lru *lru, struct model *m, struct lb_rng *r,
		       struct cds_list_head *priv)
{
	unsigned int i, moved = 0, n = m->npriv;

	for (i = 0; i < n; i++) {
		unsigned int id = m->priv[i];

		objs[id].last_ref = lb_rng_below(r, 4) == 0;
		if (lb_rng_below(r, 3) == 0) {
			m->active[id] = !m->active[id];
			CHECK(eq(int, lb_lru_node_set_active(&objs[id].node,
							     m->active[id]), 0));
		}
		if (objs[id].last_ref) {
			m->where[id] = FREE;
			m->st.released++;
			continue;
		}
		m_insert_head(m, m_list_of(m, id), id);
		moved++;
	}
	m->npriv = 0;
	if (n) {
		m->st.path[LB_LRU_PATH_PUTBACK].acquisitions++;
		m->st.path[LB_LRU_PATH_PUTBACK].objs += n;
	}
	releases_on = true;
	CHECK(eq(int, lb_lru_putback(lru, priv, lb_rng_below(r, 2) ?
				     LB_LRU_PUTBACK_LOCKED : 0), (int)moved));
	releases_on = false;
	CHECK(cds_list_empty(priv));
}

static void do_del(struct lb_lru *lru, struct model *m, struct lb_rng *r)
{
	void *v[8];
	unsigned int n = 1 + lb_rng_below(r, 8), i, removed = 0, p;

	for (i = 0; i < n; i++) {
		unsigned int id = lb_rng_below(r, NOBJ);
		enum lb_lru_list l = m_list_of(m, id);

		v[i] = &objs[id];
		if (m->where[id] != ON) {
			m->st.errors++;
			continue;
		}
		for (p = 0; m->list[l][p] != id; p++)
			;
		m_remove(m, l, p);
		m->where[id] = FREE;
		removed++;
	}
	m->st.path[LB_LRU_PATH_DEL].acquisitions++;
	m->st.path[LB_LRU_PATH_DEL].objs += removed;
	CHECK(eq(int, lb_lru_del(lru, v, n), (int)removed));
}

static void check_counters(struct lb_lru *lru, const struct model *m)
{
	struct lb_lru_stats st;
	unsigned int l, p;

	CHECK(eq(int, lb_lru_stats(lru, &st), 0));
	for (l = 0; l < LB_LRU_NR_LISTS; l++) {
		CHECK(eq(u64, st.nr[l], m->st.nr[l]), "list %u", l);
		CHECK(eq(u64, st.weight[l], m->st.weight[l]), "list %u", l);
	}
	for (p = 0; p < LB_LRU_NR_PATHS; p++) {
		CHECK(eq(u64, st.path[p].acquisitions,
			 m->st.path[p].acquisitions), "path %u", p);
		CHECK(eq(u64, st.path[p].objs, m->st.path[p].objs), "path %u", p);
	}
	CHECK(eq(u64, st.scanned, m->st.scanned));
	CHECK(eq(u64, st.rotated, m->st.rotated));
	CHECK(eq(u64, st.activated, m->st.activated));
	CHECK(eq(u64, st.released, m->st.released));
	CHECK(eq(u64, st.errors, m->st.errors));
}

/* Isolate everything (tail first), compare, put it back in that order. */
static void check_order(struct lb_lru *lru, struct model *m)
{
	struct cds_list_head all, *pos;
	unsigned int l, i;

	for (l = 0; l < LB_LRU_NR_LISTS; l++) {
		unsigned int len = m->len[l];

		CDS_INIT_LIST_HEAD(&all);
		CHECK(eq(int, lb_lru_isolate(lru, l, &all, NOBJ, NULL, NULL),
			 (int)len));
		i = len;
		cds_list_for_each(pos, &all) {
			struct obj *o = lb_lru_obj_of(lru, cds_list_entry(pos,
					struct lb_lru_node, link));

			CHECK(eq(u32, o->id, m->list[l][--i]), "list %u", l);
		}
		CHECK(eq(int, lb_lru_putback(lru, &all, 0), (int)len));
		m->st.scanned += len;
		m->st.path[LB_LRU_PATH_ISOLATE].acquisitions++;
		m->st.path[LB_LRU_PATH_ISOLATE].objs += len;
		if (len) {
			m->st.path[LB_LRU_PATH_PUTBACK].acquisitions++;
			m->st.path[LB_LRU_PATH_PUTBACK].objs += len;
		}
	}
}

static void run_seed(uint64_t seed, unsigned int flags)
{
	struct lb_lru_conf conf = {
		.lock_kind = LB_LOCK_SPIN, .flags = flags, .ops = &ops,
		.node_offset = offsetof(struct obj, node),
	};
	static struct model m;
	struct cds_list_head priv;
	struct lb_lru *lru;
	struct lb_rng r;
	unsigned int i, op;

	cur_seed = seed;
	lb_rng_seed(&r, seed);
	memset(&m, 0, sizeof(m));
	memset(objs, 0, sizeof(objs));
	for (i = 0; i < NOBJ; i++) {
		objs[i].id = i;
		lb_lru_node_init(&objs[i].node, 1 + lb_rng_below(&r, 16));
	}
	CDS_INIT_LIST_HEAD(&priv);
	CHECK(eq(int, lb_lru_create(&lru, &conf), 0));
	for (op = 0; op < OPS; op++) {
		switch (lb_rng_below(&r, 4)) {
		case 0:
			do_commit(lru, &m, &r);
			break;
		case 1:
			do_isolate(lru, &m, &r, &priv);
			break;
		case 2:
			if (lb_rng_below(&r, 2))
				do_putback(lru, &m, &r, &priv);
			break;
		default:
			do_del(lru, &m, &r);
		}
		check_counters(lru, &m);
		if (op % CHECK_EVERY == 0)
			check_order(lru, &m);
	}
	do_putback(lru, &m, &r, &priv);
	check_order(lru, &m);
	for (i = 0; i < LB_LRU_NR_LISTS; i++)
		lb_lru_isolate(lru, i, &priv, NOBJ, NULL, NULL);
	CHECK(eq(int, lb_lru_destroy(lru), 0));
}

Test(prop_lru, random_ops_vs_model)
{
	static const unsigned int variants[] = {
		0, LB_LRU_NO_SPLICE, LB_LRU_NO_PREFETCH, LB_LRU_PREFETCH_READ,
		LB_LRU_NO_SPLICE | LB_LRU_NO_PREFETCH | LB_LRU_HOLD_TIME,
	};
	uint64_t s;
	unsigned int i, v;

	for (v = 0; v < sizeof(variants) / sizeof(variants[0]); v++) {
		if (lb_seed_from_env(&s)) {
			run_seed(s, variants[v]);
			continue;
		}
		for (i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++)
			run_seed(seeds[i], variants[v]);
	}
}
