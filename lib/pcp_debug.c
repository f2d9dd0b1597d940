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

#include "pcp_impl.h"

struct lbi_pcp_dbg {
	pthread_mutex_t mu;
	uintptr_t *tab;		/* 0 = empty */
	size_t cap;		/* power of two */
	size_t nr;
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

int lbi_pcp_dbg_add(struct lbi_pcp_dbg *d, const void *obj)
{
	uintptr_t k = (uintptr_t)obj;
	int err = 0;
	size_t i;

	pthread_mutex_lock(&d->mu);
	if ((d->nr + 1) * 2 > d->cap)
		err = grow(d);
	if (!err) {
		i = find(d, k);
		if (d->tab[i]) {
			err = -EEXIST;
		} else {
			d->tab[i] = k;
			d->nr++;
		}
	}
	pthread_mutex_unlock(&d->mu);
	return err;
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
