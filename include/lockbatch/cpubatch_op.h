/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#ifndef LOCKBATCH_CPUBATCH_OP_H
#define LOCKBATCH_CPUBATCH_OP_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * DOC: Operation batches and caller-protected references
 *
 * A batch entry of &struct lb_cpubatch carries an operation, not only an
 * add: lb_cpubatch_queue() queues an add, a move to another back-end, a
 * rotation or a deletion of an object, with the drain, settle and
 * statistics contracts of lb_cpubatch_add() (which stays the add
 * operation, with its cost unchanged). This is mm/swap.c's
 * ``cpu_fbatches`` (lru_add, lru_move_tail, lru_deactivate_file,
 * lru_deactivate, lru_lazyfree, lru_activate), each of whose batches
 * folio_batch_move_lru() commits under one lruvec lock with a per-operation
 * move function; here the move function is &lb_backend_ops.apply, called
 * with an &enum lb_op_step.
 *
 * One batch of tagged entries, not one batch per operation. The operation
 * lives in the two low bits of the node pointer that every entry stores
 * already (the second array of the rseq pair section, lib/rseq/rseq.h), so an
 * add stores the same words as before and its section is unchanged
 * (measured: ``make bench-cpubatch-add``, 81 instructions for the lock
 * path's no-flush add before and after, under callgrind). One batch per
 * kind, as the kernel has, would multiply each slot (31 entries of two
 * pointers per kind) and every drain, settle and stats walk by the number
 * of kinds, and would lose the order between an object's operations,
 * which the kernel recovers with the folio's LRU flag tests under the
 * lruvec lock. With one batch per slot, the entries of a slot keep the
 * order they were queued in, and an object is in at most one entry of one
 * batch at a time (its &struct lb_node says which slot).
 *
 * Commit order. A flush commits its batch in two phases, each grouped in
 * runs of consecutive entries that share a back-end (one back-end lock
 * hold per run, as for adds):
 *
 * 1. leave: in queue order, every %LB_OP_DEL and %LB_OP_MOVE entry is
 *    unlinked (%LB_STEP_UNLINK) and every %LB_OP_ROTATE entry rotated
 *    (%LB_STEP_ROTATE), under the lock of &lb_backend_ops.backend_of; a
 *    move whose target is that same back-end is applied whole here
 *    (%LB_STEP_MOVE: one hold, where leaving and entering would take
 *    two) and takes no part in phase 2;
 * 2. enter: in queue order, every %LB_OP_ADD entry is committed
 *    (&lb_backend_ops.commit) under the lock of its back-end, and every
 *    %LB_OP_MOVE entry linked (%LB_STEP_LINK) under the lock of its
 *    target (&lb_backend_ops.target_of).
 *
 * So an object leaves its old list before it enters its new one (an
 * intrusive list node is never on two lists), a move takes two locks one
 * after the other (never nested), and a batch of adds only is committed
 * exactly as before (phase 1 finds nothing and takes no lock). Between
 * the phases a moved object is on no list, as an isolated folio is.
 * @after runs for the runs of phase 2 that hold added objects.
 *
 * Per-object order. Operations on one object apply in the order they were
 * queued, whichever slots they were queued on:
 *
 * * An object waiting in a batch (any slot) that is queued again is
 *   composed with its waiting entry under that slot's lock when the pair
 *   has a composition: %LB_OP_DEL after %LB_OP_ADD removes the entry (the
 *   object never reaches the back-end), %LB_OP_DEL after %LB_OP_MOVE or
 *   %LB_OP_ROTATE turns the entry into a deletion from the source,
 *   %LB_OP_ROTATE after %LB_OP_ROTATE is one rotation; a repeat that
 *   the waiting entry already does is refused (%-EEXIST: an add after
 *   an add, a move or a rotation, a move after a move, a deletion after
 *   a deletion). Any other pair first flushes the slot holding the waiting entry (cause
 *   %LB_FLUSH_DRAIN_OBJ), then queues the new operation on the current
 *   CPU's slot. (Composition avoids a flush on the two pairs a cache
 *   makes all the time, a bump followed by an eviction and a deletion of
 *   a fresh object; the rest are rare and a flush keeps them simple.)
 * * A flush that swapped a non-add entry out is busy with the object
 *   until the callbacks of the entry's last step have returned: a new
 *   operation on that object waits for that flush first
 *   (lb_cpubatch_queue(), %LB_OP_ADD included), lb_cpubatch_unqueue()
 *   answers %-EBUSY and settle waits. The node itself carries the busy
 *   mark only until that last step begins (see "Free points" below), so
 *   lb_cpubatch_add() refuses the object (%-EEXIST) from swap-out to the
 *   last step's first callback, and accepts it from then on: such an add
 *   is committed under the back-end lock after the step's hold, but only
 *   lb_cpubatch_queue() orders it after the step's callbacks return. A
 *   flush of adds clears the nodes when it swaps out, as before, except
 *   in the caller-protected mode, where no reference keeps a flushed
 *   object alive: there an add is busy too, until its @commit and @after
 *   have returned.
 *
 * References. Two modes:
 *
 * * counted (the default): the batch holds one reference on every entry's
 *   object, @get when it enters a batch, @put after its commit (after
 *   @after for adds, after phase 1 or 2 for the others). An entry
 *   removed by composition or lb_cpubatch_unqueue() is @put at once.
 * * caller-protected (%LB_CPUBATCH_F_CALLER_REFS; @get and @put must be
 *   NULL): the batch takes no reference, and the caller's own lock (an
 *   item lock, a page lock) orders every operation on an object. The rule
 *   it implies: before the caller unlinks an object from its back-end by
 *   itself, or frees it, the object must be in no batch and no flush:
 *   lb_cpubatch_drain_obj(), lb_cpubatch_settle_fn() returning
 *   %LB_SETTLED or %LB_DRAINED, or lb_cpubatch_unqueue() returning 0 or
 *   1. A %LB_OP_DEL queued in this mode keeps the object allocated until
 *   its flush has applied %LB_STEP_UNLINK: free it from @apply (after the
 *   unlink) or after a drain, never right after queueing
 *   (%LB_OP_FLUSHED on a deletion: it may already be freed).
 *
 * Free points: after which the library no longer touches an object.
 *
 * * counted: once it has called @put for the object's entry.
 * * caller-protected: once it has called the last callback of the
 *   entry's last step: @commit, then @after if the back-end has one, for
 *   an add; @apply(%LB_STEP_UNLINK) for a deletion, @apply(%LB_STEP_LINK)
 *   for a move to another back-end, @apply(%LB_STEP_MOVE) for a move
 *   within one, @apply(%LB_STEP_ROTATE) for a rotation. The object may be
 *   freed in that callback, after its own work on it; the node (or the
 *   side-table entry, lb_nodetab_release()) already in the step's first
 *   callback, since the library's last store to it comes before that
 *   callback. Such a flush records in its own memory that the object is
 *   busy until the callbacks return.
 *
 * Every return this block calls safe (lb_cpubatch_drain_obj(),
 * lb_cpubatch_settle_fn() or lb_cpubatch_settle() returning %LB_SETTLED
 * or %LB_DRAINED, lb_cpubatch_unqueue() returning 0 or 1, and the side
 * table's lb_nodetab_drain_obj() and lb_nodetab_settle()) is an acquire
 * against the flush that applied the object's last operation: what its
 * callbacks wrote is visible to the caller's plain loads, and
 * ThreadSanitizer sees the order.
 *
 * A caller's AddressSanitizer build does not see the library's stores to
 * a node (ck's inline assembly, in a library built without ASan). To
 * catch a touch after free, build lockbatch with ``--enable-asan`` (its
 * node accessors then report each access to ASan), or poison what you
 * free and check the poison when the memory is reused
 * (tests/unit/test_cpubatch_free.c, tests/stress/stress_cpubatch_free.c).
 *
 * Draining while holding a lock: lb_cpubatch_drain_obj()
 * on an object a flush of another thread has swapped out and not yet
 * committed *waits* for that flush (and, for an object that moved between
 * slots, for every slot's flushes that started before the call); so do
 * lb_cpubatch_settle(), lb_cpubatch_settle_fn() and lb_cpubatch_queue() on
 * such an object. A caller holding a lock that a callback takes (a
 * back-end lock, an item lock @commit or @apply takes) must not call them:
 * that flush may be waiting for the lock. lb_cpubatch_unqueue() never
 * waits and may be called under any lock but a slot lock (lock order:
 * it takes a slot lock, which no path holds while taking a back-end
 * lock).
 *
 * The memcached pattern (items.c of memcached 1.6.18; one instance per
 * server, one back-end per LRU (``lru_locks[id]`` and ``heads[id]``),
 * %LB_CPUBATCH_F_CALLER_REFS, the item lock ordering everything):
 *
 * * do_item_link(): instead of item_link_q() under ``lru_locks``,
 *   lb_cpubatch_add(pc, it, &it->lbn, 1); @backend_of maps
 *   ``it->slabs_clsid`` to its LRU, @commit is item_link_q()'s body.
 * * do_item_bump() / lru_bump_async(): COLD to WARM is
 *   lb_cpubatch_queue(pc, it, n, %LB_OP_MOVE, 1); @target_of returns the
 *   class's WARM LRU, @apply(%LB_STEP_UNLINK) is do_item_unlink_q()'s
 *   body and @apply(%LB_STEP_LINK) sets ``slabs_clsid`` to the target
 *   and links (the bump buffer, its mutex and its maintainer pass go).
 *   @backend_of and @target_of must give the same answer for an object as
 *   long as an entry of it waits: derive them from where the object is
 *   (``slabs_clsid``, which only the flush's steps rewrite), never from a
 *   field the caller sets per operation.
 * * do_item_unlink_nolock(): lb_cpubatch_unqueue(pc, n, 1, &op) under the
 *   item lock, then item_unlink_q() unless @op came back %LB_OP_ADD (the
 *   item never reached its LRU); -%EBUSY (a flush is applying an
 *   operation to the item) is retried after dropping the item lock, or
 *   the unlink is queued as %LB_OP_DEL with the item's free deferred to
 *   @apply.
 * * lru_pull_tail(), under ``lru_locks[id]`` and the item's trylock,
 *   keeps its check ``refcount_incr(search) != 2`` (busy): the batch holds
 *   no reference, so 2 still means "linked, and this thread". Before it
 *   unlinks the item it calls lb_cpubatch_unqueue(): 0 or 1, go on (a
 *   waiting bump is dropped with it); -%EBUSY, treat the item as busy as
 *   a refcount above 2 is (refcount_decr(), next item). It must not drain:
 *   it holds a back-end lock.
 * * A "refcount == 2" check outside the LRU lock (the slab mover, the
 *   crawler) is lb_cpubatch_settle_fn(pc, it, n, 2, count, NULL) under the
 *   item lock, with @count reading ``it->refcount``: %LB_SETTLED (no
 *   operation waits, the count is 2), %LB_DRAINED (a waiting operation
 *   was the only thing in the way; its slot was flushed), %LB_BUSY.
 *
 * Statistics identities (&struct lb_cpubatch_slot_stats), per slot and in
 * total when no flush is in flight: the sum of @ops over every operation
 * == @objs_flushed + @nr_cached + @merged + @cancelled; @ops[%LB_OP_ADD]
 * == @adds; the sum of @ops_flushed == @objs_flushed. Without operation
 * batches the first reads @adds == @objs_flushed + @nr_cached, as before.
 *
 * Sources: mm/swap.c cpu_fbatches, folio_batch_move_lru(),
 * lru_move_tail(), lru_activate(), lru_deactivate(), folio_activate(),
 * folio_mark_accessed() (Linux 6.12); memcached 1.6.18 items.c
 * do_item_link(), do_item_bump(), lru_bump_async(), lru_pull_tail().
 */

struct lb_cpubatch;
struct lb_node;

/**
 * enum lb_op - What a batch entry does when its batch is flushed.
 * @LB_OP_ADD: Link into its back-end (&lb_backend_ops.commit), as
 *             lb_cpubatch_add().
 * @LB_OP_MOVE: Unlink from its back-end (phase 1, %LB_STEP_UNLINK), then
 *              link into &lb_backend_ops.target_of (phase 2,
 *              %LB_STEP_LINK); a move within its own back-end (another
 *              list of it, e.g. activation) is one step in phase 1,
 *              %LB_STEP_MOVE.
 * @LB_OP_ROTATE: Move within its back-end (%LB_STEP_ROTATE; e.g. to the
 *                tail of its list, as lru_move_tail()).
 * @LB_OP_DEL: Unlink from its back-end (%LB_STEP_UNLINK); composed with a
 *             waiting entry of the object (see the DOC block).
 * @LB_OP_NR: Number of operations.
 *
 * The value is stored in the two low bits of the entry's node pointer
 * (&struct lb_node is at least 4-byte aligned).
 */
enum lb_op {
	LB_OP_ADD = 0,
	LB_OP_MOVE = 1,
	LB_OP_ROTATE = 2,
	LB_OP_DEL = 3,
	LB_OP_NR = 4,
};

/**
 * enum lb_op_step - What &lb_backend_ops.apply is asked to do.
 * @LB_STEP_UNLINK: Take the objects off the back-end's lists (the leave
 *                  half of %LB_OP_MOVE, and %LB_OP_DEL).
 * @LB_STEP_LINK: Link objects that left another list of this or another
 *                back-end in this flush (the enter half of %LB_OP_MOVE).
 * @LB_STEP_ROTATE: Move the objects within the back-end (%LB_OP_ROTATE).
 * @LB_STEP_MOVE: The whole of a %LB_OP_MOVE whose target is the object's
 *                own back-end (no &lb_backend_ops.target_of, or one that
 *                names it): take it off its list and link it where it
 *                moves to (e.g. the active list), under one hold. Asked
 *                only of back-ends where a move can stay in its back-end.
 */
enum lb_op_step {
	LB_STEP_UNLINK,
	LB_STEP_LINK,
	LB_STEP_ROTATE,
	LB_STEP_MOVE,
};

/**
 * enum lb_op_result - Positive outcomes of lb_cpubatch_queue().
 * @LB_OP_QUEUED: The operation waits in a batch (an entry of its own).
 * @LB_OP_FLUSHED: This call flushed the batch it queued on; the operation
 *                 has been applied (or, from inside @commit or @apply, is
 *                 queued behind the outer flush).
 * @LB_OP_MERGED: Composed with the object's waiting entry (see the DOC
 *                block); no entry added.
 * @LB_OP_CANCELLED: A %LB_OP_DEL that removed the object's waiting
 *                   %LB_OP_ADD: the object never reached its back-end, and
 *                   no batch or flush holds it any more.
 *
 * 0 and 1 are lb_cpubatch_add()'s values.
 */
enum lb_op_result {
	LB_OP_QUEUED = 0,
	LB_OP_FLUSHED = 1,
	LB_OP_MERGED = 2,
	LB_OP_CANCELLED = 3,
};

/**
 * typedef lb_count_fn - Read an object's reference count for settle.
 * @obj: The object.
 * @arg: The caller's argument.
 *
 * Context: Called by lb_cpubatch_settle_fn() on the calling thread, also
 * under a slot lock: must not block nor call into the instance.
 * Return: the count (>= 0).
 */
typedef long (*lb_count_fn)(void *obj, void *arg);

/**
 * lb_cpubatch_queue() - Queue an operation on an object through the current CPU's batch.
 * @pc: The object's &struct lb_cpubatch.
 * @obj: The object; not NULL.
 * @n: Its tracking node.
 * @op: An &enum lb_op.
 * @weight: The object's size in base units, 1..%LB_WBATCH_WEIGHT_MAX, as
 *          given to its add: every entry counts it towards the batch's
 *          weight cap, and a %LB_OP_DEL that cancels a waiting entry
 *          takes it off the batch's weight.
 *
 * %LB_OP_ADD is lb_cpubatch_add(), except for an object whose previous
 * operation is still pending: a waiting %LB_OP_DEL (its slot is flushed
 * first) or one being committed by another thread (the call waits for
 * it). The other operations go on the lock path (the slot lock, stopping
 * the slot on the rseq path) and follow the per-object order rules of the
 * DOC block: compose with the waiting entry, or flush its slot first; wait
 * for a flush that is applying an earlier operation to the object. Then,
 * as an add, the entry is appended and the batch may flush (full by
 * entries or weight, batching disabled: the causes of &enum
 * lb_flush_cause). The counted mode takes the batch's reference (@get)
 * for a new entry.
 *
 * Context: Any thread. Takes one slot lock, and may take back-end locks
 * (never both at once); may wait for a flush on another thread (see "Draining
 * while holding a lock" in the DOC block). From a callback of @pc it may
 * queue, compose, and flush as lb_cpubatch_add() does, but returns
 * %-EDEADLK when it would have to flush another slot first or wait.
 * Return: an &enum lb_op_result, or, in this order of checks:
 * * %-EINVAL - @pc, @obj or @n is NULL, @op is not an &enum lb_op, @weight
 *   is 0 or above %LB_WBATCH_WEIGHT_MAX, @n is corrupt, or a cancelling
 *   %LB_OP_DEL's @weight exceeds its batch's weight. Nothing changed.
 * * %-EXDEV - @n waits in a batch of another &struct lb_cpubatch.
 * * %-EOPNOTSUPP - @op is not %LB_OP_ADD and the back-end has no
 *   &lb_backend_ops.apply. Nothing changed.
 * * %-EDEADLK - see Context (a state of the object: only when a wait or a
 *   flush of another slot is needed). %-ELOOP - callbacks nested
 *   %LB_CPUBATCH_NEST_MAX deep. Nothing changed.
 * * %-EEXIST - the waiting entry already does this: %LB_OP_ADD after
 *   %LB_OP_ADD, %LB_OP_MOVE or %LB_OP_ROTATE (the object is, or will be,
 *   linked already), %LB_OP_MOVE after %LB_OP_MOVE (a second bump of an
 *   item whose bump waits, folio_activate() of a folio already in the
 *   activate batch: the waiting one does it), %LB_OP_DEL after
 *   %LB_OP_DEL. Nothing changed.
 * * %-EAGAIN - as lb_cpubatch_add() (deferred batches full), or the
 *   object kept moving between slots. Nothing changed.
 */
int lb_cpubatch_queue(struct lb_cpubatch *pc, void *obj, struct lb_node *n,
		   enum lb_op op, uint32_t weight);

/**
 * lb_cpubatch_unqueue() - Take an object's waiting entry out of its batch, never waiting.
 * @pc: The object's &struct lb_cpubatch.
 * @n: Its node.
 * @weight: The object's size as queued (taken off the batch's weight).
 * @op: Where to store the removed entry's operation (may be NULL).
 *
 * For a caller that is about to unlink or free the object itself, under
 * its own locks (memcached's lru_pull_tail() holds an LRU lock and an item
 * lock): the entry is removed under its slot's lock, so no flush will
 * apply it; the counted mode drops the batch's reference (@put) before
 * returning. The caller then knows the object's state: after
 * %LB_OP_ADD it is on no list of the back-end; after the other operations
 * it is where it was before them (linked in &lb_backend_ops.backend_of).
 * Counted in &lb_cpubatch_slot_stats.cancelled.
 *
 * Context: Any thread, under any lock but a slot lock, callbacks of @pc
 * included (for an object not in the batch being flushed). Takes one slot
 * lock (fencing the slot's CPU on the rseq path); never takes a back-end
 * lock, never waits.
 * Return:
 * * 1 - an entry was removed; *@op says which operation it held.
 * * 0 - the object is in no batch and no flush of @pc is applying an
 *   operation to it (or it was never added); an acquire against the
 *   flush that applied its last one.
 * * %-EINVAL - @pc or @n is NULL, @weight is 0 or exceeds the batch's
 *   weight, or @n is corrupt. Nothing changed.
 * * %-EXDEV - @n was last cached by another &struct lb_cpubatch.
 * * %-EBUSY - a flush has swapped the object's entry out and the callbacks
 *   of its last step have not returned: retry without the locks that
 *   flush may need, or treat the object as busy. In the counted mode an add being committed is not
 *   reported (its node reads "not cached" from its swap-out, as before;
 *   its reference shows in the count); in the caller-protected mode it is.
 *   Also while an add of the object is under way on another thread (a
 *   caller whose lock orders everything does not see that).
 * * %-EAGAIN - the object kept moving between slots.
 */
int lb_cpubatch_unqueue(struct lb_cpubatch *pc, struct lb_node *n,
			uint32_t weight, enum lb_op *op);

/**
 * lb_cpubatch_settle_fn() - lb_cpubatch_settle() with a count the caller reads under its own lock.
 * @pc: The object's &struct lb_cpubatch.
 * @obj: The object.
 * @n: Its node.
 * @expected: Every reference the caller can account for, its own
 *            included, not the batch's. >= 0.
 * @count: Reads the object's count (&lb_backend_ops.refcount is not used).
 * @arg: Passed to @count.
 *
 * The reference-expectation check of lb_cpubatch_settle() for counts that
 * are not atomics any thread may drop: the caller holds the lock that
 * protects the count (memcached's item lock), so what @count returns
 * cannot change during the call except through the batch. In the
 * caller-protected mode (no @put) the batch holds no counted reference: a
 * waiting entry with @count == @expected is the only thing in the way, and
 * its slot is flushed (%LB_DRAINED); in the counted mode the batch's
 * reference is in the count, as for lb_cpubatch_settle().
 *
 * Context: as lb_cpubatch_settle(); the lock the caller holds must not be
 * one a callback takes (a DRAINED settle runs the slot's flush). @count
 * runs under a slot lock.
 * Return: as lb_cpubatch_settle(), without %-EOPNOTSUPP; %-EINVAL also
 * when @count is NULL.
 */
int lb_cpubatch_settle_fn(struct lb_cpubatch *pc, void *obj, struct lb_node *n,
			  long expected, lb_count_fn count, void *arg);

/**
 * lb_cpubatch_op_name() - A short name for an operation.
 * @op: The operation.
 *
 * Context: Any thread.
 * Return: "add", "move", "rotate", "del", or "invalid".
 */
const char *lb_cpubatch_op_name(enum lb_op op);

#ifdef __cplusplus
}
#endif

#endif /* LOCKBATCH_CPUBATCH_OP_H */
