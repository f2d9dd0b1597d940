/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The core module, as the layers above see it: branch hints, debug
 * assertions, the TSan and ASan annotations, the clock, the one wait
 * policy, the ck lock shims, the current-CPU read and the fork()
 * registry. Each comes from its own header, which includes only the ones
 * listed before it here.
 */
#ifndef LOCKBATCH_CORE_CORE_H
#define LOCKBATCH_CORE_CORE_H

#include "core/compiler.h"
#include "core/debug.h"
#include "core/tsan.h"
#include "core/asan.h"
#include "core/clock.h"
#include "core/backoff.h"
#include "core/spin.h"
#include "core/cpu.h"
#include "core/fork.h"

#endif /* LOCKBATCH_CORE_CORE_H */
