/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#ifndef LOCKBATCH_CPUBATCH_H
#define LOCKBATCH_CPUBATCH_H

#include <stdint.h>
#include <stdio.h>

#include <lockbatch/cpu.h>
#include <lockbatch/cpubatch_op.h>
#include <lockbatch/wbatch.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * DOC: Per-CPU batches in front of a locked back-end
 *
 * &struct lb_cpubatch keeps one size-weighted batch (&struct lb_wbatch) per
 * slot, one slot per CPU, in front of a back-end behind a hot lock (an LRU
 * list, a free list, a pool). lb_cpubatch_add() appends an object to the
 * current CPU's batch (in a restartable sequence, or under that slot's own
 * spinlock: "Owner path" below); when the batch is
 * full by entries or by weight it is flushed:
 *
 * 1. under the slot lock, the batch is swapped out (copied and emptied) and
 *    its objects' &struct lb_node are marked "not cached";
 * 2. with no slot lock held, the back-end lock is taken once per run of
 *    objects that share a back-end, the run is committed, the lock dropped;
 * 3. the @after callback runs for the run, outside the back-end lock
 *    (secondary work: "mm: unqueue deferred split folios outside the
 *    lruvec lock");
 * 4. the batch's references are dropped (@put).
 *
 * So up to 31 objects cost one back-end lock acquisition instead of 31,
 * and, unlike Linux 6.12 where every large folio flushes the batch, small
 * multi-unit objects are batched too (%LB_CPUBATCH_WEIGHTED).
 *
 * Lock order: a slot lock is never held while a back-end lock is taken,
 * and a back-end lock is never held while a slot lock is taken, with one
 * exception: an add made from inside @commit (see lb_cpubatch_add()) takes a
 * slot lock under the back-end lock, which is safe because no path takes
 * a back-end lock under a slot lock.
 *
 * Slot choice: the current CPU (glibc's rseq ``cpu_id``, else
 * sched_getcpu(); or the injected &lb_cpu_fn) modulo the slot count; an
 * unknown (negative) id selects slot 0. The id is a hint: the slot lock
 * makes any choice correct, also when the thread migrates between calls.
 * Slots belong to CPUs, not threads: a thread that exits leaves its cached
 * objects in the slot, owned by it, until a later flush of that slot (the
 * next add that fills it, a drain, destroy) commits them.
 *
 * Owner path, fixed at creation and reported in &lb_cpubatch_stats.path:
 *
 * * rseq path, where lb_cpu_path() is %LB_CPU_PATH_RSEQ (x86-64, glibc
 *   registered rseq, no ThreadSanitizer, no ``LB_RSEQ=0``), there is a slot
 *   per possible CPU id, the CPU source is not injected, @max_nr > 1 and
 *   %LB_CPUBATCH_F_LOCK_PATH is not set: an add that does not flush is a
 *   restartable sequence on the current CPU's slot, with no lock and no
 *   atomic instruction. Every other access to a slot (an add that flushes
 *   or finds the slot stopped, drains, settle, disable, destroy, stats)
 *   takes the slot lock and stops the slot; it fences the slot's CPU
 *   (membarrier, about 10 us when a thread of ours runs there) once per
 *   slot it writes, and disable fences every slot.
 * * lock path everywhere else: every add takes the slot lock. A process
 *   with a ThreadSanitizer runtime (a client built with
 *   ``-fsanitize=thread``) is on the lock path too, with the slot lock
 *   annotated for TSan: it cannot see the ordering a section and a fence
 *   make.
 *
 * The path and every per-instance constant the add tests (caps, mode,
 * whether @get is set, whether TSan is present) are fixed by
 * lb_cpubatch_create(), so an add tests one field of the instance to
 * choose its code.
 *
 * Traps of the rseq path: a thread with no rseq registration (raw clone(),
 * rseq off: ``GLIBC_TUNABLES=glibc.pthread.rseq=0``) or a CPU id at or
 * above the slot count adds on the lock path; threads that existed before
 * the library was loaded were registered by glibc and use the rseq path.
 * fork() waits for the drain mutex and every slot lock (so for every
 * stopped slot) in a prepare handler, and the child starts with every slot
 * running; flushes other threads had swapped out are not finished in the
 * child (their objects stay the parent's) and its drains do not wait for
 * them; those of the forking thread (a fork() from @after or @put) go on
 * in the child, which waits for them as the parent does. The child counts
 * each flush it will never finish as abandoned: in
 * &lb_cpubatch_slot_stats.flushes_abandoned, and its objects in
 * @objs_abandoned, of the slot that swapped it out; they are neither
 * committed nor in flight there. A flush that had completed its commit and
 * @put is committed in the child too: the prepare handler also waits out
 * every flush's final accounting (a few counter updates under a per-slot
 * spinlock), so each in-flight flush is counted once, as committed or as
 * abandoned. So after lb_cpubatch_drain_all() in the child (once the
 * forking thread's own flushes returned) every identity above holds, with
 * &lb_cpubatch_stats.flushes_inflight 0 and
 * &lb_cpubatch_stats.backend_locks counting the holds of committed flushes
 * only (an abandoned flush's holds were the parent's). The counters of a
 * grandchild add its own abandoned flushes to those it inherited. The
 * drain_all callers other threads had waiting for the drain mutex at
 * fork() are gone too: the child does not count them in
 * &lb_cpubatch_drain_stats.drain_all_calls, so that @drain_all_calls ==
 * @drain_all_passes + @drain_all_coalesced holds there. A back-end lock
 * is the caller's: register its pthread_atfork() handlers before creating
 * the first instance, so that ours run first. Do not
 * single-step or break inside lb_cpubatch_add() in a debugger: its section
 * (inline in the entry) restarts at every step, and a breakpoint inside it
 * that the debugger steps over out of line (gdb's displaced stepping, its
 * default) runs the rest unprotected, so a migration there can corrupt a
 * batch. Step over the call, or run with ``LB_RSEQ=0``.
 *
 * Signal handlers: no call of this header is async-signal-safe. An add may
 * take a slot lock or a back-end lock, and a handler that interrupts their
 * holder on the same thread deadlocks. A handler may call
 * lb_cpubatch_add() only while the interrupted thread is outside every
 * call on that instance and every @ops callback (e.g. the signal is
 * blocked around them); a signal that interrupts a section restarts it,
 * which is harmless.
 *
 * References: the batch holds one reference on every object it caches; the
 * optional @get is called when an object enters a batch and @put once it
 * has been committed and @after has run. With %LB_CPUBATCH_F_CALLER_REFS
 * it holds none and the caller's own lock orders everything (the rules,
 * and batches of moves, rotations and deletions besides adds, are in
 * <lockbatch/cpubatch_op.h>).
 *
 * Concurrency (X = needs external exclusion, - = safe together; drain_obj
 * stands for lb_cpubatch_drain_obj() and lb_cpubatch_drain_objs(), settle for both
 * settle calls, drain_all for lb_cpubatch_drain_all() and its forced variant,
 * disable for lb_cpubatch_disable() and lb_cpubatch_enable()):
 *
 * ===========  ===  ===========  =========  ======  =========  =======  =====  =======
 *              add  drain_local  drain_obj  settle  drain_all  disable  stats  destroy
 * ===========  ===  ===========  =========  ======  =========  =======  =====  =======
 * add           -        -           -         -        -          -       -       X
 * drain_local   -        -           -         -        -          -       -       X
 * drain_obj     -        -           -         -        -          -       -       X
 * settle        -        -           -         -        -          -       -       X
 * drain_all     -        -           -         -        -          -       -       X
 * disable       -        -           -         -        -          -       -       X
 * stats         -        -           -         -        -          -       -       X
 * destroy       X        X           X         X        X          X       X       X
 * ===========  ===  ===========  =========  ======  =========  =======  =====  =======
 *
 * Callbacks and other instances: from inside @commit, @after or @put of
 * an instance P, lb_cpubatch_add(), lb_cpubatch_enable() and lb_cpubatch_stats() of P
 * may be called; every other call on P returns %-EDEADLK there (it would
 * take P's back-end lock again or wait for the caller's own flush). Every
 * public call of *another* instance Q may be made, callbacks nesting up to
 * %LB_CPUBATCH_NEST_MAX flushes deep on one thread (beyond: %-ELOOP), with
 * these rules:
 *
 * * An add that has to flush while the thread holds a back-end lock (from
 *   inside any @commit) does not take another one: its swapped-out batch
 *   is queued on the thread (at most %LB_CPUBATCH_DEFER_MAX batches, else the
 *   add returns %-EAGAIN) together with its instance, and committed through
 *   that instance's back-end as soon as the thread holds no back-end lock,
 *   before the outermost flush returns. So adds from callbacks may chain
 *   and cycle between instances freely (a cycle must end: each add is a
 *   new flush), and every object reaches its own back-end exactly once per
 *   add.
 * * Until its queued batches are committed, the thread may not drain,
 *   settle, disable or destroy the instance they belong to (%-EDEADLK), nor
 *   an instance whose drain_all pass or flush it is running.
 * * The drain, settle, disable and destroy calls of Q run Q's flushes
 *   synchronously: called from P's @commit, they take Q's back-end lock
 *   under P's, and their waits wait for Q's flushes on other threads. The
 *   caller must keep that order acyclic between threads (no Q callback
 *   that drains P while a P callback drains Q), as with any nested locks.
 *
 * Errors: a call that can fail for several reasons checks them in one
 * order, reports the first that applies, and changes nothing:
 *
 * 1. arguments (%-EINVAL): NULL pointers, values out of range, checked for
 *    every argument (every entry of an array) before anything else;
 * 2. ownership of the node or nodes: never added (%-ENOENT, or "nothing to
 *    drain"), last cached by another instance (%-EXDEV), holding a slot
 *    number the instance cannot have written (%-EINVAL);
 * 3. calling context: %-EDEADLK, %-ELOOP (see above);
 * 4. what the back-end offers: %-EOPNOTSUPP;
 * 5. resources: %-ENOMEM, %-ENOSPC;
 * 6. state: %-EEXIST, %-EBUSY, %-EOVERFLOW, %-ERANGE, %-EAGAIN.
 *
 * Statistics identities (lb_cpubatch_stats()), exact whenever no flush is in
 * flight (in between, the in-flight flushes make up the difference): per
 * slot and in total, @adds == @objs_flushed + @nr_cached, @objs_flushed ==
 * @objs_committed + @objs_abandoned, the flushes of all causes ==
 * @flushes_committed + @flushes_abandoned (the abandoned ones are 0 but in
 * a fork() child, see below); in
 * total, &lb_cpubatch_stats.backend_locks == @flushes_committed when every
 * batch's objects share one back-end (always without @backend_of; each
 * further back-end in a batch adds one lock hold), and
 * &lb_cpubatch_stats.flushes_inflight == 0.
 *
 * Drain on demand (second half of this header): lb_cpubatch_drain_obj() and
 * lb_cpubatch_drain_objs() flush only the slots holding given objects;
 * lb_cpubatch_settle() checks an object's reference count against what the
 * caller can account for and flushes the one slot holding it only when the
 * batch's reference is the whole surplus; lb_cpubatch_drain_all() flushes
 * every slot, concurrent callers sharing passes; lb_cpubatch_disable() turns
 * batching off.
 *
 * Sources: mm/swap.c folio_add_lru(), folio_batch_add_and_move(),
 * folio_batch_move_lru(), lru_add_drain(), __lru_add_drain_all(),
 * lru_cache_disable(); "mm: allow smaller large folios to use lru_cache"
 * (RFC v3, 2026).
 */

/**
 * define LB_CPUBATCH_NEST_MAX - Flushes one thread may nest through callbacks (8).
 *
 * A callback of one instance that calls into another instance, whose flush
 * runs callbacks that call into a third, and so on, up to this many
 * flushes deep. Deeper adds are queued (as from @commit); deeper drain,
 * settle, disable and destroy calls return %-ELOOP.
 */
#define LB_CPUBATCH_NEST_MAX 8

/**
 * define LB_CPUBATCH_DEFER_MAX - Deferred batches one thread may owe (16).
 *
 * Adds made from inside @commit (any instance's) that have to flush queue
 * their batch on the thread; a further add finding this many queued
 * returns %-EAGAIN.
 */
#define LB_CPUBATCH_DEFER_MAX 16

/**
 * enum lb_cpubatch_mode - How adds are batched.
 * @LB_CPUBATCH_BASELINE: No batching: every add takes the back-end lock for
 *                    that one object (a batch of one).
 * @LB_CPUBATCH_BYPASS_LARGE: Linux 6.12: single-unit objects are batched by
 *                        entries; an object of weight > 1 is appended and
 *                        flushes the batch at once.
 * @LB_CPUBATCH_WEIGHTED: Size-weighted: batched by entries and by weight; an
 *                    object whose weight reaches the weight cap never
 *                    waits.
 */
enum lb_cpubatch_mode {
	LB_CPUBATCH_BASELINE,
	LB_CPUBATCH_BYPASS_LARGE,
	LB_CPUBATCH_WEIGHTED,
};

/**
 * enum lb_flush_cause - Why a batch was flushed.
 * @LB_FLUSH_FULL: The add filled the batch by entries (or, in
 *                 %LB_CPUBATCH_BASELINE, every add).
 * @LB_FLUSH_WEIGHT: The add took the batch over its weight cap.
 * @LB_FLUSH_BYPASS: The object may not wait (weight > 1 in
 *                   %LB_CPUBATCH_BYPASS_LARGE, weight >= cap in
 *                   %LB_CPUBATCH_WEIGHTED).
 * @LB_FLUSH_DRAIN_LOCAL: lb_cpubatch_drain_local().
 * @LB_FLUSH_DRAIN_OBJ: a targeted drain of the slot holding one object.
 * @LB_FLUSH_DRAIN_OBJS: a batched targeted drain of several objects.
 * @LB_FLUSH_DRAIN_ALL: a drain of every slot.
 * @LB_FLUSH_DISABLE: batching was disabled.
 * @LB_FLUSH_DESTROY: lb_cpubatch_destroy().
 * @LB_FLUSH_NR: Number of causes.
 */
enum lb_flush_cause {
	LB_FLUSH_FULL,
	LB_FLUSH_WEIGHT,
	LB_FLUSH_BYPASS,
	LB_FLUSH_DRAIN_LOCAL,
	LB_FLUSH_DRAIN_OBJ,
	LB_FLUSH_DRAIN_OBJS,
	LB_FLUSH_DRAIN_ALL,
	LB_FLUSH_DISABLE,
	LB_FLUSH_DESTROY,
	LB_FLUSH_NR,
};

/**
 * struct lb_node - Per-object tracking, embedded in the caller's object.
 * @slot: 0 when the object is not cached, else the index + 1 of the slot
 *        whose batch holds it. Written only under that slot's lock (set
 *        when the object enters the batch, cleared when the batch is
 *        swapped out for commit); readers without the lock must recheck
 *        under it.
 * @home: Index + 1 of the slot that cached the object last, in the bits
 *        of %LB_NODE_HOME_SLOT_MASK (read it with LB_NODE_HOME_SLOT());
 *        never cleared. The bits above are the library's: a generation,
 *        and a mark set when the object enters another slot's batch while
 *        a flush from its home is still in flight (that flush then holds
 *        it elsewhere than @home says), or enters a batch of an instance
 *        other than @owner (a flush of that instance from before it left
 *        may still hold it), cleared by a drain that waited for every
 *        slot.
 * @owner: Id of the &struct lb_cpubatch that cached the object last (0: never
 *         added). No two live instances share an id; ids are 16 bits and
 *         handed out cyclically (as idr_alloc_cyclic()), so a destroyed
 *         instance's id comes back only once the search for a free id has
 *         gone round all 65535. A node such an instance left behind then reads
 *         as the new instance's (never cached there: destroy committed it,
 *         and no flush of the new instance holds it): the new instance adds
 *         it correctly, and its drains report it "not cached" (or %-EINVAL
 *         if its home slot is beyond the new slot count) rather than
 *         %-EXDEV. Give such a node %LB_NODE_INIT again to be told apart.
 *
 * 8 bytes: @home first, then the two 16-bit fields (a slot index + 1 is at
 * most %LB_CPU_SLOTS_MAX). Zero-initialise it (%LB_NODE_INIT) before the
 * first add.
 *
 * On the rseq path the adding thread sets @home and @slot before each
 * attempt of its section (plain stores, ordered before the committing
 * store), so a reader may briefly see the slot of an attempt that was
 * restarted: it checks under the slot lock, finds the node not in that
 * batch, and the add is not done yet. A node that is not cached is
 * checked with a plain load there, so two threads adding one node at once
 * is a caller's bug the rseq path does not report.
 *
 * Memory ordering: @slot is set by a compare-and-swap (a full barrier)
 * under the slot lock when the object enters a batch, and cleared under the
 * same lock when the batch is swapped out, after the slot's in-flight count
 * was raised behind a store fence. A reader without the lock may take 0 to
 * mean "in no batch" (possibly between swap-out and @put of a flush that
 * the home slot's in-flight count still shows); a non-zero value is a hint,
 * to be checked again under that slot's lock, where it cannot change.
 * @home and @owner are single-copy-atomic stores made under the slot lock.
 * Nothing in the library touches the node after the batch's @put: the
 * object may be freed from then on.
 */
struct lb_node {
	uint32_t home;
	uint16_t slot;
	uint16_t owner;
};

/**
 * define LB_NODE_HOME_SLOT_MASK - The bits of &lb_node.home that hold the slot.
 *
 * Above %LB_CPU_SLOTS_MAX, so every slot index + 1 fits.
 */
#define LB_NODE_HOME_SLOT_MASK 0x1fffu

/**
 * define LB_NODE_HOME_SLOT - The slot index + 1 in an &lb_node.home value.
 * @home: The value (0: never added).
 */
#define LB_NODE_HOME_SLOT(home) ((home) & LB_NODE_HOME_SLOT_MASK)

/**
 * define LB_NODE_INIT - Static initializer for &struct lb_node.
 */
#define LB_NODE_INIT { 0, 0, 0 }

/**
 * struct lb_backend_ops - What a back-end provides.
 * @backend_of: The back-end an object belongs to (e.g. its lruvec). NULL:
 *              every object belongs to &lb_cpubatch_conf.backend, which
 *              must then be set. What it returns, NULL included, is
 *              what @lock, @commit and @apply are given.
 * @lock: Take the back-end's lock (e.g. lb_lock_acquire()). Required.
 * @unlock: Drop it. Required.
 * @commit: Move @n objects into the back-end; called with its lock held.
 *          Required. May call lb_cpubatch_add() (see there).
 * @after: Secondary work on the committed run, after @unlock, with no lock
 *         of this library held. Optional.
 * @get: Take the batch's reference on an object entering a batch; called
 *       under the slot lock on the lock path, with no lock before the
 *       section on the rseq path; must not block. Optional.
 * @put: Drop the batch's reference after commit and @after. Optional.
 * @refcount: The object's current reference count (for settle). Optional.
 * @apply: The operation batches' move function (&enum lb_op_step): unlink,
 *         link after a move, or rotate @n objects; called with the
 *         back-end's lock held, as @commit. Required by lb_cpubatch_queue()
 *         for every operation but %LB_OP_ADD (else %-EOPNOTSUPP).
 *         Optional.
 * @target_of: The back-end a %LB_OP_MOVE entry's object moves to, asked at
 *             flush in phase 1 (a move to the object's own back-end is one
 *             %LB_STEP_MOVE there) and again in phase 2 for a move
 *             elsewhere: it must give the same answer both times. NULL:
 *             every move stays in the object's own back-end. Optional.
 *
 * Members added after @refcount are zero in positional initializers
 * written before them: such a back-end has no operation batches.
 */
struct lb_backend_ops {
	void *(*backend_of)(void *obj);
	void (*lock)(void *backend);
	void (*unlock)(void *backend);
	void (*commit)(void *backend, void **objs, unsigned int n);
	void (*after)(void *backend, void **objs, unsigned int n);
	void (*get)(void *obj);
	void (*put)(void *obj);
	long (*refcount)(void *obj);
	void (*apply)(void *backend, enum lb_op_step step, void **objs,
		      unsigned int n);
	void *(*target_of)(void *obj);
};

/**
 * struct lb_cpubatch_conf - Creation parameters.
 * @nr_slots: Number of slots; 0 means lb_cpu_count() (at most
 *            %LB_CPUBATCH_MAX_SLOTS of them). Above it: %-EINVAL.
 * @mode: %LB_CPUBATCH_BASELINE (0), %LB_CPUBATCH_BYPASS_LARGE or
 *        %LB_CPUBATCH_WEIGHTED (%LB_CPUBATCH_CONF_INIT's choice).
 * @max_nr: Entry cap per batch, 1..%LB_WBATCH_MAX; 0 means 31.
 * @max_weight: Weight cap per batch in base units (%LB_CPUBATCH_WEIGHTED
 *              only), 1..%LB_WBATCH_WEIGHT_MAX; 0 means 31.
 * @ops: The back-end operations; copied at creation.
 * @backend: The back-end passed to @ops when @ops->backend_of is NULL.
 * @cpu_fn: CPU-id source; NULL means lb_cpu_current(). An injected
 *          source puts the instance on the lock path.
 * @cpu_arg: Argument for @cpu_fn.
 * @flags: %LB_CPUBATCH_F_LOCK_PATH, %LB_CPUBATCH_F_CALLER_REFS or 0;
 *         other bits: %-EINVAL.
 */
struct lb_cpubatch_conf {
	unsigned int nr_slots;
	enum lb_cpubatch_mode mode;
	unsigned int max_nr;
	uint32_t max_weight;
	const struct lb_backend_ops *ops;
	void *backend;
	lb_cpu_fn cpu_fn;
	void *cpu_arg;
	unsigned int flags;
};

/**
 * define LB_CPUBATCH_F_LOCK_PATH - Keep this instance on the lock path.
 *
 * Owner adds take the slot lock even where the rseq path is available
 * (see "Owner path" above); ``LB_RSEQ=0`` in the environment does the same
 * for every instance of the process.
 */
#define LB_CPUBATCH_F_LOCK_PATH 0x1u
/**
 * define LB_CPUBATCH_F_CALLER_REFS - The batch takes no reference; the caller's lock orders everything.
 *
 * The caller-protected mode of the "Operation batches and caller-protected
 * references" DOC block (<lockbatch/cpubatch_op.h>): lb_cpubatch_create()
 * refuses @get or @put with it (%-EINVAL), and the caller drains, settles
 * (lb_cpubatch_settle_fn()) or unqueues (lb_cpubatch_unqueue()) an object
 * before it unlinks or frees it.
 */
#define LB_CPUBATCH_F_CALLER_REFS 0x2u
/**
 * define LB_CPUBATCH_F_ALL - Every flag lb_cpubatch_create() accepts.
 */
#define LB_CPUBATCH_F_ALL (LB_CPUBATCH_F_LOCK_PATH | LB_CPUBATCH_F_CALLER_REFS)

/**
 * define LB_CPUBATCH_CONF_INIT - Static initializer of &struct lb_cpubatch_conf.
 * @ops: The back-end operations (required).
 * @backend: The back-end passed to them; required unless @ops->backend_of
 *            is set (lb_cpubatch_create() refuses neither: %-EINVAL).
 *
 * %LB_CPUBATCH_WEIGHTED, every other field 0: one slot per CPU, caps
 * 31/31, lb_cpu_current(). Valid C and C++ (positional).
 */
#define LB_CPUBATCH_CONF_INIT(ops, backend)				\
	{ 0, LB_CPUBATCH_WEIGHTED, 0, 0, (ops), (backend), 0, 0, 0 }

/**
 * define LB_CPUBATCH_MAX_SLOTS - Largest slot count accepted.
 */
#define LB_CPUBATCH_MAX_SLOTS LB_CPU_SLOTS_MAX

/**
 * struct lb_cpubatch_slot_stats - Counters of one slot (or their sum).
 * @adds: Successful lb_cpubatch_add() calls and %LB_OP_ADD operations
 *        (derived: @objs_flushed + @nr_cached, as every cached object
 *        leaves its slot by a flush; with operation batches, plus
 *        @merged and @cancelled, less the other operations' @ops; an add
 *        refused with %-EAGAIN is not counted).
 * @weight_added: Summed weight of the entries queued (every operation's),
 *                in base units: @weight_flushed + @weight_cached + the
 *                weight of the @cancelled entries.
 * @flushes: Non-empty flushes, by &enum lb_flush_cause, counted when the
 *           batch is swapped out.
 * @flushes_committed: Flushes whose commit and @put have completed.
 * @objs_flushed: Objects swapped out by flushes.
 * @objs_committed: Objects of the completed flushes.
 * @weight_flushed: Summed weight of @objs_flushed, in base units.
 * @nr_cached: Objects in the batch when the snapshot was taken.
 * @weight_cached: Their summed weight.
 * @flushes_abandoned: Flushes a fork() child inherited swapped out but
 *                     not finished, run by threads the child does not
 *                     have (the overview's fork() paragraph); 0 in a
 *                     process that never forked with flushes in flight.
 * @objs_abandoned: Their objects (the parent's; never committed in the
 *                  child).
 * @ops: Operations queued, by &enum lb_op (%LB_OP_ADD: @adds), composed
 *       ones included.
 * @ops_flushed: Entries swapped out by flushes, by the operation they
 *               held then (after composition); they sum to @objs_flushed.
 * @merged: Operations composed with a waiting entry instead of adding one
 *          (lb_cpubatch_queue() returning %LB_OP_MERGED or %LB_OP_CANCELLED).
 * @cancelled: Entries removed from a batch before their flush (a
 *             cancelling %LB_OP_DEL, lb_cpubatch_unqueue()).
 */
struct lb_cpubatch_slot_stats {
	uint64_t adds;
	uint64_t weight_added;
	uint64_t flushes[LB_FLUSH_NR];
	uint64_t flushes_committed;
	uint64_t objs_flushed;
	uint64_t objs_committed;
	uint64_t weight_flushed;
	uint64_t nr_cached;
	uint64_t weight_cached;
	uint64_t flushes_abandoned;
	uint64_t objs_abandoned;
	uint64_t ops[LB_OP_NR];
	uint64_t ops_flushed[LB_OP_NR];
	uint64_t merged;
	uint64_t cancelled;
};

/**
 * struct lb_cpubatch_drain_stats - Counters of the drain-on-demand paths.
 * @settled: lb_cpubatch_settle() calls that returned %LB_SETTLED.
 * @drained: ... that returned %LB_DRAINED (each flushed exactly one slot).
 * @busy: ... that returned %LB_BUSY (none flushed anything).
 * @settle_waits: Settles that waited for in-flight flushes of the object's
 *                home slot before deciding.
 * @drain_all_calls: lb_cpubatch_drain_all(), lb_cpubatch_drain_all_forced() and
 *                   lb_cpubatch_disable() calls that ran or shared a pass.
 * @drain_all_passes: Passes run (each under the drain mutex).
 * @drain_all_forced: Forced passes among them.
 * @drain_all_coalesced: Calls that returned on a pass another caller ran
 *                       (@drain_all_calls = @drain_all_passes +
 *                       @drain_all_coalesced once callers have returned).
 * @drain_all_slots_touched: Slot locks taken by passes, summed; slots a
 *                           non-forced pass skipped as empty are not
 *                           counted. Per pass: divide by @drain_all_passes.
 * @drain_all_slots_max: Most slots a single pass touched.
 * @disable_depth: Current lb_cpubatch_disable() nesting count (0: enabled).
 *
 * Flushes by cause (%LB_FLUSH_DRAIN_OBJ for lb_cpubatch_drain_obj() and the
 * flush of a DRAINED settle, %LB_FLUSH_DRAIN_OBJS, %LB_FLUSH_DRAIN_ALL,
 * %LB_FLUSH_DISABLE) are in &struct lb_cpubatch_slot_stats.
 */
struct lb_cpubatch_drain_stats {
	uint64_t settled;
	uint64_t drained;
	uint64_t busy;
	uint64_t settle_waits;
	uint64_t drain_all_calls;
	uint64_t drain_all_passes;
	uint64_t drain_all_forced;
	uint64_t drain_all_coalesced;
	uint64_t drain_all_slots_touched;
	uint64_t drain_all_slots_max;
	uint32_t disable_depth;
};

/**
 * struct lb_cpubatch_stats - Whole-object statistics.
 * @total: Sum of every slot's counters.
 * @backend_locks: Back-end lock acquisitions made by flushes (one per run
 *                 of objects sharing a back-end); the only lock holds the
 *                 library takes.
 * @flushes_inflight: Flushes between swap-out and the end of @put (0 when
 *                    nothing is in flight).
 * @nr_slots: Number of slots.
 * @cpu_src: The CPU-id source in use (for the default source: the one the
 *           calling thread uses; %LB_CPU_SRC_GETCPU when glibc's rseq
 *           registration is off, e.g. ``GLIBC_TUNABLES=glibc.pthread.rseq=0``).
 * @drain: Settle outcomes and drain_all passes; see
 *         &struct lb_cpubatch_drain_stats.
 * @path: The owner path of the instance, fixed at creation:
 *        %LB_CPU_PATH_RSEQ or %LB_CPU_PATH_LOCK.
 */
struct lb_cpubatch_stats {
	struct lb_cpubatch_slot_stats total;
	uint64_t backend_locks;
	uint64_t flushes_inflight;
	unsigned int nr_slots;
	enum lb_cpu_src cpu_src;
	struct lb_cpubatch_drain_stats drain;
	enum lb_cpu_path path;
};

struct lb_cpubatch;

/**
 * lb_cpubatch_create() - Allocate per-CPU batches in front of a back-end.
 * @pcp: Where to store the new object.
 * @conf: Parameters; see &struct lb_cpubatch_conf.
 *
 * Context: Any thread. Allocates (one cache-aligned slot per CPU).
 * Return: 0, %-EINVAL if @pcp, @conf, @conf->ops, @ops->lock, @ops->unlock
 * or @ops->commit is NULL, the mode is unknown, a cap or the slot count
 * is out of range, %LB_CPUBATCH_F_CALLER_REFS comes with @ops->get or
 * @ops->put, or neither @conf->backend nor @ops->backend_of is set (a
 * flush would have nowhere to deliver its objects); %-ENOMEM if memory ran out; %-ENOSPC if 65535 instances
 * are alive (every owner id of &lb_node.owner is taken). *@pcp is set only
 * on success.
 */
int lb_cpubatch_create(struct lb_cpubatch **pcp, const struct lb_cpubatch_conf *conf);

/**
 * lb_cpubatch_destroy() - Drain every slot and free the object.
 * @pc: The object.
 *
 * Every cached object is committed first (cause %LB_FLUSH_DESTROY):
 * nothing is lost. The caller must ensure no other thread uses @pc during
 * or after the call; a slot found locked or with a flush in flight (a
 * concurrent user) makes the call fail with nothing drained or freed.
 *
 * Context: Takes slot and back-end locks; runs @commit, @after and @put.
 * Not from a callback of @pc.
 * Return: 0, %-EINVAL if @pc is NULL, %-EDEADLK if called from a callback
 * of @pc (or with a batch of @pc deferred on this thread), %-ELOOP at the
 * nesting bound, %-EBUSY if a slot was in use.
 */
int lb_cpubatch_destroy(struct lb_cpubatch *pc);

/**
 * lb_cpubatch_add() - Hand an object to the back-end through the current CPU's batch.
 * @pc: The object.
 * @obj: The object to add; not NULL.
 * @n: Its tracking node; must not be cached already.
 * @weight: Its size in base units, 1..%LB_WBATCH_WEIGHT_MAX.
 *
 * The batch takes a reference (@get), appends @obj and, per the mode's
 * rule, may flush (swap out, commit under the back-end lock, @after,
 * @put). An add made from inside @commit (of @pc or of any other
 * instance, on the same thread) never takes a back-end lock: if it has to
 * flush, the swapped-out batch is queued with @pc and committed through
 * @pc's back-end once the thread holds no back-end lock (see the DOC block
 * above), so every object still reaches its back-end exactly once. An add
 * from @after or @put flushes at once, unless %LB_CPUBATCH_NEST_MAX flushes
 * are already nested on the thread (then it is queued too). While batching
 * is disabled (lb_cpubatch_disable()) every add flushes its batch at once
 * (cause %LB_FLUSH_DISABLE unless a size rule applies too); the disabled
 * count is read under the slot lock, one load on the fast path.
 *
 * Context: Any thread. Takes the slot lock; may take the back-end lock
 * (never both at once). Does not sleep unless the callbacks do.
 * Return:
 * * 0 - @obj waits in a batch.
 * * 1 - this call flushed the batch; @obj has been committed (or, for an
 *   add made from inside @commit, is queued behind the outer flush).
 * * %-EINVAL - @pc, @obj or @n is NULL, or @weight is 0 or above
 *   %LB_WBATCH_WEIGHT_MAX. Nothing changed.
 * * %-EEXIST - @n is already cached in a batch (an entry of any &enum
 *   lb_op), or a flush is applying an operation to it (see
 *   <lockbatch/cpubatch_op.h>; lb_cpubatch_queue() with %LB_OP_ADD waits
 *   or flushes instead). Nothing changed.
 * * %-EAGAIN - an add that had to be queued found %LB_CPUBATCH_DEFER_MAX
 *   batches already queued on this thread. Nothing changed (its @get is
 *   undone by @put).
 */
int lb_cpubatch_add(struct lb_cpubatch *pc, void *obj, struct lb_node *n,
		uint32_t weight);

/**
 * lb_cpubatch_drain_local() - Flush the current CPU's batch.
 * @pc: The object.
 *
 * When it returns, every object that was in the current slot's batch when
 * the call began has been committed and its @put has run, also those
 * another thread swapped out just before and is still committing (the
 * call waits for them, as lb_cpubatch_drain_all() does for every slot),
 * and no earlier flush of such an object holds it any more (one that was
 * re-added here while a flush of another slot still held it makes the
 * call wait for every slot's flushes, as lb_cpubatch_drain_obj() does).
 *
 * Context: Any thread but a callback of @pc. Takes the slot lock, then (if
 * the batch held anything) the back-end lock; may wait for flushes of the
 * slot on other threads (taking the drain mutex).
 * Return: the number of objects this call flushed (0 if the batch was
 * empty), or %-EINVAL if @pc is NULL, %-EDEADLK if called from a callback
 * of @pc, %-ELOOP at the nesting bound.
 */
int lb_cpubatch_drain_local(struct lb_cpubatch *pc);

/**
 * lb_cpubatch_stats() - Snapshot the counters.
 * @pc: The object.
 * @out: Totals (and slot count, CPU-id source); may be NULL.
 * @slots: Per-slot counters, @nr entries; may be NULL.
 * @nr: Entries in @slots; slots beyond it are summed into @out only.
 *
 * Each slot's batch counters are read under its lock, so they are
 * consistent with each other; the committed and in-flight counts are read
 * after them, and the total is not one atomic snapshot across slots. See
 * the identities in the DOC block above.
 *
 * Context: Takes each slot lock in turn.
 * Return: the number of slots, or %-EINVAL if @pc is NULL or @slots is
 * NULL with @nr > 0.
 */
int lb_cpubatch_stats(struct lb_cpubatch *pc, struct lb_cpubatch_stats *out,
		  struct lb_cpubatch_slot_stats *slots, unsigned int nr);

/**
 * lb_cpubatch_flush_cause_name() - A short name for a flush cause.
 * @cause: The cause.
 *
 * Context: Any thread.
 * Return: "full", "weight", "bypass", "drain_local", "drain_obj",
 * "drain_objs", "drain_all", "disable", "destroy", or "invalid".
 */
const char *lb_cpubatch_flush_cause_name(enum lb_flush_cause cause);

/**
 * lb_cpubatch_report() - Print the statistics as a table.
 * @f: Output stream.
 * @pc: The object.
 *
 * One row per slot that saw an add or holds objects (adds, weight added,
 * flushes, objects per flush, objects committed, objects and weight
 * cached), then the total; the flushes by &enum lb_flush_cause; the slot
 * count, CPU-id source, back-end lock holds, flushes in flight, settle
 * outcomes, drain_all passes and the disable depth. Built from
 * lb_cpubatch_stats() alone, so the same caveat holds: each slot's row is
 * consistent, the total is not one atomic snapshot.
 *
 * Context: Any thread but a callback of @pc; takes each slot lock in turn.
 * Return: 0; %-EINVAL if @f or @pc is NULL (nothing written); %-ENOMEM if
 * the per-slot snapshot cannot be allocated (nothing written); %-EIO if
 * writing failed.
 */
int lb_cpubatch_report(FILE *f, struct lb_cpubatch *pc);

/**
 * lb_cpubatch_report_json() - Print the statistics as one JSON object.
 * @f: Output stream.
 * @pc: The object.
 *
 * ``{"nr_slots", "cpu_src", "backend_locks", "flushes_inflight", "total",
 * "drain", "slots"}``: "total" and each element of "slots" (every slot, in
 * order) carry the fields of &struct lb_cpubatch_slot_stats, "flushes" as
 * an object keyed by lb_cpubatch_flush_cause_name(); "drain" those of
 * &struct lb_cpubatch_drain_stats. One line, newline-terminated.
 *
 * Context: As lb_cpubatch_report().
 * Return: As lb_cpubatch_report().
 */
int lb_cpubatch_report_json(FILE *f, struct lb_cpubatch *pc);

/*
 * Drain on demand.
 *
 * Linux can drain its per-CPU LRU caches only locally (lru_add_drain()) or
 * everywhere (lru_add_drain_all(): a global mutex, a work item on every CPU
 * with something cached, a wait for all of them), so a caller that needs an
 * exact reference count and sees one reference too many drains every CPU.
 * Here every slot has a real lock and every cached object records its slot
 * (&struct lb_node), so a drain can target the one slot that holds an
 * object, and a reference check can tell when draining cannot help.
 *
 * None of these calls may be made on an instance from its own @commit,
 * @after or @put: @commit runs under the back-end lock a flush would take
 * again, and the waits below would wait for the caller's own flush. They
 * return %-EDEADLK there instead. On another instance they may (see
 * "Callbacks and other instances" in the DOC block at the top).
 *
 * In-flight flushes: a flush swaps its batch out under the slot lock, then
 * commits and puts without it. Every call below that reports an object or
 * a slot as drained waits for such flushes: lb_cpubatch_drain_obj() and
 * lb_cpubatch_drain_objs() for every flush that took each object out of
 * a batch (also after flushing the batch that held it: an earlier flush
 * of the object may still be in flight), lb_cpubatch_drain_local() for
 * those of the current slot (of every slot when an object of its batch
 * was re-added while an earlier flush of it was in flight),
 * lb_cpubatch_drain_all(), lb_cpubatch_drain_all_forced() and lb_cpubatch_disable() for
 * those of every slot that started before the pass reached it, and settle
 * for those that may hold the object (bounded by %LB_CPUBATCH_SETTLE_WAIT_NS
 * while the batch's reference decides between %LB_DRAINED and %LB_BUSY;
 * unbounded, as drain_obj, before %LB_SETTLED without @put). None of them
 * waits for flushes that start after it: those are of objects added later.
 */

/**
 * lb_cpubatch_drain_obj() - Flush the one slot whose batch holds an object.
 * @pc: The object's &struct lb_cpubatch.
 * @n: The object's node.
 *
 * Reads @n->slot, takes that slot's lock and checks again that the node is
 * still there (between the read and the lock the object may have been
 * flushed by its slot, committed and re-added to another slot); if it
 * moved, follows it. The slot is flushed with cause %LB_FLUSH_DRAIN_OBJ,
 * together with whatever else its batch held. O(1) in the number of slots:
 * no other slot is locked, and only the object's home slot is read for
 * flushes in flight, unless the object was re-added to another slot while
 * an earlier flush of it was still in flight, or came back from another
 * instance (that flush's slot is then unknown, and every slot's in-flight
 * count is read).
 *
 * Contract: when the call returns (0 or 1), no batch of @pc and no flush
 * of @pc references the object any more: if another thread's flush had
 * already taken it out of its batch, the call waited until that flush
 * committed it and ran @put (whatever started the flush). The object may
 * be freed right away, without @get/@put references, provided nobody adds
 * it again: the result holds only as long as nobody does. To rely on it
 * the caller must exclude lb_cpubatch_add() of this object, as the kernel does
 * with the folio lock or by isolating the folio from its LRU (an isolated
 * folio is not re-added until putback).
 *
 * Source: the per-folio drain Linux lacks (lru_cache_drain_for_folio()
 * drains locally, then everywhere; "mm: allow smaller large folios to use
 * lru_cache", RFC v3, 2026) made possible by remotely lockable batches
 * (the per-CPU spinlocks of "mm/swap: Allow remote LRU cache draining",
 * 2021).
 *
 * Waiting: on a node that reads "not cached" (or busy, see
 * <lockbatch/cpubatch_op.h>) while a flush of its home slot (every slot,
 * for an object that moved) is in flight, the call waits for those
 * flushes to commit, whichever thread runs them. So a caller holding a
 * lock that @commit, @apply, @after or @put takes (a back-end lock, an
 * item lock) must not call it: the flush it waits for may be waiting for
 * that lock. lb_cpubatch_unqueue() never waits and answers %-EBUSY there.
 *
 * Context: Any thread but a callback of @pc. Takes one slot lock, then
 * the back-end lock; runs @commit, @after and @put of the flushed batch;
 * may wait for a flush on another thread (taking the drain mutex).
 * Return:
 * * 1 - the slot holding @n was flushed; its objects, @n's included, have
 *   been committed.
 * * 0 - @n was not cached in a batch of @pc (never added, or committed,
 *   possibly by a flush this call waited for).
 * * %-EINVAL - @pc or @n is NULL, or @n holds a slot number @pc cannot have
 *   written (a corrupt or uninitialised node).
 * * %-EXDEV - @n was last cached by another &struct lb_cpubatch.
 * * %-EAGAIN - @n kept moving between slots (the caller does not exclude
 *   adds); nothing was flushed.
 * * %-EDEADLK - called from a callback of @pc (or with a batch of @pc
 *   deferred on this thread, or inside its drain_all pass).
 * * %-ELOOP - callbacks already nested %LB_CPUBATCH_NEST_MAX deep.
 *
 * Errors are checked in the order of the DOC block: arguments, ownership,
 * context.
 */
int lb_cpubatch_drain_obj(struct lb_cpubatch *pc, struct lb_node *n);

/**
 * lb_cpubatch_drain_objs() - Flush the slots holding any of several objects, each once.
 * @pc: The objects' &struct lb_cpubatch.
 * @nodes: Their nodes, @cnt entries; duplicates and uncached nodes are fine.
 * @cnt: Number of entries in @nodes.
 *
 * Like lb_cpubatch_drain_obj() for every node, but a slot is flushed at most
 * once per call (cause %LB_FLUSH_DRAIN_OBJS): objects found in a slot this
 * call already flushed were re-added after that flush and are left there.
 * This is the batching of "mm: batch lru_cache draining in
 * deferred_split_scan" (RFC v3 patch 4/4), where one shrinker pass drains
 * at most once, applied per slot instead of per "local, then all". Every
 * node is validated before anything is flushed.
 *
 * When it returns, no batch and no flush of @pc references any of the
 * objects (as lb_cpubatch_drain_obj()).
 *
 * Context: Any thread but a callback of @pc. Takes the slot locks one at a
 * time, each followed by the back-end lock; may wait for flushes on other
 * threads. Allocates a bitmap of the slots when there are more than 1024
 * of them.
 * Return: the number of slots flushed (0..min(@cnt, slot count)), or, in
 * this order of checks (every entry is checked for one kind before any is
 * checked for the next):
 * * %-EINVAL - @pc is NULL, @nodes is NULL with @cnt > 0, or an entry is
 *   NULL; or (ownership) an entry is corrupt. Nothing flushed.
 * * %-EXDEV - an entry was last cached by another &struct lb_cpubatch.
 *   Nothing flushed.
 * * %-EDEADLK, %-ELOOP - as lb_cpubatch_drain_obj(). Nothing flushed.
 * * %-ENOMEM - the slot bitmap could not be allocated. Nothing flushed.
 */
int lb_cpubatch_drain_objs(struct lb_cpubatch *pc, struct lb_node *const *nodes,
		       unsigned int cnt);

/**
 * enum lb_settle_result - Outcome of lb_cpubatch_settle().
 * @LB_SETTLED: The count equalled the expectation and the object was in no
 *              batch. Nothing was flushed.
 * @LB_DRAINED: The only reference beyond the expectation was the batch's:
 *              that one slot was flushed (cause %LB_FLUSH_DRAIN_OBJ) and
 *              the batch's reference dropped, so the count is now the
 *              expectation (unless others took references since).
 * @LB_BUSY: References beyond the expectation are held by others (after
 *           discounting the batch's): draining could not help, so nothing
 *           was flushed anywhere. Never a drain-all fallback.
 *
 * Positive, so that they never collide with the negative errnos.
 */
enum lb_settle_result {
	LB_SETTLED = 1,
	LB_DRAINED = 2,
	LB_BUSY = 3,
};

/**
 * define LB_CPUBATCH_SETTLE_WAIT_NS - Longest settle wait for a flush in progress (10 ms).
 *
 * A flush of the object's home slot that is between swap-out and @put
 * still holds the batch's reference while the node already reads "not
 * cached". Settle waits this long at most (backing off, then yielding) for
 * such flushes to finish before it reports %LB_BUSY. Long enough to cover
 * a flushing thread preempted for a time slice, short enough for a caller
 * that will retry.
 */
#define LB_CPUBATCH_SETTLE_WAIT_NS 10000000ull

/**
 * lb_cpubatch_settle() - Make an object's reference count exact, draining only if that can help.
 * @pc: The object's &struct lb_cpubatch.
 * @obj: The object (what lb_cpubatch_add() was given; passed to @refcount).
 * @n: Its node.
 * @expected: Every reference the caller can account for, its own included
 *            (mappings, caches, the caller's pin or pins), but not the
 *            batch's. >= 0.
 *
 * The reference-expectation check the kernel does before a split, a
 * migration or a long-term pin, without its fallback: with R = @refcount
 *
 * * not cached and R == @expected: %LB_SETTLED;
 * * cached in slot s and R == @expected + 1: the surplus is the batch's
 *   reference, so slot s alone is flushed: %LB_DRAINED;
 * * otherwise, R > @expected: someone else holds references; draining any
 *   slot cannot make R equal @expected: %LB_BUSY, nothing flushed.
 *
 * The cached case is decided under slot s's lock, where the node cannot
 * leave the slot, so the slot flushed is always the one that held the
 * object. The uncached case reads R without a lock: its answer is a true
 * statement about one instant during the call.
 *
 * Race window: a flush swaps its batch out (the node reads "not cached")
 * before it commits and drops the batch's reference with @put. A settle
 * landing in between sees R == @expected + 1 and no slot. If the object's
 * home slot (&lb_node.home; every slot once the object was re-added
 * elsewhere while a flush of it was in flight) has flushes in flight,
 * settle waits for them (up to %LB_CPUBATCH_SETTLE_WAIT_NS) and decides
 * again; if none are in flight the surplus is someone else's: %LB_BUSY. A
 * surplus of two or more is %LB_BUSY without waiting, and so is a re-add
 * of the object while its previous flush still holds a reference.
 *
 * Without a @put op the batch holds no counted reference: a cached object
 * with R == @expected is %LB_DRAINED (its slot flushed, as above: the
 * batch's hold was the only thing beyond the expectation), R > @expected
 * is %LB_BUSY. A flush between
 * swap-out and commit is invisible in R: before it returns %LB_SETTLED,
 * settle waits for the flushes that may hold the object and started
 * before (as lb_cpubatch_drain_obj() does), so
 * that %LB_SETTLED, like lb_cpubatch_drain_obj(), means that no batch and no
 * flush references the object.
 *
 * Retry contract: %LB_SETTLED and %LB_DRAINED describe the count at one
 * instant during the call; to act on them (freeze the count, migrate) the
 * caller must keep new references out, and must exclude lb_cpubatch_add() of
 * the object (object lock or isolation, see lb_cpubatch_drain_obj()). %LB_BUSY
 * changed nothing: the caller may retry later (the kernel's split returns
 * -EAGAIN) and a retry is always safe; it becomes %LB_DRAINED or
 * %LB_SETTLED once the other holders let go. Never retry with a larger
 * @expected to force progress: that hides the other holders.
 *
 * The caller must keep @obj alive across the call (normally through one of
 * the references in @expected): a DRAINED settle runs @put.
 *
 * Sources: the checks of "mm: drain LRU cache if necessary for splitting
 * large folios" (RFC v3 patch 3/4: drain only when exactly one unexplained
 * reference exists) and of "mm/gup: fix always draining LRU caches in
 * collect_longterm_unpinnable_folios()", with the targeted drain replacing
 * lru_cache_drain_for_folio()'s local-then-all escalation.
 *
 * Context: Any thread but a callback of @pc. May take the object's slot
 * lock and the back-end lock; calls @refcount (also under the slot lock:
 * it must not block or call into @pc); may wait up to
 * %LB_CPUBATCH_SETTLE_WAIT_NS (without @put: for the home slot's flushes).
 * Return: %LB_SETTLED, %LB_DRAINED or %LB_BUSY, or, in this order of
 * checks (the DOC block's):
 * * %-EINVAL - @pc, @obj or @n is NULL, @expected is negative; or
 *   (ownership) @n is corrupt. Nothing flushed.
 * * %-ENOENT - @n was never added to any &struct lb_cpubatch. Nothing flushed.
 * * %-EXDEV - @n was last cached by another &struct lb_cpubatch (whatever
 *   @pc's back-end offers). Nothing flushed.
 * * %-EDEADLK - called from a callback of @pc. %-ELOOP - at the nesting
 *   bound. Nothing flushed.
 * * %-EOPNOTSUPP - the back-end has no @refcount. Nothing flushed.
 * * %-ERANGE - the count is below the expectation (the caller counted
 *   references that do not exist). Nothing flushed.
 * * %-EAGAIN - the object kept moving between slots. Nothing flushed.
 */
int lb_cpubatch_settle(struct lb_cpubatch *pc, void *obj, struct lb_node *n,
		   long expected);

/**
 * lb_cpubatch_settle_held() - lb_cpubatch_settle() for a caller holding several references.
 * @pc: The object's &struct lb_cpubatch.
 * @obj: The object.
 * @n: Its node.
 * @expected: References the object's state explains (mappings, caches), not
 *            counting the caller's own. >= 0.
 * @held: References the caller itself holds on @obj: k for a pin of k units
 *        of a multi-unit object (GUP takes one reference per pinned page),
 *        the pin bias for a biased pin. >= 0.
 *
 * Same as lb_cpubatch_settle() with @expected + @held. This is the answer to
 * the objection against "mm: allow smaller large folios to use lru_cache":
 * a pin of several pages of a cached small large folio holds an unknown
 * N >= 1 references, and a check written with "+ 1" cannot tell N - 1 of
 * them from the batch's reference, so it drains every CPU on every pin.
 * Given the exact @held, settle drains the one slot; given too small a
 * @held it reports %LB_BUSY and drains nothing.
 *
 * Context: as lb_cpubatch_settle().
 * Return: as lb_cpubatch_settle(); %-EINVAL also when @held is negative or
 * @expected + @held overflows a long.
 */
int lb_cpubatch_settle_held(struct lb_cpubatch *pc, void *obj, struct lb_node *n,
			long expected, long held);

/**
 * lb_cpubatch_drain_all() - Flush every non-empty slot, sharing passes with concurrent callers.
 * @pc: The object.
 *
 * When it returns, every object that was in a batch of @pc when the call
 * began (every add that happened before the call) has been committed and
 * its @put has run.
 *
 * Coalescing, as __lru_add_drain_all(): the caller samples the pass
 * generation, takes the drain mutex, and if a pass started after its
 * sample (the generation moved) that pass has also completed (it held the
 * mutex), and it covered everything the caller needs: the caller returns
 * without a pass of its own. Otherwise it bumps the generation and runs
 * the pass. So N callers arriving during one pass share the next one.
 *
 * A pass skips a slot whose batch count and in-flight counter both read
 * zero without taking its lock. The racy read is enough: an add that
 * happened before this call is visible to it (the add unlocked the slot,
 * and the caller's knowledge of the add implies the ordering), and a count
 * emptied by a flush from another thread is seen with that flush's
 * in-flight count (raised first). Adds racing with the pass are not part
 * of the contract. Non-empty slots are flushed (cause %LB_FLUSH_DRAIN_ALL)
 * once; then the pass waits for flushes of that slot that other threads
 * started before it, so objects they swapped out are committed too.
 *
 * Source: mm/swap.c __lru_add_drain_all() (generation counter,
 * cpu_needs_drain()), without the per-CPU work items: each slot is flushed
 * from the calling thread.
 *
 * Context: Any thread but a callback of @pc. May sleep on the drain mutex;
 * takes slot locks one at a time, each followed by the back-end lock; may wait
 * for other threads' flushes to finish (do not call it holding a lock
 * their callbacks take).
 * Return: the number of objects this call's pass flushed (0 when it shared
 * another caller's pass), or %-EINVAL if @pc is NULL, %-EDEADLK if called
 * from a callback of @pc, %-ELOOP at the nesting bound.
 */
int lb_cpubatch_drain_all(struct lb_cpubatch *pc);

/**
 * lb_cpubatch_drain_all_forced() - Flush every slot, without coalescing or skipping.
 * @pc: The object.
 *
 * A pass of its own (it never returns on another caller's pass), that
 * takes every slot's lock, empty or not, and re-reads the batch count
 * under the lock until it reads empty (up to four rounds: while batching
 * is enabled, adds that keep refilling the slot during the pass are not
 * the pass's to chase; while it is disabled the second read is always
 * empty). This is the fix of "mm/page_alloc: fix pcp->count race between
 * drain_pages_zone() vs __rmqueue_pcplist()" (66eca1021a42): a count read
 * once, outside the lock, strands what arrives in between. Waits for
 * in-flight flushes like lb_cpubatch_drain_all().
 *
 * Context: as lb_cpubatch_drain_all().
 * Return: the number of objects flushed, or %-EINVAL if @pc is NULL,
 * %-EDEADLK if called from a callback of @pc, %-ELOOP at the nesting bound.
 */
int lb_cpubatch_drain_all_forced(struct lb_cpubatch *pc);

/**
 * lb_cpubatch_disable() - Stop batching: drain everything, then send adds straight through.
 * @pc: The object.
 *
 * Raises the nesting count, then runs a forced drain_all pass (flush cause
 * %LB_FLUSH_DISABLE). When it returns no object is in any batch, and until
 * as many lb_cpubatch_enable() calls follow, every lb_cpubatch_add() flushes at
 * once (cause %LB_FLUSH_DISABLE): the object is committed before the add
 * returns (or, for an add made by @commit, right after the outer flush).
 *
 * Ordering: lb_cpubatch_add() reads the count under its slot lock, after
 * appending. The count is raised (full fence) before the pass takes any
 * slot lock. For each slot, an add's critical section either comes before
 * the pass's (the pass finds the object and flushes it) or after it (then
 * it acquired the lock the pass released after the raise, sees the count
 * and flushes at once). This replaces the synchronize_rcu_expedited() of
 * lru_cache_disable(), which waits out adds that read "enabled" before the
 * increment.
 *
 * Source: mm/swap.c lru_cache_disable() (atomic_inc, grace period,
 * __lru_add_drain_all(true)).
 *
 * Context: as lb_cpubatch_drain_all_forced().
 * Return: 0, or (in this order of checks) %-EINVAL if @pc is NULL,
 * %-EDEADLK if called from a callback of @pc, %-ELOOP at the nesting bound,
 * %-EOVERFLOW if the nesting count is at its maximum (UINT32_MAX). On
 * error the count is unchanged.
 */
int lb_cpubatch_disable(struct lb_cpubatch *pc);

/**
 * lb_cpubatch_enable() - Undo one lb_cpubatch_disable().
 * @pc: The object.
 *
 * Batching resumes when the count reaches zero (mm/swap.h
 * lru_cache_enable()).
 *
 * Context: Any thread, callbacks included. Lock-free.
 * Return: the remaining nesting count (0: batching is enabled again), or
 * %-EINVAL if @pc is NULL or batching is not disabled (unbalanced call;
 * nothing changed).
 */
int lb_cpubatch_enable(struct lb_cpubatch *pc);

#ifdef __cplusplus
}
#endif

#endif /* LOCKBATCH_CPUBATCH_H */
