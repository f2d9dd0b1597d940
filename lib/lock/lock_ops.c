// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Stock back-end lock callbacks: lb_lock_acquire() and lb_lock_release()
 * with the void * signature of &struct lb_backend_ops.lock and .unlock,
 * so a back-end guarded by an lb_lock needs no wrapper of its own.
 */
#include "config.h"

#include <lockbatch/lock.h>

void lb_lock_op_acquire(void *lock)
{
	if (lock)
		lb_lock_acquire((struct lb_lock *)lock);
}

void lb_lock_op_release(void *lock)
{
	if (lock)
		lb_lock_release((struct lb_lock *)lock);
}
