/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Criterion fixture shared by the lb_pcp unit tests, over the one lb_pcp
 * back-end of pcp_backend.h: its object pool pcp_pool, the injected CPU id
 * and clock pcp_env, and the cache under test pcp_cache (made by make(),
 * destroyed and checked for double returns by teardown()).
 */
#ifndef LB_TEST_PCP_FIXTURE_H
#define LB_TEST_PCP_FIXTURE_H

#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "pcp_backend.h"

static struct tb pcp_pool;
static struct tb_env pcp_env;
static struct lb_pcp *pcp_cache;
/* CPU-id source for make(); NULL means pcp_env.cpu. */
static lb_cpu_fn fixture_cpu_fn;

static void setup(void)
{
	cr_assert(eq(int, tb_init(&pcp_pool, 4, 60000), 0));
	pcp_env.cpu = 0;
	pcp_env.now = 0;
	pcp_cache = NULL;
}

static void teardown(void)
{
	if (pcp_cache)
		lb_pcp_destroy(pcp_cache);
	cr_assert(eq(u64, pcp_pool.errors, 0), "back-end saw a double return");
	tb_fini(&pcp_pool);
}

static inline void make(enum lb_pcp_tuner t, int batch, int high_min,
			int high_max)
{
	pcp_cache = tb_make(&pcp_pool, &pcp_env, fixture_cpu_fn, t, batch,
			    high_min, high_max);
	cr_assert(ne(ptr, pcp_cache, NULL));
}

#define state(slot) tb_state(pcp_cache, slot)

#endif /* LB_TEST_PCP_FIXTURE_H */
