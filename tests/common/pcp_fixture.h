/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Criterion fixture shared by the lb_pcp unit tests: a test back-end @b,
 * the injected CPU id and clock @env, and the cache @p under test (made by
 * make(), destroyed and checked for double returns by teardown()).
 */
#ifndef LB_TEST_PCP_FIXTURE_H
#define LB_TEST_PCP_FIXTURE_H

#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "pcp_backend.h"

static struct tb b;
static struct tb_env env;
static struct lb_pcp *p;
/* CPU-id source for make(); NULL means env.cpu. */
static lb_cpu_fn fixture_cpu_fn;

static void setup(void)
{
	cr_assert(eq(int, tb_init(&b, 4, 60000), 0));
	env.cpu = 0;
	env.now = 0;
	p = NULL;
}

static void teardown(void)
{
	if (p)
		lb_pcp_destroy(p);
	cr_assert(eq(u64, b.errors, 0), "back-end saw a double return");
	tb_fini(&b);
}

static inline void make(enum lb_pcp_tuner t, int batch, int high_min,
			int high_max)
{
	p = tb_make(&b, &env, fixture_cpu_fn, t, batch, high_min, high_max);
	cr_assert(ne(ptr, p, NULL));
}

#define state(slot) tb_state(p, slot)

#endif /* LB_TEST_PCP_FIXTURE_H */
