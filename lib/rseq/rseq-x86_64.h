/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * x86-64 restartable sequences for lib/rseq/rseq.h. Include only from there.
 *
 * Every section has the same shape (lib/rseq/rseq.h, "Owner operations"):
 *
 *   (a) a descriptor in __rseq_cs: start 1f, post-commit 2f, abort 4f;
 *   (b) arm: store the descriptor's address in rseq_cs, the last
 *       instruction before start_ip;
 *   (c) check that cpu_id still equals the CPU the caller indexed with;
 *   (d) check the slot's stop flag;
 *   (e) loads and stores nobody reads before the commit;
 *   (f) one committing store, post-commit label right after it;
 *   (g) the abort stub, out of line in __rseq_failure: the signature
 *       (as the operand of a ud1, so stray execution traps), then a jump
 *       to a C label that recomputes everything and restarts.
 *
 * The kernel leaves registers and flags written inside an aborted section
 * undefined, so no input register is ever modified; scratch registers are
 * rax, rcx and rdx only (r10 and r11 for lbi_rseq_arch_push_pair()). The descriptor section is writable ("aw"): its
 * absolute addresses need RELATIVE relocations, and a read-only section
 * would give a PIE text relocations. Numeric labels only: the compiler may
 * duplicate an inlined asm, and named labels would then clash.
 *
 * asm goto without outputs (GCC >= 4.5, clang >= 9); the empty asm after
 * each label (lbi_rseq_after_goto) works around the asm-goto miscompiles of
 * GCC < 8.1 and clang < 13.0.1, as librseq does.
 */
#ifndef LOCKBATCH_RSEQ_X86_64_H
#define LOCKBATCH_RSEQ_X86_64_H

#include <stdint.h>

#define LBI_RSEQ_SIG 0x53053053

#define lbi_rseq_after_goto() __asm__ __volatile__("" ::: "memory")

/*
 * (d) a remote owns the slot: take the lock path. The negative control of
 * the stress test builds without it, to show the test catches its absence;
 * the library never defines LBI_RSEQ_BROKEN_NO_STOP_CHECK.
 */
#ifndef LBI_RSEQ_BROKEN_NO_STOP_CHECK
#define LBI_RSEQ_ASM_STOP_CHECK						\
	"cmpl $0, 0(%[h])\n\t"						\
	"jnz %l[stopped]\n\t"
#else
#define LBI_RSEQ_ASM_STOP_CHECK
#endif

/*
 * (a) descriptor, and (b) arm: reg = &descriptor; rseq_cs = reg. @reg is
 * a scratch register the section clobbers (rax unless said otherwise).
 */
#define LBI_RSEQ_ASM_BEGIN_REG(reg)					\
	".pushsection __rseq_cs, \"aw\"\n\t"				\
	".balign 32\n\t"						\
	"3:\n\t"							\
	".long 0x0, 0x0\n\t"		/* version, flags */		\
	".quad 1f, 2f - 1f, 4f\n\t"	/* start, length, abort */	\
	".popsection\n\t"						\
	"leaq 3b(%%rip), " reg "\n\t"					\
	"movq " reg ", %%fs:8(%[off])\n\t"				\
	"1:\n\t"							\
	/* (c) migrated or preempted onto another CPU: restart */	\
	"cmpl %[cpu], %%fs:4(%[off])\n\t"				\
	"jnz 4f\n\t"							\
	LBI_RSEQ_ASM_STOP_CHECK

#define LBI_RSEQ_ASM_BEGIN LBI_RSEQ_ASM_BEGIN_REG("%%rax")

/* (g) abort stub: 0f b9 3d + signature = ud1 0x53053053(%rip),%edi. */
#define LBI_RSEQ_ASM_END						\
	"2:\n\t"							\
	".pushsection __rseq_failure, \"ax\"\n\t"			\
	".byte 0x0f, 0xb9, 0x3d\n\t"					\
	".long 0x53053053\n\t"						\
	"4:\n\t"							\
	"jmp %l[abort]\n\t"						\
	".popsection\n\t"


/*
 * Push: word = h->word; new = word + inc (count + 1, weight + w);
 * full when the new count exceeds lim's low half or the new word exceeds
 * lim as a whole (together: new weight > max_weight, or equal with the
 * count over); items[count] = item; commit h->word = new.
 */
static inline __attribute__((always_inline)) int
lbi_rseq_arch_push(int cpu, struct lbi_rseq_hdr *h, void **items, void *item,
		   uint64_t inc, uint64_t lim)
{
	__asm__ goto(
		LBI_RSEQ_ASM_BEGIN
		/* (e) room check, then the item above the committed top */
		"movq 8(%[h]), %%rcx\n\t"
		"leaq (%%rcx, %[inc]), %%rdx\n\t"
		"cmpl %k[lim], %%edx\n\t"
		"ja %l[full]\n\t"
		"cmpq %[lim], %%rdx\n\t"
		"ja %l[full]\n\t"
		"movl %%ecx, %%eax\n\t"
		"movq %[item], (%[items], %%rax, 8)\n\t"
		/* (f) commit count and weight together */
		"movq %%rdx, 8(%[h])\n\t"
		LBI_RSEQ_ASM_END
		: /* no outputs */
		: [cpu] "r" (cpu), [off] "r" (__rseq_offset), [h] "r" (h),
		  [items] "r" (items), [item] "r" (item), [inc] "r" (inc),
		  [lim] "r" (lim)
		: "memory", "cc", "rax", "rcx", "rdx"
		: abort, stopped, full);
	lbi_rseq_after_goto();
	return LBI_RSEQ_OK;
abort:
	lbi_rseq_after_goto();
	return LBI_RSEQ_RESTART;
stopped:
	lbi_rseq_after_goto();
	return LBI_RSEQ_LOCK;
full:
	lbi_rseq_after_goto();
	return LBI_RSEQ_FULL;
}

/*
 * The CPU id of the calling thread (cpu_id, as
 * lbi_rseq_cpu_id()) in one load, from @off = __rseq_offset kept by the
 * caller. Volatile: the kernel rewrites it on migration.
 */
static inline __attribute__((always_inline)) int
lbi_rseq_arch_cpu_id(ptrdiff_t off)
{
	int cpu;

	__asm__ __volatile__("movl %%fs:4(%1), %0" : "=r" (cpu) : "r" (off));
	return cpu;
}

/*
 * Push of a pair, behind a gate, into a pair slot (lib/rseq/rseq.h,
 * LBI_RSEQ_PAIR_A/B: both arrays at fixed offsets from h, so one base
 * register serves the header and both arrays). As push, but first (d') a
 * nonzero *gate (the caller's "do not batch now" count, read inside the
 * section so that a fence of this CPU orders it) takes the lock path; then
 * a goes to the first array and b to the second at the committed count,
 * above the committed top; commit h->word = new. *lim and *gate are read
 * from memory (the caller's instance), and the scratch registers are r10
 * and r11 only (no argument register of the caller's entry), so that the
 * inputs and these two fit in the caller-saved registers: the caller
 * needs no frame and moves no argument.
 */
static inline __attribute__((always_inline)) int
lbi_rseq_arch_push_pair(int cpu, ptrdiff_t off, struct lbi_rseq_hdr *h,
			void *a, void *b, uint64_t inc, const uint64_t *lim,
			const uint32_t *gate)
{
	__asm__ goto(
		LBI_RSEQ_ASM_BEGIN_REG("%%r10")
		"cmpl $0, %[gate]\n\t"
		"jnz %l[stopped]\n\t"
		/* (e) room check, then both items above the committed top */
		"movq 8(%[h]), %%r10\n\t"
		"leaq (%%r10, %[inc]), %%r11\n\t"
		"cmpl %[lim], %%r11d\n\t"
		"ja %l[full]\n\t"
		"cmpq %[lim], %%r11\n\t"
		"ja %l[full]\n\t"
		"movl %%r10d, %%r10d\n\t"	/* the old count, zero-extended */
		"movq %[a], %c[aoff](%[h], %%r10, 8)\n\t"
		"movq %[b], %c[boff](%[h], %%r10, 8)\n\t"
		/* (f) commit count and weight together */
		"movq %%r11, 8(%[h])\n\t"
		LBI_RSEQ_ASM_END
		: /* no outputs */
		: [cpu] "r" (cpu), [off] "r" (off), [h] "r" (h), [a] "r" (a),
		  [b] "r" (b), [inc] "r" (inc), [lim] "m" (*lim),
		  [gate] "m" (*gate), [aoff] "i" (LBI_RSEQ_PAIR_A),
		  [boff] "i" (LBI_RSEQ_PAIR_B)
		: "memory", "cc", "r10", "r11"
		: abort, stopped, full);
	lbi_rseq_after_goto();
	return LBI_RSEQ_OK;
abort:
	lbi_rseq_after_goto();
	return LBI_RSEQ_RESTART;
stopped:
	lbi_rseq_after_goto();
	return LBI_RSEQ_LOCK;
full:
	lbi_rseq_after_goto();
	return LBI_RSEQ_FULL;
}

/*
 * Pop: word = h->word; empty when its count is 0; new = word - dec;
 * *out = items[new count] (the caller's stack, read only after a commit);
 * commit h->word = new.
 */
static inline __attribute__((always_inline)) int
lbi_rseq_arch_pop(int cpu, struct lbi_rseq_hdr *h, void **items, void **out,
		  uint64_t dec)
{
	__asm__ goto(
		LBI_RSEQ_ASM_BEGIN
		"movq 8(%[h]), %%rcx\n\t"
		"testl %%ecx, %%ecx\n\t"
		"jz %l[empty]\n\t"
		"movq %%rcx, %%rdx\n\t"
		"subq %[dec], %%rdx\n\t"
		"movl %%edx, %%eax\n\t"
		"movq (%[items], %%rax, 8), %%rax\n\t"
		"movq %%rax, (%[out])\n\t"
		/* (f) commit: the item is the caller's from here on */
		"movq %%rdx, 8(%[h])\n\t"
		LBI_RSEQ_ASM_END
		:
		: [cpu] "r" (cpu), [off] "r" (__rseq_offset), [h] "r" (h),
		  [items] "r" (items), [out] "r" (out), [dec] "r" (dec)
		: "memory", "cc", "rax", "rcx", "rdx"
		: abort, stopped, empty);
	lbi_rseq_after_goto();
	return LBI_RSEQ_OK;
abort:
	lbi_rseq_after_goto();
	return LBI_RSEQ_RESTART;
stopped:
	lbi_rseq_after_goto();
	return LBI_RSEQ_LOCK;
empty:
	lbi_rseq_after_goto();
	return LBI_RSEQ_EMPTY;
}

/*
 * Take all: *wout = h->word; empty when its count is 0; more items than
 * buf holds (cap) is the lock path's business; copy items[0..count) to
 * buf from the top down; commit h->word = 0.
 */
static inline __attribute__((always_inline)) int
lbi_rseq_arch_take(int cpu, struct lbi_rseq_hdr *h, void **items, void **buf,
		   uint32_t cap, uint64_t *wout)
{
	__asm__ goto(
		LBI_RSEQ_ASM_BEGIN
		"movq 8(%[h]), %%rcx\n\t"
		"movq %%rcx, (%[wout])\n\t"
		"movl %%ecx, %%edx\n\t"
		"testl %%edx, %%edx\n\t"
		"jz %l[empty]\n\t"
		"cmpl %[cap], %%edx\n\t"
		"ja %l[stopped]\n\t"
		"6:\n\t"
		"decl %%edx\n\t"
		"movq (%[items], %%rdx, 8), %%rax\n\t"
		"movq %%rax, (%[buf], %%rdx, 8)\n\t"
		"testl %%edx, %%edx\n\t"
		"jnz 6b\n\t"
		/* (f) commit: the slot is empty, count and weight 0 */
		"movq $0, 8(%[h])\n\t"
		LBI_RSEQ_ASM_END
		:
		: [cpu] "r" (cpu), [off] "r" (__rseq_offset), [h] "r" (h),
		  [items] "r" (items), [buf] "r" (buf), [cap] "r" (cap),
		  [wout] "r" (wout)
		: "memory", "cc", "rax", "rcx", "rdx"
		: abort, stopped, empty);
	lbi_rseq_after_goto();
	return LBI_RSEQ_OK;
abort:
	lbi_rseq_after_goto();
	return LBI_RSEQ_RESTART;
stopped:
	lbi_rseq_after_goto();
	return LBI_RSEQ_LOCK;
empty:
	lbi_rseq_after_goto();
	return LBI_RSEQ_EMPTY;
}

/*
 * lb_pcp's sections (lbi_pcp_mag_pop() and lbi_pcp_mag_push() in
 * lib/pcp/pcp.h). The caller passes the rseq area's offset it cached at
 * create, the slot header's address and the magazine's displacement from
 * it as a constant, so between the CPU id load and the commit there is no
 * address arithmetic left.
 *
 * Macros (GNU statement expressions), not functions: the displacement, the
 * increment and the limit are "i" operands, which must be constants at
 * the asm itself. A parameter of an always_inline function is one only
 * once the optimiser has propagated it, so as functions these sections
 * did not build at -O0 (tests/build_O0.sh). Each evaluates to an &enum
 * lbi_rseq_rc; the arguments are evaluated once.
 */

/* The C labels every pcp section jumps to, and its value. */
#define LBI_RSEQ_PCP_TAIL(other, other_rc, rc)				\
	lbi_rseq_after_goto();						\
	rc = LBI_RSEQ_OK;						\
	goto lbi_rseq_done;						\
abort:								\
	lbi_rseq_after_goto();						\
	rc = LBI_RSEQ_RESTART;						\
	goto lbi_rseq_done;						\
stopped:							\
	lbi_rseq_after_goto();						\
	rc = LBI_RSEQ_LOCK;						\
	goto lbi_rseq_done;						\
other:									\
	lbi_rseq_after_goto();						\
	rc = other_rc;							\
lbi_rseq_done:

/*
 * Pop to *out: word = h->word; empty when its count is 0; item =
 * items[count - 1], indexed by the old count (so the load does not wait
 * for the new word); new = word + add (count - 1, weight + 1 with add =
 * 2^32 - 1); commit h->word = new; then, past the post-commit label, *out
 * = item: an aborted section never writes *out. @add is a constant (an
 * immediate: no register is taken for it, so the caller saves none).
 */
#define lbi_rseq_arch_pcp_pop(cpu_, off_, h_, items_, out_, add_)	\
__extension__ ({							\
	__label__ abort, stopped, empty, lbi_rseq_done;			\
	uint32_t lbi_cpu = (cpu_);					\
	long lbi_off = (off_);						\
	struct lbi_rseq_hdr *lbi_h = (h_);				\
	void **lbi_out = (out_);					\
	int lbi_rc;							\
									\
	__asm__ goto(							\
		LBI_RSEQ_ASM_BEGIN					\
		"movq 8(%[h]), %%rcx\n\t"				\
		"testl %%ecx, %%ecx\n\t"				\
		"jz %l[empty]\n\t"				\
		"movl %%ecx, %%eax\n\t"					\
		"movabsq %[add], %%rdx\n\t"				\
		"movq %c[items]-8(%[h], %%rax, 8), %%rax\n\t"		\
		"addq %%rcx, %%rdx\n\t"				\
		/* (f) commit: the item is the caller's from here on */	\
		"movq %%rdx, 8(%[h])\n\t"				\
		LBI_RSEQ_ASM_END					\
		"movq %%rax, (%[out])\n\t"				\
		:							\
		: [cpu] "r" (lbi_cpu), [off] "r" (lbi_off),		\
		  [h] "r" (lbi_h), [items] "i" (items_),		\
		  [out] "r" (lbi_out), [add] "i" (add_)			\
		: "memory", "cc", "rax", "rcx", "rdx"			\
		: abort, stopped, empty);	\
	LBI_RSEQ_PCP_TAIL(empty, LBI_RSEQ_EMPTY, lbi_rc)	\
	lbi_rc;								\
})

/*
 * Push under the slot's cap: word = h->word; new = word + inc (count + 1,
 * weight + 1); full when the new count exceeds h->cap (read after the
 * arm, so never stale: a lock holder lowers or raises it between
 * sections) or the new word exceeds lim (the weight bound in its high
 * half); items[count] = item, above the committed top; commit h->word =
 * new. @inc and @lim are constants (immediates of the section).
 */
#define lbi_rseq_arch_pcp_push(cpu_, off_, h_, items_, item_, inc_, lim_) \
__extension__ ({							\
	__label__ abort, stopped, full, lbi_rseq_done;			\
	uint32_t lbi_cpu = (cpu_);					\
	long lbi_off = (off_);						\
	struct lbi_rseq_hdr *lbi_h = (h_);				\
	void *lbi_item = (item_);					\
	int lbi_rc;							\
									\
	__asm__ goto(							\
		LBI_RSEQ_ASM_BEGIN					\
		"movq 8(%[h]), %%rcx\n\t"				\
		"movabsq %[inc], %%rax\n\t"				\
		"leaq (%%rcx, %%rax), %%rdx\n\t"			\
		"cmpl 4(%[h]), %%edx\n\t"				\
		"ja %l[full]\n\t"				\
		"movabsq %[lim], %%rax\n\t"				\
		"cmpq %%rax, %%rdx\n\t"					\
		"ja %l[full]\n\t"				\
		"movl %%ecx, %%eax\n\t"					\
		"movq %[item], %c[items](%[h], %%rax, 8)\n\t"		\
		/* (f) commit count and weight together */		\
		"movq %%rdx, 8(%[h])\n\t"				\
		LBI_RSEQ_ASM_END					\
		:							\
		: [cpu] "r" (lbi_cpu), [off] "r" (lbi_off),		\
		  [h] "r" (lbi_h), [items] "i" (items_),		\
		  [item] "r" (lbi_item), [inc] "i" (inc_),		\
		  [lim] "i" (lim_)					\
		: "memory", "cc", "rax", "rcx", "rdx"			\
		: abort, stopped, full);	\
	LBI_RSEQ_PCP_TAIL(full, LBI_RSEQ_FULL, lbi_rc)		\
	lbi_rc;								\
})

#endif /* LOCKBATCH_RSEQ_X86_64_H */
