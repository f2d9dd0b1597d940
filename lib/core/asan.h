/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * AddressSanitizer: whether this build is instrumented, and the reports
 * the library makes where ASan cannot see an access (ck's inline asm).
 */
#ifndef LOCKBATCH_CORE_ASAN_H
#define LOCKBATCH_CORE_ASAN_H

#include <stddef.h>
#include <stdint.h>

/*
 * AddressSanitizer cannot see ck's inline-asm loads and stores. The node
 * accessors (cpubatch/node.h) report theirs with these, so that an ASan
 * build of the library catches a store into an object its caller freed.
 */
#if defined(__SANITIZE_ADDRESS__)
#define LB_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LB_ASAN 1
#endif
#endif

#ifdef LB_ASAN
void __asan_loadN(void *addr, size_t size);
void __asan_storeN(void *addr, size_t size);
#define lbi_asan_load(p) __asan_loadN((void *)(uintptr_t)(p), sizeof(*(p)))
#define lbi_asan_store(p) __asan_storeN((void *)(uintptr_t)(p), sizeof(*(p)))
#else
#define lbi_asan_load(p) ((void)(p))
#define lbi_asan_store(p) ((void)(p))
#endif

#endif /* LOCKBATCH_CORE_ASAN_H */
