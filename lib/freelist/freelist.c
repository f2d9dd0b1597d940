// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lb_freelist: a fixed-size LIFO free list over one arena, and its lb_pcp
 * back-end operations.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <lockbatch/freelist.h>

#define BITS_PER_WORD (sizeof(unsigned long) * CHAR_BIT)

struct lb_freelist {
	char *base;		/* first object */
	size_t obj_size;
	int shift;		/* log2(obj_size), or -1 if not a power of 2 */
	uint64_t capacity;
	uint64_t touched;	/* objects [0, touched) were handed out once */
	void *head;		/* returned objects, linked through word 0 */
	uint64_t nr_listed;	/* objects on @head */
	unsigned int fresh_max;	/* never-used objects per pcp alloc_bulk */
	bool mapped;
	size_t map_size;
	unsigned long *out_bits; /* debug: bit set while handed out */
	struct lb_freelist_stats st;
};

static int log2_exact(size_t v)
{
	int s = 0;

	if (v & (v - 1))
		return -1;
	while ((size_t)1 << s != v)
		s++;
	return s;
}

static int check_conf(const struct lb_freelist_conf *c)
{
	if (c->obj_size < LB_FREELIST_MIN_OBJ_SIZE ||
	    c->obj_size % sizeof(void *) ||
	    ((uintptr_t)c->arena % sizeof(void *)) ||
	    c->arena_size < c->obj_size || (c->flags & ~LB_FREELIST_F_DEBUG))
		return -EINVAL;
	return 0;
}

/* &lb_freelist_conf.fresh_bytes in objects: at least one. */
static unsigned int fresh_max(const struct lb_freelist_conf *c)
{
	size_t b = c->fresh_bytes ? c->fresh_bytes : LB_FREELIST_FRESH_BYTES;
	size_t n = b / c->obj_size;

	return n < 1 ? 1 : n > UINT_MAX ? UINT_MAX : (unsigned int)n;
}

static int map_arena(struct lb_freelist *fl, const struct lb_freelist_conf *c)
{
	void *a;

	if (c->arena) {
		fl->base = c->arena;
		return 0;
	}
	a = mmap(NULL, c->arena_size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (a == MAP_FAILED)
		return -ENOMEM;
	fl->base = a;
	fl->mapped = true;
	fl->map_size = c->arena_size;
	return 0;
}

int lb_freelist_create(struct lb_freelist **flp,
		       const struct lb_freelist_conf *c)
{
	struct lb_freelist *fl;
	int err;

	if (!flp || !c)
		return -EINVAL;
	err = check_conf(c);
	if (err)
		return err;
	fl = calloc(1, sizeof(*fl));
	if (!fl)
		return -ENOMEM;
	fl->obj_size = c->obj_size;
	fl->shift = log2_exact(c->obj_size);
	fl->capacity = c->arena_size / c->obj_size;
	fl->fresh_max = fresh_max(c);
	if (c->flags & LB_FREELIST_F_DEBUG) {
		size_t words = (fl->capacity + BITS_PER_WORD - 1) /
			       BITS_PER_WORD;

		fl->out_bits = calloc(words, sizeof(unsigned long));
		if (!fl->out_bits) {
			free(fl);
			return -ENOMEM;
		}
	}
	err = map_arena(fl, c);
	if (err) {
		free(fl->out_bits);
		free(fl);
		return err;
	}
	fl->st.capacity = fl->capacity;
	*flp = fl;
	return 0;
}

int lb_freelist_destroy(struct lb_freelist *fl)
{
	if (!fl)
		return -EINVAL;
	if (fl->mapped)
		munmap(fl->base, fl->map_size);
	free(fl->out_bits);
	free(fl);
	return 0;
}

/* Index of @obj in the arena, or UINT64_MAX if it is not an object. */
static uint64_t obj_index(const struct lb_freelist *fl, const void *obj)
{
	uintptr_t off = (uintptr_t)obj - (uintptr_t)fl->base;
	uint64_t idx;

	if ((uintptr_t)obj < (uintptr_t)fl->base)
		return UINT64_MAX;
	if (fl->shift >= 0) {
		if (off & (fl->obj_size - 1))
			return UINT64_MAX;
		idx = off >> fl->shift;
	} else {
		if (off % fl->obj_size)
			return UINT64_MAX;
		idx = off / fl->obj_size;
	}
	return idx < fl->touched ? idx : UINT64_MAX;
}

static bool test_and_flip(unsigned long *bits, uint64_t i, bool want)
{
	unsigned long m = 1ul << (i % BITS_PER_WORD);
	unsigned long *w = &bits[i / BITS_PER_WORD];

	if (!!(*w & m) != want)
		return false;
	*w ^= m;
	return true;
}

/* Up to @n objects, of which at most @fresh never handed out before. */
static int alloc_bulk(struct lb_freelist *fl, void **out, unsigned int n,
		      unsigned int fresh)
{
	unsigned int i;

	fl->st.alloc_calls++;
	for (i = 0; i < n; i++) {
		void *o = fl->head;

		if (o) {
			fl->head = *(void **)o;
			fl->nr_listed--;
		} else if (fl->touched < fl->capacity && fresh) {
			o = fl->base + fl->touched++ * fl->obj_size;
			fresh--;
		} else {
			break;
		}
		if (fl->out_bits)
			test_and_flip(fl->out_bits, obj_index(fl, o), false);
		out[i] = o;
	}
	fl->st.out += i;
	if (fl->st.out > fl->st.peak_out)
		fl->st.peak_out = fl->st.out;
	return (int)i;
}

int lb_freelist_alloc_bulk(struct lb_freelist *fl, void **out, unsigned int n)
{
	if (!fl || (!out && n))
		return -EINVAL;
	return alloc_bulk(fl, out, n, UINT_MAX);
}

/* Debug mode: clear each object's out bit; on a failure restore them. */
static int debug_check(struct lb_freelist *fl, void *const *objs,
		       unsigned int n)
{
	unsigned int i, j;

	for (i = 0; i < n; i++) {
		if (!test_and_flip(fl->out_bits, obj_index(fl, objs[i]),
				   true)) {
			for (j = 0; j < i; j++)
				test_and_flip(fl->out_bits,
					      obj_index(fl, objs[j]), false);
			return -EEXIST;
		}
	}
	return 0;
}

int lb_freelist_free_bulk(struct lb_freelist *fl, void *const *objs,
			  unsigned int n)
{
	unsigned int i;
	int err;

	if (!fl || (!objs && n))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (!objs[i] || obj_index(fl, objs[i]) == UINT64_MAX) {
			fl->st.rejected += n;
			return -EINVAL;
		}
	}
	if (fl->out_bits) {
		err = debug_check(fl, objs, n);
		if (err) {
			fl->st.rejected += n;
			return err;
		}
	}
	for (i = 0; i < n; i++) {
		*(void **)objs[i] = fl->head;
		fl->head = objs[i];
	}
	fl->nr_listed += n;
	fl->st.out -= n;
	fl->st.free_calls++;
	return 0;
}

int lb_freelist_owns(const struct lb_freelist *fl, const void *obj)
{
	uintptr_t off;

	if (!fl)
		return -EINVAL;
	if ((uintptr_t)obj < (uintptr_t)fl->base)
		return 0;
	off = (uintptr_t)obj - (uintptr_t)fl->base;
	return off < fl->capacity * fl->obj_size && off % fl->obj_size == 0;
}

int lb_freelist_stats(const struct lb_freelist *fl,
		      struct lb_freelist_stats *out)
{
	if (!fl || !out)
		return -EINVAL;
	*out = fl->st;
	out->touched = fl->touched;
	out->free = fl->capacity - fl->st.out;
	return 0;
}

static int pcp_alloc_bulk(void *ctx, unsigned int order, void **out,
			  unsigned int n)
{
	struct lb_freelist *fl = ctx;

	if (order)
		return -EINVAL;
	return alloc_bulk(fl, out, n, fl->fresh_max);
}

/*
 * free_bulk cannot report an error to lb_pcp, so a batch with a bad object
 * is retried object by object: the good ones are kept, the bad ones are
 * counted in @rejected (by lb_freelist_free_bulk()) and dropped.
 */
static void pcp_free_bulk(void *ctx, unsigned int order, void **objs,
			  unsigned int n)
{
	struct lb_freelist *fl = ctx;
	unsigned int i;

	if (order) {
		fl->st.rejected += n;
		return;
	}
	if (lb_freelist_free_bulk(fl, objs, n) == 0)
		return;
	fl->st.rejected -= n;
	for (i = 0; i < n; i++)
		lb_freelist_free_bulk(fl, &objs[i], 1);
}

int lb_freelist_pcp_backend(struct lb_freelist *fl, struct lb_pcp_backend *out)
{
	if (!fl || !out)
		return -EINVAL;
	out->alloc_bulk = pcp_alloc_bulk;
	out->free_bulk = pcp_free_bulk;
	out->ctx = fl;
	return 0;
}
