// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lb_cpubatch owner ids (lib/cpubatch/id.c) on their own: 16 bits, never
 * 0, never two live holders of one id, -ENOSPC once all 65535 are taken,
 * and cyclic reuse (a released id comes back only after the search went
 * round). Criterion runs each test in a process of its own, so each
 * starts with every id free. Through the public API this would need
 * 65535 live instances.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "cpubatch/node.h"

#define NR_IDS (LBI_CB_IDS - 1)

static uint8_t taken[LBI_CB_IDS];

TestSuite(cpubatch_id, .timeout = 30);

Test(cpubatch_id, all_ids_once_then_enospc)
{
	uint16_t id;
	uint32_t i;

	for (i = 0; i < NR_IDS; i++) {
		cr_assert(eq(int, lbi_cb_id_get(&id), 0), "get %u", i);
		cr_assert(id != 0, "id 0 is never handed out");
		cr_assert(eq(u8, taken[id], 0), "id %u handed out twice", id);
		taken[id] = 1;
	}
	id = 12345;
	cr_assert(eq(int, lbi_cb_id_get(&id), -ENOSPC));
	cr_assert(eq(u16, id, 12345), "*id untouched on error");
	/* One released: it is the only one to come back. */
	lbi_cb_id_put(777);
	cr_assert(eq(int, lbi_cb_id_get(&id), 0));
	cr_assert(eq(u16, id, 777));
	cr_assert(eq(int, lbi_cb_id_get(&id), -ENOSPC));
}

Test(cpubatch_id, released_id_comes_back_last)
{
	uint16_t a, b, id;
	uint32_t i;

	cr_assert(eq(int, lbi_cb_id_get(&a), 0));
	lbi_cb_id_put(a);
	/* Every other free id is handed out before @a again. */
	for (i = 0; i < NR_IDS - 1; i++) {
		cr_assert(eq(int, lbi_cb_id_get(&id), 0));
		cr_assert(ne(u16, id, a), "id %u reused after %u gets", a, i);
		cr_assert(eq(u8, taken[id], 0));
		taken[id] = 1;
	}
	cr_assert(eq(int, lbi_cb_id_get(&b), 0));
	cr_assert(eq(u16, b, a), "the released id is the last one left");
}

Test(cpubatch_id, put_ignores_reserved_and_out_of_range)
{
	uint16_t a, b;

	lbi_cb_id_put(0);
	lbi_cb_id_put(LBI_CB_IDS);
	lbi_cb_id_put(UINT32_MAX);
	cr_assert(eq(int, lbi_cb_id_get(&a), 0));
	cr_assert(eq(int, lbi_cb_id_get(&b), 0));
	cr_assert(a != 0 && b != 0 && a != b);
}

#define THREADS 4
#define PER_THREAD 2000

static uint16_t got[THREADS][PER_THREAD];

static void *churn(void *arg)
{
	uint16_t *mine = arg, tmp;
	unsigned int i;

	/* Take and release in between, so that words change under the CAS. */
	for (i = 0; i < PER_THREAD; i++) {
		if (lbi_cb_id_get(&mine[i]))
			return NULL;
		if (lbi_cb_id_get(&tmp))
			return NULL;
		lbi_cb_id_put(tmp);
	}
	return arg;
}

Test(cpubatch_id, concurrent_gets_are_distinct)
{
	pthread_t t[THREADS];
	unsigned int i, k;
	void *rc;

	for (i = 0; i < THREADS; i++)
		cr_assert(eq(int, pthread_create(&t[i], NULL, churn, got[i]), 0));
	for (i = 0; i < THREADS; i++) {
		cr_assert(eq(int, pthread_join(t[i], &rc), 0));
		cr_assert(rc != NULL, "thread %u ran out of ids", i);
	}
	for (i = 0; i < THREADS; i++)
		for (k = 0; k < PER_THREAD; k++) {
			uint16_t id = got[i][k];

			cr_assert(id != 0);
			cr_assert(eq(u8, taken[id], 0), "id %u held twice", id);
			taken[id] = 1;
		}
}
