// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lb_refbits: sizes, marks, the batched and the per-unit check, flush
 * calls and every error path.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include <lockbatch/refbits.h>

struct flushes {
	unsigned int calls;
	unsigned int first[LB_REFBITS_MAX];
	unsigned int nr[LB_REFBITS_MAX];
};

static void rec_flush(void *arg, unsigned int first, unsigned int nr)
{
	struct flushes *f = arg;

	f->first[f->calls] = first;
	f->nr[f->calls] = nr;
	f->calls++;
}

Test(refbits, init_bounds)
{
	struct lb_refbits rb;

	cr_assert(eq(int, lb_refbits_init(NULL, 1), -EINVAL));
	memset(&rb, 0x5a, sizeof(rb));
	cr_assert(eq(int, lb_refbits_init(&rb, 0), -EINVAL));
	cr_assert(eq(int, lb_refbits_init(&rb, LB_REFBITS_MAX + 1), -EINVAL));
	cr_assert(eq(u32, rb.nr_units, 0x5a5a5a5a), "failed init changed @rb");
	cr_assert(eq(int, lb_refbits_init(&rb, 1), 0));
	cr_assert(eq(int, lb_refbits_count(&rb), 0));
	cr_assert(eq(int, lb_refbits_init(&rb, LB_REFBITS_MAX), 0));
	cr_assert(eq(int, lb_refbits_count(&rb), 0));
}

Test(refbits, uninitialised_and_null_rejected)
{
	struct lb_refbits rb = LB_REFBITS_INIT(0);

	cr_assert(eq(int, lb_refbits_mark(&rb, 0), -EINVAL));
	cr_assert(eq(int, lb_refbits_count(&rb), -EINVAL));
	cr_assert(eq(int, lb_refbits_test_and_clear(&rb, NULL, NULL), -EINVAL));
	cr_assert(eq(int, lb_refbits_test_and_clear_each(&rb, NULL, NULL),
		     -EINVAL));
	cr_assert(eq(int, lb_refbits_mark(NULL, 0), -EINVAL));
	cr_assert(eq(int, lb_refbits_count(NULL), -EINVAL));
	cr_assert(eq(int, lb_refbits_test_and_clear(NULL, NULL, NULL), -EINVAL));
	cr_assert(eq(int, lb_refbits_test_and_clear_each(NULL, NULL, NULL),
		     -EINVAL));
}

Test(refbits, mark_out_of_range_changes_nothing)
{
	struct lb_refbits rb = LB_REFBITS_INIT(70);

	cr_assert(eq(int, lb_refbits_mark(&rb, 70), -EINVAL));
	cr_assert(eq(int, lb_refbits_mark(&rb, 511), -EINVAL));
	cr_assert(eq(int, lb_refbits_count(&rb), 0));
	cr_assert(eq(int, lb_refbits_mark(&rb, 69), 0));
	cr_assert(eq(int, lb_refbits_mark(&rb, 69), 0), "marking twice is fine");
	cr_assert(eq(int, lb_refbits_count(&rb), 1));
}

/* 16 units all referenced: one flush covering 0..15, not 16 flushes. */
Test(refbits, batched_flushes_once_per_object)
{
	struct lb_refbits rb;
	struct flushes f = { 0 };
	unsigned int u;

	lb_refbits_init(&rb, 16);
	for (u = 0; u < 16; u++)
		lb_refbits_mark(&rb, u);
	cr_assert(eq(int, lb_refbits_test_and_clear(&rb, rec_flush, &f), 16));
	cr_assert(eq(u32, f.calls, 1));
	cr_assert(eq(u32, f.first[0], 0));
	cr_assert(eq(u32, f.nr[0], 16));
	cr_assert(eq(int, lb_refbits_count(&rb), 0));
	cr_assert(eq(int, lb_refbits_test_and_clear(&rb, rec_flush, &f), 0));
	cr_assert(eq(u32, f.calls, 1), "nothing referenced: no flush");
}

Test(refbits, per_unit_flushes_each_unit)
{
	struct lb_refbits rb;
	struct flushes f = { 0 };
	unsigned int u;

	lb_refbits_init(&rb, 16);
	for (u = 0; u < 16; u++)
		lb_refbits_mark(&rb, u);
	cr_assert(eq(int, lb_refbits_test_and_clear_each(&rb, rec_flush, &f),
		     16));
	cr_assert(eq(u32, f.calls, 16));
	for (u = 0; u < 16; u++) {
		cr_assert(eq(u32, f.first[u], u));
		cr_assert(eq(u32, f.nr[u], 1));
	}
}

/* The range spans words: first set unit to last set unit. */
Test(refbits, batched_range_spans_words)
{
	struct lb_refbits rb;
	struct flushes f = { 0 };

	lb_refbits_init(&rb, LB_REFBITS_MAX);
	lb_refbits_mark(&rb, 5);
	lb_refbits_mark(&rb, 200);
	lb_refbits_mark(&rb, 511);
	cr_assert(eq(int, lb_refbits_test_and_clear(&rb, rec_flush, &f), 3));
	cr_assert(eq(u32, f.calls, 1));
	cr_assert(eq(u32, f.first[0], 5));
	cr_assert(eq(u32, f.nr[0], 507));
	cr_assert(eq(int, lb_refbits_test_and_clear(&rb, NULL, NULL), 0));
}

Test(refbits, null_flush_is_allowed)
{
	struct lb_refbits rb = LB_REFBITS_INIT(1);

	lb_refbits_mark(&rb, 0);
	cr_assert(eq(int, lb_refbits_test_and_clear_each(&rb, NULL, NULL), 1));
	lb_refbits_mark(&rb, 0);
	cr_assert(eq(int, lb_refbits_test_and_clear(&rb, NULL, NULL), 1));
}
