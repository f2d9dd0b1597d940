// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Owner-path cost: ns per push+pop pair on
 *   tls    a thread-local array (the no-sharing floor),
 *   rseq   the calling CPU's slot in restartable sequences (lib/rseq/rseq.h),
 *   rseq-c the same with a compile-time layout,
 *   spin   the calling CPU's slot under an uncontended ck_spinlock_fas,
 *   mutex  one list under a pthread mutex,
 * each push and each pop a noinline call, one pinned thread; median and
 * minimum of the runs, and each median as a ratio to tls. Then the cost of
 * one lbi_rseq_fence() to a CPU running one of our threads (an IPI) and to
 * one running none. Prints a table, or JSON with --json. Never fails.
 *
 * usage: bench_rseq [--json] [pairs]
 */
#include "config.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rseq/rseq.h"
#include "../common/affinity.h"

#define CAP 64
#define RUNS 5
#define FENCES 4000

struct slot {
	ck_spinlock_fas_t lock;
	struct lbi_rseq_hdr hdr;
	void *items[CAP];
} __attribute__((aligned(64)));

static struct slot *slots;
static struct lbi_rseq_layout lay;
static __thread void *tls_items[CAP];
static __thread uint32_t tls_n;
static pthread_mutex_t mtx = PTHREAD_MUTEX_INITIALIZER;
static void *m_items[CAP];
static uint32_t m_n;

#define NOINLINE __attribute__((noinline))

static NOINLINE void tls_push(void *p)
{
	if (tls_n < CAP)
		tls_items[tls_n++] = p;
}

static NOINLINE void *tls_pop(void)
{
	return tls_n ? tls_items[--tls_n] : NULL;
}

static NOINLINE void rseq_push(void *p)
{
	int cpu;

	lbi_rseq_push(&lay, slots, p, 0, CAP, LBI_RSEQ_WEIGHT_MAX, &cpu);
}

static NOINLINE void *rseq_pop(void)
{
	void *p = NULL;
	int cpu;

	lbi_rseq_pop(&lay, slots, &p, 0, &cpu);
	return p;
}

/*
 * The same with the layout known at compile time (slot count fixed at
 * CONST_SLOTS), as a slot core specialised per layout would have it.
 */
#define CONST_SLOTS 256
static struct slot const_slots[CONST_SLOTS];
static const struct lbi_rseq_layout const_lay = {
	.stride = sizeof(struct slot),
	.hdr_off = offsetof(struct slot, hdr),
	.items_off = offsetof(struct slot, items),
	.nr_slots = CONST_SLOTS,
};

static NOINLINE void rseqc_push(void *p)
{
	int cpu;

	lbi_rseq_push(&const_lay, const_slots, p, 0, CAP, LBI_RSEQ_WEIGHT_MAX,
		      &cpu);
}

static NOINLINE void *rseqc_pop(void)
{
	void *p = NULL;
	int cpu;

	lbi_rseq_pop(&const_lay, const_slots, &p, 0, &cpu);
	return p;
}

static struct slot *spin_slot(void)
{
	int cpu = lbi_rseq_cpu_id();

	if (cpu < 0)
		cpu = sched_getcpu();
	return &slots[(unsigned int)cpu % lay.nr_slots];
}

static NOINLINE void spin_push(void *p)
{
	struct slot *s = spin_slot();
	uint32_t n;

	ck_spinlock_fas_lock(&s->lock);
	n = lbi_rseq_count(s->hdr.word);
	if (n < CAP) {
		s->items[n] = p;
		s->hdr.word = n + 1;
	}
	ck_spinlock_fas_unlock(&s->lock);
}

static NOINLINE void *spin_pop(void)
{
	struct slot *s = spin_slot();
	void *p = NULL;
	uint32_t n;

	ck_spinlock_fas_lock(&s->lock);
	n = lbi_rseq_count(s->hdr.word);
	if (n) {
		p = s->items[n - 1];
		s->hdr.word = n - 1;
	}
	ck_spinlock_fas_unlock(&s->lock);
	return p;
}

static NOINLINE void mutex_push(void *p)
{
	pthread_mutex_lock(&mtx);
	if (m_n < CAP)
		m_items[m_n++] = p;
	pthread_mutex_unlock(&mtx);
}

static NOINLINE void *mutex_pop(void)
{
	void *p = NULL;

	pthread_mutex_lock(&mtx);
	if (m_n)
		p = m_items[--m_n];
	pthread_mutex_unlock(&mtx);
	return p;
}

struct variant {
	const char *name;
	void (*push)(void *);
	void *(*pop)(void);
	double med, min;
};

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void measure(struct variant *v, unsigned long pairs)
{
	double ns[RUNS], t0;
	unsigned long i;
	int r;

	for (i = 0; i < 8; i++)		/* a resident item: no empty pops */
		v->push((void *)(i + 1));
	for (r = 0; r < RUNS; r++) {
		t0 = now_ns();
		for (i = 0; i < pairs; i++) {
			v->push((void *)(i + 1));
			if (!v->pop())
				abort();
		}
		ns[r] = (now_ns() - t0) / (double)pairs;
	}
	for (i = 0; i < 8; i++)
		v->pop();
	qsort(ns, RUNS, sizeof(ns[0]), cmp_double);
	v->med = ns[RUNS / 2];
	v->min = ns[0];
}

static void pin(int cpu)
{
	lb_test_pin(cpu, 0);
}

static int spin_stop;
static uint64_t spin_aborts;

/*
 * A thread of ours on @arg's CPU, looping in an empty take section; it
 * counts the sections a fence (or a preemption) aborted.
 */
static void *spinner(void *arg)
{
	int cpu = (int)(intptr_t)arg;
	uint64_t aborts = 0;

	pin(cpu);
	while (!ck_pr_load_int(&spin_stop)) {
#if LBI_RSEQ_ARCH
		struct slot *s = &slots[cpu];
		void *buf[CAP];
		uint64_t w;

		if (lbi_rseq_arch_take(cpu, &s->hdr, s->items, buf, CAP, &w) ==
		    LBI_RSEQ_RESTART)
			aborts++;
#endif
	}
	ck_pr_store_64(&spin_aborts, aborts);
	return NULL;
}

struct fence_cost {
	double med_us, mean_us, aborted;	/* aborted: per fence */
	long ipis;	/* function-call interrupts on the target, or -1 */
};

/* The target's "CAL" (function call interrupt) count, or -1. */
static long cal_irqs(int cpu)
{
	char line[4096], *p, *end;
	long v = -1;
	FILE *f = fopen("/proc/interrupts", "re");
	int i;

	while (f && fgets(line, sizeof(line), f)) {
		p = strstr(line, "CAL:");
		if (!p)
			continue;
		p += 4;
		for (i = 0; i <= cpu; i++, p = end) {
			v = strtol(p, &end, 10);
			if (end == p) {
				v = -1;
				break;
			}
		}
		break;
	}
	if (f)
		fclose(f);
	return v;
}

/*
 * µs per fence to @cpu, with or without a thread of ours there. Each call
 * is timed alone, 20 µs apart: a burst of fences would mostly find the
 * target preempted on a loaded machine, and then no IPI is sent.
 */
static void fence_us(int cpu, int busy, struct fence_cost *fc)
{
	static double us[FENCES];
	double t0, sum = 0;
	pthread_t t;
	int i;

	long irq0;

	spin_stop = 0;
	spin_aborts = 0;
	if (busy) {
		pthread_create(&t, NULL, spinner, (void *)(intptr_t)cpu);
		usleep(10000);
	}
	irq0 = cal_irqs(cpu);
	for (i = 0; i < FENCES; i++) {
		t0 = now_ns();
		lbi_rseq_fence(cpu);
		us[i] = (now_ns() - t0) / 1e3;
		sum += us[i];
		for (t0 = now_ns(); now_ns() - t0 < 20000;)
			ck_pr_stall();
	}
	fc->ipis = irq0 < 0 ? -1 : cal_irqs(cpu) - irq0;
	if (busy) {
		ck_pr_store_int(&spin_stop, 1);
		pthread_join(t, NULL);
	}
	qsort(us, FENCES, sizeof(us[0]), cmp_double);
	fc->med_us = us[FENCES / 2];
	fc->mean_us = sum / FENCES;
	fc->aborted = (double)spin_aborts / FENCES;
}

int main(int argc, char **argv)
{
	struct variant v[] = {
		{ "tls", tls_push, tls_pop, 0, 0 },
		{ "rseq", rseq_push, rseq_pop, 0, 0 },
		{ "rseq-c", rseqc_push, rseqc_pop, 0, 0 },
		{ "spin", spin_push, spin_pop, 0, 0 },
		{ "mutex", mutex_push, mutex_pop, 0, 0 },
	};
	unsigned long pairs = 10000000;
	int json = 0, rseq, i, nv = 5, other;
	struct fence_cost busy = { -1, -1, 0, -1 }, idle = { -1, -1, 0, -1 };
	double per_ipi = -1;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = 1;
		else
			pairs = strtoul(argv[i], NULL, 0);
	}
	pin(0);
	lay.nr_slots = lbi_rseq_nr_cpu_ids();
	lay.stride = sizeof(struct slot);
	lay.hdr_off = offsetof(struct slot, hdr);
	lay.items_off = offsetof(struct slot, items);
	slots = aligned_alloc(64, lay.nr_slots * sizeof(*slots));
	memset(slots, 0, lay.nr_slots * sizeof(*slots));
	rseq = lbi_rseq_usable(false, lay.nr_slots) &&
	       lay.nr_slots <= CONST_SLOTS;
	for (i = 0; i < nv; i++)
		if (rseq || strncmp(v[i].name, "rseq", 4))
			measure(&v[i], pairs);
	other = lay.nr_slots > 1 && rseq ? 1 : -1;
	if (other > 0) {
		fence_us(other, 1, &busy);
		fence_us(other, 0, &idle);
		/* The fences that interrupted a thread of ours, alone. */
		if (busy.ipis > 0)
			per_ipi = idle.mean_us + (busy.mean_us - idle.mean_us) *
				  FENCES / (double)busy.ipis;
	}
	if (json) {
		printf("{\"path\": \"%s\", \"pairs\": %lu, \"ns_per_pair\": {",
		       lb_cpu_path_name(), pairs);
		for (i = 0; i < nv; i++)
			printf("%s\"%s\": {\"median\": %.3f, \"min\": %.3f, \"ratio_to_tls\": %.3f}",
			       i ? ", " : "", v[i].name, v[i].med, v[i].min,
			       v[i].med / v[0].med);
		printf("}, \"fence_us\": {\"cpu_running_ours\": {\"median\": %.3f, \"mean\": %.3f, \"sections_aborted_per_fence\": %.3f, \"ipis\": %ld, \"us_per_ipi_fence\": %.3f}, \"cpu_running_none\": {\"median\": %.3f, \"mean\": %.3f}}}\n",
		       busy.med_us, busy.mean_us, busy.aborted, busy.ipis,
		       per_ipi, idle.med_us, idle.mean_us);
		return 0;
	}
	printf("owner path: %s; %lu push+pop pairs x %d runs, pinned to CPU 0\n",
	       lb_cpu_path_name(), pairs, RUNS);
	printf("x tls: over the floor, a thread-local array behind the same calls (no lock, no atomics)\n");
	printf("%-6s %10s %10s %10s\n", "", "ns median", "ns min", "x tls");
	for (i = 0; i < nv; i++) {
		if (!rseq && !strncmp(v[i].name, "rseq", 4)) {
			printf("%-6s %10s\n", v[i].name, "n/a");
			continue;
		}
		printf("%-6s %10.2f %10.2f %10.2f\n", v[i].name, v[i].med,
		       v[i].min, v[i].med / v[0].med);
	}
	if (other > 0)
		printf("fence to CPU %d, us per call (median / mean of %d calls):\n"
		       "  a thread of ours runs there: %.2f / %.2f (%.2f of its sections aborted per fence)\n"
		       "  none of ours runs there:     %.2f / %.2f\n"
		       "  %ld fences found our thread running and sent an IPI: %.2f us each\n",
		       other, FENCES, busy.med_us, busy.mean_us, busy.aborted,
		       idle.med_us, idle.mean_us, busy.ipis, per_ipi);
	else
		printf("fence: n/a (lock path or one CPU)\n");
	return 0;
}
