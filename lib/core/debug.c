// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * The failure end of lbi_assert_debug() (debug.h): one line on stderr,
 * then abort(), so a core dump or a debugger holds the broken state.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "core/debug.h"

void lbi_assert_fail(const char *cond, const char *file, int line,
		     const char *func)
{
	fprintf(stderr, "lockbatch: %s:%d: %s: assertion %s failed\n", file,
		line, func, cond);
	abort();
}
