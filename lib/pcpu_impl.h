/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * lb_pcpu internals shared by the add/flush core (pcpu.c) and the drain
 * paths.
 */
#ifndef LOCKBATCH_PCPU_IMPL_H
#define LOCKBATCH_PCPU_IMPL_H

#include <ck_md.h>
#include <ck_spinlock.h>

#include <lockbatch/pcpu.h>
#include "wbatch_impl.h"

/*
 * One per CPU, on its own cache lines: the owner CPU's adds touch only
 * this slot's lines, so slots never share a line with each other.
 */
struct lbi_slot {
	ck_spinlock_fas_t lock;
	uint32_t inflight;		/* swapped out, not yet put; atomic */
	uint64_t backend_locks;		/* back-end lock holds by flushes; atomic */
	struct lb_wbatch batch;		/* under lock */
	struct lb_node *nodes[LB_WBATCH_MAX];	/* under lock, parallel to batch */
	struct lb_pcpu_slot_stats st;	/* under lock */
} __attribute__((aligned(CK_MD_CACHELINE)));

struct lb_pcpu {
	struct lbi_slot *slots;
	unsigned int nr_slots;
	enum lb_pcpu_mode mode;
	uint32_t bypass_above;		/* weights above this never wait */
	uint32_t id;
	lb_cpu_fn cpu_fn;
	void *cpu_arg;
	void *backend;
	struct lb_backend_ops ops;
};

/* A batch swapped out of its slot, on its way to the back-end. */
struct lbi_flushbuf {
	unsigned int slot;
	unsigned int nr;
	uint32_t weight;
	void *objs[LB_WBATCH_MAX];
	struct lb_node *nodes[LB_WBATCH_MAX];
};

void lbi_swap_out(struct lb_pcpu *pc, unsigned int idx,
		  struct lbi_flushbuf *buf, enum lb_flush_cause cause);
void lbi_flush_buf(struct lb_pcpu *pc, struct lbi_flushbuf *buf);
int lbi_drain_slot(struct lb_pcpu *pc, unsigned int idx,
		   enum lb_flush_cause cause);

#endif /* LOCKBATCH_PCPU_IMPL_H */
