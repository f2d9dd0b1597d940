/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Branch hints, the bottom of the library: every other file may use them.
 */
#ifndef LOCKBATCH_CORE_COMPILER_H
#define LOCKBATCH_CORE_COMPILER_H

#define lbi_likely(x) __builtin_expect(!!(x), 1)
#define lbi_unlikely(x) __builtin_expect(!!(x), 0)


#endif /* LOCKBATCH_CORE_COMPILER_H */
