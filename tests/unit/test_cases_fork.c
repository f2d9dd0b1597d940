// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Scenario case C27 (tests/cases.md): lb_cpubatch's statistics identities
 * in a fork() child whose parent had a flush in flight on another thread;
 * and the same identities when the fork() comes from a flush's own @after
 * (that flush goes on in the child and is committed there).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "../common/backend.h"
#include "../common/fork_child.h"

#define NR_SLOTS 2
#define MAX_NR 4

static struct test_obj objs[16];
static int in_after, release_after;	/* atomic */

/*
 * The back-end fixture and the objects. A child must not break a rule of
 * the fixture: its report (cr_expect) would come from a process Criterion
 * does not know (fork_child.h).
 */
static void fixture(void)
{
	unsigned int i;

	cr_assert(eq(int, backend_fork_safe(), 0));
	cr_assert(eq(int, backend_setup(NR_SLOTS, MAX_NR), 0));
	for (i = 0; i < sizeof(objs) / sizeof(objs[0]); i++)
		backend_obj_init(&objs[i], i);
}

/* Exit status bits of the child's checks (0: all hold). */
enum {
	BAD_SLOT = 1 << 0,	/* a per-slot identity (fork_child_slot_ok()) */
	BAD_INFLIGHT = 1 << 3,
	BAD_LOCKS = 1 << 4,	/* backend_locks != flushes_committed */
	BAD_ABANDONED = 1 << 5,	/* not the one flush of MAX_NR objects */
	BAD_CALL = 1 << 6,	/* a call failed */
};

/* Every documented identity, per slot and in total; bits of what broke. */
static int check_identities(struct lb_cpubatch *pc, uint64_t want_flushes,
			    uint64_t want_objs)
{
	struct lb_cpubatch_slot_stats ss[NR_SLOTS];
	struct lb_cpubatch_stats st;
	int bad = 0, i;

	if (lb_cpubatch_stats(pc, &st, ss, NR_SLOTS) != NR_SLOTS)
		return BAD_CALL;
	for (i = 0; i < NR_SLOTS; i++)
		if (!fork_child_slot_ok(&ss[i]))
			bad |= BAD_SLOT;
	if (!fork_child_slot_ok(&st.total))
		bad |= BAD_SLOT;
	if (st.flushes_inflight)
		bad |= BAD_INFLIGHT;
	if (st.backend_locks != st.total.flushes_committed)
		bad |= BAD_LOCKS;
	if (st.total.flushes_abandoned != want_flushes ||
	    st.total.objs_abandoned != want_objs)
		bad |= BAD_ABANDONED;
	if (st.drain.drain_all_calls !=
	    st.drain.drain_all_passes + st.drain.drain_all_coalesced)
		bad |= BAD_CALL;
	return bad;
}

static void wait_for(int *flag)
{
	struct timespec ts = { 0, 1000000 };
	int i;

	for (i = 0; i < 10000 && !__atomic_load_n(flag, __ATOMIC_ACQUIRE); i++)
		nanosleep(&ts, NULL);
	cr_assert(__atomic_load_n(flag, __ATOMIC_ACQUIRE), "timed out");
}

/* Holds the flush of slot 1 between commit and @put until released. */
static void hold_in_after(struct backend_fixture *f, struct test_backend *be,
			  void **o, unsigned int n)
{
	(void)f;
	(void)be;
	(void)o;
	(void)n;
	if (backend_tls_cpu != 1)
		return;
	__atomic_store_n(&in_after, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&release_after, __ATOMIC_ACQUIRE))
		sched_yield();
}

static void *flusher(void *arg)
{
	unsigned int i;

	(void)arg;
	/* MAX_NR + 1 adds: the last one flushes the full batch. */
	for (i = 0; i <= MAX_NR; i++)
		cr_assert(ge(int, backend_add(&objs[i], 1, 1), 0));
	return NULL;
}

/* The child of C27: drain everything, then the identities. */
static int c27_child(void *arg)
{
	int bad;

	(void)arg;
	bad = lb_cpubatch_drain_all(backend_fixture.pc) < 0 ? BAD_CALL : 0;
	bad |= check_identities(backend_fixture.pc, 1, MAX_NR);
	if (backend_commits(&objs[8]) != 1 || backend_commits(&objs[9]) != 1)
		bad |= BAD_CALL;
	return bad;
}

/*
 * C27: thread B's flush of slot 1 (MAX_NR objects) is between commit and
 * @put when the main thread, with two objects cached in slot 0, forks.
 * The child drains everything: every identity must hold there, with the
 * one flush it will never finish counted as abandoned. The parent, once
 * B's flush finished, has nothing abandoned.
 */
Test(cases3, c27_fork_child_counts_flushes_in_flight_as_abandoned)
{
	pthread_t b;
	int bad;

	fixture();
	backend_fixture.on_after = hold_in_after;
	cr_assert(eq(int, pthread_create(&b, NULL, flusher, NULL), 0));
	wait_for(&in_after);
	cr_assert(ge(int, backend_add(&objs[8], 0, 1), 0));
	cr_assert(ge(int, backend_add(&objs[9], 0, 1), 0));
	bad = fork_child_run(c27_child, NULL);
	cr_assert(eq(int, bad, 0), "child: identities broken (bits %#x)", bad);
	__atomic_store_n(&release_after, 1, __ATOMIC_RELEASE);
	cr_assert(eq(int, pthread_join(b, NULL), 0));
	cr_assert(ge(int, lb_cpubatch_drain_all(backend_fixture.pc), 0));
	cr_assert(eq(int, check_identities(backend_fixture.pc, 0, 0), 0));
	cr_assert(eq(u64, backend_teardown(), 0));
}

static int own_bad = -1;

/*
 * Forks from inside @after of the flush of slot 1 (not with
 * fork_child_run(): the child returns from the callback, so that its own
 * flush goes on, and reports from the test body).
 */
static void fork_in_after(struct backend_fixture *f, struct test_backend *be,
			  void **o, unsigned int n)
{
	pid_t pid;
	int status;

	(void)f;
	(void)be;
	(void)o;
	(void)n;
	if (own_bad >= 0 || backend_tls_cpu != 1)
		return;
	pid = fork();
	if (!pid) {
		own_bad = 0x100;	/* the child */
		return;
	}
	own_bad = pid > 0 && waitpid(pid, &status, 0) == pid &&
		  WIFEXITED(status) ? WEXITSTATUS(status) : BAD_CALL;
}

/*
 * The forking thread's own flush goes on in the child: there it is
 * committed, not abandoned, and every identity holds after the drain.
 */
Test(cases3, fork_from_after_commits_its_own_flush_in_the_child)
{
	unsigned int i;

	fixture();
	backend_fixture.on_after = fork_in_after;
	for (i = 0; i <= MAX_NR; i++)
		cr_assert(ge(int, backend_add(&objs[i], 1, 1), 0));
	if (own_bad == 0x100) {
		int bad = lb_cpubatch_drain_all(backend_fixture.pc) < 0 ?
			  BAD_CALL : 0;

		_exit(bad | check_identities(backend_fixture.pc, 0, 0));
	}
	cr_assert(eq(int, own_bad, 0), "child: identities broken (bits %#x)",
		  own_bad);
	cr_assert(ge(int, lb_cpubatch_drain_all(backend_fixture.pc), 0));
	cr_assert(eq(int, check_identities(backend_fixture.pc, 0, 0), 0));
	cr_assert(eq(u64, backend_teardown(), 0));
}
