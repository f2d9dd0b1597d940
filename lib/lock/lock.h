/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The lock module's face inside the library: what other modules may call
 * of lb_lock beyond its public header.
 */
#ifndef LOCKBATCH_LOCK_LOCK_H
#define LOCKBATCH_LOCK_LOCK_H

#include <stdbool.h>
#include <stdint.h>

#include <lockbatch/lock.h>

/*
 * lb_lock_acquire() that reports whether it waited, how long, and how much
 * of that it spent yielding the CPU.
 */
bool lbi_lock_acquire_wait(struct lb_lock *l, bool *contended,
			   uint64_t *wait_ns, uint64_t *yield_ns);

#endif /* LOCKBATCH_LOCK_LOCK_H */
