/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#ifndef LOCKBATCH_FREELIST_H
#define LOCKBATCH_FREELIST_H

#include <stddef.h>
#include <stdint.h>

#include <lockbatch/pcp.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * DOC: Fixed-size free list over an arena
 *
 * &struct lb_freelist hands out fixed-size objects carved from one
 * contiguous arena, either the caller's memory or an anonymous mapping it
 * makes itself. It is the stock bulk back-end for &struct lb_pcp: the
 * shared pool that sits behind the per-CPU slots, as the buddy free lists
 * sit behind ``per_cpu_pages``. lb_freelist_pcp_backend() returns the
 * ready-made &struct lb_pcp_backend.
 *
 * Objects come from a LIFO list of returned objects first (the most
 * recently freed object is the cache-hottest), then from an untouched
 * tail of the arena, one object at a time, so an arena made by the list
 * is populated only as far as objects were ever handed out: its resident
 * size follows the high-water mark of use, not its capacity. A free
 * object links through its first pointer-sized word.
 *
 * A cache in front of the list writes its own links into every object a
 * refill brings, and lb_pcp's refills grow geometrically while allocations
 * dominate (up to ``batch << 5`` objects): carving all of one from the
 * untouched tail would fault in pages nobody asked for yet. The lb_pcp
 * back-end therefore carves at most @fresh_bytes of never-used objects per
 * refill (a short refill is allowed by &struct lb_pcp_backend); returned
 * objects, resident already, are handed out without that limit. TCMalloc's
 * central lists move 64 KiB per transfer for the same reason.
 *
 * Every object given back is checked to lie inside the arena on an object
 * boundary; with %LB_FREELIST_F_DEBUG a bitmap also catches an object
 * returned twice. A bulk free that fails a check frees nothing.
 *
 * Concurrency: not thread-safe. Every call on one list needs external
 * exclusion, which lb_pcp's back-end lock provides when the list is used
 * through lb_freelist_pcp_backend(); lb_freelist_stats() too.
 */

/**
 * define LB_FREELIST_MIN_OBJ_SIZE - Smallest object size accepted.
 *
 * What lb_pcp links through (%LB_PCP_MIN_OBJ_SIZE).
 */
#define LB_FREELIST_MIN_OBJ_SIZE LB_PCP_MIN_OBJ_SIZE
/**
 * define LB_FREELIST_F_DEBUG - Flag of &lb_freelist_conf.flags.
 *
 * Keep a bitmap of free objects so a double free fails with %-EEXIST.
 */
#define LB_FREELIST_F_DEBUG 0x1u

/**
 * struct lb_freelist_conf - Creation parameters.
 * @obj_size: Object size in bytes, a multiple of ``sizeof(void *)`` and
 *	at least %LB_FREELIST_MIN_OBJ_SIZE. Objects are @obj_size apart from
 *	the arena's start; they are aligned to @obj_size when it is a power of
 *	two no larger than the arena's alignment (a page for a mapped arena).
 * @arena: Caller's memory, pointer-aligned; NULL to map @arena_size bytes
 *	of anonymous memory (``MAP_NORESERVE``: pages are populated on first
 *	use).
 * @arena_size: Bytes of the arena; at least one object. The capacity is
 *	``arena_size / obj_size`` objects (the remainder is not used).
 * @flags: %LB_FREELIST_F_DEBUG.
 * @fresh_bytes: Most bytes of never-used objects one alloc_bulk call of
 *	the lb_pcp back-end carves from the arena (at least one object); 0
 *	for %LB_FREELIST_FRESH_BYTES, ``SIZE_MAX`` for no limit.
 *	lb_freelist_alloc_bulk() itself is not limited.
 */
struct lb_freelist_conf {
	size_t obj_size;
	void *arena;
	size_t arena_size;
	unsigned int flags;
	size_t fresh_bytes;
};

/**
 * define LB_FREELIST_FRESH_BYTES - Default &lb_freelist_conf.fresh_bytes.
 *
 * 64 KiB, TCMalloc's transfer size between its central and per-CPU lists.
 */
#define LB_FREELIST_FRESH_BYTES ((size_t)64 << 10)

/**
 * define LB_FREELIST_CONF_INIT - Static initializer of &struct lb_freelist_conf.
 * @obj_size: Object size in bytes.
 * @arena_size: Bytes to map (the arena is mapped, no flags). Valid C and
 *	C++ (positional).
 */
#define LB_FREELIST_CONF_INIT(obj_size, arena_size)			\
	{ (obj_size), 0, (arena_size), 0, 0 }

/**
 * struct lb_freelist_stats - Counters.
 * @capacity: Objects the arena holds.
 * @free: Objects in the list now (returned plus never handed out).
 * @out: Objects handed out now (``capacity - free``).
 * @peak_out: Most objects handed out at once.
 * @touched: Objects ever handed out (the populated prefix of the arena).
 * @alloc_calls: lb_freelist_alloc_bulk() calls.
 * @free_calls: lb_freelist_free_bulk() calls that succeeded.
 * @rejected: Objects refused by a check (bulk frees that failed, and
 *	objects dropped by the lb_pcp back-end's free_bulk, which cannot fail).
 */
struct lb_freelist_stats {
	uint64_t capacity;
	uint64_t free;
	uint64_t out;
	uint64_t peak_out;
	uint64_t touched;
	uint64_t alloc_calls;
	uint64_t free_calls;
	uint64_t rejected;
};

struct lb_freelist;

/**
 * lb_freelist_create() - Create a free list over an arena.
 * @fl: Where to store the list.
 * @conf: Parameters.
 *
 * Context: Any thread. Allocates the list (and the bitmap in debug mode);
 * maps the arena when @conf->arena is NULL.
 * Return: 0; %-EINVAL if @fl or @conf is NULL, @obj_size is below
 * %LB_FREELIST_MIN_OBJ_SIZE or not a multiple of ``sizeof(void *)``,
 * @arena is not pointer-aligned, @arena_size holds no object or
 * @flags has unknown bits; %-ENOMEM if memory or the mapping could not be
 * had. *@fl is set only on success.
 */
int lb_freelist_create(struct lb_freelist **fl,
		       const struct lb_freelist_conf *conf);

/**
 * lb_freelist_destroy() - Free the list (and unmap the arena it mapped).
 * @fl: The list.
 *
 * Objects still handed out become invalid if the list mapped the arena;
 * a caller's arena is left as it is.
 *
 * Context: No other thread may use @fl during or after the call.
 * Return: 0, or %-EINVAL if @fl is NULL.
 */
int lb_freelist_destroy(struct lb_freelist *fl);

/**
 * lb_freelist_alloc_bulk() - Take up to @n objects.
 * @fl: The list.
 * @out: Where to store them.
 * @n: How many are wanted.
 *
 * Pops returned objects (most recently freed first), then carves new
 * ones from the untouched tail of the arena.
 *
 * Context: Caller serialises calls on @fl.
 * Return: the number stored (0 when the arena is exhausted), or %-EINVAL
 * if @fl is NULL, or @out is NULL with @n > 0.
 */
int lb_freelist_alloc_bulk(struct lb_freelist *fl, void **out, unsigned int n);

/**
 * lb_freelist_free_bulk() - Give back @n objects.
 * @fl: The list.
 * @objs: The objects.
 * @n: How many.
 *
 * All objects are checked first; if one fails, none is freed.
 *
 * Context: Caller serialises calls on @fl.
 * Return: 0; %-EINVAL if @fl is NULL, @objs is NULL with @n > 0, or an
 * object is NULL, outside the arena or not on an object boundary;
 * %-EEXIST in debug mode if an object is already free (or appears twice
 * in @objs). On error nothing changed but @rejected.
 */
int lb_freelist_free_bulk(struct lb_freelist *fl, void *const *objs,
			  unsigned int n);

/**
 * lb_freelist_owns() - Whether a pointer is an object of the arena.
 * @fl: The list.
 * @obj: The pointer.
 *
 * Context: Any thread (reads only immutable fields).
 * Return: 1 if @obj is inside the arena on an object boundary, 0 if not,
 * %-EINVAL if @fl is NULL.
 */
int lb_freelist_owns(const struct lb_freelist *fl, const void *obj);

/**
 * lb_freelist_stats() - Snapshot the counters.
 * @fl: The list.
 * @out: Where to store them.
 *
 * Context: Caller serialises with calls on @fl. Behind an &struct lb_pcp
 * (lb_freelist_pcp_backend()) the calls come from the cache under its
 * back-end lock: create the cache with a lock of your own
 * (&lb_pcp_conf.lock) and hold it around this call, or call it after
 * lb_pcp_destroy().
 * Return: 0, or %-EINVAL if @fl or @out is NULL.
 */
int lb_freelist_stats(const struct lb_freelist *fl,
		      struct lb_freelist_stats *out);

/**
 * lb_freelist_pcp_backend() - The list as an lb_pcp bulk back-end.
 * @fl: The list.
 * @out: Where to store the operations (ctx is @fl).
 *
 * The operations accept order 0 only: one lb_pcp object is one list
 * object (create the cache with ``max_order = 0``). alloc_bulk returns
 * %-EINVAL for another order, and carves at most
 * &lb_freelist_conf.fresh_bytes of never-used objects per call (so fewer
 * than asked when the returned objects do not cover the rest); free_bulk,
 * which cannot fail, counts the objects of a failed check in @rejected and
 * keeps them out of the list.
 * They run under the cache's back-end lock, which is the exclusion the
 * list needs, and are called once per back-end lock hold (lb_pcp).
 *
 * Context: Any thread.
 * Return: 0, or %-EINVAL if @fl or @out is NULL.
 */
int lb_freelist_pcp_backend(struct lb_freelist *fl,
			    struct lb_pcp_backend *out);

#ifdef __cplusplus
}
#endif

#endif /* LOCKBATCH_FREELIST_H */
