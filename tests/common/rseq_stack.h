/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * A per-CPU stack of tokens built on lib/rseq/rseq.h, shaped as the slot core
 * will use it: owner push/pop as rseq sections, the lock path R1-R5 when a
 * section says LBI_RSEQ_LOCK, an overflow "back-end" behind a mutex, and a
 * remote drain. With sigsafe set, every lock window blocks signals, so
 * signal handlers may use the stack too. Used by the rseq tests and the
 * rseq benchmark.
 */
#ifndef LB_TEST_RSEQ_STACK_H
#define LB_TEST_RSEQ_STACK_H

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "rseq/rseq.h"

#define LB_RS_CAP 32

/* Negative control: remote drains that stop a slot without fencing it. */
#ifndef LB_RS_NO_FENCE
#define LB_RS_NO_FENCE 0
#endif

struct lb_rs_slot {
	ck_spinlock_fas_t lock;
	struct lbi_rseq_hdr hdr;
	void *items[LB_RS_CAP];
} __attribute__((aligned(64)));

struct lb_rs_stack {
	struct lbi_rseq_layout l;
	struct lb_rs_slot *slots;
	bool rseq;		/* owner sections in use */
	bool sigsafe;		/* block signals in lock windows */
	pthread_mutex_t be_lock;
	void **be;		/* overflow back-end, under be_lock */
	size_t be_n, be_cap;
	size_t be_overflow;	/* pushes beyond be_cap, under be_lock */
	uint64_t lock_ops;	/* owner ops on the lock path (atomic) */
	struct lbi_fork_hook fork;
};

/*
 * The slot lock: the library's lb_rs_lock() is not exported, so the
 * same ck lock, yielding while held (the holder may be preempted), with
 * the ThreadSanitizer annotations of lib/core/core.h.
 */
static inline void lb_rs_lock(ck_spinlock_fas_t *l)
{
	while (!ck_spinlock_fas_trylock(l))
		sched_yield();
	lbi_tsan_acquire(l);
}

static inline void lb_rs_unlock(ck_spinlock_fas_t *l)
{
	lbi_tsan_release(l);
	ck_spinlock_fas_unlock(l);
}

static inline void lb_rs_fork_prepare(void *arg)
{
	struct lb_rs_stack *st = arg;
	uint32_t i;

	pthread_mutex_lock(&st->be_lock);
	for (i = 0; i < st->l.nr_slots; i++)
		lb_rs_lock(&st->slots[i].lock);
}

static inline void lb_rs_fork_release(void *arg)
{
	struct lb_rs_stack *st = arg;
	uint32_t i;

	for (i = st->l.nr_slots; i-- > 0;)
		lb_rs_unlock(&st->slots[i].lock);
	pthread_mutex_unlock(&st->be_lock);
}

/* force_lock: the conf flag. be_cap: tokens the back-end must hold. */
static inline int lb_rs_init(struct lb_rs_stack *st, bool force_lock,
			     bool sigsafe, size_t be_cap)
{
	uint32_t n = lbi_rseq_nr_cpu_ids(), i;

	memset(st, 0, sizeof(*st));
	st->l.stride = sizeof(struct lb_rs_slot);
	st->l.hdr_off = offsetof(struct lb_rs_slot, hdr);
	st->l.items_off = offsetof(struct lb_rs_slot, items);
	st->l.nr_slots = n;
	st->slots = aligned_alloc(64, n * sizeof(*st->slots));
	st->be = calloc(be_cap ? be_cap : 1, sizeof(void *));
	if (!st->slots || !st->be)
		return -ENOMEM;
	memset(st->slots, 0, n * sizeof(*st->slots));
	for (i = 0; i < n; i++)
		ck_spinlock_fas_init(&st->slots[i].lock);
	st->be_cap = be_cap;
	st->rseq = lbi_rseq_usable(force_lock, n);
	st->sigsafe = sigsafe;
	pthread_mutex_init(&st->be_lock, NULL);
	st->fork.prepare = lb_rs_fork_prepare;
	st->fork.parent = lb_rs_fork_release;
	st->fork.child = lb_rs_fork_release;
	st->fork.arg = st;
	return lbi_fork_register(&st->fork);
}

static inline void lb_rs_fini(struct lb_rs_stack *st)
{
	lbi_fork_unregister(&st->fork);
	pthread_mutex_destroy(&st->be_lock);
	free(st->slots);
	free(st->be);
}

static inline void lb_rs_sigblock(struct lb_rs_stack *st, sigset_t *old)
{
	sigset_t all;

	if (!st->sigsafe)
		return;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, old);
}

static inline void lb_rs_sigrestore(struct lb_rs_stack *st, sigset_t *old)
{
	if (st->sigsafe)
		pthread_sigmask(SIG_SETMASK, old, NULL);
}

/*
 * Back-end: pop may find it empty. be_cap bounds every distinct token; a
 * push beyond it (a token duplicated by a broken variant) is counted.
 */
static inline void lb_rs_be_push(struct lb_rs_stack *st, void *item)
{
	sigset_t old;

	lb_rs_sigblock(st, &old);
	pthread_mutex_lock(&st->be_lock);
	if (st->be_n < st->be_cap)
		st->be[st->be_n++] = item;
	else
		st->be_overflow++;	/* only duplicated tokens get here */
	pthread_mutex_unlock(&st->be_lock);
	lb_rs_sigrestore(st, &old);
}

static inline void *lb_rs_be_pop(struct lb_rs_stack *st)
{
	void *item = NULL;
	sigset_t old;

	lb_rs_sigblock(st, &old);
	pthread_mutex_lock(&st->be_lock);
	if (st->be_n)
		item = st->be[--st->be_n];
	pthread_mutex_unlock(&st->be_lock);
	lb_rs_sigrestore(st, &old);
	return item;
}

static inline int lb_rs_lock_cpu(struct lb_rs_stack *st, int cpu)
{
	if (cpu < 0)
		cpu = sched_getcpu();
	if (cpu < 0)
		cpu = 0;
	return (int)((unsigned int)cpu % st->l.nr_slots);
}

/*
 * Lock path for one owner op (R1-R5 of lib/rseq/rseq.h on the caller's slot).
 * push: item != NULL; pop: item == NULL, returns the item or NULL.
 */
static inline void *lb_rs_locked_op(struct lb_rs_stack *st, int cpu,
				    void *item)
{
	struct lb_rs_slot *s;
	void *ret = NULL;
	uint32_t n;
	sigset_t old;

	cpu = lb_rs_lock_cpu(st, cpu);
	s = &st->slots[cpu];
	ck_pr_inc_64(&st->lock_ops);
	lb_rs_sigblock(st, &old);
	lb_rs_lock(&s->lock);				/* R1 */
	if (st->rseq)
		lbi_rseq_stop(&s->hdr, cpu, false);		/* R2 */
	n = lbi_rseq_count(s->hdr.word);			/* R3 */
	if (item && n < LB_RS_CAP) {
		s->items[n] = item;
		s->hdr.word = lbi_rseq_word(n + 1, 0);
		item = NULL;
	} else if (!item && n) {
		ret = s->items[n - 1];
		s->hdr.word = lbi_rseq_word(n - 1, 0);
	}
	if (st->rseq)
		lbi_rseq_start(&s->hdr);			/* R4 */
	lb_rs_unlock(&s->lock);				/* R5 */
	lb_rs_sigrestore(st, &old);
	if (item)
		lb_rs_be_push(st, item);
	return ret;
}

static inline void lb_rs_push(struct lb_rs_stack *st, void *item)
{
	int cpu = -1, rc = LBI_RSEQ_LOCK;

	if (st->rseq)
		rc = lbi_rseq_push(&st->l, st->slots, item, 0, LB_RS_CAP,
				   LBI_RSEQ_WEIGHT_MAX, &cpu);
	if (rc == LBI_RSEQ_OK)
		return;
	if (rc == LBI_RSEQ_FULL)
		lb_rs_be_push(st, item);
	else
		lb_rs_locked_op(st, cpu, item);
}

/* NULL when the slot and the back-end are both empty. */
static inline void *lb_rs_pop(struct lb_rs_stack *st)
{
	int cpu = -1, rc = LBI_RSEQ_LOCK;
	void *item;

	if (st->rseq)
		rc = lbi_rseq_pop(&st->l, st->slots, &item, 0, &cpu);
	if (rc == LBI_RSEQ_OK)
		return item;
	if (rc == LBI_RSEQ_EMPTY)
		return lb_rs_be_pop(st);
	item = lb_rs_locked_op(st, cpu, NULL);
	return item ? item : lb_rs_be_pop(st);
}

/*
 * Remote drain of @cpu's slot into the back-end (R1-R5). @hold_spins: spin
 * this long inside the stopped window, re-reading the word; a change means
 * an owner section wrote a stopped slot. Returns the number of such
 * changes seen (0 when the protocol holds), or -1 on a fence error.
 */
static inline int lb_rs_drain(struct lb_rs_stack *st, int cpu,
			      unsigned int hold_spins)
{
	struct lb_rs_slot *s = &st->slots[cpu];
	void *buf[LB_RS_CAP];
	uint64_t w0;
	uint32_t n, i;
	int changed = 0;
	sigset_t old;

	lb_rs_sigblock(st, &old);
	lb_rs_lock(&s->lock);					/* R1 */
	w0 = ck_pr_load_64(&s->hdr.word);
	if (st->rseq &&						/* R2 */
	    lbi_rseq_stop(&s->hdr, cpu,
			  LB_RS_NO_FENCE || lbi_rseq_count(w0) == 0))
		changed = -1;
	if (lbi_rseq_count(w0) != 0 && changed == 0) {
		w0 = ck_pr_load_64(&s->hdr.word);			/* R3 */
		for (i = 0; i < hold_spins; i++) {
			if (ck_pr_load_64(&s->hdr.word) != w0)
				changed++;
			ck_pr_stall();
		}
		n = lbi_rseq_count(ck_pr_load_64(&s->hdr.word));
		n = n > LB_RS_CAP ? LB_RS_CAP : n;
		memcpy(buf, s->items, n * sizeof(void *));
		ck_pr_store_64(&s->hdr.word, 0);
	} else {
		n = 0;
	}
	if (st->rseq)
		lbi_rseq_start(&s->hdr);				/* R4 */
	lb_rs_unlock(&s->lock);					/* R5 */
	lb_rs_sigrestore(st, &old);
	for (i = 0; i < n; i++)
		lb_rs_be_push(st, buf[i]);
	return changed;
}

#endif /* LB_TEST_RSEQ_STACK_H */
