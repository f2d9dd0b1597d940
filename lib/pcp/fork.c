// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lb_pcp around fork(): the tick and decay-thread state of every cache.
 *
 * The slot core's hook (lib/rseq/rseq_fork.c) leaves the child every slot and
 * the back-end consistent and unlocked, but not the two mutexes of the
 * decay machinery: a fork() while the decay thread was inside
 * lb_pcp_tick() copied tick_mutex held by a thread the child does not
 * have, and thr_running still names that thread. One pthread_atfork()
 * hook, registered once, takes every live cache's tick_mutex and then its
 * thr_mutex before fork() (waiting out a tick in progress) and releases
 * them in both processes afterwards; the child also forgets the decay
 * thread and gets a fresh thr_cond (the parent's may have counted the
 * decay thread as a waiter, and glibc's pthread_cond_destroy() would wait
 * for it). Like glibc's malloc with its arenas.
 *
 * Lock order. A tick holds tick_mutex, then slot locks, then the back-end
 * lock; a back-end callback on a tick may take thr_mutex (decay_thread_stop
 * or _start). So prepare takes tick_mutex before thr_mutex, and must run
 * before the slot core's prepare: pthread_atfork() runs prepare handlers in
 * the reverse order of registration, and this one is registered after the
 * slot core's (lbi_pcp_fork_add() runs once the cache's slots exist).
 */
#include "config.h"

#include <pthread.h>

#include <urcu/list.h>

#include "pcp/pcp.h"

static pthread_mutex_t lbi_pcp_fork_mutex = PTHREAD_MUTEX_INITIALIZER;
static CDS_LIST_HEAD(lbi_pcp_caches);	/* under lbi_pcp_fork_mutex */
static pthread_once_t lbi_pcp_fork_once = PTHREAD_ONCE_INIT;

static void pcp_fork_prepare(void)
{
	struct lb_pcp *p;

	pthread_mutex_lock(&lbi_pcp_fork_mutex);
	cds_list_for_each_entry(p, &lbi_pcp_caches, fork_node) {
		pthread_mutex_lock(&p->tick_mutex);
		pthread_mutex_lock(&p->thr_mutex);
	}
}

static void pcp_fork_parent(void)
{
	struct lb_pcp *p;

	cds_list_for_each_entry_reverse(p, &lbi_pcp_caches, fork_node) {
		pthread_mutex_unlock(&p->thr_mutex);
		pthread_mutex_unlock(&p->tick_mutex);
	}
	pthread_mutex_unlock(&lbi_pcp_fork_mutex);
}

/* The forking thread took every mutex: it is this thread in the child. */
static void pcp_fork_child(void)
{
	struct lb_pcp *p;

	cds_list_for_each_entry_reverse(p, &lbi_pcp_caches, fork_node) {
		p->thr_running = false;
		p->thr_stop = false;
		pthread_cond_init(&p->thr_cond, NULL);
		pthread_mutex_unlock(&p->thr_mutex);
		pthread_mutex_unlock(&p->tick_mutex);
	}
	pthread_mutex_unlock(&lbi_pcp_fork_mutex);
}

static void pcp_fork_install(void)
{
	/* ENOMEM here leaves fork() as documented before the hook existed. */
	pthread_atfork(pcp_fork_prepare, pcp_fork_parent, pcp_fork_child);
}

void lbi_pcp_fork_add(struct lb_pcp *p)
{
	pthread_once(&lbi_pcp_fork_once, pcp_fork_install);
	pthread_mutex_lock(&lbi_pcp_fork_mutex);
	cds_list_add_tail(&p->fork_node, &lbi_pcp_caches);
	pthread_mutex_unlock(&lbi_pcp_fork_mutex);
}

void lbi_pcp_fork_del(struct lb_pcp *p)
{
	pthread_mutex_lock(&lbi_pcp_fork_mutex);
	cds_list_del(&p->fork_node);
	pthread_mutex_unlock(&lbi_pcp_fork_mutex);
}
