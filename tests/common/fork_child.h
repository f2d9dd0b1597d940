/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * For Criterion tests that fork() a child to check what it inherited: the
 * child reports through its exit status only (a Criterion assertion in it
 * would come from a process the runner does not know), and the lb_cpubatch
 * statistics identities such a child checks (cpubatch.h, fork()).
 */
#ifndef LB_TEST_FORK_CHILD_H
#define LB_TEST_FORK_CHILD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include <lockbatch/cpubatch.h>

/* Fork; the child exits with @child(@arg); returns that exit status. */
static inline int fork_child_run(int (*child)(void *), void *arg)
{
	pid_t pid = fork();
	int status;
	bool exited;

	cr_assert(ge(int, pid, 0), "fork() failed");
	if (!pid)
		_exit(child(arg));
	cr_assert(eq(int, waitpid(pid, &status, 0), pid));
	exited = WIFEXITED(status);
	cr_assert(exited, "the child did not exit");
	return WEXITSTATUS(status);
}

/* Flushes of every cause. */
static inline uint64_t fork_child_flushes(const struct lb_cpubatch_slot_stats *s)
{
	uint64_t n = 0;
	int c;

	for (c = 0; c < LB_FLUSH_NR; c++)
		n += s->flushes[c];
	return n;
}

/* The per-slot identities, which hold with nothing in flight. */
static inline bool fork_child_slot_ok(const struct lb_cpubatch_slot_stats *s)
{
	return s->adds == s->objs_flushed + s->nr_cached &&
	       s->objs_flushed == s->objs_committed + s->objs_abandoned &&
	       fork_child_flushes(s) == s->flushes_committed +
					s->flushes_abandoned;
}

#endif /* LB_TEST_FORK_CHILD_H */
