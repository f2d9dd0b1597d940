// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lb_pcp around fork(): the tick and decay-thread state of every cache.
 *
 * The slot core's fork hook (slots/slots.c) leaves the child every slot and
 * the back-end consistent and unlocked, but not the two mutexes of the
 * decay machinery: a fork() while the decay thread was inside
 * lb_pcp_tick() copied tick_mutex held by a thread the child does not
 * have, and thr_running still names that thread. One hook per cache in
 * the library's fork registry (core/fork.h) takes its tick_mutex and then
 * its thr_mutex before fork() (waiting out a tick in progress) and releases
 * them in both processes afterwards; the child also forgets the decay
 * thread and gets a fresh thr_cond (the parent's may have counted the
 * decay thread as a waiter, and glibc's pthread_cond_destroy() would wait
 * for it). Like glibc's malloc with its arenas.
 *
 * Lock order. A tick holds tick_mutex, then slot locks, then the back-end
 * lock; a back-end callback on a tick may take thr_mutex (decay_thread_stop
 * or _start), of this cache or of another. So prepare takes tick_mutex
 * before thr_mutex, and every cache's before any slot lock of any slot
 * array: the hook is an early one (&lbi_fork_hook.early).
 */
#include "config.h"

#include <pthread.h>

#include "pcp/pcp.h"

static void pcp_fork_prepare(void *arg)
{
	struct lb_pcp *p = arg;

	pthread_mutex_lock(&p->tick_mutex);
	pthread_mutex_lock(&p->thr_mutex);
}

static void pcp_fork_parent(void *arg)
{
	struct lb_pcp *p = arg;

	pthread_mutex_unlock(&p->thr_mutex);
	pthread_mutex_unlock(&p->tick_mutex);
}

/* The forking thread took both mutexes: it is this thread in the child. */
static void pcp_fork_child(void *arg)
{
	struct lb_pcp *p = arg;

	p->thr_running = false;
	p->thr_stop = false;
	pthread_cond_init(&p->thr_cond, NULL);
	pthread_mutex_unlock(&p->thr_mutex);
	pthread_mutex_unlock(&p->tick_mutex);
}

void lbi_pcp_fork_add(struct lb_pcp *p)
{
	p->fork.prepare = pcp_fork_prepare;
	p->fork.parent = pcp_fork_parent;
	p->fork.child = pcp_fork_child;
	p->fork.arg = p;
	p->fork.early = true;
	/* Cannot fail: the hook has all three functions. */
	(void)lbi_fork_register(&p->fork);
}

void lbi_pcp_fork_del(struct lb_pcp *p)
{
	lbi_fork_unregister(&p->fork);
}
