/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Deterministic PRNG for property and stress tests. Every random test
 * derives its sequence from one 64-bit seed: a fixed list in the test,
 * or LB_SEED from the environment to replay a failure. Put the seed in
 * every assertion message (TAP drops Criterion's parameter line).
 */
#ifndef LB_TEST_PRNG_H
#define LB_TEST_PRNG_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

struct lb_rng {
	uint64_t s;
};

/* splitmix64: tiny, full-period, good enough to drive operation mixes. */
static inline uint64_t lb_rng_next(struct lb_rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [0, n), n > 0. */
static inline uint32_t lb_rng_below(struct lb_rng *r, uint32_t n)
{
	return (uint32_t)(((lb_rng_next(r) >> 32) * (uint64_t)n) >> 32);
}

static inline void lb_rng_seed(struct lb_rng *r, uint64_t seed)
{
	r->s = seed;
}

/*
 * The seed to use: LB_SEED (decimal or 0x-hex) when set, else @dflt.
 * lb_seed_from_env() tells whether LB_SEED was set, so a test can run only
 * that seed instead of its fixed list.
 */
static inline int lb_seed_from_env(uint64_t *seed)
{
	const char *e = getenv("LB_SEED");

	if (!e || !*e)
		return 0;
	*seed = strtoull(e, NULL, 0);
	return 1;
}

static inline uint64_t lb_test_seed(uint64_t dflt)
{
	uint64_t s;

	return lb_seed_from_env(&s) ? s : dflt;
}

/* @run(seed) for LB_SEED alone when it is set, else for each of @seeds. */
static inline void lb_each_seed(const uint64_t *seeds, unsigned int nr,
				void (*run)(uint64_t seed))
{
	uint64_t s;
	unsigned int i;

	if (lb_seed_from_env(&s)) {
		run(s);
		return;
	}
	for (i = 0; i < nr; i++)
		run(seeds[i]);
}

#define LB_SEED_FMT "seed=0x%016" PRIx64 " (replay: LB_SEED=0x%016" PRIx64 ")"
#define LB_SEED_ARGS(s) (uint64_t)(s), (uint64_t)(s)

#endif /* LB_TEST_PRNG_H */
