/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* Command-line numbers of mc-loadgen and mc-bench: in range, or exit 2. */
#include <stdio.h>
#include <stdlib.h>

#include "lg.h"

unsigned long long lg_opt_num(const char *prog, const char *opt,
			      const char *s, unsigned long long lo,
			      unsigned long long hi)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 0);

	if (!*s || *end || v < lo || v > hi || s[0] == '-') {
		fprintf(stderr, "%s: --%s wants a whole number in "
				"[%llu, %llu], not '%s'\n", prog, opt, lo, hi, s);
		exit(2);
	}
	return v;
}

double lg_opt_real(const char *prog, const char *opt, const char *s,
		   double lo, double hi)
{
	char *end;
	double v = strtod(s, &end);

	if (!*s || *end || !(v >= lo && v <= hi)) {
		fprintf(stderr, "%s: --%s wants a number in [%g, %g], not "
				"'%s'\n", prog, opt, lo, hi, s);
		exit(2);
	}
	return v;
}
