/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * A bulk back-end for lb_pcp tests: a fixed pool of objects per order that
 * knows where each object is (in the pool or handed out), so tests can
 * check conservation (pool + live + cached = total) and catch a double
 * return. Its callbacks run under the cache's back-end lock; the counters
 * are read only after the workers stopped.
 */
#ifndef LB_TEST_PCP_BACKEND_H
#define LB_TEST_PCP_BACKEND_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <lockbatch/pcp.h>

#define TB_ORDERS (LB_PCP_MAX_ORDER + 1)

struct tb_obj {
	void *link[2];		/* used by the cache while cached */
	uint32_t id;
	uint8_t order;
	uint8_t out;		/* 1 while handed out by the pool */
};

struct tb {
	struct tb_obj *objs;
	unsigned int per_order;
	unsigned int nr_orders;
	uint32_t *stack[TB_ORDERS];
	unsigned int top[TB_ORDERS];
	uint64_t alloc_calls, free_calls;
	uint64_t max_call_units;
	uint64_t errors;	/* double returns, wrong orders */
	int fail_next;		/* make the next alloc_bulk calls return 0 */
};

static inline int tb_alloc_bulk(void *ctx, unsigned int order, void **out,
				unsigned int n)
{
	struct tb *b = ctx;
	unsigned int i;

	b->alloc_calls++;
	if (b->fail_next > 0) {
		b->fail_next--;
		return 0;
	}
	for (i = 0; i < n && b->top[order]; i++) {
		struct tb_obj *o = &b->objs[b->stack[order][--b->top[order]]];

		if (o->out)
			b->errors++;
		o->out = 1;
		out[i] = o;
	}
	if (((uint64_t)i << order) > b->max_call_units)
		b->max_call_units = (uint64_t)i << order;
	return (int)i;
}

static inline void tb_free_bulk(void *ctx, unsigned int order, void **objs,
				unsigned int n)
{
	struct tb *b = ctx;
	unsigned int i;

	b->free_calls++;
	for (i = 0; i < n; i++) {
		struct tb_obj *o = objs[i];

		if (!o->out || o->order != order) {
			b->errors++;
			continue;
		}
		o->out = 0;
		b->stack[order][b->top[order]++] = o->id;
	}
}

static inline int tb_init(struct tb *b, unsigned int nr_orders,
			  unsigned int per_order)
{
	unsigned int o, i;

	memset(b, 0, sizeof(*b));
	b->nr_orders = nr_orders;
	b->per_order = per_order;
	b->objs = calloc((size_t)nr_orders * per_order, sizeof(*b->objs));
	if (!b->objs)
		return -1;
	for (o = 0; o < nr_orders; o++) {
		b->stack[o] = malloc(per_order * sizeof(uint32_t));
		if (!b->stack[o])
			return -1;
		for (i = 0; i < per_order; i++) {
			uint32_t id = o * per_order + (per_order - 1 - i);

			b->objs[id].id = id;
			b->objs[id].order = (uint8_t)o;
			b->stack[o][b->top[o]++] = id;
		}
	}
	return 0;
}

static inline void tb_fini(struct tb *b)
{
	unsigned int o;

	for (o = 0; o < b->nr_orders; o++)
		free(b->stack[o]);
	free(b->objs);
}

/* Base units currently handed out (live or cached). */
static inline uint64_t tb_units_out(const struct tb *b)
{
	uint64_t u = 0;
	unsigned int o;

	/* TB_ORDERS bound too: GCC's -Warray-bounds cannot see nr_orders's. */
	for (o = 0; o < b->nr_orders && o < TB_ORDERS; o++)
		u += (uint64_t)(b->per_order - b->top[o]) << o;
	return u;
}

static inline struct lb_pcp_backend tb_ops(struct tb *b)
{
	struct lb_pcp_backend be = {
		.alloc_bulk = tb_alloc_bulk,
		.free_bulk = tb_free_bulk,
		.ctx = b,
	};
	return be;
}

/* Injected CPU id and clock: tests pick the slot and move time. */
struct tb_env {
	int cpu;
	uint64_t now;
};

static inline int tb_cpu(void *arg)
{
	return ((struct tb_env *)arg)->cpu;
}

static inline uint64_t tb_clock(void *arg)
{
	return __atomic_load_n(&((struct tb_env *)arg)->now, __ATOMIC_ACQUIRE);
}

static inline void tb_conf(struct lb_pcp_conf *c, struct tb *b,
			   struct tb_env *env, enum lb_pcp_tuner t,
			   int batch, int high_min, int high_max)
{
	memset(c, 0, sizeof(*c));
	c->nr_slots = 4;
	c->max_order = 3;
	c->batch = batch;
	c->high_min = high_min;
	c->high_max = high_max;
	c->tuner = t;
	c->lock_kind = LB_LOCK_SPIN;
	c->backend = tb_ops(b);
	c->cpu_fn = tb_cpu;
	c->cpu_arg = env;
	c->clock_fn = tb_clock;
	c->clock_arg = env;
	c->decay_interval_ns = 1000000000ull;
}

/* A 4-slot cache over @b; NULL if creation failed. */
static inline struct lb_pcp *tb_make(struct tb *b, struct tb_env *env,
				     lb_cpu_fn cpu_fn, enum lb_pcp_tuner t,
				     int batch, int high_min, int high_max)
{
	struct lb_pcp_conf c;
	struct lb_pcp *p;

	tb_conf(&c, b, env, t, batch, high_min, high_max);
	if (cpu_fn)
		c.cpu_fn = cpu_fn;
	return lb_pcp_create(&p, &c) ? NULL : p;
}

/* One slot's tuner state (zeroed if @slot is out of range). */
static inline struct lb_pcp_tune_state tb_state(struct lb_pcp *p,
						unsigned int slot)
{
	struct lb_pcp_tune_state s;

	if (lb_pcp_slot_state(p, slot, &s))
		memset(&s, 0, sizeof(s));
	return s;
}

#endif /* LB_TEST_PCP_BACKEND_H */
