// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Back-end lock with CONFIG_LOCK_STAT-style statistics.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "lock/lock.h"

/*
 * The ck lock of every kind but the mutex lives in &struct lb_lock's
 * opaque @lbi_ck storage, so <lockbatch/lock.h> includes no ck header
 * (ck's spinlock headers are not valid C++). Only this file reaches it,
 * always through the ck type, as glibc keeps its mutex behind
 * pthread_mutex_t's opaque bytes.
 */
#define LBI_CK_FITS(t) \
	_Static_assert(sizeof(t) <= sizeof(((struct lb_lock *)0)->lbi_ck) && \
		       _Alignof(t) <= _Alignof(uint64_t), #t " fits lbi_ck")
LBI_CK_FITS(ck_spinlock_fas_t);
LBI_CK_FITS(ck_spinlock_ticket_t);
LBI_CK_FITS(ck_spinlock_mcs_t);
LBI_CK_FITS(ck_spinlock_clh_t *);

static inline ck_spinlock_fas_t *lbi_spin_of(struct lb_lock *l)
{
	return (ck_spinlock_fas_t *)(void *)l->lbi_ck;
}

static inline ck_spinlock_ticket_t *lbi_ticket_of(struct lb_lock *l)
{
	return (ck_spinlock_ticket_t *)(void *)l->lbi_ck;
}

static inline ck_spinlock_mcs_t *lbi_mcs_of(struct lb_lock *l)
{
	return (ck_spinlock_mcs_t *)(void *)l->lbi_ck;
}

static inline ck_spinlock_clh_t **lbi_clh_of(struct lb_lock *l)
{
	return (ck_spinlock_clh_t **)(void *)l->lbi_ck;
}

/*
 * Per-thread queue nodes of the MCS and CLH kinds. An entry is busy from
 * acquire to release (@lock set); MCS nodes are only referenced while
 * queued, so they can live in TLS. A CLH releaser inherits its
 * predecessor's node, which another thread or the lock may have allocated:
 * CLH nodes are heap nodes owned by whoever holds the pointer, and the
 * thread's entries are freed by a key destructor when it exits.
 */
struct lbi_qnode {
	struct lb_lock *lock;
	ck_spinlock_mcs_context_t mcs;
	ck_spinlock_clh_t *clh;
};

static _Thread_local struct lbi_qnode lbi_qtab[LB_LOCK_NEST_MAX];
static pthread_key_t lbi_qkey;
static pthread_once_t lbi_qonce = PTHREAD_ONCE_INIT;
static int lbi_qkey_err;

static void qtab_free(void *tab)
{
	struct lbi_qnode *e = tab;
	unsigned int i;

	for (i = 0; i < LB_LOCK_NEST_MAX; i++) {
		free(e[i].clh);
		e[i].clh = NULL;
	}
}

static void qkey_create(void)
{
	lbi_qkey_err = pthread_key_create(&lbi_qkey, qtab_free);
}

static ck_spinlock_clh_t *clh_node_new(void)
{
	return calloc(1, sizeof(ck_spinlock_clh_t));
}

static int is_queue(enum lb_lock_kind kind)
{
	return kind == LB_LOCK_MCS || kind == LB_LOCK_CLH;
}

static int kind_valid(enum lb_lock_kind kind)
{
	return (unsigned int)kind < LB_LOCK_NR_KINDS;
}

/* A free entry of the calling thread's table for @l, or NULL and errno. */
static struct lbi_qnode *qnode_get(struct lb_lock *l)
{
	struct lbi_qnode *e;
	unsigned int i;

	for (i = 0; i < LB_LOCK_NEST_MAX && lbi_qtab[i].lock; i++)
		;
	if (i == LB_LOCK_NEST_MAX) {
		errno = ENOLCK;
		return NULL;
	}
	e = &lbi_qtab[i];
	if (l->kind == LB_LOCK_CLH && !e->clh) {
		pthread_once(&lbi_qonce, qkey_create);
		if (lbi_qkey_err || pthread_setspecific(lbi_qkey, lbi_qtab) ||
		    !(e->clh = clh_node_new())) {
			errno = ENOMEM;
			return NULL;
		}
	}
	e->lock = l;
	return e;
}

static struct lbi_qnode *qnode_find(const struct lb_lock *l)
{
	unsigned int i;

	for (i = 0; i < LB_LOCK_NEST_MAX; i++)
		if (lbi_qtab[i].lock == l)
			return &lbi_qtab[i];
	return NULL;
}

int lb_lock_init(struct lb_lock *l, enum lb_lock_kind kind, const char *name)
{
	ck_spinlock_clh_t *unowned = NULL;
	int err = 0;

	if (!l || !kind_valid(kind))
		return -EINVAL;
	if (kind == LB_LOCK_CLH && !(unowned = clh_node_new()))
		return -ENOMEM;
	memset(l, 0, sizeof(*l));
	l->kind = kind;
	l->name = name ? name : "lock";
	switch (kind) {
	case LB_LOCK_SPIN:
		lbi_spin_init(lbi_spin_of(l));
		break;
	case LB_LOCK_MUTEX:
		err = pthread_mutex_init(&l->mutex, NULL);
		break;
	case LB_LOCK_TICKET:
		ck_spinlock_ticket_init(lbi_ticket_of(l));
		break;
	case LB_LOCK_MCS:
		ck_spinlock_mcs_init(lbi_mcs_of(l));
		break;
	case LB_LOCK_CLH:
		ck_spinlock_clh_init(lbi_clh_of(l), unowned);
		break;
	}
	return -err;
}

static int held(struct lb_lock *l)
{
	switch (l->kind) {
	case LB_LOCK_SPIN:
		return ck_spinlock_fas_locked(lbi_spin_of(l));
	case LB_LOCK_TICKET:
		return ck_spinlock_ticket_locked(lbi_ticket_of(l));
	case LB_LOCK_MCS:
		return ck_spinlock_mcs_locked(lbi_mcs_of(l));
	case LB_LOCK_CLH:
		return lbi_clh_locked(lbi_clh_of(l));
	default:
		return 0;	/* the mutex answers in pthread_mutex_destroy() */
	}
}

int lb_lock_is_held(struct lb_lock *l)
{
	int err;

	if (!l || !kind_valid(l->kind))
		return -EINVAL;
	if (l->kind != LB_LOCK_MUTEX)
		return !!held(l);
	err = pthread_mutex_trylock(&l->mutex);
	if (err)
		return err == EBUSY ? 1 : -err;
	pthread_mutex_unlock(&l->mutex);
	return 0;
}

int lb_lock_destroy(struct lb_lock *l)
{
	int err;

	if (!l || !kind_valid(l->kind))
		return -EINVAL;
	if (held(l))
		return -EBUSY;
	if (l->kind == LB_LOCK_MUTEX && (err = pthread_mutex_destroy(&l->mutex)))
		return -err;
	if (l->kind == LB_LOCK_CLH)
		free(*lbi_clh_of(l));	/* at rest the tail node belongs to the lock */
	l->kind = LB_LOCK_NR_KINDS;
	return 0;
}

static int try_raw(struct lb_lock *l, struct lbi_qnode *e)
{
	switch (l->kind) {
	case LB_LOCK_SPIN:
		return lbi_spin_trylock(lbi_spin_of(l));
	case LB_LOCK_MUTEX:
		return pthread_mutex_trylock(&l->mutex) == 0;
	case LB_LOCK_TICKET:
		return lbi_ticket_trylock(lbi_ticket_of(l));
	case LB_LOCK_MCS:
		return lbi_mcs_trylock(lbi_mcs_of(l), &e->mcs);
	case LB_LOCK_CLH:
		if (lbi_clh_locked(lbi_clh_of(l)))
			return 0;
		lbi_clh_lock(lbi_clh_of(l), e->clh);
		return 1;
	}
	return 0;
}

static void lock_raw(struct lb_lock *l, struct lbi_qnode *e)
{
	switch (l->kind) {
	case LB_LOCK_SPIN:
		lbi_spin_lock(lbi_spin_of(l));
		break;
	case LB_LOCK_MUTEX:
		pthread_mutex_lock(&l->mutex);
		break;
	case LB_LOCK_TICKET:
		lbi_ticket_lock(lbi_ticket_of(l), LB_LOCK_TICKET_PB_SHIFT);
		break;
	case LB_LOCK_MCS:
		lbi_mcs_lock(lbi_mcs_of(l), &e->mcs);
		break;
	case LB_LOCK_CLH:
		lbi_clh_lock(lbi_clh_of(l), e->clh);
		break;
	}
}

static void unlock_raw(struct lb_lock *l, struct lbi_qnode *e)
{
	switch (l->kind) {
	case LB_LOCK_SPIN:
		lbi_spin_unlock(lbi_spin_of(l));
		break;
	case LB_LOCK_MUTEX:
		pthread_mutex_unlock(&l->mutex);
		break;
	case LB_LOCK_TICKET:
		lbi_ticket_unlock(lbi_ticket_of(l));
		break;
	case LB_LOCK_MCS:
		lbi_mcs_unlock(lbi_mcs_of(l), &e->mcs);
		break;
	case LB_LOCK_CLH:
		lbi_clh_unlock(lbi_clh_of(l), &e->clh);
		break;
	}
	if (e)
		e->lock = NULL;
}

/* The node for a queue kind (NULL for the others); -errno on failure. */
static int node_for(struct lb_lock *l, struct lbi_qnode **e)
{
	*e = NULL;
	if (is_queue(l->kind) && !(*e = qnode_get(l)))
		return -errno;
	return 0;
}

/*
 * lb_lock_acquire(), telling the caller what this acquisition cost: a
 * holder that charges acquisitions to its own counters (lb_lru's paths)
 * gets the wait here instead of reading the lock's totals on every hold,
 * which would pull the statistics' line from the last holder's CPU.
 * Returns false when the lock is not taken (see lb_lock_acquire()).
 */
bool lbi_lock_acquire_wait(struct lb_lock *l, bool *contended,
			   uint64_t *wait_ns, uint64_t *yield_ns)
{
	struct lbi_qnode *e;
	uint64_t t0, y0, wait;

	*contended = false;
	*wait_ns = 0;
	*yield_ns = 0;
	if (lbi_unlikely(node_for(l, &e)))
		return false;
	if (lbi_likely(try_raw(l, e))) {
		l->st.acquisitions++;
		return true;
	}
	y0 = lbi_yielded_ns;
	t0 = lbi_now_ns();
	lock_raw(l, e);
	wait = lbi_now_ns() - t0;
	l->st.acquisitions++;
	l->st.contentions++;
	l->st.wait_ns_total += wait;
	*yield_ns = lbi_yielded_ns - y0;
	l->st.wait_ns_yield += *yield_ns;
	if (wait > l->st.wait_ns_max)
		l->st.wait_ns_max = wait;
	if (l->st.contentions == 1 || wait < l->st.wait_ns_min)
		l->st.wait_ns_min = wait;
	*contended = true;
	*wait_ns = wait;
	return true;
}

void lb_lock_acquire(struct lb_lock *l)
{
	uint64_t wait, yield;
	bool contended;

	lbi_lock_acquire_wait(l, &contended, &wait, &yield);
}

void lb_lock_release(struct lb_lock *l)
{
	struct lbi_qnode *e = NULL;

	if (is_queue(l->kind) && !(e = qnode_find(l))) {
		errno = EPERM;
		return;
	}
	unlock_raw(l, e);
}

int lb_lock_stats(struct lb_lock *l, struct lb_lock_stats *out)
{
	struct lbi_qnode *e;
	int err;

	if (!l || !out || !kind_valid(l->kind))
		return -EINVAL;
	if ((err = node_for(l, &e)))
		return err;
	lock_raw(l, e);
	*out = l->st;
	unlock_raw(l, e);
	return 0;
}

int lb_lock_stats_reset(struct lb_lock *l)
{
	struct lbi_qnode *e;
	int err;

	if (!l || !kind_valid(l->kind))
		return -EINVAL;
	if ((err = node_for(l, &e)))
		return err;
	lock_raw(l, e);
	memset(&l->st, 0, sizeof(l->st));
	unlock_raw(l, e);
	return 0;
}

static int check_locks(FILE *f, struct lb_lock *const *locks, unsigned int nr)
{
	unsigned int i;

	if (!f || !locks)
		return -EINVAL;
	for (i = 0; i < nr; i++)
		if (!locks[i] || !kind_valid(locks[i]->kind))
			return -EINVAL;
	return 0;
}

/* Snapshot for a report row: zeros and the first error if it fails. */
static void row_stats(struct lb_lock *l, struct lb_lock_stats *s, int *first)
{
	int err = lb_lock_stats(l, s);

	if (err) {
		memset(s, 0, sizeof(*s));
		if (!*first)
			*first = err;
	}
}

static int report_result(FILE *f, int stats_err)
{
	if (stats_err)
		return stats_err;
	return ferror(f) ? -EIO : 0;
}

static uint64_t avg_wait(const struct lb_lock_stats *s)
{
	return s->contentions ? s->wait_ns_total / s->contentions : 0;
}

int lb_lock_report(FILE *f, struct lb_lock *const *locks, unsigned int nr)
{
	struct lb_lock_stats s;
	unsigned int i;
	int serr = 0, err = check_locks(f, locks, nr);

	if (err)
		return err;
	fprintf(f, "%20s %12s %12s %12s %14s %12s %12s %14s\n", "Name",
		"acquired", "contended", "avg wait", "total wait", "max wait",
		"min wait", "yielded");
	fputc('\n', f);
	for (i = 0; i < nr; i++) {
		row_stats(locks[i], &s, &serr);
		fprintf(f, "%20.20s %12llu %12llu %10lluns %12lluns %10lluns %10lluns %12lluns\n",
			locks[i]->name, (unsigned long long)s.acquisitions,
			(unsigned long long)s.contentions,
			(unsigned long long)avg_wait(&s),
			(unsigned long long)s.wait_ns_total,
			(unsigned long long)s.wait_ns_max,
			(unsigned long long)s.wait_ns_min,
			(unsigned long long)s.wait_ns_yield);
	}
	return report_result(f, serr);
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
	int serr = 0, err = check_locks(f, locks, nr);

	if (err)
		return err;
	fputc('[', f);
	for (i = 0; i < nr; i++) {
		row_stats(locks[i], &s, &serr);
		fprintf(f, "%s{\"name\":", i ? "," : "");
		json_string(f, locks[i]->name);
		fprintf(f, ",\"acquisitions\":%llu,\"contentions\":%llu,"
			"\"wait_ns_total\":%llu,\"wait_ns_max\":%llu,"
			"\"wait_ns_min\":%llu,\"wait_ns_avg\":%llu,"
			"\"wait_ns_yield\":%llu}",
			(unsigned long long)s.acquisitions,
			(unsigned long long)s.contentions,
			(unsigned long long)s.wait_ns_total,
			(unsigned long long)s.wait_ns_max,
			(unsigned long long)s.wait_ns_min,
			(unsigned long long)avg_wait(&s),
			(unsigned long long)s.wait_ns_yield);
	}
	fputs("]\n", f);
	return report_result(f, serr);
}
