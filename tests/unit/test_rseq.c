// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lib/rseq/rseq.h: owner sections on one pinned CPU (push/pop order, limits by
 * count and by weight, take), every reason for LBI_RSEQ_LOCK (stopped slot,
 * unregistered thread, CPU id above the slots), the path decision, fences
 * and the fork-hook registry.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "rseq/rseq.h"
#include "../common/affinity.h"

#define CAP 8

struct slot {
	uint64_t pad;
	struct lbi_rseq_hdr hdr;
	void *items[CAP];
};

static struct slot *slots;
static struct lbi_rseq_layout lay;
static int cpu;

/* Pin to the CPU we run on, so every section indexes the same slot. */
static void setup(void)
{
	if (!lbi_rseq_usable(false, lbi_rseq_nr_cpu_ids()))
		cr_skip_test("lock path in this process: %s", lb_cpu_path_name());
	cpu = lb_test_pin_here();
	cr_assert(ge(int, cpu, 0));
	lay.nr_slots = lbi_rseq_nr_cpu_ids();
	lay.stride = sizeof(struct slot);
	lay.hdr_off = offsetof(struct slot, hdr);
	lay.items_off = offsetof(struct slot, items);
	slots = calloc(lay.nr_slots, sizeof(*slots));
	cr_assert(slots != NULL);
}

static void teardown(void)
{
	free(slots);
	slots = NULL;
}

TestSuite(rseq, .init = setup, .fini = teardown);

static void *tok(uintptr_t i)
{
	return (void *)(i * 16);
}

Test(rseq, push_pop_is_lifo_on_own_slot)
{
	void *out;
	int c, i;

	for (i = 1; i <= 3; i++) {
		cr_assert(eq(int, lbi_rseq_push(&lay, slots, tok(i), 0, CAP,
						LBI_RSEQ_WEIGHT_MAX, &c),
			     LBI_RSEQ_OK));
		cr_assert(eq(int, c, cpu));
	}
	cr_assert(eq(u32, lbi_rseq_count(slots[cpu].hdr.word), 3));
	for (i = 3; i >= 1; i--) {
		cr_assert(eq(int, lbi_rseq_pop(&lay, slots, &out, 0, &c),
			     LBI_RSEQ_OK));
		cr_assert(eq(ptr, out, tok(i)));
	}
	cr_assert(eq(int, lbi_rseq_pop(&lay, slots, &out, 0, &c),
		     LBI_RSEQ_EMPTY));
}

Test(rseq, push_stops_at_count_limit)
{
	int c, i;

	for (i = 0; i < 5; i++)
		cr_assert(eq(int, lbi_rseq_push(&lay, slots, tok(i + 1), 0, 5,
						LBI_RSEQ_WEIGHT_MAX, &c),
			     LBI_RSEQ_OK));
	cr_assert(eq(int, lbi_rseq_push(&lay, slots, tok(9), 0, 5,
					LBI_RSEQ_WEIGHT_MAX, &c),
		     LBI_RSEQ_FULL));
	cr_assert(eq(u32, lbi_rseq_count(slots[cpu].hdr.word), 5));
	cr_assert(eq(ptr, slots[cpu].items[4], tok(5)));
}

/* Weight: 3 + 4 fits in 8, 3 + 4 + 2 does not; pop gives the weight back. */
Test(rseq, weighted_add_checks_weight_and_commits_both)
{
	void *out;
	int c;

	cr_assert(eq(int, lbi_rseq_push(&lay, slots, tok(1), 3, CAP, 8, &c),
		     LBI_RSEQ_OK));
	cr_assert(eq(int, lbi_rseq_push(&lay, slots, tok(2), 4, CAP, 8, &c),
		     LBI_RSEQ_OK));
	cr_assert(eq(int, lbi_rseq_push(&lay, slots, tok(3), 2, CAP, 8, &c),
		     LBI_RSEQ_FULL));
	cr_assert(eq(int, lbi_rseq_push(&lay, slots, tok(3), 9, CAP, 8, &c),
		     LBI_RSEQ_FULL));
	cr_assert(eq(int, lbi_rseq_push(&lay, slots, tok(3), 1, CAP, 8, &c),
		     LBI_RSEQ_OK));
	cr_assert(eq(u64, slots[cpu].hdr.word, lbi_rseq_word(3, 8)));
	cr_assert(eq(int, lbi_rseq_pop(&lay, slots, &out, 1, &c), LBI_RSEQ_OK));
	cr_assert(eq(u64, slots[cpu].hdr.word, lbi_rseq_word(2, 7)));
	/* The count limit binds even with weight to spare. */
	cr_assert(eq(int, lbi_rseq_push(&lay, slots, tok(4), 0, 2, 100, &c),
		     LBI_RSEQ_FULL));
}

Test(rseq, take_moves_all_and_empties)
{
	void *buf[CAP];
	uint64_t w;
	int c, i;

	cr_assert(eq(int, lbi_rseq_take(&lay, slots, buf, CAP, &w, &c),
		     LBI_RSEQ_EMPTY));
	for (i = 0; i < 4; i++)
		lbi_rseq_push(&lay, slots, tok(i + 1), 2, CAP, 100, &c);
	cr_assert(eq(int, lbi_rseq_take(&lay, slots, buf, 3, &w, &c),
		     LBI_RSEQ_LOCK), "more than the buffer holds");
	cr_assert(eq(int, lbi_rseq_take(&lay, slots, buf, CAP, &w, &c),
		     LBI_RSEQ_OK));
	cr_assert(eq(u64, w, lbi_rseq_word(4, 8)));
	for (i = 0; i < 4; i++)
		cr_assert(eq(ptr, buf[i], tok(i + 1)));
	cr_assert(eq(u64, slots[cpu].hdr.word, 0));
}

Test(rseq, stopped_slot_takes_lock_path_and_changes_nothing)
{
	void *out, *buf[CAP];
	uint64_t w;
	int c;

	lbi_rseq_push(&lay, slots, tok(1), 0, CAP, LBI_RSEQ_WEIGHT_MAX, &c);
	cr_assert(eq(int, lbi_rseq_stop(&slots[cpu].hdr, cpu, false), 0));
	cr_assert(eq(int, lbi_rseq_push(&lay, slots, tok(2), 0, CAP,
					LBI_RSEQ_WEIGHT_MAX, &c),
		     LBI_RSEQ_LOCK));
	cr_assert(eq(int, c, cpu), "the lock path learns the slot");
	cr_assert(eq(int, lbi_rseq_pop(&lay, slots, &out, 0, &c),
		     LBI_RSEQ_LOCK));
	cr_assert(eq(int, lbi_rseq_take(&lay, slots, buf, CAP, &w, &c),
		     LBI_RSEQ_LOCK));
	cr_assert(eq(u64, slots[cpu].hdr.word, lbi_rseq_word(1, 0)));
	lbi_rseq_start(&slots[cpu].hdr);
	cr_assert(eq(int, lbi_rseq_pop(&lay, slots, &out, 0, &c), LBI_RSEQ_OK));
	cr_assert(eq(ptr, out, tok(1)));
}

Test(rseq, cpu_id_above_slots_takes_lock_path)
{
	struct lbi_rseq_layout small = lay;
	int c = 42;

	small.nr_slots = (uint32_t)cpu;	/* this CPU has no slot */
	cr_assert(eq(int, lbi_rseq_push(&small, slots, tok(1), 0, CAP,
					LBI_RSEQ_WEIGHT_MAX, &c),
		     LBI_RSEQ_LOCK));
	cr_assert(eq(int, c, -1));
	cr_assert(eq(u64, slots[cpu].hdr.word, 0));
	cr_assert(not(lbi_rseq_usable(false, lbi_rseq_nr_cpu_ids() - 1)));
}

/*
 * A thread whose rseq area is unregistered (as a raw clone() thread never
 * is) reads cpu_id -1: every operation takes the lock path, none spins.
 */
static void *unregistered(void *arg)
{
	void *area = (char *)__builtin_thread_pointer() + __rseq_offset;
	int c, rc;

	(void)arg;
	if (syscall(__NR_rseq, area, 32, RSEQ_FLAG_UNREGISTER, LBI_RSEQ_SIG))
		return (void *)(intptr_t)-errno;
	rc = lbi_rseq_push(&lay, slots, tok(1), 0, CAP, LBI_RSEQ_WEIGHT_MAX,
			   &c);
	return (void *)(intptr_t)(rc == LBI_RSEQ_LOCK && c == -1 &&
				  lbi_rseq_cpu_id() < 0 ? 1 : 0);
}

Test(rseq, unregistered_thread_takes_lock_path)
{
	pthread_t t;
	void *ret;

	pthread_create(&t, NULL, unregistered, NULL);
	pthread_join(t, &ret);
	cr_assert(eq(int, (int)(intptr_t)ret, 1), "thread said %d",
		  (int)(intptr_t)ret);
}

Test(rseq, fences)
{
	int other = -1, i;

	cr_assert(eq(int, lbi_rseq_fence(-1), -EINVAL));
	cr_assert(eq(int, lbi_rseq_fence(cpu), 0));
	for (i = 0; i < (int)lay.nr_slots; i++)
		if (i != cpu)
			other = i;
	if (other >= 0)
		cr_assert(eq(int, lbi_rseq_fence(other), 0));
	/* A CPU id the machine never had: nothing runs there. */
	cr_assert(eq(int, lbi_rseq_fence(4095), 0));
}

Test(rseq_path, decision_is_consistent)
{
	enum lbi_rseq_why why = lbi_rseq_init();

	cr_assert(eq(int, lbi_rseq_init(), why), "decided once");
	cr_assert(eq(int, lb_cpu_path() == LB_CPU_PATH_RSEQ,
		     why == LBI_RSEQ_WHY_ACTIVE));
	cr_assert(eq(str, (char *)lb_cpu_path_name(),
		     (char *)lbi_rseq_why_name(why)));
	cr_assert(not(lbi_rseq_usable(true, lbi_rseq_nr_cpu_ids())),
		  "the conf flag forces the lock path");
	cr_assert(ge(uint, lbi_rseq_nr_cpu_ids(), 1));
	cr_assert(gt(int, (int)lbi_rseq_nr_cpu_ids(), sched_getcpu()));
}

static int fork_calls;
static void hook_prepare(void *a) { (void)a; fork_calls += 1; }
static void hook_parent(void *a) { (void)a; fork_calls += 10; }
static void hook_child(void *a) { (void)a; fork_calls += 100; }

Test(rseq_path, fork_hooks_run_around_fork)
{
	struct lbi_fork_hook bad = { 0 };
	struct lbi_fork_hook h = {
		.prepare = hook_prepare, .parent = hook_parent,
		.child = hook_child,
	};
	int status;
	pid_t pid;

	cr_assert(eq(int, lbi_fork_register(NULL), -EINVAL));
	cr_assert(eq(int, lbi_fork_register(&bad), -EINVAL));
	cr_assert(eq(int, lbi_fork_register(&h), 0));
	fork_calls = 0;
	pid = fork();
	if (pid == 0)
		_exit(fork_calls == 101 ? 0 : 1);
	cr_assert(gt(int, pid, 0));
	cr_assert(eq(int, waitpid(pid, &status, 0), pid));
	cr_assert(eq(int, WEXITSTATUS(status), 0), "child saw prepare+child");
	cr_assert(eq(int, fork_calls, 11));
	lbi_fork_unregister(&h);
	fork_calls = 0;
	pid = fork();
	if (pid == 0)
		_exit(0);
	waitpid(pid, &status, 0);
	cr_assert(eq(int, fork_calls, 0), "unregistered hooks do not run");
}
