/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#ifndef LOCKBATCH_NODETAB_H
#define LOCKBATCH_NODETAB_H

#include <stdint.h>

#include <lockbatch/cpubatch.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * DOC: Side table of nodes, for objects whose layout must not change
 *
 * &struct lb_nodetab keeps the &struct lb_node of objects that cannot
 * embed one, keyed by the object's address. lb_nodetab_add(),
 * lb_nodetab_drain_obj() and lb_nodetab_settle() are lb_cpubatch_add(),
 * lb_cpubatch_drain_obj() and lb_cpubatch_settle() with the node looked up
 * (or, by an add, created) in the table; they return the same values and
 * the same errors, plus the table's own (%-ENOMEM, %-EOPNOTSUPP).
 *
 * Lifetime of an entry: it exists exactly while a batch or a flush may
 * reference the object. An add creates it (or finds it, if an earlier
 * flush of the object is still in flight), and the object's flush frees it
 * when the caller's last callback for the object calls
 * lb_nodetab_release(): @put if the instance has one, else @after if it
 * has one, else @commit, once per object, after the callback's own work on
 * it. So an object without an entry is in no batch and no flush holds it,
 * and a drain or settle finds nothing to wait for. An entry is also kept
 * while a drain or settle call uses it. The table frees no memory behind
 * a caller's back: lb_nodetab_destroy() fails with %-EBUSY while entries
 * exist.
 *
 * An instance used through a table must have no @get (%-EOPNOTSUPP): the
 * table counts one hold per add and one release per commit, and @get
 * would be undone by a @put for adds the table cannot see refused. A
 * caller that wants the batch to hold a reference takes it before
 * lb_nodetab_add() (dropping it if the add fails) and drops it in @put.
 *
 * Structure: a fixed array of buckets, each a ck spinlock over a chain of
 * entries (liburcu's <urcu/hlist.h>) and a few free entries for reuse.
 * liburcu's lock-free hash table (cds_lfht) was considered and not used:
 * entries live only while an object waits, so every add inserts one and
 * every commit deletes one, and a cds_lfht delete frees through call_rcu()
 * (a grace period, a worker thread, fork handlers the application must
 * call); lookups without a write, where RCU wins, are only the rare drains.
 * The bucket lock is a leaf: nothing is called while it is held.
 *
 * Concurrency: every call but lb_nodetab_destroy() may run concurrently
 * with every other, on any instances; lb_nodetab_release() may be called
 * from inside @commit, @after and @put. fork(): the child may use the
 * table only if no thread of the parent was inside a table call (bucket
 * locks are not held across fork()).
 */

struct lb_nodetab;

/**
 * define LB_NODETAB_BUCKETS - Default bucket count (4096).
 *
 * Entries alive are bounded by the objects waiting in batches and flushes
 * in flight (at most 31 per slot plus those in flight), so 4096 buckets
 * keep chains short for 64 slots and more.
 */
#define LB_NODETAB_BUCKETS 4096u

/**
 * define LB_NODETAB_BUCKETS_MAX - Largest bucket count accepted (2^24).
 */
#define LB_NODETAB_BUCKETS_MAX (1u << 24)

/**
 * struct lb_nodetab_stats - Counters of a table.
 * @entries: Entries alive (objects a batch or flush may reference, plus
 *           those pinned by a drain or settle in progress).
 * @free: Entries kept for reuse.
 * @adds: lb_nodetab_add() calls that created an entry.
 * @reuses: ... that found one: the object still waits (the add is then
 *          refused, %-EEXIST) or a flush of it is still in flight.
 * @releases: lb_nodetab_release() calls that dropped a hold.
 *
 * Each bucket is read under its lock; the sum is not one snapshot.
 */
struct lb_nodetab_stats {
	uint64_t entries;
	uint64_t free;
	uint64_t adds;
	uint64_t reuses;
	uint64_t releases;
};

/**
 * lb_nodetab_create() - Allocate an empty side table.
 * @tp: Where to store the new table.
 * @nr_buckets: Bucket count, a power of two up to %LB_NODETAB_BUCKETS_MAX;
 *              0 means %LB_NODETAB_BUCKETS.
 *
 * One table may serve several &struct lb_cpubatch instances: an entry's
 * node records the instance that cached the object last, as an embedded
 * node does.
 *
 * Context: Any thread. Allocates.
 * Return: 0; %-EINVAL if @tp is NULL or @nr_buckets is not a power of two
 * or too large; %-ENOMEM if memory ran out. *@tp is set only on success.
 */
int lb_nodetab_create(struct lb_nodetab **tp, unsigned int nr_buckets);

/**
 * lb_nodetab_destroy() - Free an empty table.
 * @t: The table.
 *
 * Context: No other thread may use @t during or after the call.
 * Return: 0; %-EINVAL if @t is NULL; %-EBUSY if entries exist (objects
 * still waiting or in flight: drain the instances first); nothing freed.
 */
int lb_nodetab_destroy(struct lb_nodetab *t);

/**
 * lb_nodetab_add() - lb_cpubatch_add() with the object's node in the table.
 * @t: The table.
 * @pc: The instance; it must have no @get.
 * @obj: The object; its address is the key.
 * @weight: Its size in base units, 1..%LB_WBATCH_WEIGHT_MAX.
 *
 * Finds the object's entry or creates one, holds it, and adds @obj with
 * the entry's node. The hold is dropped by lb_nodetab_release() from the
 * callback that ends the object's flush (see the DOC block), or here when
 * the add fails.
 *
 * Source: lb_cpubatch_add(); the side table holds the node outside the
 * object, for a program whose object header cannot grow (memcached's
 * 48-byte item: a larger header costs hit ratio at a fixed memory limit).
 *
 * Context: as lb_cpubatch_add(); takes one bucket lock before and, on
 * failure, after it; allocates an entry when the bucket has none free.
 * Return: as lb_cpubatch_add() (0, 1, %-EINVAL, %-EEXIST, %-EAGAIN), and:
 * * %-EINVAL - also when @t is NULL.
 * * %-EOPNOTSUPP - @pc has a @get callback. Nothing changed.
 * * %-ENOMEM - no entry could be allocated. Nothing changed.
 */
int lb_nodetab_add(struct lb_nodetab *t, struct lb_cpubatch *pc, void *obj,
		   uint32_t weight);

/**
 * lb_nodetab_release() - End the table's hold for one committed add.
 * @t: The table.
 * @obj: The object.
 *
 * Call it once per committed object, from the last callback the instance
 * runs for it (@put, else @after, else @commit), after that callback is
 * done with the object: the entry may be freed, or taken at once by an
 * add of another object, here (the flush stores nothing into it after
 * the callbacks of the object's last step begin), and drains of the
 * object return at once from then on.
 *
 * Context: Any thread, callbacks included (takes one bucket lock).
 * Return: 0; %-EINVAL if @t or @obj is NULL; %-ENOENT if @obj has no
 * entry (a release without an add: nothing changed).
 */
int lb_nodetab_release(struct lb_nodetab *t, void *obj);

/**
 * lb_nodetab_drain_obj() - lb_cpubatch_drain_obj() for an object of the table.
 * @t: The table.
 * @pc: The instance.
 * @obj: The object.
 *
 * An object without an entry is in no batch of any instance and no flush
 * holds it: 0 at once (where an embedded node never added would also give
 * 0). Otherwise the entry is held for the call and the object's node
 * drained (same contract: when the call returns no batch and no flush of
 * @pc references the object).
 *
 * Context: as lb_cpubatch_drain_obj(); takes a bucket lock before and after.
 * Return: as lb_cpubatch_drain_obj() (1, 0, %-EINVAL, %-EXDEV, %-EAGAIN,
 * %-EDEADLK, %-ELOOP); %-EINVAL also when @t or @obj is NULL.
 */
int lb_nodetab_drain_obj(struct lb_nodetab *t, struct lb_cpubatch *pc,
			 void *obj);

/**
 * lb_nodetab_settle() - lb_cpubatch_settle() for an object of the table.
 * @t: The table.
 * @pc: The instance.
 * @obj: The object.
 * @expected: As lb_cpubatch_settle().
 *
 * With an entry, lb_cpubatch_settle() on its node. Without one (or with
 * one whose add has not reached a batch yet) the object is in no batch and
 * no flush holds it, as for an embedded node that was committed: the count
 * alone decides (%LB_SETTLED, %LB_BUSY or %-ERANGE), where an embedded node
 * never added would give %-ENOENT.
 *
 * Context: as lb_cpubatch_settle().
 * Return: as lb_cpubatch_settle(); %-EINVAL also when @t is NULL; never
 * %-ENOENT.
 */
int lb_nodetab_settle(struct lb_nodetab *t, struct lb_cpubatch *pc, void *obj,
		      long expected);

/**
 * lb_nodetab_stats() - Snapshot the table's counters.
 * @t: The table.
 * @out: Where to store them.
 *
 * Context: Any thread; takes each bucket lock in turn.
 * Return: 0, or %-EINVAL if @t or @out is NULL.
 */
int lb_nodetab_stats(struct lb_nodetab *t, struct lb_nodetab_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* LOCKBATCH_NODETAB_H */
