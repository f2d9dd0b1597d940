/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#ifndef LOCKBATCH_PCP_H
#define LOCKBATCH_PCP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <lockbatch/cpu.h>
#include <lockbatch/lock.h>
#include <lockbatch/pcp_tune.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * DOC: Per-CPU object cache with an auto-tuned high watermark
 *
 * &struct lb_pcp is an allocator front-end modelled on Linux's per-CPU
 * pages (``struct per_cpu_pages``, mm/page_alloc.c). Each CPU slot keeps
 * free objects on one list per order; an object of order ``o`` weighs
 * ``1 << o`` base units and the slot's ``count`` is in base units, as
 * ``pcp->count`` counts pages. Behind the slots sits a bulk back-end
 * (&struct lb_pcp_backend) guarded by one &struct lb_lock: every bulk call
 * (refill, flush, one decay or drain chunk) is exactly one hold of that
 * lock, so the lock's statistics count back-end trips.
 *
 * A slot refills ``batch``-sized groups from the back-end when a list is
 * empty and flushes to it when ``count`` reaches ``high``. ``high`` moves
 * between ``high_min`` and ``high_max`` under a tuner (&enum lb_pcp_tuner):
 * it grows on refills, is raised to hold a burst of frees, and decays on
 * each tick of lb_pcp_decay() (from the caller, or from the decay thread
 * started by lb_pcp_decay_thread_start()).
 *
 * Objects are linked into the slot lists through their own memory, as free
 * pages are through ``page->pcp_list``: an object handed to lb_pcp_free()
 * must be at least %LB_PCP_MIN_OBJ_SIZE bytes, pointer-aligned, and its
 * first %LB_PCP_MIN_OBJ_SIZE bytes are overwritten while it is cached.
 *
 * Lock order: slot lock, then back-end lock (the kernel's ``pcp->lock``
 * then ``zone->lock``). The back-end callbacks run with both held and must
 * not call into the same &struct lb_pcp. An %LB_PCP_TUNE_ADAPTIVE refill
 * also tries peer slot locks while holding its own; it never waits for
 * one, so no cycle can form.
 *
 * Large drains release the back-end lock between chunks: decay frees at
 * most ``batch`` units per hold (decay_pcp_high(), "mm/page_alloc: Batch
 * page freeing in decay_pcp_high", 2025), a flush or a drain at most
 * ``batch << 5`` (drain_pages_zone(), "mm: page_alloc: control latency
 * caused by zone PCP draining"). No critical section moves more than
 * ``batch << LB_PCP_BATCH_SCALE_MAX`` units, plus less than one object
 * when objects above order 0 are cached (whole objects are freed, as in
 * free_pcppages_bulk()).
 *
 * Nothing stranded. Three rules of lb_pcp's own keep objects from being
 * held where no allocation can reach them. They apply to every tuner and
 * depart from the kernel only where it would strand objects: (A) when the
 * back-end is empty, (B) on an idle slot, (C) where the kernel leaves a
 * slot above high after a free (``high == batch``, or a high-order refill
 * of a small batch that overshot high) or above high_max after a decay.
 * The property tests check the cache against the kernel transcription
 * with these rules added:
 *
 * (A) An allocation that finds the back-end empty drains every slot and
 *     retries its refill once before failing with %-ENOMEM, as the page
 *     allocator calls drain_all_pages() after a failed attempt
 *     (__alloc_pages_direct_reclaim()). Counted in
 *     &lb_pcp_slot_stats.retries of the allocating slot; the drains count
 *     as the drained slots' @drains.
 * (B) Slot expiry: a slot nobody allocated from or freed into for
 *     ``expire`` decay periods (&lb_pcp_conf.expire, default
 *     %LB_PCP_EXPIRE_DEFAULT) is drained to zero by the next decay, as
 *     refresh_cpu_vm_stats() drains a pageset whose ``pcp->expire`` ran
 *     out. A slot a thread visited once, or that only received frees from
 *     threads passing through, gives everything back within ``expire + 1``
 *     ticks of its last use.
 * (C) Every free that leaves ``count`` above ``high`` flushes at least the
 *     excess, and decay never leaves ``high`` or ``count`` above
 *     ``high_max``. The kernel's nr_pcp_free() asks for
 *     ``clamp(free_count, batch, high - batch)`` units, which is 0 when
 *     ``high == batch``; such a slot would otherwise grow without bound.
 *
 * Debug mode (%LB_PCP_F_DEBUG): the cache also keeps the set of objects it
 * holds. Freeing an object that is already cached (a double free that has
 * not yet reached the back-end) fails with %-EEXIST and changes nothing. A
 * double free whose first copy reached the back-end is caught when a
 * refill brings that copy back while the second one is still cached: the
 * refilled copy is not cached (the cached one stands for the object, so
 * objects stay conserved) and is never handed out. Both are counted in
 * &lb_pcp_slot_stats.double_frees. A double free whose both copies reach
 * the back-end is the back-end's to detect. Debug mode costs a hash-set
 * operation under a mutex per call: for tests.
 *
 * Errors. Every call checks its arguments in one order and returns the
 * first failure: the instance (@p NULL) first, then the other pointers,
 * then ranges (order, slot, cpu), then the state of the object or cache
 * (%-EEXIST, %-ENOENT), then resources (%-ENOMEM, %-EAGAIN). A call that
 * fails changes nothing.
 *
 * Concurrency (X = needs external exclusion, - = safe together):
 *
 * ===============  =====  ====  =====  =========  =====  =======
 *                  alloc  free  decay  drain(_all) stats  destroy
 * ===============  =====  ====  =====  =========  =====  =======
 * alloc/free         -     -      -        -        -       X
 * decay (thread)     -     -      -        -        -       X
 * drain, drain_all   -     -      -        -        -       X
 * stats              -     -      -        -        -       X
 * destroy            X     X      X        X        X       X
 * ===============  =====  ====  =====  =========  =====  =======
 *
 * Every slot operation on the lock path takes only that slot's ck
 * spinlock (uncontended unless a thread migrated, or a decay or remote
 * drain runs).
 *
 * fork(). Every slot lock is taken around fork() (a pthread_atfork()
 * hook of the slot core, as glibc's malloc does with its arenas), and the
 * cache takes the back-end lock only under a slot lock, so in the child
 * every slot and the back-end are consistent and unlocked, and the
 * child's copy holds the objects the parent's slots held. That holds for
 * the lock the cache makes; a caller's own lock in &lb_pcp_conf.lock may
 * also be taken by the caller's code outside any slot lock: register its
 * pthread_atfork() handlers before creating the cache, so that our
 * prepare runs before its own (slot locks, then the back-end lock: the
 * order the cache takes them in), as for lb_cpubatch. A second hook, run
 * before that one, waits out a tick in progress and takes each cache's
 * tick and decay-thread mutexes, so the child gets them unlocked too. The
 * child has no decay thread (lb_pcp_decay_thread_stop() there returns
 * %-ENOENT) and may use every call: alloc, free, drain, tick, decay,
 * lb_pcp_decay_thread_start() and lb_pcp_destroy(). Do not fork() from a
 * back-end callback (the hooks would wait for the lock the caller holds).
 * tests/stress/stress_pcp_fork.c forks while the decay thread is inside a
 * tick; tests/fault/fault_runtime.c with every slot full.
 */

/**
 * DOC: Owner path
 *
 * Where restartable sequences are usable (x86-64, glibc registered rseq,
 * membarrier registered, one slot per possible CPU id, no @cpu_fn, no
 * %LB_PCP_F_DEBUG, no %LB_PCP_F_LOCK_PATH, no ``LB_RSEQ=0``, not a
 * ThreadSanitizer build and no ThreadSanitizer runtime in the process: a
 * client built with ``-fsanitize=thread`` cannot see the sections, so it
 * gets the lock path, which tells TSan its orderings), each slot keeps a
 * magazine in front of its order-0 list: an array of 32 batches of
 * objects, at most 1024 (the largest transfer, batch shifted by
 * %LB_PCP_BATCH_SCALE_MAX; lb_pcp_size() sizes batch in bytes, so a few
 * MiB of objects of any size). An order-0 alloc
 * that finds an object there, and an order-0 free that finds room, run as
 * one rseq critical section on the calling CPU's slot: no lock, no atomic
 * instruction. Everything else takes the slot lock (the lock path): higher
 * orders (their lists are not fronted), an empty or full magazine, a
 * thread without an rseq registration or a CPU id above the slot count.
 * &lb_pcp_stats.rseq tells which path a cache runs. The path is chosen
 * once, at create: an order-0 call on the rseq path checks its arguments
 * and enters the section with no other test and no call; the lock path
 * tests neither the debug set nor the TSan runtime unless the cache was
 * created with one of them.
 *
 * The lock path and every remote access (drains, decay, stats)
 * stop the slot, fence its CPU (membarrier; skipped for a slot seen empty
 * and for the caller's own CPU), fold the magazine into the slot (allocs,
 * frees and count become exact) and spill it into the order-0 list, so the
 * tuners, flushes, drains and the stats see exactly the objects the slot
 * holds. A steal (%LB_PCP_TUNE_ADAPTIVE) is the exception: it takes only
 * from the peer's lists, which the slot lock alone covers, so it neither
 * fences the peer's CPU nor empties its magazine. An owner's lock-path call then reloads the magazine from the
 * order-0 list and sets its room to what keeps ``count`` below ``high``: a
 * magazine free never reaches high, so rule (C) and the flush decision are
 * unchanged. The reload takes three quarters of the capacity after an
 * alloc found the magazine empty and one quarter after a free found it
 * full (in general, what the spill left room for, within those bounds), so
 * a run of frees spills each object once and a caller alternating at
 * either end has a quarter of the capacity of slack.
 *
 * What the tuners see: count, allocs and frees exactly; the per-call
 * updates of free_count, alloc_factor and count_min only for lock-path
 * calls (refills, flushes, magazine reloads and spills), as a kernel
 * per-CPU cache's zone-level state sees only its batched transfers.
 * count_min is lowered, when the magazine served allocations, to count
 * without the magazine (the least the slot can have held). A run of
 * allocs or frees reaches the lock path at least every
 * ``3 * capacity / 4`` calls, so high still grows on every refill and
 * shrinks on decay; the
 * LINUX fidelity tests (injected CPU ids) run on the lock path, and
 * tests/prop/prop_pcp_paths.c checks both paths against the same model.
 *
 * System calls: an owner call makes none (its own slot needs no fence);
 * the registration, remote fences, the decay thread and waits for a lock
 * held elsewhere remain, as DOC: System calls (lockbatch/cpu.h) lists;
 * &lb_pcp_stats.fences and .owner_fences count the fences.
 *
 * Signal handlers may call lb_pcp_alloc() and lb_pcp_free(): a section
 * interrupted by a signal restarts. A handler that can hit the lock path
 * (any call, in general) must not interrupt a lock-path call of the same
 * thread on the same cache: block the signal around such calls, or use
 * the cache from handlers only when the interrupted code does not.
 * fork(): see DOC: Per-CPU object cache.
 *
 * Debuggers: the sections are inline in lb_pcp_alloc() and lb_pcp_free().
 * Single-stepping through one restarts it at every step, so it never
 * completes; a breakpoint inside one that the debugger steps over out of
 * line (gdb's displaced stepping, its default) runs the rest of the
 * section unprotected, and a migration there can corrupt the magazine.
 * Step over these calls, or debug with ``LB_RSEQ=0``.
 */

/**
 * define LB_PCP_F_DEBUG - Flag of &lb_pcp_conf.flags.
 *
 * Track cached objects (double-free detection).
 */
#define LB_PCP_F_DEBUG 0x1u
/**
 * define LB_PCP_F_FREE_HIGH_BATCH - Flag of &lb_pcp_conf.flags.
 *
 * The CPU cache is large enough that a high-order free burst keeps one batch
 * (PCPF_FREE_HIGH_BATCH, set by zone_pcp_update_cacheinfo()).
 */
#define LB_PCP_F_FREE_HIGH_BATCH 0x2u
/**
 * define LB_PCP_F_LOCK_PATH - Flag of &lb_pcp_conf.flags.
 *
 * The owner takes the slot lock on every call, even where the rseq path is
 * available (as ``LB_RSEQ=0`` in the environment does for every cache).
 */
#define LB_PCP_F_LOCK_PATH 0x4u

/**
 * define LB_PCP_MAX_ORDER - Largest order a cache may be configured for.
 */
#define LB_PCP_MAX_ORDER 10u
/**
 * define LB_PCP_COSTLY_ORDER - Largest order feeding the free high rule.
 *
 * Orders 1..3 (PAGE_ALLOC_COSTLY_ORDER).
 */
#define LB_PCP_COSTLY_ORDER 3u
/**
 * define LB_PCP_BATCH_SCALE_MAX - Largest refill scale and the flush
 * chunk shift (CONFIG_PCP_BATCH_SCALE_MAX default, 5).
 */
#define LB_PCP_BATCH_SCALE_MAX 5
/**
 * define LB_PCP_BATCH_MAX - Largest ``batch`` accepted, in base units.
 */
#define LB_PCP_BATCH_MAX 4096
/**
 * define LB_PCP_MIN_OBJ_SIZE - Bytes of each cached object used as links.
 */
#define LB_PCP_MIN_OBJ_SIZE (2 * sizeof(void *))
/**
 * define LB_PCP_MAX_SLOTS - Largest slot count accepted.
 */
#define LB_PCP_MAX_SLOTS LB_CPU_SLOTS_MAX
/**
 * define LB_PCP_DECAY_INTERVAL_NS - Default decay tick, 1 s
 * (``vm.stat_interval``).
 */
#define LB_PCP_DECAY_INTERVAL_NS 1000000000ull
/**
 * define LB_PCP_HIGH_MAX - Largest ``high_max`` accepted, base units (keeps
 * every high, count and refill computation inside an int).
 */
#define LB_PCP_HIGH_MAX 0x3fffffff
/**
 * define LB_PCP_EXPIRE_DEFAULT - Default slot expiry, in decay periods (the
 * kernel's ``pcp->expire = 3``).
 */
#define LB_PCP_EXPIRE_DEFAULT 3u
/**
 * define LB_PCP_EXPIRE_MAX - Largest slot expiry accepted, decay periods.
 */
#define LB_PCP_EXPIRE_MAX 1000000u
/**
 * define LB_PCP_DEFAULT_POOL_UNITS - Pool size the defaults are sized for.
 *
 * A zero &lb_pcp_conf.batch is sized as lb_pcp_size() sizes a pool of this
 * many base units: 1 GiB of 4 KiB pages, batch 63.
 */
#define LB_PCP_DEFAULT_POOL_UNITS (1ull << 18)

/**
 * struct lb_pcp_backend - The bulk back-end behind a cache.
 * @alloc_bulk: Store up to @n objects of @order in @out; return how many
 *	(0 when exhausted) or a negative errno.
 * @free_bulk: Take back @n objects of @order.
 * @ctx: Passed to both.
 *
 * Both run with the cache's back-end lock (and one slot lock) held, and
 * must not call into the same cache. A refill is one hold and one
 * @alloc_bulk call. A flush, decay or drain hold frees whole objects from
 * the cold ends of the lists round-robin over the orders, as the kernel's
 * free_pcppages_bulk() does, so one hold may call @free_bulk several
 * times, once per run of objects of one order.
 */
struct lb_pcp_backend {
	int (*alloc_bulk)(void *ctx, unsigned int order, void **out,
			  unsigned int n);
	void (*free_bulk)(void *ctx, unsigned int order, void **objs,
			  unsigned int n);
	void *ctx;
};

/**
 * typedef lb_clock_fn - A caller-supplied monotonic clock.
 * @arg: The argument registered with it.
 *
 * Return: nanoseconds, never decreasing.
 */
typedef uint64_t (*lb_clock_fn)(void *arg);

/**
 * struct lb_pcp_conf - Creation parameters.
 * @nr_slots: Slots; 0 means lb_cpu_count() (at most %LB_PCP_MAX_SLOTS of
 *	them). Above %LB_PCP_MAX_SLOTS: %-EINVAL.
 * @max_order: Largest order accepted, 0..%LB_PCP_MAX_ORDER (0: order 0
 *	only). Above: %-EINVAL.
 * @batch: Transfer unit in base units, 1..%LB_PCP_BATCH_MAX (see
 *	lb_pcp_size()); out of range: %-EINVAL. 0 means "size it for me":
 *	the batch lb_pcp_size() gives for a pool of
 *	%LB_PCP_DEFAULT_POOL_UNITS on @nr_slots CPUs (63), and, when
 *	@high_min and @high_max are both 0 as well, its high_min and high_max.
 *	Size from the real pool with lb_pcp_size() when it is known.
 * @high_min: Lower bound of high, base units, 0..@high_max (0 with a
 *	non-zero @batch: the slot may cache nothing). Negative or above
 *	@high_max: %-EINVAL.
 * @high_max: Upper bound of high, @high_min..%LB_PCP_HIGH_MAX. Equal
 *	bounds disable tuning for every tuner except %LB_PCP_TUNE_FIXED's
 *	constant high. Values at or below @batch are accepted: rule (C) of
 *	DOC: Per-CPU object cache keeps such a slot at or below high. Above
 *	%LB_PCP_HIGH_MAX: %-EINVAL.
 * @tuner: &enum lb_pcp_tuner (0: %LB_PCP_TUNE_FIXED); unknown: %-EINVAL.
 * @flags: %LB_PCP_F_DEBUG, %LB_PCP_F_FREE_HIGH_BATCH,
 *	%LB_PCP_F_LOCK_PATH; other bits: %-EINVAL.
 * @lock_kind: Kind of the back-end lock the cache makes (0:
 *	%LB_LOCK_MUTEX, the default); one lb_lock_init() rejects: %-EINVAL.
 * @backend: Back-end operations; copied. @alloc_bulk or @free_bulk NULL:
 *	%-EINVAL. @ctx may be anything.
 * @cpu_fn: CPU-id source; NULL means lb_cpu_current().
 * @cpu_arg: Argument of @cpu_fn.
 * @clock_fn: Clock for lb_pcp_tick() and the decay thread; NULL means
 *	CLOCK_MONOTONIC.
 * @clock_arg: Argument of @clock_fn.
 * @decay_interval_ns: Tick interval; 0 means %LB_PCP_DECAY_INTERVAL_NS.
 *	Any other value is accepted.
 * @expire: Slot expiry in decay periods (rule (B) of DOC: Per-CPU object
 *	cache); 0 means %LB_PCP_EXPIRE_DEFAULT. Above %LB_PCP_EXPIRE_MAX:
 *	%-EINVAL.
 * @lock: The caller's own &struct lb_lock to guard the back-end with, e.g.
 *	the lock that already protects the pool the back-end draws from, so
 *	other code can take the same lock around the pool. NULL (0): the
 *	cache makes its own of @lock_kind. The caller initialises it before
 *	lb_pcp_create() and destroys it after lb_pcp_destroy(); every
 *	lb_pcp_stats() back-end hold count then includes the caller's own
 *	holds of it.
 *
 * Every field may be 0: a zeroed configuration with a back-end is a
 * working cache (%LB_PCP_CONF_INIT). Unknown values are rejected, never
 * clamped.
 */
struct lb_pcp_conf {
	unsigned int nr_slots;
	unsigned int max_order;
	int batch;
	int high_min;
	int high_max;
	enum lb_pcp_tuner tuner;
	unsigned int flags;
	enum lb_lock_kind lock_kind;
	struct lb_pcp_backend backend;
	lb_cpu_fn cpu_fn;
	void *cpu_arg;
	lb_clock_fn clock_fn;
	void *clock_arg;
	uint64_t decay_interval_ns;
	unsigned int expire;
	struct lb_lock *lock;
};

/**
 * define LB_PCP_CONF_INIT - Static initializer of &struct lb_pcp_conf.
 * @alloc: &lb_pcp_backend.alloc_bulk.
 * @free: &lb_pcp_backend.free_bulk.
 * @ctx: &lb_pcp_backend.ctx.
 *
 * Every other field 0, so every default above: a batch and highs sized
 * for %LB_PCP_DEFAULT_POOL_UNITS, one slot per CPU, the FIXED tuner, a
 * mutex of the cache's own. Valid C and C++ (positional).
 */
#define LB_PCP_CONF_INIT(alloc, free, ctx)				\
	{ 0, 0, 0, 0, 0, LB_PCP_TUNE_FIXED, 0, LB_LOCK_MUTEX,		\
	  { (alloc), (free), (ctx) }, 0, 0, 0, 0, 0, 0, 0 }

/**
 * struct lb_pcp_slot_stats - Counters of one slot (or their sum).
 * @allocs: Successful lb_pcp_alloc() calls.
 * @frees: Successful lb_pcp_free() calls.
 * @refills: Back-end alloc_bulk holds (refills), including those that
 *	brought nothing (the back-end was empty or failed) and retries.
 * @refill_units: Units they brought in (and kept, see @double_frees).
 * @flushes: Back-end free_bulk holds from the free path.
 * @flush_units: Units they returned.
 * @decay_drains: Back-end holds by decay.
 * @decay_units: Units decay returned.
 * @drains: Back-end holds by lb_pcp_drain()/lb_pcp_drain_all().
 * @drain_units: Units they returned.
 * @steals: Refills served from a peer slot (%LB_PCP_TUNE_ADAPTIVE).
 * @steal_units: Units they moved.
 * @retries: Allocations that found the back-end empty, drained every slot
 *	and refilled once more (rule (A)).
 * @expiries: Decay ticks that drained this slot because it expired
 *	(rule (B)); the holds count as @decay_drains.
 * @double_frees: Debug mode: frees refused with %-EEXIST plus refilled
 *	objects that were cached already (not handed out).
 * @max_hold_units: Most units moved in one back-end hold.
 * @count: Cached units at snapshot time.
 * @high: high at snapshot time (summed in totals).
 *
 * Every back-end lock hold is counted under exactly one cause:
 * ``refills + flushes + decay_drains + drains`` summed over the slots
 * equals &lb_pcp_stats.backend_locks whenever no call is in flight.
 */
struct lb_pcp_slot_stats {
	uint64_t allocs;
	uint64_t frees;
	uint64_t refills;
	uint64_t refill_units;
	uint64_t flushes;
	uint64_t flush_units;
	uint64_t decay_drains;
	uint64_t decay_units;
	uint64_t drains;
	uint64_t drain_units;
	uint64_t steals;
	uint64_t steal_units;
	uint64_t retries;
	uint64_t expiries;
	uint64_t double_frees;
	uint64_t max_hold_units;
	int64_t count;
	int64_t high;
};

/**
 * struct lb_pcp_stats - Whole-cache statistics.
 * @total: Sum over slots (@max_hold_units: the maximum).
 * @ticks: Decay ticks run.
 * @backend_locks: Acquisitions of the back-end lock (its lb_lock stats).
 * @nr_slots: Slots.
 * @rseq: 1 when order-0 owner calls run on the rseq path (DOC: Owner
 *	path), 0 on the lock path.
 * @fences: membarrier() fences this cache's slot holds made, from any
 *	thread (remote accesses: drains, decay, destroy; @owner_fences
 *	included). 0 on the lock path, which never fences.
 * @owner_fences: Of @fences, those made inside lb_pcp_alloc() and
 *	lb_pcp_free() calls, their refills, flushes and magazine reloads and
 *	spills included. 0 but for the two rare cases DOC: System calls
 *	(lockbatch/cpu.h) lists: a thread that migrated between its section
 *	and its slot lock, and an allocation that found the back-end empty.
 */
struct lb_pcp_stats {
	struct lb_pcp_slot_stats total;
	uint64_t ticks;
	uint64_t backend_locks;
	unsigned int nr_slots;
	unsigned int rseq;
	uint64_t fences;
	uint64_t owner_fences;
};

struct lb_pcp;

/**
 * lb_pcp_create() - Create a per-CPU cache over a bulk back-end.
 * @p: Where to store the cache.
 * @conf: Parameters.
 *
 * Checks @p, @conf, then the fields of @conf in the order they are
 * declared (&struct lb_pcp_conf lists each field's default, limits and
 * error); the first violation is returned.
 *
 * Context: Any thread. Allocates the slots (cache-line aligned, about
 * 8.5 KiB each with the owner path's magazine) and one transfer buffer of
 * ``batch << LB_PCP_BATCH_SCALE_MAX`` pointers each.
 * Return: 0; %-EINVAL if @p or @conf is NULL or a field is out of its
 * limits; %-ENOMEM (or the error of lb_lock_init()). *@p is set only on
 * success.
 */
int lb_pcp_create(struct lb_pcp **p, const struct lb_pcp_conf *conf);

/**
 * lb_pcp_destroy() - Drain every slot to the back-end and free the cache.
 * @p: The cache.
 *
 * Stops the decay thread if it runs. Nothing cached is lost. A slot
 * another thread holds at that moment means a concurrent user: the call
 * refuses and changes nothing else (the decay thread stays stopped; start
 * it again if the cache stays in use), as lb_cpubatch_destroy() does.
 *
 * Context: No other thread may use @p during or after the call; not from
 * a callback on @p's decay thread.
 * Return: 0; %-EINVAL if @p is NULL; %-EDEADLK if called from @p's decay
 * thread (nothing changes); %-EBUSY if a slot was in use.
 */
int lb_pcp_destroy(struct lb_pcp *p);

/**
 * lb_pcp_alloc() - Take an object of an order from this CPU's slot.
 * @p: The cache.
 * @order: 0..max_order.
 * @out: Where to store the object.
 *
 * Pops the hot end of the slot's list; if it is empty, refills from the
 * back-end (one lock hold) the number of objects the tuner decides. If the
 * back-end gives nothing, drains every slot and refills once more (rule
 * (A) of the overview).
 *
 * Context: Any thread. Takes the slot lock; on a refill, also the
 * back-end lock and runs @alloc_bulk; on a retry, every slot's lock in
 * turn, never two at once.
 * Return: 0; %-EINVAL if @p is NULL, @out is NULL or @order is above
 * max_order (*@out untouched); %-ENOMEM if the back-end had nothing (or
 * failed) even after every slot was drained.
 */
int lb_pcp_alloc(struct lb_pcp *p, unsigned int order, void **out);

/**
 * lb_pcp_free() - Give an object back to this CPU's slot.
 * @p: The cache.
 * @obj: The object (see DOC for its size and alignment).
 * @order: Its order, 0..max_order.
 *
 * Pushes @obj on the hot end; if ``count`` reaches the tuner's ``high``,
 * flushes cold objects to the back-end in holds of at most
 * ``batch << 5`` units.
 *
 * A free that leaves ``count`` above ``high`` flushes at least the excess
 * (rule (C) of the overview).
 *
 * Context: Any thread. Takes the slot lock; on a flush, the back-end lock.
 * Return: 0; %-EINVAL if @p is NULL, @obj is NULL or not pointer-aligned,
 * or @order is above max_order; in debug mode %-EEXIST if @obj is cached
 * already (checked before the set grows), %-ENOMEM if the object set
 * could not grow. On error nothing changed.
 */
int lb_pcp_free(struct lb_pcp *p, void *obj, unsigned int order);

/**
 * lb_pcp_drain() - Return everything one slot caches to the back-end.
 * @p: The cache.
 * @cpu: The slot (folded like a CPU id: ``cpu % nr_slots``).
 *
 * Re-reads ``count`` under the slot lock until it is zero, moving at most
 * ``batch << 5`` units per hold (drain_pages_zone()).
 *
 * Context: Any thread. Takes that slot's lock and the back-end lock.
 * Return: units drained (>= 0), or %-EINVAL if @p is NULL or (then)
 * @cpu < 0.
 */
long lb_pcp_drain(struct lb_pcp *p, int cpu);

/**
 * lb_pcp_drain_all() - lb_pcp_drain() on every slot.
 * @p: The cache.
 *
 * Context: Any thread. Takes each slot's lock in turn.
 * Return: units drained (>= 0), or %-EINVAL if @p is NULL.
 */
long lb_pcp_drain_all(struct lb_pcp *p);

/**
 * lb_pcp_decay() - One decay tick for every slot.
 * @p: The cache.
 *
 * Per slot, lb_pcp_tune_decay() with ``high`` then capped at
 * ``high_max``, the drain down to ``high`` (to zero if the slot expired,
 * rule (B) of the overview) in holds of at most ``batch`` units, then
 * lb_pcp_tune_tick_end() (refresh_cpu_vm_stats() -> decay_pcp_high()).
 *
 * Context: Any thread. Takes each slot's lock in turn.
 * Return: 1 if another tick may still change something (as
 * decay_pcp_high()'s ``todo``; a slot drained by expiry counts), 0 if
 * not, %-EINVAL if @p is NULL.
 */
int lb_pcp_decay(struct lb_pcp *p);

/**
 * lb_pcp_tick() - Run lb_pcp_decay() if an interval has passed.
 * @p: The cache.
 *
 * Reads the configured clock; decays at most once per call.
 *
 * Context: Any thread; serialised with itself and the decay thread by an
 * internal mutex.
 * Return: 1 if a decay ran, 0 if not yet due, %-EINVAL if @p is NULL.
 */
int lb_pcp_tick(struct lb_pcp *p);

/**
 * lb_pcp_decay_thread_start() - Run lb_pcp_tick() from a background thread.
 * @p: The cache.
 *
 * The thread wakes every interval (every millisecond at most when an
 * injected clock is configured, so tests drive it by moving their clock)
 * and works while the owners of the slots sleep.
 *
 * Context: Any thread. Creates a thread.
 * Return: 0; %-EINVAL if @p is NULL; %-EEXIST if it already runs;
 * %-EAGAIN or %-ENOMEM from pthread_create().
 */
int lb_pcp_decay_thread_start(struct lb_pcp *p);

/**
 * lb_pcp_decay_thread_stop() - Stop and join the decay thread.
 * @p: The cache.
 *
 * Context: Any thread but the decay thread. May block for one tick.
 * Return: 0; %-EINVAL if @p is NULL; %-ENOENT if no thread runs;
 * %-EDEADLK if called on the decay thread (from a back-end callback of a
 * tick): it cannot join itself, and it keeps running.
 */
int lb_pcp_decay_thread_stop(struct lb_pcp *p);

/**
 * lb_pcp_stats() - Snapshot counters, per slot and summed.
 * @p: The cache.
 * @out: Whole-cache statistics (may be NULL).
 * @slots: Per-slot array (may be NULL).
 * @nr: Entries in @slots.
 *
 * Context: Any thread. Takes each slot lock briefly.
 * Return: the number of slots, or %-EINVAL if @p is NULL or (then) @slots
 * is NULL with @nr > 0.
 */
int lb_pcp_stats(struct lb_pcp *p, struct lb_pcp_stats *out,
		 struct lb_pcp_slot_stats *slots, unsigned int nr);

/**
 * lb_pcp_report() - Print the statistics as a table.
 * @f: Output stream.
 * @p: The cache.
 *
 * One row per slot that saw an allocation or free or holds objects
 * (allocs, frees, refills, flushes, decay drains, drains, steals, largest
 * hold in base units, count, high), then the total; the units moved by
 * cause; the slot count, ticks, back-end lock holds, retries, expiries and
 * refused double frees. Built from lb_pcp_stats() alone.
 *
 * Context: Any thread not holding a lock of @p; takes each slot lock in
 * turn.
 * Return: 0; %-EINVAL if @f or @p is NULL (nothing written); %-ENOMEM if
 * the per-slot snapshot cannot be allocated (nothing written); %-EIO if
 * writing failed.
 */
int lb_pcp_report(FILE *f, struct lb_pcp *p);

/**
 * lb_pcp_report_json() - Print the statistics as one JSON object.
 * @f: Output stream.
 * @p: The cache.
 *
 * ``{"nr_slots", "ticks", "backend_locks", "total", "slots"}``: "total"
 * and each element of "slots" (every slot, in order) carry the fields of
 * &struct lb_pcp_slot_stats. One line, newline-terminated.
 *
 * Context: As lb_pcp_report().
 * Return: As lb_pcp_report().
 */
int lb_pcp_report_json(FILE *f, struct lb_pcp *p);

/**
 * lb_pcp_slot_state() - Copy one slot's tuner state.
 * @p: The cache.
 * @slot: Slot index, < nr_slots.
 * @out: Where to copy.
 *
 * Context: Any thread. Takes the slot lock briefly.
 * Return: 0, or %-EINVAL if @p or @out is NULL or @slot is out of range.
 */
int lb_pcp_slot_state(struct lb_pcp *p, unsigned int slot,
		      struct lb_pcp_tune_state *out);

/**
 * lb_pcp_backend_lock() - The cache's back-end lock, for its statistics.
 * @p: The cache.
 *
 * Context: Any thread.
 * Return: the lock, or NULL if @p is NULL.
 */
struct lb_lock *lb_pcp_backend_lock(struct lb_pcp *p);

/**
 * struct lb_pcp_size - Derived sizing.
 * @batch: Transfer unit.
 * @high_min: Lower bound of high.
 * @high_max: Upper bound of high.
 */
struct lb_pcp_size {
	int batch;
	int high_min;
	int high_max;
};

/**
 * lb_pcp_size() - Size a cache from its pool the way Linux sizes a zone.
 * @pool_units: Base units the back-end manages (zone_managed_pages()).
 * @low_units: Units of the pool's low reserve (low_wmark_pages()); 0
 *	means ``pool_units / 1024`` (about the default low watermark).
 * @nr_cpus: CPUs sharing the pool (>= 1).
 * @units_per_mib: Base units per MiB (256 for 4 KiB pages); caps the batch
 *	at 1 MiB of units as zone_batchsize() does.
 * @out: The result.
 *
 * zone_batchsize(): ``b = min(pool >> 10, units_per_mib) / 4``, at least 1,
 * ``batch = rounddown_pow_of_two(b + b / 2) - 1`` (at least 1).
 * zone_highsize(): ``high_min = max(low / nr_cpus, batch << 2)``,
 * ``high_max = max(pool / 8 / nr_cpus, batch << 2)``
 * (``MIN_PERCPU_PAGELIST_HIGH_FRACTION`` = 8; the kernel divides by the
 * CPUs of the zone's node).
 *
 * Context: Pure; any thread.
 * Return: 0, or %-EINVAL if @out is NULL, @nr_cpus or @pool_units is 0,
 * or @units_per_mib is 0.
 */
int lb_pcp_size(uint64_t pool_units, uint64_t low_units, unsigned int nr_cpus,
		unsigned int units_per_mib, struct lb_pcp_size *out);

#ifdef __cplusplus
}
#endif

#endif /* LOCKBATCH_PCP_H */
