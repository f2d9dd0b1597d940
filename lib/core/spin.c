// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * The contended path of the ck spinlock shim (lbi_spin_lock(), spin.h).
 */
#include "config.h"

#include "core/backoff.h"
#include "core/spin.h"

void lbi_spin_lock_slow(ck_spinlock_fas_t *l)
{
	struct lbi_backoff b = LBI_BACKOFF_INIT;

	do {
		/* Read-only wait: no cache-line ping-pong while it is held. */
		while (ck_spinlock_fas_locked(l))
			lbi_backoff(&b);
	} while (!ck_spinlock_fas_trylock(l));
}
