/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The lb_pcp tuners' pure functions on a bare &struct lb_pcp_tune_state:
 * what tests and the kernel differential test (kernel-port/difftest) call
 * without a cache. lockbatch/pcp.h includes this header; the cache's hot
 * paths use the same rules inline (lib/tune/tune.h).
 */
#ifndef LOCKBATCH_PCP_TUNE_H
#define LOCKBATCH_PCP_TUNE_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * enum lb_pcp_tuner - How a cache moves ``high`` and sizes its transfers.
 * @LB_PCP_TUNE_FIXED: ``high`` and ``batch`` constant (Linux before 6.7):
 *	``high`` stays at ``high_min`` (before 6.7 the only high, the low
 *	watermark over the CPUs), a refill takes ``batch`` units, a free that
 *	reaches ``high`` flushes ``batch`` units (the free path before 5.14),
 *	decay only trims ``count`` to ``high``.
 * @LB_PCP_TUNE_LINUX: Linux 6.12 verbatim: nr_pcp_alloc(), nr_pcp_high(),
 *	nr_pcp_free(), free_unref_page_commit()'s free-high rule and
 *	decay_pcp_high() ("mm: PCP high auto-tuning" series, 6.7, plus 6.12
 *	fixes). The zone flags ZONE_BELOW_HIGH and ZONE_RECLAIM_ACTIVE are
 *	never set: a back-end has no watermarks.
 * @LB_PCP_TUNE_COUNT_MIN: %LB_PCP_TUNE_LINUX, but decay by
 *	``min(count_min, high / 5)`` where ``count_min`` is the lowest count
 *	since the last tick ("mm, pcp: avoid to reduce PCP high
 *	unnecessarily", -V2 09/10, Huang Ying, 2023; dropped upstream).
 * @LB_PCP_TUNE_ADAPTIVE: ours, designed from the shipped traces: refills
 *	from peer slots first, transfer sizes that survive sporadic opposite
 *	operations, high grown as LINUX's; see DOC: Adaptive tuner.
 * @LB_PCP_TUNE_LINUX_618: Linux 6.18, the kernel the shipped traces were
 *	recorded on: %LB_PCP_TUNE_LINUX with the free-high rule of "mm: pcp:
 *	increase pcp->free_count threshold to trigger free_high" (6.16): a
 *	run of order 1..3 frees flushes only once ``free_count`` reaches
 *	``batch + high_min / 2``, not ``batch``. nr_pcp_alloc(),
 *	nr_pcp_high(), nr_pcp_free() and decay_pcp_high() are unchanged
 *	(decay frees in chunks of ``batch``, as every tuner here does). With
 *	%LB_PCP_TS_ZONE_BELOW_HIGH set in its state, the ZONE_BELOW_HIGH
 *	branches of nr_pcp_high() and nr_pcp_alloc(): each free lowers high
 *	by ``max(free_count, batch)`` and flushes once count reaches
 *	high_min; a refill does not raise high.
 * @LB_PCP_TUNE_NR: Number of tuners.
 */
enum lb_pcp_tuner {
	LB_PCP_TUNE_FIXED,
	LB_PCP_TUNE_LINUX,
	LB_PCP_TUNE_COUNT_MIN,
	LB_PCP_TUNE_ADAPTIVE,
	LB_PCP_TUNE_LINUX_618,
	LB_PCP_TUNE_NR,
};

/**
 * DOC: Adaptive tuner
 *
 * %LB_PCP_TUNE_ADAPTIVE is %LB_PCP_TUNE_LINUX_618 without the zone flags,
 * with three changes, each read off the shipped traces
 * (tests/data/README.md, ``make bench-pcp-replay``):
 *
 * 1. Objects flow between CPUs. In the recorded traces a page is often
 *    freed on another CPU than the one that allocated it (a pipe's reader
 *    frees what its writer allocated; a build's processes migrate). LINUX
 *    moves each such object through the back-end twice (a flush on one
 *    CPU, a refill on the other). ADAPTIVE serves a refill from a peer
 *    slot first: it tries (never waits for) the locks of up to 3 next
 *    slots and takes objects of the order from the cold end of the first
 *    one whose lists hold more than one batch: at most half of what they
 *    hold above one batch (rounded up), never more than the refill asked
 *    for. Only when no peer can give does the refill go to the back-end.
 *    Half, so the peer keeps most of what it may need next (taking all
 *    but one batch moved twice the units per steal on lb-compare's
 *    prodcons at 8 threads, for a higher peak RSS). A peer's magazine
 *    (DOC: Owner path) is not taken: that needs a membarrier fence to the
 *    peer's CPU, and on prodcons at 2 threads, where objects flow both
 *    ways, the two slots then stole from each other 1600 to 2100 times
 *    in 0.3 s each, at 4 to 5 times the CPU time per allocation (now they
 *    do not steal there at all). What a steal leaves is not stranded: if
 *    the back-end is empty too, rule (A) of DOC: Per-CPU object cache
 *    drains every slot and retries.
 * 2. Transfer sizes survive noise. LINUX halves alloc_factor on every free
 *    and free_count on every allocation, so in a mixed stream (a build: a
 *    free between most allocations) refills stay at one or two batches.
 *    ADAPTIVE halves alloc_factor on a free only once at least a batch has
 *    been freed since allocations last dominated (free_count >= batch), and
 *    halves free_count on an allocation only while refills are scaling up
 *    (alloc_factor > 0).
 * 3. High grows as LINUX's would. Bigger refills must not inflate high (it
 *    then holds free bursts and raises idle units): a refill raises high by
 *    ``batch << grow_factor``, where grow_factor follows LINUX's
 *    alloc_factor rules exactly (up on a refill that fits, halved on every
 *    free).
 *
 * Decay, nr_pcp_high() and nr_pcp_free() are LINUX's; the free-high rule
 * is 6.18's (a run of order 1..3 frees flushes once free_count reaches
 * ``batch + high_min / 2``): with 6.12's threshold of one batch, the
 * recorded anonymous-memory and page-cache workloads flush on nearly every
 * high-order free (15 to 19 times the kernel's drain holds).
 *
 * The cost of (1) is a trylock on a remote slot per refill, at most 3,
 * and no fence.
 */

/*
 * Tuner-state flags (&lb_pcp_tune_state.flags, prefix LB_PCP_TS_), not to be
 * confused with the configuration flags LB_PCP_F_* of pcp.h.
 */

/**
 * define LB_PCP_TS_PREV_FREE_HIGH_ORDER - Tuner flag.
 *
 * The previous free was of order 1..3 (PCPF_PREV_FREE_HIGH_ORDER).
 */
#define LB_PCP_TS_PREV_FREE_HIGH_ORDER 0x1u
/**
 * define LB_PCP_TS_FREE_HIGH_BATCH - Tuner flag (PCPF_FREE_HIGH_BATCH).
 */
#define LB_PCP_TS_FREE_HIGH_BATCH 0x2u
/**
 * define LB_PCP_TS_ZONE_BELOW_HIGH - Tuner flag.
 *
 * The back-end is below its high watermark (the zone's ZONE_BELOW_HIGH);
 * only %LB_PCP_TUNE_LINUX_618 reads it. lb_pcp never sets it (a back-end
 * has no watermarks): it is for callers of the pure functions that model a
 * zone, such as pcp-replay.
 */
#define LB_PCP_TS_ZONE_BELOW_HIGH 0x4u

/**
 * struct lb_pcp_tune_state - One slot's watermark and tuner state.
 * @count: Cached base units.
 * @high: Current high watermark, base units.
 * @high_min: Lower bound of @high.
 * @high_max: Upper bound of @high.
 * @batch: Transfer unit, base units.
 * @free_count: Units freed recently (halved by each allocation,
 *	saturating at ``batch << LB_PCP_BATCH_SCALE_MAX``).
 * @count_min: Lowest @count since the last tick (%LB_PCP_TUNE_COUNT_MIN,
 *	%LB_PCP_TUNE_ADAPTIVE).
 * @alloc_factor: Refill scale exponent for order 0 (0..5).
 * @flags: %LB_PCP_TS_PREV_FREE_HIGH_ORDER, %LB_PCP_TS_FREE_HIGH_BATCH,
 *	%LB_PCP_TS_ZONE_BELOW_HIGH.
 * @grow_factor: alloc_factor as LINUX would keep it; sets how much a refill
 *	raises high (%LB_PCP_TUNE_ADAPTIVE).
 *
 * The fields keep the kernel's names and types' ranges so the pure
 * functions below can be compared with a transcription of the kernel.
 */
struct lb_pcp_tune_state {
	int count;
	int high;
	int high_min;
	int high_max;
	int batch;
	int free_count;
	int count_min;
	uint8_t alloc_factor;
	uint8_t flags;
	uint8_t grow_factor;
};

/**
 * lb_pcp_tune_init() - Initialise a tuner state (an empty slot).
 * @s: The state.
 * @batch: Transfer unit, 1..%LB_PCP_BATCH_MAX base units.
 * @high_min: Lower bound of high.
 * @high_max: Upper bound of high, @high_min..%LB_PCP_HIGH_MAX.
 * @free_high_batch: Set %LB_PCP_TS_FREE_HIGH_BATCH.
 *
 * ``high`` starts at @high_min (zone_set_pageset_high_and_batch()). The
 * limits are those of &struct lb_pcp_conf.
 *
 * Context: Pure; any thread.
 * Return: 0, %-EINVAL if @s is NULL, @batch is 0 or above
 * %LB_PCP_BATCH_MAX, @high_min is negative or above @high_max, or
 * @high_max is above %LB_PCP_HIGH_MAX.
 */
int lb_pcp_tune_init(struct lb_pcp_tune_state *s, int batch, int high_min,
		     int high_max, bool free_high_batch);

/**
 * lb_pcp_tune_alloc_start() - Account an allocation attempt.
 * @t: The tuner.
 * @s: The state.
 *
 * Halves @s->free_count (rmqueue_pcplist()); %LB_PCP_TUNE_ADAPTIVE only
 * while alloc_factor > 0. Call before the refill decision.
 *
 * Context: Pure; caller serialises access to @s.
 */
void lb_pcp_tune_alloc_start(enum lb_pcp_tuner t,
			     struct lb_pcp_tune_state *s);

/**
 * lb_pcp_tune_refill() - How many objects to take from the back-end.
 * @t: The tuner.
 * @s: The state; @s->high and @s->alloc_factor may change.
 * @order: The order whose list is empty.
 *
 * nr_pcp_alloc() for %LB_PCP_TUNE_LINUX and %LB_PCP_TUNE_COUNT_MIN;
 * ``max(batch >> order, 2)`` for %LB_PCP_TUNE_FIXED; for
 * %LB_PCP_TUNE_ADAPTIVE nr_pcp_alloc() with high raised by
 * ``batch << grow_factor``. The caller then adds ``got << order`` to
 * @s->count itself. The kernel's rule, uncapped: a cache (lb_pcp_alloc())
 * requests at most ``(batch << 5) >> order`` of them, at least one.
 *
 * Context: Pure; caller serialises access to @s.
 * Return: the number of order-@order objects to request (>= 1).
 */
int lb_pcp_tune_refill(enum lb_pcp_tuner t, struct lb_pcp_tune_state *s,
		       unsigned int order);

/**
 * lb_pcp_tune_alloc_done() - Account an object taken from the slot.
 * @t: The tuner.
 * @s: The state.
 * @order: Its order.
 *
 * ``count -= 1 << order`` and the ``count_min`` update of the count_min
 * patch (__rmqueue_pcplist()).
 *
 * Context: Pure; caller serialises access to @s.
 */
void lb_pcp_tune_alloc_done(enum lb_pcp_tuner t, struct lb_pcp_tune_state *s,
			    unsigned int order);

/**
 * lb_pcp_tune_free() - Account a free and decide the flush.
 * @t: The tuner.
 * @s: The state: @count grows by ``1 << order``; @high, @free_count,
 *	@alloc_factor and @flags may change.
 * @order: The order of the freed object.
 *
 * free_unref_page_commit() with nr_pcp_high() and nr_pcp_free();
 * %LB_PCP_TUNE_LINUX_618 and %LB_PCP_TUNE_ADAPTIVE with 6.18's free-high
 * threshold (and, for LINUX_618, %LB_PCP_TS_ZONE_BELOW_HIGH);
 * %LB_PCP_TUNE_FIXED returns ``batch`` once count reaches high;
 * %LB_PCP_TUNE_ADAPTIVE keeps alloc_factor unless free_count >= batch. The
 * caller then frees the returned number of units (whole objects, from the
 * freed order's list first) and subtracts what it freed from @s->count.
 *
 * Context: Pure; caller serialises access to @s.
 * Return: base units to flush now, 0 for none.
 */
int lb_pcp_tune_free(enum lb_pcp_tuner t, struct lb_pcp_tune_state *s,
		     unsigned int order);

/**
 * lb_pcp_tune_decay() - One tick's decision: new high and units to drain.
 * @t: The tuner.
 * @s: The state; @high may change.
 * @to_drain: Where to store the base units to drain now (0 if none).
 *
 * %LB_PCP_TUNE_LINUX (decay_pcp_high(), 6.12): if ``high > high_min``,
 * ``high = max3(count - (batch << 5), high - high / 8, high_min)``;
 * to_drain = ``count - high``.
 * %LB_PCP_TUNE_COUNT_MIN: the same with ``high - min(count_min, high / 5)``.
 * %LB_PCP_TUNE_FIXED: ``high`` stays; to_drain = ``count - high``.
 * %LB_PCP_TUNE_ADAPTIVE: as %LB_PCP_TUNE_LINUX (see DOC: Adaptive tuner).
 *
 * After draining, the caller subtracts what it drained from @s->count and
 * calls lb_pcp_tune_tick_end(). lb_pcp_tune_decay_step() does all three on
 * a bare state.
 *
 * Context: Pure; caller serialises access to @s.
 * Return: decay_pcp_high()'s ``todo``: true if high is still above
 * high_min or units are to be drained now. It does not promise that
 * another tick changes anything: COUNT_MIN's decrement is 0 while
 * count_min is 0 and LINUX's while high is below 8, so high can stay
 * above high_min with every tick returning true. lb_pcp_decay() answers
 * "may another tick change something" for a cache, with slot expiry.
 */
bool lb_pcp_tune_decay(enum lb_pcp_tuner t, struct lb_pcp_tune_state *s,
		       int *to_drain);

/**
 * lb_pcp_tune_tick_end() - Close a tick after its drain.
 * @t: The tuner.
 * @s: The state: ``count_min = count`` and per-tick counters reset.
 *
 * Context: Pure; caller serialises access to @s.
 */
void lb_pcp_tune_tick_end(enum lb_pcp_tuner t, struct lb_pcp_tune_state *s);

/**
 * lb_pcp_tune_decay_step() - A whole tick on a bare state.
 * @t: The tuner.
 * @s: The state.
 * @drained: Where to store the units drained (may be NULL).
 *
 * lb_pcp_tune_decay(), then ``count -= to_drain`` (as if every unit were
 * freed exactly), then lb_pcp_tune_tick_end(). For differential tests of
 * the decay rule without a cache.
 *
 * Context: Pure; caller serialises access to @s.
 * Return: as lb_pcp_tune_decay().
 */
bool lb_pcp_tune_decay_step(enum lb_pcp_tuner t, struct lb_pcp_tune_state *s,
			    int *drained);

/**
 * lb_pcp_tuner_name() - Short name of a tuner.
 * @t: The tuner.
 *
 * Context: Any thread.
 * Return: "fixed", "linux", "count_min", "adaptive", "linux618", or
 * "invalid".
 */
const char *lb_pcp_tuner_name(enum lb_pcp_tuner t);

/**
 * lb_pcp_tuner_parse() - Tuner from its name.
 * @name: One of the names lb_pcp_tuner_name() returns.
 *
 * Context: Any thread.
 * Return: the tuner, or %-EINVAL if @name is NULL or unknown.
 */
int lb_pcp_tuner_parse(const char *name);

#ifdef __cplusplus
}
#endif

#endif /* LOCKBATCH_PCP_TUNE_H */
