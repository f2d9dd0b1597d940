// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lb_pcp debug mode: the set of objects the cache holds, so a second free
 * of a cached object is refused. An open-addressing hash set (linear
 * probing, backward-shift deletion) under one mutex: a test aid, not fast.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "pcp/pcp.h"

struct lbi_pcp_dbg {
	pthread_mutex_t mu;
	uintptr_t *tab;		/* 0 = empty */
	size_t cap;		/* power of two */
	size_t nr;
	size_t reserved;	/* room promised to refills in progress */
};

static size_t hash(uintptr_t k, size_t cap)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return (size_t)k & (cap - 1);
}

int lbi_pcp_dbg_create(struct lbi_pcp_dbg **d)
{
	struct lbi_pcp_dbg *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->cap = 1024;
	s->tab = calloc(s->cap, sizeof(*s->tab));
	if (!s->tab) {
		free(s);
		return -ENOMEM;
	}
	pthread_mutex_init(&s->mu, NULL);
	*d = s;
	return 0;
}

void lbi_pcp_dbg_destroy(struct lbi_pcp_dbg *d)
{
	pthread_mutex_destroy(&d->mu);
	free(d->tab);
	free(d);
}

static size_t find(const struct lbi_pcp_dbg *d, uintptr_t k)
{
	size_t i = hash(k, d->cap);

	while (d->tab[i] && d->tab[i] != k)
		i = (i + 1) & (d->cap - 1);
	return i;
}

static int grow(struct lbi_pcp_dbg *d)
{
	uintptr_t *old = d->tab;
	size_t i, ocap = d->cap;

	d->tab = calloc(ocap * 2, sizeof(*d->tab));
	if (!d->tab) {
		d->tab = old;
		return -ENOMEM;
	}
	d->cap = ocap * 2;
	for (i = 0; i < ocap; i++)
		if (old[i])
			d->tab[find(d, old[i])] = old[i];
	free(old);
	return 0;
}

/* Keep the table at most half full, counting the reservations. */
static int make_room(struct lbi_pcp_dbg *d, size_t n)
{
	while ((d->nr + d->reserved + n) * 2 > d->cap)
		if (grow(d))
			return -ENOMEM;
	return 0;
}

/* Insert @k unless present; the caller made room. */
static int insert(struct lbi_pcp_dbg *d, uintptr_t k)
{
	size_t i = find(d, k);

	if (d->tab[i])
		return -EEXIST;
	d->tab[i] = k;
	d->nr++;
	return 0;
}

int lbi_pcp_dbg_add(struct lbi_pcp_dbg *d, const void *obj)
{
	uintptr_t k = (uintptr_t)obj;
	int err;

	pthread_mutex_lock(&d->mu);
	/* A double free is reported as such even when memory is short. */
	err = d->tab[find(d, k)] ? -EEXIST : make_room(d, 1);
	if (!err)
		err = insert(d, k);
	pthread_mutex_unlock(&d->mu);
	return err;
}

int lbi_pcp_dbg_reserve(struct lbi_pcp_dbg *d, unsigned int n)
{
	int err;

	pthread_mutex_lock(&d->mu);
	err = make_room(d, n);
	if (!err)
		d->reserved += n;
	pthread_mutex_unlock(&d->mu);
	return err;
}

int lbi_pcp_dbg_add_reserved(struct lbi_pcp_dbg *d, const void *obj)
{
	int err;

	pthread_mutex_lock(&d->mu);
	d->reserved--;
	err = insert(d, (uintptr_t)obj);
	pthread_mutex_unlock(&d->mu);
	return err;
}

void lbi_pcp_dbg_unreserve(struct lbi_pcp_dbg *d, unsigned int n)
{
	pthread_mutex_lock(&d->mu);
	d->reserved -= n;
	pthread_mutex_unlock(&d->mu);
}

int lbi_pcp_dbg_del(struct lbi_pcp_dbg *d, const void *obj)
{
	size_t i, j, h;
	int err = 0;

	pthread_mutex_lock(&d->mu);
	i = find(d, (uintptr_t)obj);
	if (!d->tab[i]) {
		err = -ENOENT;
		goto out;
	}
	d->tab[i] = 0;
	d->nr--;
	/* Backward shift: pull later members of the run into the hole. */
	for (j = (i + 1) & (d->cap - 1); d->tab[j]; j = (j + 1) & (d->cap - 1)) {
		h = hash(d->tab[j], d->cap);
		if (((j - h) & (d->cap - 1)) >= ((j - i) & (d->cap - 1))) {
			d->tab[i] = d->tab[j];
			d->tab[j] = 0;
			i = j;
		}
	}
out:
	pthread_mutex_unlock(&d->mu);
	return err;
}
