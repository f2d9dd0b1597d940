// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * fork() hooks for slot arrays. The child of a fork() keeps the parent's
 * rseq and membarrier registrations but gets a copy of every slot lock and
 * stop flag as they were: a slot stopped or locked by another thread would
 * stay so forever. Each slot array registers a hook that takes all its slot
 * locks before fork() (waiting out R1-R5, see rseq/rseq.h) and releases them in
 * both processes afterwards, as glibc's malloc does with its arenas.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>

#include "rseq/rseq.h"

static pthread_mutex_t lbi_fork_mutex = PTHREAD_MUTEX_INITIALIZER;
static CDS_LIST_HEAD(lbi_fork_hooks);	/* under lbi_fork_mutex */
static pthread_once_t lbi_fork_once = PTHREAD_ONCE_INIT;

static void lbi_fork_prepare(void)
{
	struct lbi_rseq_fork_hook *h;

	pthread_mutex_lock(&lbi_fork_mutex);
	cds_list_for_each_entry(h, &lbi_fork_hooks, node)
		h->prepare(h->arg);
}

static void lbi_fork_parent(void)
{
	struct lbi_rseq_fork_hook *h;

	cds_list_for_each_entry_reverse(h, &lbi_fork_hooks, node)
		h->parent(h->arg);
	pthread_mutex_unlock(&lbi_fork_mutex);
}

static void lbi_fork_child(void)
{
	struct lbi_rseq_fork_hook *h;

	cds_list_for_each_entry_reverse(h, &lbi_fork_hooks, node)
		h->child(h->arg);
	/* The forking thread held it: it is this thread in the child. */
	pthread_mutex_unlock(&lbi_fork_mutex);
}

static void lbi_fork_install(void)
{
	pthread_atfork(lbi_fork_prepare, lbi_fork_parent, lbi_fork_child);
}

int lbi_rseq_fork_register(struct lbi_rseq_fork_hook *hook)
{
	if (!hook || !hook->prepare || !hook->parent || !hook->child)
		return -EINVAL;
	pthread_once(&lbi_fork_once, lbi_fork_install);
	pthread_mutex_lock(&lbi_fork_mutex);
	cds_list_add_tail(&hook->node, &lbi_fork_hooks);
	pthread_mutex_unlock(&lbi_fork_mutex);
	return 0;
}

void lbi_rseq_fork_unregister(struct lbi_rseq_fork_hook *hook)
{
	pthread_mutex_lock(&lbi_fork_mutex);
	cds_list_del(&hook->node);
	pthread_mutex_unlock(&lbi_fork_mutex);
}
