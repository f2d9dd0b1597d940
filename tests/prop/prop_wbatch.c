// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lb_wbatch against a reference model: random caps and weights, adds,
 * flushes, and adds after an ignored flush request. Several fixed seeds;
 * LB_SEED=<seed> replays one.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include <lockbatch/wbatch.h>
#include "../common/prng.h"
#include "../common/wbatch_model.h"

#define OPS_PER_SEED 20000

static const uint64_t seeds[] = {
	0x1, 0x5eed, 0xdecafbad, 0x0123456789abcdefull, 0xfeedfacecafebeefull,
	0x31313131,
};

static void run_seed(uint64_t seed, int ones)
{
	static char objs[LB_WBATCH_MAX + 1];
	struct lb_rng rng;
	struct lb_wbatch b;
	struct wbatch_model m;
	unsigned int op, i;
	int pending = 0;

	lb_rng_seed(&rng, seed);
	memset(&m, 0, sizeof(m));
	m.max_nr = 1 + lb_rng_below(&rng, LB_WBATCH_MAX);
	m.max_weight = 1 + lb_rng_below(&rng, 64);
	if (ones) {
		/* folio_batch: weight 1 always, the weight cap never binds. */
		m.max_nr = LB_WBATCH_MAX;
		m.max_weight = LB_WBATCH_MAX + lb_rng_below(&rng, 64);
	}
	cr_assert(eq(int, lb_wbatch_init(&b, m.max_nr, m.max_weight), 0),
		  LB_SEED_FMT, LB_SEED_ARGS(seed));
	for (op = 0; op < OPS_PER_SEED; op++) {
		uint32_t w = ones ? 1 : 1 + lb_rng_below(&rng, 40);
		void *obj = &objs[lb_rng_below(&rng, sizeof(objs))];
		int want, rc;

		/* A requested flush is usually honoured, sometimes ignored. */
		if (pending && lb_rng_below(&rng, 8)) {
			cr_assert(eq(int, lb_wbatch_reinit(&b), 0));
			wbatch_model_reinit(&m);
			pending = 0;
		}
		want = wbatch_model_add(&m, obj, w);
		rc = lb_wbatch_add(&b, obj, w);
		cr_assert(eq(int, rc, wbatch_model_rc(want)),
			  "op %u weight %u caps %u/%u: " LB_SEED_FMT, op, w,
			  m.max_nr, m.max_weight, LB_SEED_ARGS(seed));
		if (ones && want >= 0)
			cr_assert(eq(int, lb_wbatch_room(&b),
				     (int)(LB_WBATCH_MAX - m.nr)),
				  "not folio_batch_add() at op %u: " LB_SEED_FMT,
				  op, LB_SEED_ARGS(seed));
		pending |= rc == 1;
		cr_assert(eq(int, lb_wbatch_count(&b), (int)m.nr),
			  "op %u: " LB_SEED_FMT, op, LB_SEED_ARGS(seed));
		cr_assert(eq(long, lb_wbatch_weight(&b), (long)m.weight),
			  "op %u: " LB_SEED_FMT, op, LB_SEED_ARGS(seed));
		if (rc == 0)
			cr_assert(le(u64, m.weight, m.max_weight),
				  "a waiting batch over its weight cap, op %u: "
				  LB_SEED_FMT, op, LB_SEED_ARGS(seed));
		for (i = 0; i < m.nr; i++)
			cr_assert(eq(ptr, b.objs[i], m.objs[i]),
				  "order at %u, op %u: " LB_SEED_FMT, i, op,
				  LB_SEED_ARGS(seed));
	}
}

static void run_seeds(int ones)
{
	uint64_t seed;
	unsigned int i;

	if (lb_seed_from_env(&seed)) {
		run_seed(seed, ones);
		return;
	}
	for (i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++)
		run_seed(seeds[i], ones);
}

Test(prop_wbatch, random_adds_match_model)
{
	run_seeds(0);
}

Test(prop_wbatch, weight_one_is_folio_batch)
{
	run_seeds(1);
}
