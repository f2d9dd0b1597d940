/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * ThreadSanitizer: whether this build is instrumented, and the annotations
 * the library adds where TSan cannot see an ordering (ck's inline-asm
 * atomics).
 */
#ifndef LOCKBATCH_CORE_TSAN_H
#define LOCKBATCH_CORE_TSAN_H

#if defined(__SANITIZE_THREAD__)
#define LB_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define LB_TSAN 1
#endif
#endif

#ifdef LB_TSAN
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
void AnnotateIgnoreReadsBegin(const char *file, int line);
void AnnotateIgnoreReadsEnd(const char *file, int line);
void AnnotateIgnoreWritesBegin(const char *file, int line);
void AnnotateIgnoreWritesEnd(const char *file, int line);
#define lbi_tsan_acquire(p) __tsan_acquire((void *)(p))
#define lbi_tsan_release(p) __tsan_release((void *)(p))
/*
 * ck's queue locks mix plain C stores to queue nodes with inline-asm
 * atomics TSan cannot see; the nodes are ordered by those atomics, so the
 * node accesses inside ck's lock and unlock calls are hidden from TSan.
 */
#define lbi_tsan_ignore_begin()						\
	do {								\
		AnnotateIgnoreReadsBegin(__FILE__, __LINE__);		\
		AnnotateIgnoreWritesBegin(__FILE__, __LINE__);		\
	} while (0)
#define lbi_tsan_ignore_end()						\
	do {								\
		AnnotateIgnoreWritesEnd(__FILE__, __LINE__);		\
		AnnotateIgnoreReadsEnd(__FILE__, __LINE__);		\
	} while (0)
#else
/*
 * A regular build: weak references, NULL unless the process runs with the
 * TSan runtime (a client built with -fsanitize=thread). Then the client's
 * TSan sees every ordering the library makes with ck's atomics, which it
 * cannot see in uninstrumented code, and callbacks touching plain user
 * data under the library's locks stay clean. Elsewhere: one load and a
 * not-taken branch, which the owner paths avoid by choosing at creation
 * (lbi_tsan_active()). The library's own accesses are not instrumented,
 * so nothing needs ignoring.
 */
void __tsan_acquire(void *addr) __attribute__((weak));
void __tsan_release(void *addr) __attribute__((weak));
#define lbi_tsan_acquire(p)						\
	do {								\
		if (__tsan_acquire)					\
			__tsan_acquire((void *)(p));			\
	} while (0)
#define lbi_tsan_release(p)						\
	do {								\
		if (__tsan_release)					\
			__tsan_release((void *)(p));			\
	} while (0)
#define lbi_tsan_ignore_begin() do { } while (0)
#define lbi_tsan_ignore_end() do { } while (0)
#endif

#endif /* LOCKBATCH_CORE_TSAN_H */
