/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Test-run knobs from the environment: `make check` runs stress programs
 * short; `make stress` sets LB_STRESS_LONG=1 to run them long.
 */
#ifndef LB_TEST_ENV_H
#define LB_TEST_ENV_H

#include <stdlib.h>

/* @short_n in make check, @long_n under LB_STRESS_LONG. */
static inline unsigned long lb_stress_iters(unsigned long short_n,
					    unsigned long long_n)
{
	const char *e = getenv("LB_STRESS_LONG");

	return e && *e && *e != '0' ? long_n : short_n;
}

#endif /* LB_TEST_ENV_H */
