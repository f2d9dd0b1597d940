// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lb_freelist: creation and bad input, LIFO reuse and lazy carving, the
 * bulk-free checks (nothing freed when one object is bad), debug-mode
 * double frees, a random operation sequence against a reference set,
 * lb_pcp running over the stock back-end with conservation checked, and
 * the back-end's limit on never-used objects per refill.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include <lockbatch/freelist.h>
#include "../common/prng.h"

static struct lb_freelist_conf conf(size_t obj, void *arena, size_t size,
				    unsigned int flags)
{
	struct lb_freelist_conf c = {
		.obj_size = obj, .arena = arena, .arena_size = size,
		.flags = flags,
	};
	return c;
}

Test(freelist, create_rejects_bad_conf)
{
	static char arena[4096] __attribute__((aligned(64)));
	struct lb_freelist *fl = NULL;
	struct lb_freelist_conf c;

	c = conf(8, arena, sizeof(arena), 0);
	cr_assert(eq(int, lb_freelist_create(&fl, &c), -EINVAL), "obj too small");
	c = conf(20, arena, sizeof(arena), 0);
	cr_assert(eq(int, lb_freelist_create(&fl, &c), -EINVAL), "obj not word multiple");
	c = conf(64, arena + 1, sizeof(arena) - 1, 0);
	cr_assert(eq(int, lb_freelist_create(&fl, &c), -EINVAL), "unaligned arena");
	c = conf(64, arena, 63, 0);
	cr_assert(eq(int, lb_freelist_create(&fl, &c), -EINVAL), "arena holds nothing");
	c = conf(64, arena, sizeof(arena), 0x80);
	cr_assert(eq(int, lb_freelist_create(&fl, &c), -EINVAL), "flags");
	cr_assert(eq(int, lb_freelist_create(NULL, &c), -EINVAL));
	cr_assert(eq(int, lb_freelist_create(&fl, NULL), -EINVAL));
	cr_assert(eq(ptr, fl, NULL), "*fl set on failure");
	cr_assert(eq(int, lb_freelist_destroy(NULL), -EINVAL));
	cr_assert(eq(int, lb_freelist_alloc_bulk(NULL, NULL, 0), -EINVAL));
	cr_assert(eq(int, lb_freelist_free_bulk(NULL, NULL, 0), -EINVAL));
	cr_assert(eq(int, lb_freelist_owns(NULL, arena), -EINVAL));
	cr_assert(eq(int, lb_freelist_stats(NULL, NULL), -EINVAL));
	cr_assert(eq(int, lb_freelist_pcp_backend(NULL, NULL), -EINVAL));
}

Test(freelist, carves_lazily_and_reuses_lifo)
{
	static char arena[48 * 10 + 40] __attribute__((aligned(16)));
	struct lb_freelist_conf c = conf(48, arena, sizeof(arena), 0);
	struct lb_freelist_stats st;
	struct lb_freelist *fl;
	void *o[12];

	cr_assert(eq(int, lb_freelist_create(&fl, &c), 0));
	cr_assert(eq(int, lb_freelist_alloc_bulk(fl, o, 3), 3));
	for (int i = 0; i < 3; i++)
		cr_assert(eq(ptr, o[i], arena + 48 * i), "carved in order");
	cr_assert(eq(int, lb_freelist_free_bulk(fl, o, 2), 0));
	cr_assert(eq(int, lb_freelist_alloc_bulk(fl, &o[3], 1), 1));
	cr_assert(eq(ptr, o[3], o[1]), "last freed comes back first");
	lb_freelist_stats(fl, &st);
	cr_assert(eq(u64, st.capacity, 10));
	cr_assert(eq(u64, st.touched, 3), "only what was handed out is touched");
	cr_assert(eq(u64, st.out, 2));
	cr_assert(eq(u64, st.peak_out, 3));
	cr_assert(eq(int, lb_freelist_alloc_bulk(fl, &o[4], 8), 8), "1 listed + 7 new");
	cr_assert(eq(int, lb_freelist_alloc_bulk(fl, &o[11], 1), 0), "exhausted");
	lb_freelist_stats(fl, &st);
	cr_assert(eq(u64, st.free, 0));
	cr_assert(eq(int, lb_freelist_owns(fl, arena + 48 * 9), 1));
	cr_assert(eq(int, lb_freelist_owns(fl, arena + 48 * 10), 0), "the remainder");
	cr_assert(eq(int, lb_freelist_owns(fl, arena + 1), 0));
	cr_assert(eq(int, lb_freelist_destroy(fl), 0));
}

Test(freelist, bad_free_frees_nothing)
{
	struct lb_freelist_conf c = conf(4096, NULL, 64 * 4096, 0);
	struct lb_freelist_stats st;
	struct lb_freelist *fl;
	void *o[4], *bad[3];
	char outside;

	cr_assert(eq(int, lb_freelist_create(&fl, &c), 0));
	cr_assert(eq(int, lb_freelist_alloc_bulk(fl, o, 4), 4));
	cr_assert(eq(int, (uintptr_t)o[0] % 4096, 0), "mapped arena page-aligned");
	bad[0] = o[0];
	bad[1] = (char *)o[1] + 8;
	bad[2] = o[2];
	cr_assert(eq(int, lb_freelist_free_bulk(fl, bad, 3), -EINVAL), "mid-object");
	bad[1] = &outside;
	cr_assert(eq(int, lb_freelist_free_bulk(fl, bad, 3), -EINVAL), "outside");
	bad[1] = NULL;
	cr_assert(eq(int, lb_freelist_free_bulk(fl, bad, 3), -EINVAL), "NULL");
	bad[1] = (char *)o[3] + 4096;
	cr_assert(eq(int, lb_freelist_free_bulk(fl, bad, 3), -EINVAL),
		  "never handed out");
	lb_freelist_stats(fl, &st);
	cr_assert(eq(u64, st.out, 4), "nothing freed");
	cr_assert(eq(u64, st.rejected, 12));
	cr_assert(eq(int, lb_freelist_free_bulk(fl, o, 4), 0));
	lb_freelist_stats(fl, &st);
	cr_assert(eq(u64, st.out, 0));
	lb_freelist_destroy(fl);
}

Test(freelist, debug_catches_double_free)
{
	struct lb_freelist_conf c = conf(64, NULL, 1 << 20, LB_FREELIST_F_DEBUG);
	struct lb_freelist_stats st;
	struct lb_freelist *fl;
	void *o[3], *twice[2];

	cr_assert(eq(int, lb_freelist_create(&fl, &c), 0));
	cr_assert(eq(int, lb_freelist_alloc_bulk(fl, o, 3), 3));
	cr_assert(eq(int, lb_freelist_free_bulk(fl, &o[0], 1), 0));
	twice[0] = o[1];
	twice[1] = o[0];
	cr_assert(eq(int, lb_freelist_free_bulk(fl, twice, 2), -EEXIST));
	twice[1] = o[1];
	cr_assert(eq(int, lb_freelist_free_bulk(fl, twice, 2), -EEXIST),
		  "same object twice in one call");
	lb_freelist_stats(fl, &st);
	cr_assert(eq(u64, st.out, 2), "failed calls freed nothing");
	cr_assert(eq(int, lb_freelist_free_bulk(fl, &o[1], 2), 0),
		  "bits restored after the failures");
	lb_freelist_destroy(fl);
}

/* Random alloc/free sequence against a set of handed-out objects. */
Test(freelist, random_ops_match_reference)
{
	enum { CAP = 257, OPS = 20000 };
	uint64_t seed = lb_test_seed(0x5eed0f1157ull);
	struct lb_freelist_conf c = conf(32, NULL, CAP * 32 + 7,
					 LB_FREELIST_F_DEBUG);
	struct lb_freelist_stats st;
	struct lb_freelist *fl;
	static void *held[CAP];
	static unsigned char seen[CAP];
	void *buf[16];
	char *base = NULL;
	unsigned int nheld = 0;
	struct lb_rng r;

	lb_rng_seed(&r, seed);
	cr_assert(eq(int, lb_freelist_create(&fl, &c), 0));
	for (int op = 0; op < OPS; op++) {
		unsigned int n = 1 + lb_rng_below(&r, 16);

		if (lb_rng_below(&r, 2)) {
			int got = lb_freelist_alloc_bulk(fl, buf, n);
			unsigned int want = n < CAP - nheld ? n : CAP - nheld;

			cr_assert(eq(int, got, (int)want), LB_SEED_FMT, LB_SEED_ARGS(seed));
			if (!base && got)
				base = buf[0];	/* carving starts at the arena */
			for (int i = 0; i < got; i++)
				held[nheld++] = buf[i];
		} else {
			n = n < nheld ? n : nheld;
			for (unsigned int i = 0; i < n; i++) {
				unsigned int k = lb_rng_below(&r, nheld);

				buf[i] = held[k];
				held[k] = held[--nheld];
			}
			cr_assert(eq(int, lb_freelist_free_bulk(fl, buf, n), 0),
				  LB_SEED_FMT, LB_SEED_ARGS(seed));
		}
		memset(seen, 0, sizeof(seen));
		for (unsigned int i = 0; i < nheld; i++) {
			size_t idx = (size_t)((char *)held[i] - base) / 32;

			cr_assert(eq(int, lb_freelist_owns(fl, held[i]), 1),
				  LB_SEED_FMT, LB_SEED_ARGS(seed));
			cr_assert(eq(int, seen[idx]++, 0), "handed out twice; "
				  LB_SEED_FMT, LB_SEED_ARGS(seed));
		}
		lb_freelist_stats(fl, &st);
		cr_assert(eq(u64, st.out, nheld), LB_SEED_FMT, LB_SEED_ARGS(seed));
	}
	lb_freelist_destroy(fl);
}

static int cpu_arg(void *arg)
{
	return *(int *)arg;
}

/* lb_pcp over the stock back-end: everything comes back on destroy. */
Test(freelist, pcp_backend_conserves_objects)
{
	struct lb_freelist_conf c = conf(4096, NULL, 1024 * 4096, 0);
	struct lb_pcp_conf pc = { 0 };
	struct lb_freelist_stats st;
	struct lb_freelist *fl;
	struct lb_pcp *p;
	static void *o[600];
	int cpu = 0;
	void *x;

	cr_assert(eq(int, lb_freelist_create(&fl, &c), 0));
	pc.nr_slots = 2;
	pc.batch = 15;
	pc.high_min = 60;
	pc.high_max = 256;
	pc.tuner = LB_PCP_TUNE_ADAPTIVE;
	pc.cpu_fn = cpu_arg;
	pc.cpu_arg = &cpu;
	cr_assert(eq(int, lb_freelist_pcp_backend(fl, &pc.backend), 0));
	cr_assert(eq(int, lb_pcp_create(&p, &pc), 0));
	cr_assert(eq(int, pc.backend.alloc_bulk(fl, 1, &x, 1), -EINVAL),
		  "order 1 refused");
	for (int i = 0; i < 600; i++)
		cr_assert(eq(int, lb_pcp_alloc(p, 0, &o[i]), 0));
	cpu = 1;			/* freed on another CPU */
	for (int i = 0; i < 600; i++)
		cr_assert(eq(int, lb_pcp_free(p, o[i], 0), 0));
	lb_freelist_stats(fl, &st);
	cr_assert(le(u64, st.out, 256 + 15 * 32), "slot 1 flushed past high");
	cr_assert(eq(int, lb_pcp_destroy(p), 0));
	lb_freelist_stats(fl, &st);
	cr_assert(eq(u64, st.out, 0), "destroy drained every slot");
	cr_assert(eq(u64, st.rejected, 0));
	cr_assert(ge(u64, st.touched, 600), "every allocation came from the list");
	cr_assert(le(u64, st.touched, 600 + (15 << LB_PCP_BATCH_SCALE_MAX)),
		  "refills overshoot by less than one largest refill");
	lb_freelist_destroy(fl);
}

/*
 * The lb_pcp back-end carves at most fresh_bytes of never-used objects per
 * call (returned ones without limit); the list's own bulk call does not.
 */
Test(freelist, pcp_alloc_bulk_carves_at_most_fresh_bytes)
{
	struct lb_freelist_conf c = conf(4096, NULL, 256 * 4096, 0);
	struct lb_freelist_stats st;
	struct lb_pcp_backend be;
	struct lb_freelist *fl;
	static void *o[256];

	c.fresh_bytes = 10 * 4096 + 100;
	cr_assert(eq(int, lb_freelist_create(&fl, &c), 0));
	lb_freelist_pcp_backend(fl, &be);
	cr_assert(eq(int, be.alloc_bulk(be.ctx, 0, o, 64), 10), "10 fresh");
	cr_assert(eq(int, be.alloc_bulk(be.ctx, 0, &o[10], 64), 10));
	be.free_bulk(be.ctx, 0, o, 20);
	cr_assert(eq(int, be.alloc_bulk(be.ctx, 0, o, 64), 30),
		  "20 returned, then 10 fresh");
	lb_freelist_stats(fl, &st);
	cr_assert(eq(u64, st.touched, 30), "only what was carved is touched");
	cr_assert(eq(int, lb_freelist_alloc_bulk(fl, &o[30], 64), 64),
		  "the list's own bulk call is not limited");
	lb_freelist_destroy(fl);

	c.fresh_bytes = 1;			/* less than one object: one */
	cr_assert(eq(int, lb_freelist_create(&fl, &c), 0));
	lb_freelist_pcp_backend(fl, &be);
	cr_assert(eq(int, be.alloc_bulk(be.ctx, 0, o, 8), 1));
	lb_freelist_destroy(fl);

	c.fresh_bytes = SIZE_MAX;		/* no limit */
	cr_assert(eq(int, lb_freelist_create(&fl, &c), 0));
	lb_freelist_pcp_backend(fl, &be);
	cr_assert(eq(int, be.alloc_bulk(be.ctx, 0, o, 256), 256));
	lb_freelist_destroy(fl);

	c.fresh_bytes = 0;			/* LB_FREELIST_FRESH_BYTES */
	cr_assert(eq(int, lb_freelist_create(&fl, &c), 0));
	lb_freelist_pcp_backend(fl, &be);
	cr_assert(eq(int, be.alloc_bulk(be.ctx, 0, o, 256),
		     (int)(LB_FREELIST_FRESH_BYTES / 4096)));
	lb_freelist_destroy(fl);
}

/* The pcp free_bulk keeps the good objects of a batch with a bad one. */
Test(freelist, pcp_free_bulk_drops_only_bad_objects)
{
	struct lb_freelist_conf c = conf(64, NULL, 64 * 64, 0);
	struct lb_freelist_stats st;
	struct lb_pcp_backend be;
	struct lb_freelist *fl;
	void *o[3];

	cr_assert(eq(int, lb_freelist_create(&fl, &c), 0));
	lb_freelist_pcp_backend(fl, &be);
	cr_assert(eq(int, be.alloc_bulk(be.ctx, 0, o, 3), 3));
	o[1] = (char *)o[1] + 16;
	be.free_bulk(be.ctx, 0, o, 3);
	lb_freelist_stats(fl, &st);
	cr_assert(eq(u64, st.out, 1), "two good objects returned");
	cr_assert(eq(u64, st.rejected, 1), "the bad one counted once");
	be.free_bulk(be.ctx, 2, o, 1);
	lb_freelist_stats(fl, &st);
	cr_assert(eq(u64, st.rejected, 2), "wrong order counted");
	lb_freelist_destroy(fl);
}
