// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * The fork() registry (fork.h): two lists under one mutex, the early
 * hooks' and the rest, run by one pthread_atfork() handler.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>

#include "core/fork.h"

static pthread_mutex_t lbi_fork_mutex = PTHREAD_MUTEX_INITIALIZER;
/* Under lbi_fork_mutex: [0] the early hooks, [1] the rest. */
static struct cds_list_head lbi_fork_hooks[2] = {
	CDS_LIST_HEAD_INIT(lbi_fork_hooks[0]),
	CDS_LIST_HEAD_INIT(lbi_fork_hooks[1]),
};
static pthread_once_t lbi_fork_once = PTHREAD_ONCE_INIT;

static void lbi_fork_prepare(void)
{
	struct lbi_fork_hook *h;
	unsigned int i;

	pthread_mutex_lock(&lbi_fork_mutex);
	for (i = 0; i < 2; i++)
		cds_list_for_each_entry(h, &lbi_fork_hooks[i], node)
			h->prepare(h->arg);
}

static void lbi_fork_parent(void)
{
	struct lbi_fork_hook *h;
	unsigned int i;

	for (i = 2; i-- > 0;)
		cds_list_for_each_entry_reverse(h, &lbi_fork_hooks[i], node)
			h->parent(h->arg);
	pthread_mutex_unlock(&lbi_fork_mutex);
}

static void lbi_fork_child(void)
{
	struct lbi_fork_hook *h;
	unsigned int i;

	for (i = 2; i-- > 0;)
		cds_list_for_each_entry_reverse(h, &lbi_fork_hooks[i], node)
			h->child(h->arg);
	/* The forking thread held it: it is this thread in the child. */
	pthread_mutex_unlock(&lbi_fork_mutex);
}

static void lbi_fork_install(void)
{
	/* ENOMEM here leaves fork() as documented before the hook existed. */
	pthread_atfork(lbi_fork_prepare, lbi_fork_parent, lbi_fork_child);
}

int lbi_fork_register(struct lbi_fork_hook *hook)
{
	if (!hook || !hook->prepare || !hook->parent || !hook->child)
		return -EINVAL;
	pthread_once(&lbi_fork_once, lbi_fork_install);
	pthread_mutex_lock(&lbi_fork_mutex);
	cds_list_add_tail(&hook->node, &lbi_fork_hooks[hook->early ? 0 : 1]);
	pthread_mutex_unlock(&lbi_fork_mutex);
	return 0;
}

void lbi_fork_unregister(struct lbi_fork_hook *hook)
{
	pthread_mutex_lock(&lbi_fork_mutex);
	cds_list_del(&hook->node);
	pthread_mutex_unlock(&lbi_fork_mutex);
}
