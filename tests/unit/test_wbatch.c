// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lb_wbatch: the size-weighted batch rule, its caps and every error path.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include <lockbatch/wbatch.h>

static int objs[64];

/* A batch filled with a pattern, to see that a failed call left it alone. */
static void poison(struct lb_wbatch *b)
{
	memset(b, 0xa5, sizeof(*b));
}

static int untouched(const struct lb_wbatch *b)
{
	struct lb_wbatch ref;

	poison(&ref);
	return memcmp(b, &ref, sizeof(ref)) == 0;
}

Test(wbatch, init_accepts_cap_boundaries)
{
	struct lb_wbatch b;

	cr_assert(eq(int, lb_wbatch_init(&b, 1, 1), 0));
	cr_assert(eq(int, b.max_nr, 1));
	cr_assert(eq(u32, b.max_weight, 1));
	cr_assert(eq(int, lb_wbatch_count(&b), 0));
	cr_assert(eq(long, lb_wbatch_weight(&b), 0));
	cr_assert(eq(int, lb_wbatch_init(&b, LB_WBATCH_MAX,
					 LB_WBATCH_WEIGHT_MAX), 0));
	cr_assert(eq(int, b.max_nr, LB_WBATCH_MAX));
	cr_assert(eq(u32, b.max_weight, LB_WBATCH_WEIGHT_MAX));
}

Test(wbatch, init_rejects_bad_input_untouched)
{
	struct lb_wbatch b;

	cr_assert(eq(int, lb_wbatch_init(NULL, 31, 31), -EINVAL));
	poison(&b);
	cr_assert(eq(int, lb_wbatch_init(&b, 0, 31), -EINVAL));
	cr_assert(eq(int, lb_wbatch_init(&b, LB_WBATCH_MAX + 1, 31), -EINVAL));
	cr_assert(eq(int, lb_wbatch_init(&b, 31, 0), -EINVAL));
	cr_assert(eq(int, lb_wbatch_init(&b, 31, LB_WBATCH_WEIGHT_MAX + 1),
		     -EINVAL));
	cr_assert(eq(int, lb_wbatch_init(&b, ~0u, ~0u), -EINVAL));
	cr_assert(untouched(&b), "a rejected init wrote to the batch");
}

Test(wbatch, static_initializer_matches_init)
{
	struct lb_wbatch a = LB_WBATCH_INIT(31, 31), b;

	lb_wbatch_init(&b, 31, 31);
	cr_assert(eq(int, a.nr, b.nr));
	cr_assert(eq(int, a.max_nr, b.max_nr));
	cr_assert(eq(u32, a.weight, b.weight));
	cr_assert(eq(u32, a.max_weight, b.max_weight));
	cr_assert(eq(int, lb_wbatch_add(&a, &objs[0], 1), 0));
	cr_assert(eq(int, lb_wbatch_room(&a), 30));
}

Test(wbatch, add_rejects_bad_input_nothing_appended)
{
	struct lb_wbatch b;

	lb_wbatch_init(&b, 31, 31);
	cr_assert(eq(int, lb_wbatch_add(&b, &objs[0], 3), 0));
	cr_assert(eq(int, lb_wbatch_room(&b), 30));
	cr_assert(eq(int, lb_wbatch_room(NULL), -EINVAL));
	cr_assert(eq(int, lb_wbatch_add(NULL, &objs[1], 1), -EINVAL));
	cr_assert(eq(int, lb_wbatch_add(&b, NULL, 1), -EINVAL));
	cr_assert(eq(int, lb_wbatch_add(&b, &objs[1], 0), -EINVAL));
	cr_assert(eq(int, lb_wbatch_add(&b, &objs[1], LB_WBATCH_WEIGHT_MAX + 1),
		     -EINVAL));
	cr_assert(eq(int, lb_wbatch_add(&b, &objs[1], UINT32_MAX), -EINVAL));
	cr_assert(eq(int, lb_wbatch_count(&b), 1));
	cr_assert(eq(long, lb_wbatch_weight(&b), 3));
	cr_assert(eq(ptr, b.objs[0], &objs[0]));
}

Test(wbatch, add_accepts_largest_weight)
{
	struct lb_wbatch b;

	lb_wbatch_init(&b, 31, LB_WBATCH_WEIGHT_MAX);
	/* Reaches the cap alone: appended, must not wait. */
	cr_assert(eq(int, lb_wbatch_add(&b, &objs[0], LB_WBATCH_WEIGHT_MAX), 1));
	cr_assert(eq(long, lb_wbatch_weight(&b), LB_WBATCH_WEIGHT_MAX));
}

Test(wbatch, add_rejects_batch_with_bad_caps)
{
	struct lb_wbatch zero = LB_WBATCH_INIT(0, 31);
	struct lb_wbatch nocap = LB_WBATCH_INIT(31, 0);
	struct lb_wbatch big = LB_WBATCH_INIT(LB_WBATCH_MAX + 1, 31);

	cr_assert(eq(int, lb_wbatch_add(&zero, &objs[0], 1), -EINVAL));
	cr_assert(eq(int, lb_wbatch_add(&nocap, &objs[0], 1), -EINVAL));
	cr_assert(eq(int, lb_wbatch_add(&big, &objs[0], 1), -EINVAL));
	cr_assert(eq(int, lb_wbatch_count(&zero), 0));
	cr_assert(eq(int, lb_wbatch_count(&nocap), 0));
	cr_assert(eq(int, lb_wbatch_count(&big), 0));
}

/* Weight 1 everywhere is 6.12's folio_batch_add(): room after each add is
 * its return value, and the 31st add says flush. */
Test(wbatch, weight_one_is_folio_batch)
{
	struct lb_wbatch b;
	int i;

	lb_wbatch_init(&b, LB_WBATCH_MAX, LB_WBATCH_MAX);
	for (i = 0; i < LB_WBATCH_MAX; i++)
	{
		cr_assert(eq(int, lb_wbatch_add(&b, &objs[i], 1),
			     i == LB_WBATCH_MAX - 1), "add %d", i);
		cr_assert(eq(int, lb_wbatch_room(&b), LB_WBATCH_MAX - 1 - i),
			  "room after add %d", i);
	}
	cr_assert(eq(int, lb_wbatch_count(&b), LB_WBATCH_MAX));
	for (i = 0; i < LB_WBATCH_MAX; i++)
		cr_assert(eq(ptr, b.objs[i], &objs[i]), "order at %d", i);
}

Test(wbatch, enospc_when_flush_was_skipped_full)
{
	struct lb_wbatch b;

	lb_wbatch_init(&b, 2, 31);
	cr_assert(eq(int, lb_wbatch_add(&b, &objs[0], 1), 0));
	cr_assert(eq(int, lb_wbatch_add(&b, &objs[1], 1), 1));
	cr_assert(eq(int, lb_wbatch_add(&b, &objs[2], 1), -ENOSPC));
	cr_assert(eq(int, lb_wbatch_count(&b), 2));
	cr_assert(eq(long, lb_wbatch_weight(&b), 2));
}

Test(wbatch, enospc_when_flush_was_skipped_overweight)
{
	struct lb_wbatch b;

	lb_wbatch_init(&b, 31, 8);
	cr_assert(eq(int, lb_wbatch_add(&b, &objs[0], 5), 0));
	cr_assert(eq(int, lb_wbatch_add(&b, &objs[1], 5), 1));
	cr_assert(eq(int, lb_wbatch_room(&b), 29), "flush for weight, room left");
	cr_assert(eq(int, lb_wbatch_add(&b, &objs[2], 1), -ENOSPC));
	cr_assert(eq(int, lb_wbatch_count(&b), 2));
	cr_assert(eq(long, lb_wbatch_weight(&b), 10));
}

Test(wbatch, reinit_empties_and_keeps_caps)
{
	struct lb_wbatch b;

	cr_assert(eq(int, lb_wbatch_reinit(NULL), -EINVAL));
	lb_wbatch_init(&b, 3, 9);
	lb_wbatch_add(&b, &objs[0], 4);
	lb_wbatch_add(&b, &objs[1], 4);
	lb_wbatch_add(&b, &objs[2], 4);
	cr_assert(eq(int, lb_wbatch_add(&b, &objs[3], 1), -ENOSPC));
	cr_assert(eq(int, lb_wbatch_reinit(&b), 0));
	cr_assert(eq(int, lb_wbatch_count(&b), 0));
	cr_assert(eq(long, lb_wbatch_weight(&b), 0));
	cr_assert(eq(int, b.max_nr, 3));
	cr_assert(eq(u32, b.max_weight, 9));
	cr_assert(eq(int, lb_wbatch_add(&b, &objs[3], 1), 0));
	cr_assert(eq(int, lb_wbatch_room(&b), 2));
}

Test(wbatch, count_weight_reject_null)
{
	cr_assert(eq(int, lb_wbatch_count(NULL), -EINVAL));
	cr_assert(eq(long, lb_wbatch_weight(NULL), -EINVAL));
}

/*
 * C13: caps 31/31, weights 1,4,16,4,4,2 then 31, then 30, then 32. The
 * first six sum to exactly 31 (at the cap, not over it): they wait. 31
 * reaches the cap alone, so it is appended and the batch flushes at once.
 * 30 waits in the fresh batch; 32 reaches the cap and flushes it.
 */
Test(wbatch, c13_weight_boundaries)
{
	static const uint32_t w[] = { 1, 4, 16, 4, 4, 2, 31, 30, 32 };
	/* 1 = flush now, 0 = waits (the rule's prediction). */
	static const int expect[] = { 0, 0, 0, 0, 0, 0, 1, 0, 1 };
	static const long weight_at_flush[] = { [6] = 62, [8] = 62 };
	struct lb_wbatch b;
	unsigned int i, flushes = 0;

	lb_wbatch_init(&b, 31, 31);
	for (i = 0; i < sizeof(w) / sizeof(w[0]); i++) {
		int rc = lb_wbatch_add(&b, &objs[i], w[i]);

		cr_assert(eq(int, rc, expect[i]), "C13 add %u (weight %u)", i,
			  w[i]);
		if (!rc)
			cr_assert(le(long, lb_wbatch_weight(&b), 31),
				  "a waiting batch holds at most 31 units");
		if (rc == 1) {
			cr_assert(eq(long, lb_wbatch_weight(&b),
				     weight_at_flush[i]));
			flushes++;
			lb_wbatch_reinit(&b);
		}
	}
	cr_assert(eq(u32, flushes, 2));
	cr_assert(eq(int, lb_wbatch_count(&b), 0));
}
