/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The soak: every primitive under random mixed operations from more
 * threads than cores, with conservation checked at pauses and at the end.
 * Each part (soak_cpubatch.c, soak_pcp.c, soak.c for wbatch and lock) offers
 * setup, one random operation for a worker, a check while the workers are
 * paused, and teardown. The test's counters use __atomic builtins, which
 * ThreadSanitizer sees (it cannot see ck's inline assembly).
 */
#ifndef LB_SOAK_H
#define LB_SOAK_H

#include <stdint.h>
#include <stdio.h>

#include "../common/prng.h"

/* A broken promise: counted and printed (first few), never fatal. */
extern uint64_t soak_violations;
#define SOAK_CHECK(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			if (__atomic_fetch_add(&soak_violations, 1,	\
					       __ATOMIC_RELAXED) < 20) { \
				fprintf(stderr, "violation: %s: ", #cond); \
				fprintf(stderr, __VA_ARGS__);		\
				fputc('\n', stderr);			\
			}						\
		}							\
	} while (0)

int soak_cpubatch_setup(unsigned int nr_threads);
void soak_cpubatch_op(unsigned int t, struct lb_rng *g);
void soak_cpubatch_check(void);
void soak_cpubatch_teardown(void);

int soak_pcp_setup(unsigned int nr_threads);
void soak_pcp_op(unsigned int t, struct lb_rng *g);
void soak_pcp_check(void);
void soak_pcp_teardown(void);

#endif /* LB_SOAK_H */
