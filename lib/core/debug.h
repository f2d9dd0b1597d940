/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Debug assertions at the protocol steps, on with ./configure
 * --enable-debug, as liburcu's urcu_assert_debug(): a broken invariant
 * (an in-flight count going below zero, a slot released by a thread that
 * does not hold its lock, a node leaving a batch it is not in) aborts
 * with its place. Off, the condition is compiled but never evaluated, so
 * it must have no side effects, and it cannot rot.
 */
#ifndef LOCKBATCH_CORE_DEBUG_H
#define LOCKBATCH_CORE_DEBUG_H

#include "core/compiler.h"

/*
 * Not in the negative-control builds, which break the protocol on purpose
 * (LBI_RSEQ_BROKEN_NO_STOP_CHECK): their stress test must catch the damage
 * by its own checks, which is what they show.
 */
#if defined(LB_DEBUG) && !defined(LBI_RSEQ_BROKEN_NO_STOP_CHECK)
#define LBI_DEBUG 1
#else
#define LBI_DEBUG 0
#endif

/* Print "lockbatch: FILE:LINE: FUNC: assertion COND failed" and abort. */
__attribute__((noreturn, cold)) void
lbi_assert_fail(const char *cond, const char *file, int line, const char *func);

#define lbi_assert_debug(cond)						\
	do {								\
		if (LBI_DEBUG && lbi_unlikely(!(cond)))			\
			lbi_assert_fail(#cond, __FILE__, __LINE__,	\
					__func__);			\
	} while (0)

#endif /* LOCKBATCH_CORE_DEBUG_H */
