// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Fault injection in every create and init path: for each module and
 * configuration, allocation 1, 2, ... of the call fails in turn (the
 * interposer of fault_malloc.h) until the call makes no more than were
 * failed. Each failing call must return its documented -ENOMEM, leave
 * its output untouched and free what it had taken (LeakSanitizer checks
 * the last at exit in the --enable-asan build); the call that sees no
 * failure must succeed. Plain TAP.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <lockbatch/cpubatch.h>
#include <lockbatch/freelist.h>
#include <lockbatch/lock.h>
#include <lockbatch/lru.h>
#include <lockbatch/pcp.h>
#include <lockbatch/refbits.h>
#include <lockbatch/wbatch.h>
#include "../common/tap.h"
#include "fault_malloc.h"

/* Where a failing create must leave its output. */
#define UNTOUCHED ((void *)(uintptr_t)0x5a5a5a50)

struct fcase {
	const char *name;
	int (*make)(void **out);	/* the create or init under test */
	void (*undo)(void *h);
};

static void nop(void *be) { (void)be; }
static void nop_commit(void *be, void **v, unsigned int n) { (void)be; (void)v; (void)n; }

static const struct lb_backend_ops cb_ops = {
	.lock = nop, .unlock = nop, .commit = nop_commit,
};

static int cpubatch_make(void **out, unsigned int slots)
{
	static int backend;
	struct lb_cpubatch_conf c = { .nr_slots = slots,
		.mode = LB_CPUBATCH_WEIGHTED, .ops = &cb_ops,
		.backend = &backend };

	return lb_cpubatch_create((struct lb_cpubatch **)out, &c);
}
static int cpubatch1(void **out) { return cpubatch_make(out, 1); }
static int cpubatch_all(void **out) { return cpubatch_make(out, 0); }
static void cpubatch_undo(void *h) { lb_cpubatch_destroy(h); }

static int no_bulk(void *ctx, unsigned int order, void **out, unsigned int n)
{
	(void)ctx; (void)order; (void)out; (void)n;
	return 0;
}
static void no_free(void *ctx, unsigned int order, void **objs, unsigned int n)
{
	(void)ctx; (void)order; (void)objs; (void)n;
}

static int pcp_make(void **out, enum lb_lock_kind kind, unsigned int flags)
{
	struct lb_pcp_conf c;

	memset(&c, 0, sizeof(c));
	c.nr_slots = 4;
	c.max_order = 3;
	c.batch = 8;
	c.high_min = 16;
	c.high_max = 64;
	c.tuner = LB_PCP_TUNE_LINUX;
	c.flags = flags;
	c.lock_kind = kind;
	c.backend.alloc_bulk = no_bulk;
	c.backend.free_bulk = no_free;
	return lb_pcp_create((struct lb_pcp **)out, &c);
}
static int pcp_spin(void **out) { return pcp_make(out, LB_LOCK_SPIN, 0); }
static int pcp_clh(void **out) { return pcp_make(out, LB_LOCK_CLH, 0); }
static int pcp_debug(void **out) { return pcp_make(out, LB_LOCK_MUTEX, LB_PCP_F_DEBUG); }
static void pcp_undo(void *h) { lb_pcp_destroy(h); }

static uint64_t arena[1024];

static int freelist_make(void **out, void *a, unsigned int flags)
{
	struct lb_freelist_conf c = { .obj_size = 64, .arena = a,
		.arena_size = a ? sizeof(arena) : 1 << 16, .flags = flags };

	return lb_freelist_create((struct lb_freelist **)out, &c);
}
static int freelist_arena(void **out) { return freelist_make(out, arena, 0); }
static int freelist_debug(void **out) { return freelist_make(out, arena, LB_FREELIST_F_DEBUG); }
static int freelist_mapped(void **out) { return freelist_make(out, NULL, LB_FREELIST_F_DEBUG); }
static void freelist_undo(void *h) { lb_freelist_destroy(h); }

static int lru_make(void **out, enum lb_lock_kind kind)
{
	struct lb_lru_conf c = { .lock_kind = kind };

	return lb_lru_create((struct lb_lru **)out, &c);
}
static int lru_mutex(void **out) { return lru_make(out, LB_LOCK_MUTEX); }
static int lru_spin(void **out) { return lru_make(out, LB_LOCK_SPIN); }
static void lru_undo(void *h) { lb_lru_destroy(h); }

/* Value-type inits: the output is a caller's struct, allocated here. */
static struct lb_lock locks[LB_LOCK_NR_KINDS];
static int lock_kind;

static int lock_make(void **out)
{
	struct lb_lock *l = &locks[lock_kind];
	int rc = lb_lock_init(l, (enum lb_lock_kind)lock_kind, "fault");

	if (!rc)
		*out = l;
	return rc;
}
static void lock_undo(void *h) { lb_lock_destroy(h); }

static struct lb_wbatch wb;
static int wbatch_make(void **out)
{
	int rc = lb_wbatch_init(&wb, 31, 31);

	if (!rc)
		*out = &wb;
	return rc;
}

static struct lb_refbits rb;
static int refbits_make(void **out)
{
	int rc = lb_refbits_init(&rb, 64);

	if (!rc)
		*out = &rb;
	return rc;
}
static void no_undo(void *h) { (void)h; }

/*
 * Fail allocation 1, 2, ... of @fc until it makes no more. A failure the
 * call absorbs (a probe it can do without) may still give 0.
 */
static void run(const struct fcase *fc)
{
	unsigned long n, calls, absorbed = 0;
	int bad = 0, rc = 0;

	for (n = 1; n < 10000; n++) {
		void *h = UNTOUCHED;

		fm_arm(n);
		rc = fc->make(&h);
		calls = fm_disarm();
		if (rc == 0 && h == UNTOUCHED)
			bad++;
		if (rc == 0) {
			fc->undo(h);
			if (calls < n)
				break;	/* nothing failed: done */
			absorbed++;
		} else if (rc != -ENOMEM || h != UNTOUCHED || calls < n) {
			if (!bad++)
				lb_tap_diag("%s: allocation %lu of %lu failed: "
					    "rc %d, output %s", fc->name, n,
					    calls, rc, h == UNTOUCHED ?
					    "untouched" : "set");
		}
	}
	lb_tap_ok(!bad && rc == 0, "%s: %lu allocations, each failing in turn: "
		  "-ENOMEM, output untouched (%lu absorbed)", fc->name, n - 1,
		  absorbed);
}

int main(void)
{
	static const struct fcase cases[] = {
		{ "lb_cpubatch_create (1 slot)", cpubatch1, cpubatch_undo },
		{ "lb_cpubatch_create (a slot per CPU)", cpubatch_all, cpubatch_undo },
		{ "lb_pcp_create (spin lock)", pcp_spin, pcp_undo },
		{ "lb_pcp_create (CLH lock)", pcp_clh, pcp_undo },
		{ "lb_pcp_create (debug mode)", pcp_debug, pcp_undo },
		{ "lb_freelist_create (caller's arena)", freelist_arena, freelist_undo },
		{ "lb_freelist_create (debug bitmap)", freelist_debug, freelist_undo },
		{ "lb_freelist_create (mapped arena, debug)", freelist_mapped, freelist_undo },
		{ "lb_lru_create (mutex)", lru_mutex, lru_undo },
		{ "lb_lru_create (spin lock)", lru_spin, lru_undo },
		{ "lb_wbatch_init", wbatch_make, no_undo },
		{ "lb_refbits_init", refbits_make, no_undo },
	};
	static const char *const kinds[LB_LOCK_NR_KINDS] = {
		"lb_lock_init (mutex)", "lb_lock_init (spin)",
		"lb_lock_init (ticket)", "lb_lock_init (MCS)", "lb_lock_init (CLH)",
	};
	unsigned int i;

	lb_tap_plan((int)(sizeof(cases) / sizeof(cases[0])) + LB_LOCK_NR_KINDS);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run(&cases[i]);
	for (lock_kind = 0; lock_kind < LB_LOCK_NR_KINDS; lock_kind++) {
		struct fcase fc = { kinds[lock_kind], lock_make, lock_undo };

		run(&fc);
	}
	return lb_tap_done();
}
