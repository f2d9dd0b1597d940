/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * An allocation interposer for fault injection: malloc, calloc, realloc,
 * posix_memalign and aligned_alloc defined in the test program take
 * precedence over the C library's (and the sanitizer runtime's, which
 * they forward to through dlsym(RTLD_NEXT), so ASan and LSan still see
 * every block). While armed, allocations are counted and the one numbered
 * fm_fail_at (1-based) fails as the C library fails: NULL or ENOMEM.
 * One translation unit per program includes it.
 */
#ifndef LB_TEST_FAULT_MALLOC_H
#define LB_TEST_FAULT_MALLOC_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

static void *(*fm_malloc)(size_t);
static void *(*fm_calloc)(size_t, size_t);
static void *(*fm_realloc)(void *, size_t);
static int (*fm_memalign)(void **, size_t, size_t);
static void *(*fm_aligned)(size_t, size_t);
static void (*fm_free)(void *);

static int fm_armed;		/* atomic: count and fail */
static unsigned long fm_calls;	/* atomic: allocations while armed */
static unsigned long fm_fail_at;	/* 0: none fails */
static int fm_resolving;
/* dlsym() may calloc before the real one is known: serve it from here. */
static _Alignas(16) unsigned char fm_early[4096];
static size_t fm_early_used;

static void fm_resolve(void)
{
	if (fm_malloc || fm_resolving)
		return;
	fm_resolving = 1;
	fm_calloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
	fm_realloc = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
	fm_memalign = (int (*)(void **, size_t, size_t))dlsym(RTLD_NEXT,
							      "posix_memalign");
	fm_aligned = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "aligned_alloc");
	fm_free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
	fm_malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
	fm_resolving = 0;
}

/* Whether this allocation fails; counts it while armed. */
static int fm_fail(void)
{
	unsigned long n;

	if (!__atomic_load_n(&fm_armed, __ATOMIC_RELAXED))
		return 0;
	n = __atomic_add_fetch(&fm_calls, 1, __ATOMIC_RELAXED);
	return n == fm_fail_at;
}

/* Arm: count from zero and fail allocation @fail_at (0: none). */
static inline void fm_arm(unsigned long fail_at)
{
	fm_resolve();
	fm_fail_at = fail_at;
	__atomic_store_n(&fm_calls, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&fm_armed, 1, __ATOMIC_RELAXED);
}

/* Disarm; returns the allocations counted. */
static inline unsigned long fm_disarm(void)
{
	__atomic_store_n(&fm_armed, 0, __ATOMIC_RELAXED);
	return __atomic_load_n(&fm_calls, __ATOMIC_RELAXED);
}

void *malloc(size_t n)
{
	fm_resolve();
	if (fm_fail()) {
		errno = ENOMEM;
		return NULL;
	}
	return fm_malloc(n);
}

void *calloc(size_t n, size_t size)
{
	fm_resolve();
	if (!fm_calloc) {	/* inside dlsym() */
		size_t want = (n * size + 15) & ~(size_t)15;

		if (want > sizeof(fm_early) - fm_early_used)
			return NULL;
		fm_early_used += want;
		return fm_early + fm_early_used - want;	/* already zero */
	}
	if (fm_fail()) {
		errno = ENOMEM;
		return NULL;
	}
	return fm_calloc(n, size);
}

void *realloc(void *p, size_t n)
{
	fm_resolve();
	if (fm_fail()) {
		errno = ENOMEM;
		return NULL;
	}
	return fm_realloc(p, n);
}

int posix_memalign(void **p, size_t align, size_t n)
{
	fm_resolve();
	if (fm_fail())
		return ENOMEM;
	return fm_memalign(p, align, n);
}

void *aligned_alloc(size_t align, size_t n)
{
	fm_resolve();
	if (fm_fail()) {
		errno = ENOMEM;
		return NULL;
	}
	return fm_aligned(align, n);
}

void free(void *p)
{
	if ((unsigned char *)p >= fm_early &&
	    (unsigned char *)p < fm_early + sizeof(fm_early))
		return;
	fm_resolve();
	fm_free(p);
}

#endif /* LB_TEST_FAULT_MALLOC_H */
