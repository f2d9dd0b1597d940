// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lb_pcp sizing from a pool size, as zone_batchsize() and zone_highsize()
 * size a zone's per-CPU pagesets (mm/page_alloc.c, 6.12).
 */
#include "config.h"

#include <errno.h>

#include <lockbatch/pcp.h>

static uint64_t rounddown_pow_of_two(uint64_t v)
{
	uint64_t r = 1;

	while (r <= v / 2)
		r <<= 1;
	return r;
}

int lb_pcp_size(uint64_t pool_units, uint64_t low_units, unsigned int nr_cpus,
		unsigned int units_per_mib, struct lb_pcp_size *out)
{
	uint64_t b, lo, hi;

	if (!out || !nr_cpus || !pool_units || !units_per_mib)
		return -EINVAL;
	/* About 0.1% of the pool or 1 MiB, a quarter of that... */
	b = pool_units >> 10;
	if (b > units_per_mib)
		b = units_per_mib;
	b /= 4;
	if (b < 1)
		b = 1;
	/* ...clamped to 2^n - 1 so batches do not alias in the cache. */
	b = rounddown_pow_of_two(b + b / 2) - 1;
	if (b < 1)
		b = 1;
	if (b > LB_PCP_BATCH_MAX)
		b = LB_PCP_BATCH_MAX;
	if (!low_units)
		low_units = pool_units / 1024;
	lo = low_units / nr_cpus;
	hi = pool_units / 8 / nr_cpus;
	if (lo < b << 2)
		lo = b << 2;
	if (hi < b << 2)
		hi = b << 2;
	if (hi > LB_PCP_HIGH_MAX)
		hi = LB_PCP_HIGH_MAX;
	if (lo > hi)
		lo = hi;
	out->batch = (int)b;
	out->high_min = (int)lo;
	out->high_max = (int)hi;
	return 0;
}
