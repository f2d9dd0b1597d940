/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The fuzz input as a stream of small integers. Reads past the end give 0,
 * so every input is a complete, deterministic operation sequence, and the
 * fuzzer's mutations map to small changes of it.
 */
#ifndef LB_FUZZ_INPUT_H
#define LB_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

struct fz_in {
	const uint8_t *p;
	size_t n;
};

static inline int fz_more(const struct fz_in *in)
{
	return in->n != 0;
}

static inline uint8_t fz_u8(struct fz_in *in)
{
	if (!in->n)
		return 0;
	in->n--;
	return *in->p++;
}

static inline uint32_t fz_u32(struct fz_in *in)
{
	uint32_t v = fz_u8(in);

	v |= (uint32_t)fz_u8(in) << 8;
	v |= (uint32_t)fz_u8(in) << 16;
	return v | (uint32_t)fz_u8(in) << 24;
}

/* Uniform enough in [0, n), n > 0. */
static inline unsigned int fz_below(struct fz_in *in, unsigned int n)
{
	return n <= 256 ? fz_u8(in) % n : fz_u32(in) % n;
}

/*
 * A broken promise: print where and abort, so libFuzzer saves the input
 * (the input is the regression test).
 */
#define FZ_CHECK(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "%s:%d: check failed: %s: ",	\
				__FILE__, __LINE__, #cond);		\
			fprintf(stderr, __VA_ARGS__);			\
			fputc('\n', stderr);				\
			abort();					\
		}							\
	} while (0)

/* Options from the environment (LB_FUZZ_<NAME>=1). */
static inline int fz_option(const char *name)
{
	const char *e = getenv(name);

	return e && *e && *e != '0';
}

#endif /* LB_FUZZ_INPUT_H */
