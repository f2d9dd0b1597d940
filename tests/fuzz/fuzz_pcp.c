// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * libFuzzer harness for lb_pcp: every tuner, sizes and flags (debug mode
 * included) from the input, allocs and frees of mixed orders on injected
 * CPU ids, drains, decay and ticks of an injected clock, and a back-end
 * with a small pool that runs dry or is made to fail.
 *
 * After every operation: every back-end hold counted under one cause,
 * conservation (pool + live + cached = total), no
 * object handed out twice or returned twice (the test back-end's checks),
 * high within [high_min, high_max], and, for the LINUX, COUNT_MIN and
 * LINUX_618 tuners, the transcription of the kernel code with lb_pcp's
 * no-stranding rules the property tests use (tests/prop/prop_pcp_ref.h,
 * lb_rules): same count, high, alloc_factor, free_count
 * and flags per slot, as long as the kernel's assumptions hold (the
 * back-end never ran dry, plain CPU ids, no slot idle across a decay,
 * which slot expiry may drain). With LB_FUZZ_DOUBLE_FREE=1, debug mode
 * frees a cached object a second time, which debug mode must refuse
 * without handing the object to two owners (case C19 of tests/cases.md).
 */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include <lockbatch/pcp.h>
#include "../common/pcp_backend.h"
#include "../prop/prop_pcp_ref.h"
#include "fuzz_input.h"

#define NS 4		/* slots at most */
#define MAX_LIVE 512

struct live {
	struct tb_obj *obj;
	unsigned int order;
};

static struct tb b;
static struct tb_env env;
static struct live live[MAX_LIVE];
static unsigned int nr_live;
static uint64_t live_units;
static struct per_cpu_pages ref[NS];
static int exact, used[NS];
/* A double free of an object already back in the pool happened. */
static int broken;
/*
 * Per object, for double frees: live (handed out), stale (freed again
 * while in the pool, so the cache holds a copy the pool also has), twice
 * (a refill brought the pool's copy while the stale one was cached: the
 * case debug mode must catch), excused (the stale copy was handed out
 * before the pool's came: no cache can see that).
 */
#define MAX_OBJS (4 * 320)
static uint8_t is_live[MAX_OBJS], stale[MAX_OBJS], twice[MAX_OBJS],
	       excused[MAX_OBJS];

static int watch_alloc_bulk(void *ctx, unsigned int order, void **out,
			    unsigned int n)
{
	int i, got = tb_alloc_bulk(ctx, order, out, n);

	for (i = 0; i < got; i++) {
		uint32_t id = ((struct tb_obj *)out[i])->id;

		if (!stale[id])
			continue;
		if (is_live[id])
			excused[id] = 1;
		else
			twice[id] = 1;
	}
	return got;
}

static bool models_kernel(enum lb_pcp_tuner t)
{
	return t == LB_PCP_TUNE_LINUX || t == LB_PCP_TUNE_COUNT_MIN ||
	       t == LB_PCP_TUNE_LINUX_618;
}

static void check(struct lb_pcp *p, unsigned int nr_slots, const char *op)
{
	struct lb_pcp_stats st;
	unsigned int i;

	FZ_CHECK(lb_pcp_stats(p, &st, NULL, 0) == (int)nr_slots, "stats");
	/* Every back-end hold is counted under one cause (pcp.h, C22). */
	FZ_CHECK(st.total.refills + st.total.flushes + st.total.decay_drains +
		 st.total.drains == st.backend_locks,
		 "after %s: %llu refills + %llu flushes + %llu decay drains + "
		 "%llu drains != %llu back-end locks", op,
		 (unsigned long long)st.total.refills,
		 (unsigned long long)st.total.flushes,
		 (unsigned long long)st.total.decay_drains,
		 (unsigned long long)st.total.drains,
		 (unsigned long long)st.backend_locks);
	if (broken)
		return;		/* only "never handed out twice" holds now */
	FZ_CHECK(b.errors == 0, "after %s: %llu objects returned twice or "
		 "to the wrong order", op, (unsigned long long)b.errors);
	FZ_CHECK(tb_units_out(&b) == live_units + (uint64_t)st.total.count,
		 "after %s: conservation: %llu out, %llu live + %lld cached", op,
		 (unsigned long long)tb_units_out(&b),
		 (unsigned long long)live_units, (long long)st.total.count);
	for (i = 0; i < nr_slots; i++) {
		struct lb_pcp_tune_state s = tb_state(p, i);
		struct per_cpu_pages *m = &ref[i];

		FZ_CHECK(s.count >= 0, "slot %u count %d", i, s.count);
		FZ_CHECK(s.high >= s.high_min && s.high <= s.high_max,
			 "after %s: slot %u high %d outside [%d, %d]", op, i,
			 s.high, s.high_min, s.high_max);
		if (!exact)
			continue;
		FZ_CHECK(s.count == m->count && s.high == m->high &&
			 s.alloc_factor == m->alloc_factor &&
			 s.free_count == m->free_count && s.flags == m->flags,
			 "after %s: slot %u: cache count %d high %d af %d fc %d "
			 "fl %d, kernel %d %d %d %d %d", op, i, s.count, s.high,
			 s.alloc_factor, s.free_count, s.flags, m->count, m->high,
			 m->alloc_factor, m->free_count, m->flags);
	}
}

static void ref_init(const struct lb_pcp_conf *c)
{
	unsigned int i;

	memset(ref, 0, sizeof(ref));
	for (i = 0; i < NS; i++) {
		ref[i].batch = c->batch;
		ref[i].high_min = c->high_min;
		ref[i].high_max = c->high_max;
		ref[i].high = c->high_min;
		ref[i].nr_lists = 4;
		ref[i].count_min_patch = c->tuner == LB_PCP_TUNE_COUNT_MIN;
		ref[i].free_high_618 = c->tuner == LB_PCP_TUNE_LINUX_618;
		/* The cache's no-stranding rules (pcp.h DOC), as prop_pcp. */
		ref[i].lb_rules = true;
		ref[i].expire = c->expire ? c->expire : LB_PCP_EXPIRE_DEFAULT;
		if (c->flags & LB_PCP_F_FREE_HIGH_BATCH)
			ref[i].flags |= REF_FREE_HIGH_BATCH;
	}
}

/* The slot an op runs on: a plain id (exactness kept) or any id. */
static int pick_cpu(struct fz_in *in, unsigned int nr_slots, int *slot)
{
	static const int odd[] = { -1, -7, 1000, INT_MAX, INT_MIN };

	if (fz_below(in, 16)) {
		*slot = (int)fz_below(in, nr_slots);
		env.cpu = *slot;
		return 1;
	}
	env.cpu = odd[fz_below(in, sizeof(odd) / sizeof(odd[0]))];
	*slot = -1;
	return 0;
}

static void op_alloc(struct lb_pcp *p, struct fz_in *in, int slot,
		     unsigned int max_order)
{
	unsigned int order = fz_below(in, 4) ? 0 : fz_below(in, max_order + 1);
	uint64_t calls = b.alloc_calls;
	void *obj;
	int rc;

	if (nr_live == MAX_LIVE)
		return;
	rc = lb_pcp_alloc(p, order, &obj);
	FZ_CHECK(rc == 0 || rc == -ENOMEM, "alloc: %d", rc);
	/* An empty pool list afterwards may mean a short refill. */
	if (exact && slot >= 0 && rc == 0 && b.alloc_calls - calls <= 1 &&
	    b.top[order])
		rmqueue_pcplist(&ref[slot], (int)order);
	else
		exact = 0;	/* ran dry, or a retry: no longer the kernel's */
	if (rc)
		return;
	FZ_CHECK(((struct tb_obj *)obj)->order == order &&
		 (((struct tb_obj *)obj)->out || broken),
		 "alloc handed out a wrong or free object");
	if (is_live[((struct tb_obj *)obj)->id]) {
		uint32_t id = ((struct tb_obj *)obj)->id;

		FZ_CHECK(!twice[id] || excused[id], "debug mode handed out "
			 "object %u twice: a refill brought it while it was "
			 "cached", id);
		return;		/* the user's double free, not detectable */
	}
	is_live[((struct tb_obj *)obj)->id] = 1;
	live[nr_live].obj = obj;
	live[nr_live++].order = order;
	live_units += 1u << order;
}

static void op_free(struct lb_pcp *p, struct fz_in *in, int slot, int debug,
		    int double_free)
{
	unsigned int k = fz_below(in, nr_live);
	struct live l = live[k];
	int rc;

	live[k] = live[--nr_live];
	live_units -= 1u << l.order;
	is_live[l.obj->id] = 0;
	rc = lb_pcp_free(p, l.obj, l.order);
	/*
	 * An object the user freed twice (stale) may have come back from the
	 * pool while handed out (excused): its cached copy makes debug mode
	 * refuse this free too, rightly.
	 */
	FZ_CHECK(rc == 0 || (rc == -EEXIST && debug && stale[l.obj->id] &&
			     excused[l.obj->id]),
		 "free: %d", rc);
	if (exact && slot >= 0)
		free_unref_page_commit(&ref[slot], (int)l.order);
	else
		exact = 0;
	if (!debug || !double_free || fz_below(in, 2))
		return;
	if (l.obj->out) {
		/* Still cached: debug mode must refuse the second free. */
		rc = lb_pcp_free(p, l.obj, l.order);
		FZ_CHECK(rc == -EEXIST, "debug mode took a double free: %d", rc);
	} else {
		/*
		 * Back in the pool: the cache cannot see it now, but must not
		 * hand it out twice when a refill brings the pool's copy.
		 */
		rc = lb_pcp_free(p, l.obj, l.order);
		FZ_CHECK(rc == 0 || rc == -EEXIST, "second free: %d", rc);
		stale[l.obj->id] = 1;
		broken = 1;
		exact = 0;
	}
}

static void op_decay(struct lb_pcp *p, struct fz_in *in,
		     unsigned int nr_slots)
{
	unsigned int i;
	int rc;

	/* A slot idle for a whole period may expire: not the kernel's rule. */
	for (i = 0; i < nr_slots; i++) {
		if (!used[i])
			exact = 0;
		used[i] = 0;
	}
	if (fz_below(in, 2)) {
		rc = lb_pcp_decay(p);
		FZ_CHECK(rc == 0 || rc == 1, "decay: %d", rc);
		for (i = 0; exact && i < nr_slots; i++)
			decay_pcp_high(&ref[i]);
	} else {
		/* The injected clock moves; a tick decays once per interval. */
		env.now += (uint64_t)fz_below(in, 3) * 1000000000ull;
		rc = lb_pcp_tick(p);
		FZ_CHECK(rc == 0 || rc == 1, "tick: %d", rc);
		exact = 0;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Fresh state, a pool of 8..307 objects per order and a cache over it. */
static int make_cache(struct fz_in *in, struct lb_pcp_conf *c,
		      struct lb_pcp **p)
{
	static const int batches[] = { 1, 2, 3, 7, 8, 31, 63 };

	memset(&env, 0, sizeof(env));
	memset(is_live, 0, sizeof(is_live));
	memset(stale, 0, sizeof(stale));
	memset(twice, 0, sizeof(twice));
	memset(excused, 0, sizeof(excused));
	broken = 0;
	nr_live = 0;
	live_units = 0;
	if (tb_init(&b, 4, 8 + fz_below(in, 300)))
		abort();
	tb_conf(c, &b, &env, (enum lb_pcp_tuner)fz_below(in, LB_PCP_TUNE_NR),
		batches[fz_below(in, 7)], 0, 0);
	c->high_min = c->batch * (int)fz_below(in, 9);
	if (!fz_below(in, 5))
		c->high_min = (int)fz_below(in, 3u * (unsigned int)c->batch + 1);
	c->high_max = fz_below(in, 6) ?
		      c->high_min + c->batch * (int)fz_below(in, 64) : c->high_min;
	c->nr_slots = 1 + fz_below(in, NS);
	c->flags = fz_below(in, 4);
	c->backend.alloc_bulk = watch_alloc_bulk;
	if (lb_pcp_create(p, c)) {
		tb_fini(&b);	/* a configuration create refuses */
		return -1;
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = { data, size };
	struct lb_pcp_conf c;
	struct lb_pcp *p;
	int debug, double_free = fz_option("LB_FUZZ_DOUBLE_FREE");
	unsigned int nr_slots, i;

	if (make_cache(&in, &c, &p))
		return 0;
	nr_slots = c.nr_slots;
	debug = !!(c.flags & LB_PCP_F_DEBUG);
	ref_init(&c);
	exact = models_kernel(c.tuner);
	memset(used, 0, sizeof(used));
	while (fz_more(&in)) {
		unsigned int op = fz_below(&in, 16);
		int slot;

		if (!pick_cpu(&in, nr_slots, &slot))
			exact = 0;
		else
			used[slot] = 1;
		if (op < 6) {
			op_alloc(p, &in, slot, c.max_order);
			check(p, nr_slots, "alloc");
		} else if (op < 12 && nr_live) {
			op_free(p, &in, slot, debug, double_free);
			check(p, nr_slots, "free");
		} else if (op == 12) {
			FZ_CHECK(lb_pcp_drain(p, env.cpu) >= 0 || env.cpu < 0, "drain");
			if (slot >= 0 && exact)
				drain_pages_zone(&ref[slot]);
			else
				exact = 0;
			check(p, nr_slots, "drain");
		} else if (op == 13) {
			FZ_CHECK(lb_pcp_drain_all(p) >= 0, "drain_all");
			for (i = 0; exact && i < nr_slots; i++)
				drain_pages_zone(&ref[i]);
			check(p, nr_slots, "drain_all");
		} else if (op == 14) {
			op_decay(p, &in, nr_slots);
			check(p, nr_slots, "decay");
		} else if (op == 15) {
			b.fail_next = (int)fz_below(&in, 3);	/* the back-end fails */
			exact = 0;
		}
	}
	for (i = 0; i < nr_live; i++)
		FZ_CHECK(lb_pcp_free(p, live[i].obj, live[i].order) == 0 || broken,
			 "free");
	nr_live = 0;
	live_units = 0;
	FZ_CHECK(lb_pcp_drain_all(p) >= 0, "drain_all");
	FZ_CHECK(broken || tb_units_out(&b) == 0, "%llu units lost at the end",
		 (unsigned long long)tb_units_out(&b));
	FZ_CHECK(broken || b.errors == 0, "double returns at the end");
	FZ_CHECK(lb_pcp_destroy(p) == 0, "destroy");
	tb_fini(&b);
	return 0;
}
