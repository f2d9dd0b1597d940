// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * libFuzzer harness for lb_wbatch: four batches, each with caps from the
 * input (invalid ones too), and adds of any weight, reinits and reads,
 * checked after every operation against a model restated from the
 * header's rule (as tests/prop/prop_wbatch.c does).
 */
#include <errno.h>
#include <string.h>

#include <lockbatch/wbatch.h>
#include "fuzz_input.h"

#define NB 4

struct model {
	int valid;
	unsigned int max_nr;
	uint32_t max_weight;
	unsigned int nr;
	uint64_t weight;
	void *objs[LB_WBATCH_MAX];
};

static char objs[64];

static uint32_t pick_weight(struct fz_in *in)
{
	switch (fz_below(in, 8)) {
	case 0:
		return 0;				/* invalid */
	case 1:
		return LB_WBATCH_WEIGHT_MAX + fz_below(in, 3);	/* edge */
	case 2:
		return fz_u32(in);
	default:
		return 1 + fz_below(in, 40);
	}
}

static int model_init(struct model *m, unsigned int max_nr, uint32_t max_w)
{
	if (!max_nr || max_nr > LB_WBATCH_MAX || !max_w ||
	    max_w > LB_WBATCH_WEIGHT_MAX)
		return -EINVAL;
	memset(m, 0, sizeof(*m));
	m->valid = 1;
	m->max_nr = max_nr;
	m->max_weight = max_w;
	return 0;
}

static int model_add(struct model *m, void *obj, uint32_t w)
{
	if (!obj || !w || w > LB_WBATCH_WEIGHT_MAX)
		return -EINVAL;
	if (m->nr >= m->max_nr || m->weight > m->max_weight)
		return -ENOSPC;
	m->objs[m->nr++] = obj;
	m->weight += w;
	if (w >= m->max_weight || m->weight > m->max_weight ||
	    m->nr == m->max_nr)
		return 0;
	return (int)(m->max_nr - m->nr);
}

static void compare(const struct lb_wbatch *b, const struct model *m,
		    unsigned int i)
{
	unsigned int k;

	FZ_CHECK(lb_wbatch_count(b) == (int)m->nr, "batch %u: count %d, model %u",
		 i, lb_wbatch_count(b), m->nr);
	FZ_CHECK(lb_wbatch_weight(b) == (long)m->weight,
		 "batch %u: weight %ld, model %llu", i, lb_wbatch_weight(b),
		 (unsigned long long)m->weight);
	for (k = 0; k < m->nr; k++)
		FZ_CHECK(b->objs[k] == m->objs[k], "batch %u entry %u", i, k);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = { data, size };
	struct lb_wbatch b[NB];
	struct model m[NB];
	unsigned int i;
	int rc, want;

	for (i = 0; i < NB; i++) {
		FZ_CHECK(lb_wbatch_init(&b[i], 1 + i * 10, 31) == 0, "init");
		model_init(&m[i], 1 + i * 10, 31);
	}
	while (fz_more(&in)) {
		unsigned int op = fz_below(&in, 8);

		i = fz_below(&in, NB);
		switch (op) {
		case 0: {
			unsigned int nr = fz_below(&in, LB_WBATCH_MAX + 2);
			uint32_t w = fz_below(&in, 2) ? fz_below(&in, 70) :
							pick_weight(&in);
			struct lb_wbatch before = b[i];

			want = model_init(&m[i], nr, w);
			rc = lb_wbatch_init(&b[i], nr, w);
			FZ_CHECK(rc == want, "init(%u, %u) = %d, model %d", nr, w,
				 rc, want);
			if (rc)
				FZ_CHECK(!memcmp(&before, &b[i], sizeof(before)),
					 "failed init changed the batch");
			break;
		}
		case 1:
			FZ_CHECK(lb_wbatch_reinit(&b[i]) == 0, "reinit");
			m[i].nr = 0;
			m[i].weight = 0;
			break;
		case 2:
			FZ_CHECK(lb_wbatch_add(&b[i], NULL, 1) == -EINVAL, "NULL obj");
			break;
		default: {
			void *obj = &objs[fz_below(&in, sizeof(objs))];
			uint32_t w = pick_weight(&in);

			want = model_add(&m[i], obj, w);
			rc = lb_wbatch_add(&b[i], obj, w);
			/* The model returns entries left, 0 = flush. */
			want = want < 0 ? want : want == 0;
			FZ_CHECK(rc == want, "add(w %u) = %d, model %d (caps %u/%u)",
				 w, rc, want, m[i].max_nr, m[i].max_weight);
			if (rc == 0)
				FZ_CHECK(m[i].weight <= m[i].max_weight,
					 "a waiting batch over its weight cap");
			break;
		}
		}
		compare(&b[i], &m[i], i);
	}
	return 0;
}
