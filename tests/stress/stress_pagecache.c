// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Page cache stress (plain pthreads, TAP; runs under TSan and ASan): the
 * examples/pagecache cache with several workers and the eviction thread,
 * in shapes that push different paths: a skewed and a uniform key stream,
 * baseline batches, a cache so small that evictions meet readers (BUSY
 * settles, failed freezes), and the single-thread check against the
 * exact-LRU model. Each run must end verified: no page read after it was
 * freed, every entry freed once, every page back in the pool.
 */
#include <stdio.h>
#include <string.h>

#include <urcu/urcu-memb.h>

#include "../../examples/pagecache.h"
#include "../common/env.h"
#include "../common/tap.h"

struct shape {
	const char *name;
	struct pc_conf conf;
	uint64_t entries;
};

static int run_shape(const struct shape *s, unsigned long scale)
{
	struct pc_conf c = s->conf;
	struct pc_result r;
	int err;

	c.ops *= scale;
	c.limit_pages = s->entries * 17 / 2;
	if (c.limit_pages < PC_MAX_PAGES)
		c.limit_pages = PC_MAX_PAGES;
	if (!c.keys)
		c.keys = (uint32_t)(s->entries * 4);
	err = pc_run(&c, &r);
	if (err) {
		lb_tap_diag("%s: pc_run: %d", s->name, err);
		return 0;
	}
	lb_tap_diag("%s: hit ratio %.3f, evicted %llu, busy %llu, freeze failed %llu, stale %llu, pool %llu/%llu",
		    s->name, r.hit_ratio, (unsigned long long)r.ev.evicted,
		    (unsigned long long)r.ev.busy,
		    (unsigned long long)r.ev.freeze_failed,
		    (unsigned long long)r.stale_reads,
		    (unsigned long long)r.pool_free_at_exit,
		    (unsigned long long)r.pool_pages);
	if (r.model_run) {
		double d = r.hit_ratio - r.model_hit_ratio;

		lb_tap_diag("%s: model hit ratio %.3f", s->name, r.model_hit_ratio);
		if ((d < 0 ? -d : d) > 0.05 * r.model_hit_ratio)
			return 0;
	}
	if (s->conf.hold_every && !r.ev.busy && !r.ev.freeze_failed)
		lb_tap_diag("%s: no reader was ever in the way", s->name);
	return r.verified && r.stale_reads == 0 && r.ev.evicted > 0 &&
	       r.pool_free_at_exit == r.pool_pages &&
	       r.entries_alloc == r.entries_freed;
}

int main(void)
{
	static const struct shape shapes[] = {
		{ "skewed, 4 threads", { .threads = 4, .ops = 20000,
		  .skew = 0.99, .page_size = 64, .seed = 1 }, 256 },
		{ "uniform, 4 threads", { .threads = 4, .ops = 20000,
		  .skew = 0, .page_size = 64, .seed = 2 }, 256 },
		{ "baseline batches, 3 threads", { .threads = 3, .ops = 20000,
		  .skew = 0.8, .page_size = 64, .baseline = true, .seed = 3 },
		  256 },
		{ "tiny cache, 6 threads, sleeping readers", { .threads = 6,
		  .ops = 20000, .skew = 1.2, .page_size = 64, .seed = 4,
		  .keys = 64, .hold_every = 3 }, 4 },
		{ "check against exact LRU", { .threads = 1, .ops = 50000,
		  .skew = 0.99, .page_size = 64, .check = true, .seed = 5 },
		  512 },
	};
	unsigned long scale = lb_stress_iters(1, 20);
	unsigned int i, n = sizeof(shapes) / sizeof(shapes[0]);

	urcu_memb_register_thread();
	lb_tap_plan((int)n);
	for (i = 0; i < n; i++)
		lb_tap_ok(run_shape(&shapes[i], scale), "%s", shapes[i].name);
	urcu_memb_unregister_thread();
	return lb_tap_done();
}
