// SPDX-License-Identifier: GPL-2.0-only
/*
 * Differential test: the patched kernel's decay_pcp_high() (6.12's decay by
 * one eighth, bounded by count_min: "mm, pcp: avoid to reduce PCP high
 * unnecessarily"), compiled from the function text extracted from the
 * patched mm/page_alloc.c, against lockbatch's lb_pcp tuners.
 *
 * The patch decreases high by min(high / 8, count_min); the library's
 * LINUX tuner decreases it by high / 8 and its COUNT_MIN tuner by
 * min(count_min, high / 5), the rate of the 2023 posting.  Since
 * high / 5 >= high / 8, the patched rule is exactly the larger of the two
 * library results: high' = max(LINUX's high', COUNT_MIN's high'), with the
 * same count - (batch << 5) and high_min bounds.  Each random state is
 * checked for that, for the pages drained (count - high'), and for the
 * "more work" result.
 *
 * usage: pcp_diff [states] [seed]
 */
#include <stdio.h>
#include <stdlib.h>

#include "pcp_shim.h"
#include PATCHED_DECAY_PCP_HIGH_C

#undef min
#undef max
#include <lockbatch/pcp.h>

static unsigned long long rng_state;

static unsigned int rng(unsigned int n)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (unsigned int)((rng_state * 2685821657736338717ULL) >> 33) % n;
}

static int fail(unsigned long i, const char *what, long k, long l,
		const struct per_cpu_pages *p)
{
	fprintf(stderr,
		"pcp_diff: state %lu (count %d count_min %d high %d high_min %d high_max %d batch %d): %s: kernel %ld, lockbatch %ld\n",
		i, p->count, p->count_min, p->high, p->high_min, p->high_max,
		p->batch, what, k, l);
	return 1;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 1000000, i;
	unsigned long cut = 0;
	struct zone zone = { 0 };

	rng_state = argc > 2 ? strtoull(argv[2], NULL, 0) : 0x7063705f64696666ULL;
	for (i = 0; i < n; i++) {
		struct per_cpu_pages p, before;
		struct lb_pcp_tune_state lin, cm;
		int ld, cd, kdrained, want_high;
		bool ktodo, ltodo, ctodo, want_todo;

		p.batch = 1 + rng(63);
		p.high_min = rng(4) ? rng(2048) : 0;
		p.high_max = p.high_min + (rng(4) ? rng(16384) : 0);
		p.high = p.high_min + rng(p.high_max - p.high_min + 1);
		p.count = rng(3) ? rng(p.high + 1) : rng(20000);
		p.count_min = rng(3) ? rng(p.count + 1) :
			      p.count - rng(1 + p.count / 64);
		before = p;

		if (lb_pcp_tune_init(&lin, p.batch, p.high_min, p.high_max,
				     false) ||
		    lb_pcp_tune_init(&cm, p.batch, p.high_min, p.high_max,
				     false))
			return fail(i, "lb_pcp_tune_init", 0, -1, &before);
		lin.count = cm.count = p.count;
		lin.high = cm.high = p.high;
		lin.count_min = cm.count_min = p.count_min;
		ltodo = lb_pcp_tune_decay(LB_PCP_TUNE_LINUX, &lin, &ld);
		ctodo = lb_pcp_tune_decay(LB_PCP_TUNE_COUNT_MIN, &cm, &cd);

		ktodo = decay_pcp_high(&zone, &p);
		kdrained = before.count - p.count;

		want_high = lin.high > cm.high ? lin.high : cm.high;
		want_todo = lin.high >= cm.high ? ltodo : ctodo;
		if (p.high != want_high)
			return fail(i, "high", p.high, want_high, &before);
		if (kdrained != (before.count > want_high ?
				 before.count - want_high : 0))
			return fail(i, "drained", kdrained,
				    before.count - want_high, &before);
		if (ktodo != want_todo)
			return fail(i, "todo", ktodo, want_todo, &before);
		if (p.count_min != p.count)
			return fail(i, "count_min after the tick", p.count_min,
				    p.count, &before);
		if (cm.high > lin.high)
			cut++;
	}
	printf("pcp_diff: %lu states: patched decay_pcp_high() = max(LINUX, COUNT_MIN) of lb_pcp; count_min held high back in %lu\n",
	       n, cut);
	return 0;
}
