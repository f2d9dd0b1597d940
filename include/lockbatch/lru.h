/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#ifndef LOCKBATCH_LRU_H
#define LOCKBATCH_LRU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <urcu/list.h>

#include <lockbatch/lock.h>
#include <lockbatch/cpubatch.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * DOC: A stock LRU back-end
 *
 * &struct lb_lru is an active and an inactive list behind one &struct
 * lb_lock, the userspace shape of a lruvec. Objects embed a &struct
 * lb_lru_node (at &lb_lru_conf.node_offset) and enter the LRU through an
 * &struct lb_cpubatch whose back-end operations lb_lru_cpubatch_conf() fills in:
 * the user writes no callback to get batched adds.
 *
 * Splice commit. A flushed batch is linked into a private chain before the
 * lock is taken (the *prepare* phase, the mirror image of @after), and the
 * chain is spliced onto the inactive list in O(1) under the lock. The lock
 * is then held for four pointer writes per batch and one flag store per
 * object, to lines the prepare phase just wrote, instead of up to 31 list
 * insertions and their counter updates (the list head and the node it
 * pointed to are usually lines last written by another CPU, whichever
 * way). The flag %LB_LRU_NODE_ON_LRU is set under the lock, so an object
 * in a chain not yet spliced is off the LRU to lb_lru_del() and the other
 * lock holders. %LB_LRU_NO_SPLICE restores
 * the per-object insertion (the 6.12 lru_add() loop) for comparison. The
 * prepare phase runs inside the commit the batch calls: the &struct
 * lb_backend_ops lock and unlock hooks are empty and the commit takes the
 * LRU lock itself around the splice.
 *
 * Operation batches. lb_lru_queue() batches activations, rotations and
 * deletions through the same &struct lb_cpubatch as adds (the kernel's
 * ``cpu_fbatches``): each is applied at the flush under one LRU lock hold
 * per run, and skipped for an object that is not on the LRU by then.
 *
 * Reclaim. lb_lru_isolate() takes up to N objects from the tail of a list
 * under one lock hold into a private list, asking an optional scan callback
 * per object (isolate, rotate to the head, activate, skip, stop). The scan
 * prefetches the next node for writing (x86 PREFETCHW where CPUID reports
 * it, else ``__builtin_prefetch(p, 1)``; MGLRU's scan uses prefetchw) while
 * the callback works on the current one; %LB_LRU_PREFETCH_READ prefetches
 * for reading instead, %LB_LRU_NO_PREFETCH not at all. The next pointer is
 * read before the callback runs, so the core's out-of-order window already
 * overlaps the next miss with a short visit: the prefetch pays off only
 * when the per-object work is longer than that window, and a scan cannot
 * go faster than one miss per node, the pointer chase
 * (tests/bench/bench_lru_scan.c measures each prefetch against that floor). lb_lru_putback() moves a private
 * list back (the move_folios_to_lru() shape): the @release hook drops the
 * isolation reference of each object, and objects whose last reference
 * that was go to the @secondary hook *after* the lock is dropped.
 *
 * Locking: every list change happens under the LRU lock; a node's @flags
 * and @link are written under it while %LB_LRU_NODE_ON_LRU is set, and by the
 * holder of the private list otherwise. The per-path statistics (add,
 * isolate, putback, del) attribute each acquisition of the lock to the
 * path that made it (the lock tells each acquisition whether it waited,
 * and for how long); with %LB_LRU_HOLD_TIME the hold time is measured too.
 *
 * fork(): the LRU lock is the back-end lock of the batch sets that commit
 * to it, and, as for any back-end lock (lockbatch/cpubatch.h, fork()),
 * holding it across fork() is the caller's: register pthread_atfork()
 * handlers that take and release it before creating the first batch set.
 * Every counter of &struct lb_lru_stats changes under that lock, so a
 * child's counters are consistent with its lists. Objects another
 * thread's lb_lru_putback() had counted in &lb_lru_stats.released but not
 * yet handed to @secondary when the process forked stay that thread's,
 * the parent's: the child counts them released and never sees them, as a
 * child never sees the objects of the flushes it counts in
 * &lb_cpubatch_slot_stats.objs_abandoned (they are in no path's
 * &lb_lru_path_stats.objs).
 *
 * Concurrency (X = needs external exclusion, - = safe together):
 *
 * ========  ===  =======  =======  ===  =====  =======
 *           add  isolate  putback  del  stats  destroy
 * ========  ===  =======  =======  ===  =====  =======
 * add        -      -        -      -     -       X
 * isolate    -      -        -      -     -       X
 * putback    -      -        -      -     -       X
 * del        -      -        -      -     -       X
 * stats      -      -        -      -     -       X
 * destroy    X      X        X      X     X       X
 * ========  ===  =======  =======  ===  =====  =======
 *
 * The callbacks run with the LRU lock held (@scan, @release) or not held
 * (@secondary, unless %LB_LRU_PUTBACK_LOCKED); none may call into the same
 * &struct lb_lru while it holds the lock.
 *
 * Sources: mm/vmscan.c isolate_lru_folios(), move_folios_to_lru(),
 * prefetchw_prev_lru_folio(); mm/swap.c lru_add(); "mm: unqueue deferred
 * split folios outside the lruvec lock" (Joanne Koong, v3, 2026); "mm,
 * lru_gen: try to prefetch next page when scanning LRU" (Kairui Song, v2,
 * 2024).
 */

/**
 * enum lb_lru_list - The two lists.
 * @LB_LRU_INACTIVE: New objects and reclaim candidates.
 * @LB_LRU_ACTIVE: Objects found referenced.
 * @LB_LRU_NR_LISTS: Number of lists.
 */
enum lb_lru_list {
	LB_LRU_INACTIVE,
	LB_LRU_ACTIVE,
	LB_LRU_NR_LISTS,
};

/**
 * enum lb_lru_path - Which call took the LRU lock (for the statistics).
 * @LB_LRU_PATH_ADD: A commit of added objects (batch flush or lb_lru_commit()).
 * @LB_LRU_PATH_ISOLATE: lb_lru_isolate().
 * @LB_LRU_PATH_PUTBACK: lb_lru_putback().
 * @LB_LRU_PATH_DEL: lb_lru_del().
 * @LB_LRU_PATH_OP: A step of an operation batch (lb_lru_queue()).
 * @LB_LRU_NR_PATHS: Number of paths.
 */
enum lb_lru_path {
	LB_LRU_PATH_ADD,
	LB_LRU_PATH_ISOLATE,
	LB_LRU_PATH_PUTBACK,
	LB_LRU_PATH_DEL,
	LB_LRU_PATH_OP,
	LB_LRU_NR_PATHS,
};

/**
 * define LB_LRU_NODE_ON_LRU - Node flag, linked on one of the two lists.
 */
#define LB_LRU_NODE_ON_LRU 0x1u
/**
 * define LB_LRU_NODE_ACTIVE - Node flag, belongs on (or goes back to) the active list.
 */
#define LB_LRU_NODE_ACTIVE 0x2u

/**
 * struct lb_lru_node - Embedded in every object the LRU may hold.
 * @link: List linkage: on a list of the LRU, or on a caller's private list
 *        after lb_lru_isolate().
 * @flags: %LB_LRU_NODE_ON_LRU, %LB_LRU_NODE_ACTIVE.
 * @weight: The object's size in base units (set by lb_lru_node_init()).
 * @batch: Tracking by the &struct lb_cpubatch the object is added through.
 *
 * @link and @flags are the scan's hot line: keep the node at the start of
 * a cache line of the object, or near the fields the scan callback reads.
 */
struct lb_lru_node {
	struct cds_list_head link;
	uint32_t flags;
	uint32_t weight;
	struct lb_node batch;
};

/**
 * enum lb_lru_verdict - What lb_lru_isolate() does with a scanned object.
 * @LB_LRU_ISOLATE: Take it off the LRU onto the private list.
 * @LB_LRU_ROTATE: Move it to the head of its list (a second chance).
 * @LB_LRU_ACTIVATE: Move it to the head of the active list.
 * @LB_LRU_SKIP: Leave it where it is.
 * @LB_LRU_STOP: Leave it and end the scan.
 */
enum lb_lru_verdict {
	LB_LRU_ISOLATE,
	LB_LRU_ROTATE,
	LB_LRU_ACTIVATE,
	LB_LRU_SKIP,
	LB_LRU_STOP,
};

/**
 * typedef lb_lru_scan_fn - Decide about one object during a scan.
 * @obj: The object (the node's container).
 * @arg: The caller's argument.
 *
 * Context: The LRU lock is held; must not block nor call into the LRU.
 * Return: an &enum lb_lru_verdict.
 */
typedef enum lb_lru_verdict (*lb_lru_scan_fn)(void *obj, void *arg);

/**
 * struct lb_lru_ops - Optional hooks (every member may be NULL).
 * @get: Take the batch's reference on an object entering an &lb_cpubatch
 *       batch (&lb_backend_ops.get).
 * @put: Drop it once committed (&lb_backend_ops.put).
 * @refcount: The object's reference count, for lb_cpubatch_settle().
 * @release: lb_lru_putback(): drop the caller's isolation reference;
 *           return true if it was the last one. Such an object does not go
 *           back on the LRU; it is handed to @secondary. Runs under the
 *           LRU lock. NULL: every object goes back.
 * @secondary: Post-unlock work on an object whose last reference
 *             @release dropped (unqueue it elsewhere, free it). Runs
 *           after the LRU lock is dropped unless %LB_LRU_PUTBACK_LOCKED.
 */
struct lb_lru_ops {
	void (*get)(void *obj);
	void (*put)(void *obj);
	long (*refcount)(void *obj);
	bool (*release)(void *obj, void *arg);
	void (*secondary)(void *obj, void *arg);
};

/**
 * define LB_LRU_NO_PREFETCH - Conf flag, scans and lb_lru_del() do not prefetch.
 */
#define LB_LRU_NO_PREFETCH 0x1u
/**
 * define LB_LRU_NO_SPLICE - Conf flag, commit inserts one object at a time under the lock.
 */
#define LB_LRU_NO_SPLICE 0x2u
/**
 * define LB_LRU_HOLD_TIME - Conf flag, measure lock hold times (two clock reads per hold).
 */
#define LB_LRU_HOLD_TIME 0x4u
/**
 * define LB_LRU_PREFETCH_READ - Conf flag, scans prefetch for reading.
 *
 * A read prefetch (``__builtin_prefetch(p, 0)``) instead of PREFETCHW. The
 * nodes at the tail of a long LRU come from memory with no other cache
 * holding them, so a read brings them exclusive anyway; on some cores a
 * read prefetch is the cheaper instruction (bench_lru_scan measures both).
 * Not with %LB_LRU_NO_PREFETCH.
 */
#define LB_LRU_PREFETCH_READ 0x8u
/**
 * define LB_LRU_CONF_FLAGS - Every conf flag.
 */
#define LB_LRU_CONF_FLAGS (LB_LRU_NO_PREFETCH | LB_LRU_NO_SPLICE | \
			   LB_LRU_HOLD_TIME | LB_LRU_PREFETCH_READ)

/**
 * define LB_LRU_PUTBACK_LOCKED - Putback flag, run @secondary under the lock (6.12).
 */
#define LB_LRU_PUTBACK_LOCKED 0x1u

/**
 * struct lb_lru_conf - Creation parameters.
 * @lock_kind: Kind of the LRU lock: any &enum lb_lock_kind (%LB_LOCK_MUTEX,
 *	0, is the default). The queue kinds (%LB_LOCK_MCS, %LB_LOCK_CLH) take
 *	a per-thread queue node per hold; the LRU never nests its lock, so
 *	it uses one entry of the %LB_LOCK_NEST_MAX table.
 * @name: Lock name for reports (not copied); NULL means "lru".
 * @node_offset: offsetof() the &struct lb_lru_node in the caller's object.
 * @flags: %LB_LRU_NO_PREFETCH, %LB_LRU_PREFETCH_READ, %LB_LRU_NO_SPLICE,
 *         %LB_LRU_HOLD_TIME.
 * @ops: Hooks, copied at creation; NULL means none.
 * @arg: Passed to @ops->release and @ops->secondary.
 */
struct lb_lru_conf {
	enum lb_lock_kind lock_kind;
	const char *name;
	size_t node_offset;
	unsigned int flags;
	const struct lb_lru_ops *ops;
	void *arg;
};

/**
 * define LB_LRU_CONF_INIT - Static initializer of &struct lb_lru_conf.
 * @type: The caller's object type.
 * @member: Its &struct lb_lru_node member.
 *
 * The default lock (%LB_LOCK_MUTEX), the name "lru", no flags, no hooks.
 * Valid C and C++ (positional).
 */
#define LB_LRU_CONF_INIT(type, member)					\
	{ LB_LOCK_MUTEX, 0, offsetof(type, member), 0, 0, 0 }

/**
 * struct lb_lru_path_stats - Lock use by one path.
 * @acquisitions: Times the path took the LRU lock.
 * @contentions: ... and found it held.
 * @wait_ns_total: Summed wait of those, in ns.
 * @wait_ns_max: Longest wait, in ns.
 * @waits_long: Contended acquisitions that waited at least
 *              %LB_LRU_HOLD_LONG_NS. No queue of holds that short adds up
 *              to that; such a wait spans a descheduling (of the holder,
 *              or of the waiter itself between its spins or in its sleep),
 *              which a kernel spinlock, held and waited for with
 *              preemption off, never sees. The lock traffic proper is
 *              (@wait_ns_total - @wait_ns_long).
 * @wait_ns_long: Their summed wait, in ns.
 * @wait_ns_yield: Of @wait_ns_total, the time waiters spent yielding
 *              their CPU (&struct lb_lock_stats.wait_ns_yield; %LB_LOCK_SPIN
 *              only): a wait for the scheduler, not for the lock. What a
 *              kernel spinlock would count is (@wait_ns_total -
 *              @wait_ns_yield).
 * @hold_ns_total: Summed hold time, in ns (only with %LB_LRU_HOLD_TIME).
 * @hold_ns_max: Longest hold, in ns (likewise).
 * @holds_long: Holds of at least %LB_LRU_HOLD_LONG_NS (likewise). A hold
 *              that long means the holder was descheduled inside it; on a
 *              machine with more threads than CPUs a few of them dominate
 *              the total, so a typical hold is (@hold_ns_total -
 *              @hold_ns_long) / (@acquisitions - @holds_long).
 * @hold_ns_long: Their summed hold time, in ns (likewise).
 * @objs: Objects the path moved (added, isolated, put back or released,
 *        deleted).
 */
struct lb_lru_path_stats {
	uint64_t acquisitions;
	uint64_t contentions;
	uint64_t wait_ns_total;
	uint64_t wait_ns_max;
	uint64_t waits_long;
	uint64_t wait_ns_long;
	uint64_t hold_ns_total;
	uint64_t hold_ns_max;
	uint64_t holds_long;
	uint64_t hold_ns_long;
	uint64_t objs;
	uint64_t wait_ns_yield;
};

/**
 * define LB_LRU_HOLD_LONG_NS - A hold or a wait this long (100 µs) counts
 * as descheduled.
 */
#define LB_LRU_HOLD_LONG_NS 100000u

/**
 * struct lb_lru_stats - A snapshot, taken under the LRU lock.
 * @nr: Objects on each list.
 * @weight: Their summed weight, in base units.
 * @path: Lock use by path.
 * @scanned: Objects lb_lru_isolate() visited.
 * @rotated: ... that it rotated to the head of their list.
 * @activated: ... that it moved to the active list.
 * @released: Objects lb_lru_putback() handed to @secondary.
 * @snapshots: Earlier lb_lru_stats() calls. Their lock acquisitions belong
 *             to no path: the lock's acquisition count is the sum over the
 *             paths plus this.
 * @errors: Misuse caught: a commit of an object already on the LRU, a
 *          deletion of one that was not (skipped, counted here).
 */
struct lb_lru_stats {
	uint64_t nr[LB_LRU_NR_LISTS];
	uint64_t weight[LB_LRU_NR_LISTS];
	struct lb_lru_path_stats path[LB_LRU_NR_PATHS];
	uint64_t scanned;
	uint64_t rotated;
	uint64_t activated;
	uint64_t released;
	uint64_t snapshots;
	uint64_t errors;
};

struct lb_lru;

/**
 * lb_lru_create() - Allocate an empty LRU.
 * @lru: Where to store it.
 * @conf: Parameters.
 *
 * Context: Any thread. Allocates.
 * Return: 0, %-EINVAL if @lru or @conf is NULL, the lock kind is unknown,
 * @conf->flags has unknown bits or both %LB_LRU_NO_PREFETCH and
 * %LB_LRU_PREFETCH_READ; %-ENOMEM. *@lru is set only on success.
 */
int lb_lru_create(struct lb_lru **lru, const struct lb_lru_conf *conf);

/**
 * lb_lru_destroy() - Free an empty LRU.
 * @lru: The LRU.
 *
 * The objects belong to the caller, so an LRU still holding some is not
 * freed: isolate them first.
 *
 * Context: No other thread may use @lru during or after the call.
 * Return: 0, %-EINVAL if @lru is NULL, %-EBUSY if a list is not empty or
 * the lock is held (nothing freed).
 */
int lb_lru_destroy(struct lb_lru *lru);

/**
 * lb_lru_cpubatch_conf() - Point a batch configuration at this LRU.
 * @lru: The LRU.
 * @conf: The &struct lb_cpubatch_conf to fill: @ops and @backend are set, the
 *        other members are left as they are.
 *
 * The ops commit with the splice described above, and pass @get, @put and
 * @refcount of &struct lb_lru_ops through. Objects are added with
 * lb_lru_add().
 *
 * Context: Any thread.
 * Return: 0, or %-EINVAL if either argument is NULL.
 */
int lb_lru_cpubatch_conf(struct lb_lru *lru, struct lb_cpubatch_conf *conf);

/**
 * lb_lru_node_init() - Prepare an object's node before its first add.
 * @n: The node.
 * @weight: The object's size in base units, 1..%LB_WBATCH_WEIGHT_MAX.
 *
 * Context: The caller owns the object (it is on no list and in no batch).
 * Return: 0, or %-EINVAL if @n is NULL or @weight out of range.
 */
int lb_lru_node_init(struct lb_lru_node *n, uint32_t weight);

/**
 * lb_lru_add() - Add an object to the LRU through per-CPU batches.
 * @pc: An &struct lb_cpubatch configured by lb_lru_cpubatch_conf() for @lru.
 * @lru: The LRU.
 * @obj: The object; its node was initialised by lb_lru_node_init().
 *
 * The object lands at the head of the inactive list when its batch is
 * flushed. Same as lb_cpubatch_add() with the node's batch tracking and weight.
 *
 * Context: As lb_cpubatch_add().
 * Return: as lb_cpubatch_add(): 0 (waits in a batch), 1 (this call flushed),
 * %-EINVAL (a NULL argument, @pc not configured for @lru, or a node
 * weight out of range), %-EEXIST, %-EAGAIN.
 */
int lb_lru_add(struct lb_cpubatch *pc, struct lb_lru *lru, void *obj);

/**
 * lb_lru_commit() - Add objects directly, under one lock hold.
 * @lru: The LRU.
 * @objs: The objects, nodes initialised, on no list.
 * @n: Entries in @objs.
 *
 * What a batch flush does, for callers without an &struct lb_cpubatch. An
 * object already on the LRU is skipped and counted in @errors.
 *
 * Context: Takes the LRU lock once (none for @n == 0).
 * Return: objects added, or %-EINVAL if @lru is NULL, or @objs is NULL
 * with @n > 0.
 */
int lb_lru_commit(struct lb_lru *lru, void *const *objs, unsigned int n);

/**
 * lb_lru_isolate() - Take objects from the tail of a list.
 * @lru: The LRU.
 * @list: %LB_LRU_INACTIVE or %LB_LRU_ACTIVE.
 * @dst: The caller's private list; isolated objects are added at its tail
 *       in scan order (the coldest first).
 * @nr: Most objects to isolate.
 * @scan: Decides per object; NULL isolates every object visited.
 * @arg: Passed to @scan.
 *
 * Under one lock hold, visits objects from the tail towards the head, at
 * most as many as the list held when the scan started (so rotated objects
 * are not seen twice), until @nr are isolated or @scan says stop. Isolated
 * objects lose %LB_LRU_NODE_ON_LRU and keep %LB_LRU_NODE_ACTIVE as it was. While it
 * works on one object it prefetches the next one's node for writing
 * (for reading with %LB_LRU_PREFETCH_READ), unless %LB_LRU_NO_PREFETCH.
 *
 * Context: Takes the LRU lock once; calls @scan under it.
 * Return: the number isolated, or %-EINVAL if @lru or @dst is NULL or
 * @list is out of range.
 */
int lb_lru_isolate(struct lb_lru *lru, enum lb_lru_list list,
		   struct cds_list_head *dst, unsigned int nr,
		   lb_lru_scan_fn scan, void *arg);

/**
 * lb_lru_putback() - Return isolated objects to the LRU.
 * @lru: The LRU.
 * @src: A private list of isolated objects; empty on return.
 * @flags: 0 or %LB_LRU_PUTBACK_LOCKED.
 *
 * Under one lock hold, each object is offered to @release; if that drops
 * its last reference the object is collected, otherwise it goes to the
 * head of the active list (node flag %LB_LRU_NODE_ACTIVE, see
 * lb_lru_node_set_active()) or of the inactive list. After the lock is
 * dropped, @secondary runs on each collected object, in list order. With
 * %LB_LRU_PUTBACK_LOCKED @secondary runs under the lock instead, as 6.12's
 * move_folios_to_lru() unqueues deferred-split folios.
 *
 * Context: Takes the LRU lock once (none for an empty @src).
 * Return: the number of objects put back on the LRU, or %-EINVAL if @lru or
 * @src is NULL or @flags has unknown bits (@src untouched).
 */
int lb_lru_putback(struct lb_lru *lru, struct cds_list_head *src,
		   unsigned int flags);

/**
 * lb_lru_del() - Take given objects off the LRU, under one lock hold.
 * @lru: The LRU.
 * @objs: The objects.
 * @n: Entries in @objs.
 *
 * The batched removal of folios_put_refs(): an object not on the LRU (for
 * instance still in a batch, or isolated) is skipped and counted in
 * @errors. Before removing an object to free it, flush the batch that may
 * hold it with lb_cpubatch_drain_obj() or lb_cpubatch_settle(), with adds
 * of the object excluded (see there): a skipped object still in a batch
 * is linked onto the LRU by that batch's later flush.
 *
 * The nodes are prefetched for writing before the lock is taken (not with
 * %LB_LRU_NO_PREFETCH), so that the unlinks under the lock do not wait for
 * them one at a time, and the lists' sizes are written once per call.
 *
 * Context: Takes the LRU lock once (none for @n == 0).
 * Return: objects removed, or %-EINVAL if @lru is NULL, or @objs is NULL
 * with @n > 0.
 */
int lb_lru_del(struct lb_lru *lru, void *const *objs, unsigned int n);

/**
 * lb_lru_node_set_active() - Choose the list an isolated object returns to.
 * @n: The node of an isolated object (owned by the caller).
 * @active: true: the active list; false: the inactive one.
 *
 * Context: The holder of the private list the object is on.
 * Return: 0, or %-EINVAL if @n is NULL or on the LRU.
 */
int lb_lru_node_set_active(struct lb_lru_node *n, bool active);

/**
 * lb_lru_stats() - Snapshot list sizes and lock use.
 * @lru: The LRU.
 * @out: Where to write the snapshot.
 *
 * Context: Takes the LRU lock (not counted in any path).
 * Return: 0, or %-EINVAL if an argument is NULL.
 */
int lb_lru_stats(struct lb_lru *lru, struct lb_lru_stats *out);

/**
 * lb_lru_lock() - The LRU's lock, for reports (lb_lock_report()).
 * @lru: The LRU.
 *
 * Context: Any thread. Do not take the lock through this pointer: list
 * changes belong to the calls above.
 * Return: the lock, or NULL if @lru is NULL.
 */
struct lb_lock *lb_lru_lock(struct lb_lru *lru);

/**
 * lb_lru_node_of() - The node embedded in an object.
 * @lru: The LRU.
 * @obj: The object.
 *
 * Context: Any thread.
 * Return: the node, or NULL if an argument is NULL.
 */
struct lb_lru_node *lb_lru_node_of(const struct lb_lru *lru, void *obj);

/**
 * lb_lru_obj_of() - The object a node is embedded in.
 * @lru: The LRU.
 * @n: The node.
 *
 * Context: Any thread.
 * Return: the object, or NULL if an argument is NULL.
 */
void *lb_lru_obj_of(const struct lb_lru *lru, struct lb_lru_node *n);

/**
 * lb_lru_path_name() - A short name for a path.
 * @path: The path.
 *
 * Context: Any thread.
 * Return: "add", "isolate", "putback", "del", "op", or "invalid".
 */
const char *lb_lru_path_name(enum lb_lru_path path);

/**
 * lb_lru_queue() - Queue an activation, rotation or deletion through per-CPU batches.
 * @pc: The batch set made with lb_lru_cpubatch_conf() for @lru.
 * @lru: The LRU.
 * @obj: The object (on the LRU, or waiting to be added).
 * @op: What to do at the flush, under the LRU lock (charged to
 *      %LB_LRU_PATH_OP):
 *      %LB_OP_ADD - lb_lru_add();
 *      %LB_OP_MOVE - activate: to the head of the active list
 *      (mm/swap.c lru_activate(), queued by folio_activate() from
 *      folio_mark_accessed() on a second access);
 *      %LB_OP_ROTATE - to the tail of its list, next for reclaim
 *      (lru_move_tail(), folio_rotate_reclaimable());
 *      %LB_OP_DEL - off the LRU, batched lb_lru_del().
 *
 * The operation batches of <lockbatch/cpubatch_op.h> with lb_lru's own
 * move function: an object that is not on the LRU when its step runs
 * (isolated by a scan) is skipped, as the kernel's move functions skip a
 * folio without PG_lru, and is not counted in &lb_lru_stats.errors. The
 * per-object order, composition (a deletion of a waiting add cancels it)
 * and references are lb_cpubatch_queue()'s.
 *
 * An operation other than %LB_OP_ADD needs an object that was handed to
 * lb_lru_add() already (waiting or committed): one queued before the add
 * holds the node, and the add then fails with %-EEXIST.
 *
 * Context: as lb_cpubatch_queue(); the flush takes the LRU lock once per
 * step run.
 * Return: as lb_cpubatch_queue(); %-EINVAL also if @pc, @lru or @obj is
 * NULL or @pc was made for another LRU.
 */
int lb_lru_queue(struct lb_cpubatch *pc, struct lb_lru *lru, void *obj,
		 enum lb_op op);

#ifdef __cplusplus
}
#endif

#endif /* LOCKBATCH_LRU_H */
