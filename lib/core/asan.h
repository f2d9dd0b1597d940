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
#include <sanitizer/asan_interface.h>

/* A load (@is_write 0) or store of @size bytes at @p, as ASan checks one. */
static inline void lbi_asan_access(const volatile void *p, size_t size,
				   int is_write)
{
	void *addr = (void *)(uintptr_t)p;

	if (__builtin_expect(__asan_region_is_poisoned(addr, size) != NULL, 0))
		__asan_report_error(__builtin_return_address(0),
				    __builtin_frame_address(0),
				    __builtin_frame_address(0), addr, is_write,
				    size);
}
#define lbi_asan_load(p) lbi_asan_access((p), sizeof(*(p)), 0)
#define lbi_asan_store(p) lbi_asan_access((p), sizeof(*(p)), 1)
#else
#define lbi_asan_load(p) ((void)(p))
#define lbi_asan_store(p) ((void)(p))
#endif

#endif /* LOCKBATCH_CORE_ASAN_H */
