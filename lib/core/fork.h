/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The library's one fork() registry. The child of a fork() gets a copy of
 * every lock as it was: one held by another thread would stay held for
 * ever. Each holder of such state registers a hook that takes its locks
 * before fork() and releases them in both processes afterwards, as
 * glibc's malloc does with its arenas; one pthread_atfork() handler runs
 * them all, so their order is the library's to choose.
 */
#ifndef LOCKBATCH_CORE_FORK_H
#define LOCKBATCH_CORE_FORK_H

#include <stdbool.h>

#include <urcu/list.h>

/*
 * struct lbi_fork_hook - State to settle around fork().
 * @prepare: Take the locks; waits out whoever holds them.
 * @parent, @child: Release them (the child also resets what names
 *	threads it does not have).
 * @arg: Passed to each.
 * @early: Run @prepare before every hook without it, and @parent and
 *	@child after them: for locks that are taken before any slot lock
 *	(lb_pcp's tick and decay-thread mutexes).
 */
struct lbi_fork_hook {
	void (*prepare)(void *arg);
	void (*parent)(void *arg);
	void (*child)(void *arg);
	void *arg;
	bool early;
	struct cds_list_head node;
};

/**
 * lbi_fork_register() - Run @hook around every fork().
 * @hook: Caller-owned until lbi_fork_unregister().
 *
 * prepare hooks run in registration order (early ones first), parent and
 * child hooks in reverse, under one registry mutex. A thread forking while
 * it holds a lock that a hook takes deadlocks in prepare.
 *
 * Context: Any thread, not a fork hook.
 * Return: 0, or -EINVAL for a hook without all three functions.
 */
int lbi_fork_register(struct lbi_fork_hook *hook);

/* Stop running @hook around fork(). Context: as registering. */
void lbi_fork_unregister(struct lbi_fork_hook *hook);

#endif /* LOCKBATCH_CORE_FORK_H */
