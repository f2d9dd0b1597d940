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
#include "../common/wbatch_model.h"
#include "fuzz_input.h"

#define NB 4

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

static void compare(const struct lb_wbatch *b, const struct wbatch_model *m,
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
	struct wbatch_model m[NB];
	unsigned int i;
	int rc, want;

	for (i = 0; i < NB; i++) {
		FZ_CHECK(lb_wbatch_init(&b[i], 1 + i * 10, 31) == 0, "init");
		wbatch_model_init(&m[i], 1 + i * 10, 31);
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

			want = wbatch_model_init(&m[i], nr, w);
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
			wbatch_model_reinit(&m[i]);
			break;
		case 2:
			FZ_CHECK(lb_wbatch_add(&b[i], NULL, 1) == -EINVAL, "NULL obj");
			break;
		default: {
			void *obj = &objs[fz_below(&in, sizeof(objs))];
			uint32_t w = pick_weight(&in);

			want = wbatch_model_rc(wbatch_model_add(&m[i], obj, w));
			rc = lb_wbatch_add(&b[i], obj, w);
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
