// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Back-end lock with CONFIG_LOCK_STAT-style statistics.
 */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <string.h>

#include <lockbatch/lock.h>
#include "internal.h"

/*
 * ck_backoff_eb() spins 2^9 iterations and doubles each round (capped at
 * 2^20): 6 rounds wait about 32k iterations, tens of microseconds, far
 * longer than any critical section here, so a lock still held by then has
 * a preempted holder and the waiter yields. 16 rounds spun about 6M
 * iterations, a whole time slice, before the first yield.
 */
#define LBI_SPIN_ROUNDS 6

void lbi_spin_lock_slow(ck_spinlock_fas_t *l)
{
	ck_backoff_t backoff = CK_BACKOFF_INITIALIZER;
	unsigned int spins = 0;

	do {
		/* Read-only wait: no cache-line ping-pong while it is held. */
		while (ck_spinlock_fas_locked(l)) {
			if (spins < LBI_SPIN_ROUNDS) {
				ck_backoff_eb(&backoff);
				spins++;
			} else {
				sched_yield();
			}
		}
	} while (!ck_spinlock_fas_trylock(l));
}

int lb_lock_init(struct lb_lock *l, enum lb_lock_kind kind, const char *name)
{
	int err;

	if (!l || (kind != LB_LOCK_SPIN && kind != LB_LOCK_MUTEX))
		return -EINVAL;
	memset(l, 0, sizeof(*l));
	l->kind = kind;
	l->name = name ? name : "lock";
	if (kind == LB_LOCK_SPIN) {
		lbi_spin_init(&l->spin);
		return 0;
	}
	err = pthread_mutex_init(&l->mutex, NULL);
	return -err;
}

int lb_lock_destroy(struct lb_lock *l)
{
	if (!l)
		return -EINVAL;
	if (l->kind == LB_LOCK_SPIN)
		return ck_spinlock_fas_locked(&l->spin) ? -EBUSY : 0;
	return -pthread_mutex_destroy(&l->mutex);
}

static int try_raw(struct lb_lock *l)
{
	if (l->kind == LB_LOCK_SPIN)
		return lbi_spin_trylock(&l->spin);
	return pthread_mutex_trylock(&l->mutex) == 0;
}

static void lock_raw(struct lb_lock *l)
{
	if (l->kind == LB_LOCK_SPIN)
		lbi_spin_lock(&l->spin);
	else
		pthread_mutex_lock(&l->mutex);
}

static void unlock_raw(struct lb_lock *l)
{
	if (l->kind == LB_LOCK_SPIN)
		lbi_spin_unlock(&l->spin);
	else
		pthread_mutex_unlock(&l->mutex);
}

void lb_lock_acquire(struct lb_lock *l)
{
	uint64_t t0, wait;

	if (lbi_likely(try_raw(l))) {
		l->st.acquisitions++;
		return;
	}
	t0 = lbi_now_ns();
	lock_raw(l);
	wait = lbi_now_ns() - t0;
	l->st.acquisitions++;
	l->st.contentions++;
	l->st.wait_ns_total += wait;
	if (wait > l->st.wait_ns_max)
		l->st.wait_ns_max = wait;
	if (l->st.contentions == 1 || wait < l->st.wait_ns_min)
		l->st.wait_ns_min = wait;
}

void lb_lock_release(struct lb_lock *l)
{
	unlock_raw(l);
}

int lb_lock_stats(struct lb_lock *l, struct lb_lock_stats *out)
{
	if (!l || !out)
		return -EINVAL;
	lock_raw(l);
	*out = l->st;
	unlock_raw(l);
	return 0;
}

int lb_lock_stats_reset(struct lb_lock *l)
{
	if (!l)
		return -EINVAL;
	lock_raw(l);
	memset(&l->st, 0, sizeof(l->st));
	unlock_raw(l);
	return 0;
}

static int check_locks(FILE *f, struct lb_lock *const *locks, unsigned int nr)
{
	unsigned int i;

	if (!f || !locks)
		return -EINVAL;
	for (i = 0; i < nr; i++)
		if (!locks[i])
			return -EINVAL;
	return 0;
}

static uint64_t avg_wait(const struct lb_lock_stats *s)
{
	return s->contentions ? s->wait_ns_total / s->contentions : 0;
}

int lb_lock_report(FILE *f, struct lb_lock *const *locks, unsigned int nr)
{
	struct lb_lock_stats s;
	unsigned int i;
	int err = check_locks(f, locks, nr);

	if (err)
		return err;
	fprintf(f, "%20s %12s %12s %12s %14s %12s %12s\n", "Name", "acquired",
		"contended", "avg wait", "total wait", "max wait", "min wait");
	fputc('\n', f);
	for (i = 0; i < nr; i++) {
		lb_lock_stats(locks[i], &s);
		fprintf(f, "%20.20s %12llu %12llu %10lluns %12lluns %10lluns %10lluns\n",
			locks[i]->name, (unsigned long long)s.acquisitions,
			(unsigned long long)s.contentions,
			(unsigned long long)avg_wait(&s),
			(unsigned long long)s.wait_ns_total,
			(unsigned long long)s.wait_ns_max,
			(unsigned long long)s.wait_ns_min);
	}
	return ferror(f) ? -EIO : 0;
}

static void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

int lb_lock_report_json(FILE *f, struct lb_lock *const *locks,
			unsigned int nr)
{
	struct lb_lock_stats s;
	unsigned int i;
	int err = check_locks(f, locks, nr);

	if (err)
		return err;
	fputc('[', f);
	for (i = 0; i < nr; i++) {
		lb_lock_stats(locks[i], &s);
		fprintf(f, "%s{\"name\":", i ? "," : "");
		json_string(f, locks[i]->name);
		fprintf(f, ",\"acquisitions\":%llu,\"contentions\":%llu,"
			"\"wait_ns_total\":%llu,\"wait_ns_max\":%llu,"
			"\"wait_ns_min\":%llu,\"wait_ns_avg\":%llu}",
			(unsigned long long)s.acquisitions,
			(unsigned long long)s.contentions,
			(unsigned long long)s.wait_ns_total,
			(unsigned long long)s.wait_ns_max,
			(unsigned long long)s.wait_ns_min,
			(unsigned long long)avg_wait(&s));
	}
	fputs("]\n", f);
	return ferror(f) ? -EIO : 0;
}
