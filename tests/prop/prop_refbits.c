// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lb_refbits against a reference model (one bool per unit): random sizes,
 * random marks, checks by the batched call and by the per-unit loop.
 * Several fixed seeds; LB_SEED=<seed> replays one.
 */
#include "config.h"

#include <stdbool.h>
#include <string.h>

#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include <lockbatch/refbits.h>
#include "../common/prng.h"

#define ROUNDS 4000

static const uint64_t seeds[] = { 0x1, 0x5eed, 0xdecafbad, 0xfeedfacecafebeefull };

struct flush_log {
	unsigned int calls;
	unsigned int first, nr;
	bool covered[LB_REFBITS_MAX];
};

static void log_flush(void *arg, unsigned int first, unsigned int nr)
{
	struct flush_log *f = arg;
	unsigned int u;

	f->calls++;
	f->first = first;
	f->nr = nr;
	for (u = first; u < first + nr && u < LB_REFBITS_MAX; u++)
		f->covered[u] = true;
}

static void run_seed(uint64_t seed)
{
	bool model[LB_REFBITS_MAX];
	struct lb_refbits rb;
	struct lb_rng rng;
	unsigned int round;

	lb_rng_seed(&rng, seed);
	for (round = 0; round < ROUNDS; round++) {
		unsigned int units = 1 + lb_rng_below(&rng, LB_REFBITS_MAX);
		unsigned int marks = lb_rng_below(&rng, 2 * units), u, want = 0;
		unsigned int lo = LB_REFBITS_MAX, hi = 0;
		bool batched = lb_rng_below(&rng, 2);
		struct flush_log f;
		int got;

		if (lb_rng_below(&rng, 4) == 0)
			units = 16;	/* the benchmark's size, often */
		cr_assert(eq(int, lb_refbits_init(&rb, units), 0));
		memset(model, 0, sizeof(model));
		memset(&f, 0, sizeof(f));
		for (u = 0; u < marks; u++) {
			unsigned int x = lb_rng_below(&rng, units);

			lb_refbits_mark(&rb, x);
			model[x] = true;
		}
		for (u = 0; u < units; u++) {
			if (!model[u])
				continue;
			want++;
			lo = u < lo ? u : lo;
			hi = u;
		}
		cr_assert(eq(int, lb_refbits_count(&rb), (int)want),
			  LB_SEED_FMT " round %u", LB_SEED_ARGS(seed), round);
		got = batched ? lb_refbits_test_and_clear(&rb, log_flush, &f) :
				lb_refbits_test_and_clear_each(&rb, log_flush, &f);
		cr_assert(eq(int, got, (int)want), LB_SEED_FMT " round %u",
			  LB_SEED_ARGS(seed), round);
		cr_assert(eq(int, lb_refbits_count(&rb), 0), LB_SEED_FMT,
			  LB_SEED_ARGS(seed));
		/* Every cleared unit was flushed; batched: one call, tight range. */
		for (u = 0; u < units; u++)
			if (model[u])
				cr_assert(f.covered[u], LB_SEED_FMT " unit %u",
					  LB_SEED_ARGS(seed), u);
		if (batched) {
			cr_assert(eq(u32, f.calls, want ? 1 : 0), LB_SEED_FMT,
				  LB_SEED_ARGS(seed));
			if (want) {
				cr_assert(eq(u32, f.first, lo));
				cr_assert(eq(u32, f.nr, hi - lo + 1));
			}
		} else {
			cr_assert(eq(u32, f.calls, want), LB_SEED_FMT,
				  LB_SEED_ARGS(seed));
		}
	}
}

Test(prop_refbits, random_marks_vs_model)
{
	lb_each_seed(seeds, sizeof(seeds) / sizeof(seeds[0]), run_seed);
}
