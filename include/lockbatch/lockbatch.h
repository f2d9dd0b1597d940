/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#ifndef LOCKBATCH_LOCKBATCH_H
#define LOCKBATCH_LOCKBATCH_H

/**
 * DOC: Lock-batching primitives
 *
 * Umbrella header: includes every lockbatch header. Build with
 * ``cc app.c $(pkg-config --cflags --libs lockbatch)``. The --static
 * option of pkg-config only adds the private dependencies; to link
 * liblockbatch.a while both libraries are installed, replace -llockbatch
 * by -l:liblockbatch.a in the output of pkg-config --static --libs
 * lockbatch. The headers are C11 and C++ clean; <lockbatch/lru.h> includes liburcu's
 * <urcu/list.h> (headers only), which pkg-config finds.
 *
 * Modules, each with its own page:
 *
 * lb_wbatch(3), <lockbatch/wbatch.h>: a size-weighted batch (entries and
 * total weight capped), folio_batch_add() of Linux.
 *
 * lb_lock(3), <lockbatch/lock.h>: a back-end lock that counts its
 * acquisitions, contentions and waits, with table and JSON reports.
 *
 * lb_cpubatch(3), <lockbatch/cpubatch.h>: per-CPU weighted batches in
 * front of a locked back-end; targeted drains, settle with reference
 * expectations, coalesced drain_all, disable/enable (Linux's
 * folio_add_lru(), lru_add_drain*(), lru_cache_disable()).
 *
 * lb_pcp(3), <lockbatch/pcp.h>: a per-CPU object cache whose high
 * watermark is tuned under load and decays when idle (Linux's
 * per_cpu_pages, nr_pcp_high(), decay_pcp_high()).
 *
 * lb_freelist(3), <lockbatch/freelist.h>: a fixed-size free list over an
 * arena, ready to serve as lb_pcp's back-end.
 *
 * lb_lru(3), <lockbatch/lru.h>: a stock two-list LRU back-end for
 * lb_cpubatch that splices a committed batch in one step, with batched
 * isolate and putback (Linux's lruvec, isolate_lru_folios(),
 * move_folios_to_lru()).
 *
 * lb_refbits(3), <lockbatch/refbits.h>: referenced bits of multi-unit
 * objects, tested and cleared with one flush per run.
 *
 * lb_cpu(3), <lockbatch/cpu.h>: the current CPU and the slot count.
 *
 * lb_pcp_tune(3), <lockbatch/pcp_tune.h>: lb_pcp's tuners as pure
 * functions, for tests and trace replay.
 *
 * Every function validates its input and reports bad input with a
 * negative errno value; each page lists the values it returns, and
 * lb_error(3), <lockbatch/error.h>, states the return conventions once and
 * gives lb_strerror().
 */
#include <lockbatch/version.h>
#include <lockbatch/error.h>
#include <lockbatch/cpu.h>
#include <lockbatch/lock.h>
#include <lockbatch/wbatch.h>
#include <lockbatch/cpubatch.h>
#include <lockbatch/pcp.h>
#include <lockbatch/freelist.h>
#include <lockbatch/lru.h>
#include <lockbatch/refbits.h>
#include <lockbatch/nodetab.h>
#include <lockbatch/cpubatch_wait.h>

#endif /* LOCKBATCH_LOCKBATCH_H */
