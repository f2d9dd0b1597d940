// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Every public header compiles on its own. This file is built once per
 * header (mk/headers.am sets LB_HDR): it includes that header first and
 * alone, twice (the include guard), then uses what the header must
 * declare, so a header that leans on an include it does not make itself
 * fails to build. No config.h: users do not have it. The same probes are
 * built as C++17 through test_headers_cxx.cc, so they stay valid C++
 * (no designated initializers, no compound literals).
 */
#define LB_HDR_CPU 1
#define LB_HDR_LOCK 2
#define LB_HDR_WBATCH 3
#define LB_HDR_CPUBATCH 4
#define LB_HDR_LOCKBATCH 5
#define LB_HDR_VERSION 6
#define LB_HDR_FREELIST 7
#define LB_HDR_PCP 8
#define LB_HDR_REFBITS 9
#define LB_HDR_LRU 10
#define LB_HDR_ERROR 11
#define LB_HDR_PCP_TUNE 12
#define LB_HDR_NODETAB 13
#define LB_HDR_CPUBATCH_WAIT 14

#if LB_HDR == LB_HDR_CPU
#include <lockbatch/cpu.h>
#include <lockbatch/cpu.h>
#define NAME "lockbatch/cpu.h"
static int probe(void)
{
	return lb_cpu_count() >= 1 &&
	       lb_cpu_source_name(LB_CPU_SRC_INJECTED) != 0;
}
#elif LB_HDR == LB_HDR_LOCK
#include <lockbatch/lock.h>
#include <lockbatch/lock.h>
#define NAME "lockbatch/lock.h"
static int probe(void)
{
	struct lb_lock l;
	struct lb_lock_stats s;

	if (lb_lock_init(&l, LB_LOCK_SPIN, "hdr"))
		return 0;
	lb_lock_acquire(&l);
	lb_lock_release(&l);
	return lb_lock_stats(&l, &s) == 0 && s.acquisitions == 1 &&
	       lb_lock_destroy(&l) == 0;
}
#elif LB_HDR == LB_HDR_WBATCH
#include <lockbatch/wbatch.h>
#include <lockbatch/wbatch.h>
#define NAME "lockbatch/wbatch.h"
static int probe(void)
{
	struct lb_wbatch b = LB_WBATCH_INIT(LB_WBATCH_MAX, LB_WBATCH_MAX);

	return lb_wbatch_add(&b, &b, 1) == 0 &&
	       lb_wbatch_room(&b) == LB_WBATCH_MAX - 1;
}
#elif LB_HDR == LB_HDR_CPUBATCH
#include <lockbatch/cpubatch.h>
#include <lockbatch/cpubatch.h>
#define NAME "lockbatch/cpubatch.h"
static int probe(void)
{
	struct lb_node n = LB_NODE_INIT;
	static struct lb_cpubatch_conf conf;
	struct lb_cpubatch_conf init = LB_CPUBATCH_CONF_INIT(0, 0);
	struct lb_cpubatch *pc;

	return n.slot == 0 && lb_cpubatch_create(&pc, &conf) < 0 &&
	       lb_cpubatch_create(&pc, &init) < 0 &&
	       lb_cpubatch_flush_cause_name(LB_FLUSH_NR) != 0;
}
#elif LB_HDR == LB_HDR_LOCKBATCH
#include <lockbatch/lockbatch.h>
#include <lockbatch/lockbatch.h>
#define NAME "lockbatch/lockbatch.h"
static int probe(void)
{
	struct lb_wbatch b = LB_WBATCH_INIT(1, 1);
	struct lb_lock l;

	return LB_VERSION > 0 && LB_VERSION_STRING[0] != '\0' &&
	       lb_cpu_count() >= 1 && lb_wbatch_count(&b) == 0 &&
	       lb_lock_init(&l, LB_LOCK_MUTEX, 0) == 0 &&
	       lb_lock_destroy(&l) == 0 && lb_cpubatch_destroy(0) < 0;
}
#elif LB_HDR == LB_HDR_VERSION
#include <lockbatch/version.h>
#include <lockbatch/version.h>
#define NAME "lockbatch/version.h"
static int probe(void)
{
	return LB_VERSION == ((LB_VERSION_MAJOR << 16) |
			      (LB_VERSION_MINOR << 8) | LB_VERSION_PATCH);
}
#elif LB_HDR == LB_HDR_FREELIST
#include <lockbatch/freelist.h>
#include <lockbatch/freelist.h>
#define NAME "lockbatch/freelist.h"
static int probe(void)
{
	static void *arena[64];
	static struct lb_freelist_conf c;
	struct lb_freelist_conf init = LB_FREELIST_CONF_INIT(64, 0);
	struct lb_freelist *fl;
	struct lb_pcp_backend be;
	void *o;

	c.obj_size = 64;
	c.arena = arena;
	c.arena_size = sizeof(arena);
	return lb_freelist_create(&fl, &init) < 0 &&
	       lb_freelist_create(&fl, &c) == 0 &&
	       lb_freelist_pcp_backend(fl, &be) == 0 &&
	       be.alloc_bulk(be.ctx, 0, &o, 1) == 1 &&
	       lb_freelist_owns(fl, o) == 1 && lb_freelist_destroy(fl) == 0 &&
	       LB_FREELIST_MIN_OBJ_SIZE >= sizeof(void *);
}
#elif LB_HDR == LB_HDR_REFBITS
#include <lockbatch/refbits.h>
#include <lockbatch/refbits.h>
#define NAME "lockbatch/refbits.h"
static int probe(void)
{
	struct lb_refbits rb = LB_REFBITS_INIT(16);

	return lb_refbits_mark(&rb, 3) == 0 &&
	       lb_refbits_test_and_clear(&rb, 0, 0) == 1 &&
	       lb_refbits_count(&rb) == 0;
}
#elif LB_HDR == LB_HDR_LRU
#include <lockbatch/lru.h>
#include <lockbatch/lru.h>
#define NAME "lockbatch/lru.h"
struct hdr_item {
	int id;
	struct lb_lru_node node;
};
static int probe(void)
{
	static struct lb_lru_conf conf;
	struct lb_lru_conf init = LB_LRU_CONF_INIT(struct hdr_item, node);
	struct lb_lru *lru;

	if (init.node_offset != offsetof(struct hdr_item, node))
		return 0;

	conf.lock_kind = LB_LOCK_SPIN;
	if (lb_lru_create(&lru, &conf))
		return 0;
	return lb_lru_path_name(LB_LRU_PATH_ADD)[0] == 'a' &&
	       lb_lru_destroy(lru) == 0;
}
#elif LB_HDR == LB_HDR_PCP
#include <lockbatch/pcp.h>
#include <lockbatch/pcp.h>
#define NAME "lockbatch/pcp.h"
static int probe(void)
{
	static struct lb_pcp_conf conf;	/* no back-end: rejected */
	struct lb_pcp_conf init = LB_PCP_CONF_INIT(0, 0, 0);
	struct lb_pcp_size sz;
	struct lb_pcp *p;

	return lb_pcp_create(&p, &conf) < 0 && lb_pcp_create(&p, &init) < 0 &&
	       lb_pcp_size(16384, 0, 2, 256, &sz) == 0 && sz.batch > 0 &&
	       lb_pcp_tuner_name(LB_PCP_TUNE_ADAPTIVE) != 0;
}
#elif LB_HDR == LB_HDR_ERROR
#include <lockbatch/error.h>
#include <lockbatch/error.h>
#define NAME "lockbatch/error.h"
static int probe(void)
{
	return lb_strerror(-22)[0] != '\0' && lb_strerror(0)[0] == 's';
}
#elif LB_HDR == LB_HDR_PCP_TUNE
#include <lockbatch/pcp_tune.h>
#include <lockbatch/pcp_tune.h>
#define NAME "lockbatch/pcp_tune.h"
static int probe(void)
{
	struct lb_pcp_tune_state ts;

	return lb_pcp_tune_init(&ts, 8, 16, 64, false) == 0 && ts.high >= 16 && ts.high <= 64 &&
	       lb_pcp_tuner_name(LB_PCP_TUNE_LINUX) != 0;
}
#elif LB_HDR == LB_HDR_NODETAB
#include <lockbatch/nodetab.h>
#include <lockbatch/nodetab.h>
#define NAME "lockbatch/nodetab.h"
static int probe(void)
{
	struct lb_nodetab *t = 0;

	return lb_nodetab_create(&t, 3) < 0 && !t &&
	       LB_NODETAB_BUCKETS <= LB_NODETAB_BUCKETS_MAX;
}
#elif LB_HDR == LB_HDR_CPUBATCH_WAIT
#include <lockbatch/cpubatch_wait.h>
#include <lockbatch/cpubatch_wait.h>
#define NAME "lockbatch/cpubatch_wait.h"
static int probe(void)
{
	struct lb_cpubatch_waiting w;

	return lb_cpubatch_waiting(0, 0, 0, &w) < 0 &&
	       lb_cpubatch_drain_backend(0, &w) < 0;
}
#else
#error "LB_HDR names no header"
#endif

#include <stdio.h>

int main(void)
{
	int ok = probe();

#ifdef __cplusplus
#define LANG "C++"
#else
#define LANG "C"
#endif
	printf("1..1\n%s 1 - <%s> compiles alone as " LANG
	       " and declares its API\n", ok ? "ok" : "not ok", NAME);
	return !ok;
}
