/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#ifndef LOCKBATCH_LOCKBATCH_H
#define LOCKBATCH_LOCKBATCH_H

/**
 * DOC: lockbatch
 *
 * Umbrella header: every lockbatch primitive. Link with
 * ``pkg-config --cflags --libs lockbatch``.
 */
#include <lockbatch/version.h>
#include <lockbatch/cpu.h>
#include <lockbatch/lock.h>
#include <lockbatch/wbatch.h>
#include <lockbatch/cpubatch.h>
#include <lockbatch/pcp.h>

#endif /* LOCKBATCH_LOCKBATCH_H */
