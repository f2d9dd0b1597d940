/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Userspace stand-in for <linux/types.h>: just what the patched
 * include/linux/pagevec.h needs to compile in a test program.
 */
#ifndef DIFFTEST_LINUX_TYPES_H
#define DIFFTEST_LINUX_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#endif
