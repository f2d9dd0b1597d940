// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * The three workloads, written once against struct cmp_alloc:
 *
 * burst     each thread allocates k blocks, then frees them (k * size is
 *           about 1 MiB, 16..1024 blocks).
 * prodcons  the xmalloc-test shape: each thread fills batches of 32 blocks
 *           and hands them to the next thread (a ring of SPSC queues), which
 *           frees them; every block is freed by another thread when
 *           threads > 1.
 * larson    a shared array of slots (about 2 MiB per thread): a thread picks
 *           a random slot, allocates a block and swaps it in, freeing the
 *           block it took out, which any thread may have allocated.
 *
 * Thread i runs on the (i mod n)-th allowed CPU, the same in every run,
 * and a prodcons thread waiting for a batch, or for room to send one,
 * yields a little, then sleeps until poked;
 * each thread's CPU time over the timed part is measured next to the wall
 * time: the CPU time per allocation moves far less than the wall time
 * when another process takes a CPU from the run.
 *
 * Each block is written once per 4 KiB page with a tag derived from its
 * address and checked before it is freed, as a user would touch its pages;
 * a bad tag counts an error. Bookkeeping memory is mapped, not allocated,
 * so the allocator under test serves only the blocks. Every run is bounded
 * by time (the driver's seconds) and by a per-thread operation count.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <ck_pr.h>
#include <ck_ring.h>

#include "compare.h"

/* Names of the workloads, for the command line and the reports. */
static const char *const workload_names[] = { "burst", "prodcons", "larson" };

const char *cmp_workload_name(enum cmp_workload w)
{
	return (unsigned int)w < CMP_NR_WORKLOADS ? workload_names[w] : "?";
}

int cmp_workload_parse(const char *s)
{
	int i;

	for (i = 0; i < CMP_NR_WORKLOADS; i++)
		if (!strcmp(s, workload_names[i]))
			return i;
	return -EINVAL;
}

/*
 * ThreadSanitizer cannot see ck's inline-asm atomics. Under TSan the ring
 * operations run under a mutex (the ring's slot copies are plain memory
 * accesses ordered only by those atomics) and the larson swap is annotated;
 * a TSan build checks the workloads, it does not time them.
 */
#if defined(__SANITIZE_THREAD__)
#define CMP_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CMP_TSAN 1
#endif
#endif

#ifdef CMP_TSAN
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#define tsan_acquire(p) __tsan_acquire((void *)(p))
#define tsan_release(p) __tsan_release((void *)(p))
#define ring_lock(t) pthread_mutex_lock(&(t)->ring_mutex)
#define ring_unlock(t) pthread_mutex_unlock(&(t)->ring_mutex)
#else
#define tsan_acquire(p) do { } while (0)
#define tsan_release(p) do { } while (0)
#define ring_lock(t) do { } while (0)
#define ring_unlock(t) do { } while (0)
#endif

#define PC_BATCH 32
#define PC_RING 8		/* power of two; holds PC_RING - 1 batches */
#define PC_SPIN 64	/* yields on an empty inbox before sleeping */
#define TAG_MAGIC 0x9e3779b97f4a7c15ull

struct pc_batch {
	void *blk[PC_BATCH];
};

struct thr {
	struct wl *w;
	unsigned int id;
	pthread_t tid;
	uint64_t ops;
	uint64_t live;		/* blocks; wraps below 0, the sum is right */
	uint64_t errors;
	double end;
	uint64_t cpu_ns;	/* thread CPU time of the timed part */
	uint64_t csw;		/* its context switches */
	uint32_t posted;	/* prodcons: pokes, see poke() */
	int sleeping;
	/* prodcons */
	struct ck_ring inbox;
	ck_ring_buffer_t inbox_buf[PC_RING];
#ifdef CMP_TSAN
	pthread_mutex_t ring_mutex;
#endif
	/* Batches flow around the ring: one thread may end up with all. */
	struct pc_batch *spare[CMP_MAX_THREADS * (PC_RING + 1)];
	unsigned int nspare;
	uint64_t rng;
} __attribute__((aligned(128)));

struct wl {
	const struct cmp_spec *s;
	const struct cmp_alloc *a;
	struct thr *t;
	pthread_barrier_t start, stopped;
	int stop;
	void **slots;		/* larson */
	size_t nslots;
	size_t burst;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t thread_csw(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru))
		return 0;
	return (uint64_t)(ru.ru_nvcsw + ru.ru_nivcsw);
}

/*
 * Pins the calling thread to the (id mod n)-th CPU it may run on, so
 * threads spread over the CPUs alike in every run: left to the scheduler,
 * two threads that hand blocks to each other may share one CPU for a
 * whole run and the same configuration runs at two speeds.
 */
static void pin(unsigned int id)
{
	cpu_set_t allowed, one;
	unsigned int n, k, cpu;

	if (sched_getaffinity(0, sizeof(allowed), &allowed))
		return;
	n = (unsigned int)CPU_COUNT(&allowed);
	for (cpu = 0, k = id % n + 1; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &allowed) && !--k)
			break;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
}

static void *map(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static uint64_t tag_of(const void *blk)
{
	return (uintptr_t)blk ^ TAG_MAGIC;
}

static void *get(struct thr *t)
{
	const struct cmp_alloc *a = t->w->a;
	char *b = a->alloc(a->ctx);
	size_t off;

	if (!b) {
		t->errors++;
		return NULL;
	}
	for (off = 0; off < a->size; off += 4096)
		*(uint64_t *)(b + off) = tag_of(b);
	t->ops++;
	ck_pr_store_64(&t->live, t->live + 1);
	return b;
}

static void put(struct thr *t, void *blk)
{
	const struct cmp_alloc *a = t->w->a;

	if (!blk)
		return;
	if (*(uint64_t *)blk != tag_of(blk))
		t->errors++;
	a->free(a->ctx, blk);
	ck_pr_store_64(&t->live, t->live - 1);
}

static int stopping(struct thr *t)
{
	return ck_pr_load_int(&t->w->stop) || t->ops >= t->w->s->max_ops;
}

static void burst(struct thr *t, void **v)
{
	size_t i, k = t->w->burst;

	while (!stopping(t)) {
		for (i = 0; i < k; i++)
			v[i] = get(t);
		for (i = 0; i < k; i++)
			put(t, v[i]);
	}
}

/*
 * Tells @to something changed for it: a batch arrived in its inbox, or
 * room appeared in the inbox it sends to. Dekker with pc_wait(): publish,
 * then look for a sleeper.
 */
static void poke(struct thr *to)
{
	ck_pr_inc_32(&to->posted);
	ck_pr_fence_memory();
	if (ck_pr_load_int(&to->sleeping))
		syscall(SYS_futex, &to->posted, FUTEX_WAKE_PRIVATE, 1, NULL,
			NULL, 0);
}

static bool ring_put(struct thr *to, struct pc_batch *b)
{
	bool ok;

	ring_lock(to);
	ok = ck_ring_enqueue_spsc(&to->inbox, to->inbox_buf, b);
	ring_unlock(to);
	if (ok)
		poke(to);
	return ok;
}

/*
 * Waits for a batch to be sent to @t or for room in the inbox it sends to
 * (@seen is its poke count before it last looked): yields (to the threads
 * sharing its CPU) up to PC_SPIN times, then sleeps until poked or 1 ms
 * passes. Waiting by
 * sched_yield() alone spins whenever nothing else shares the CPU: the
 * CPU time per allocation would then count the handoff's waits, which
 * grow when another process takes the partner's CPU.
 */
static void pc_wait(struct thr *t, uint32_t seen)
{
	struct timespec ms = { 0, 1000000 };
	unsigned int i;

	for (i = 0; i < PC_SPIN; i++) {
		if (ck_pr_load_32(&t->posted) != seen ||
		    ck_pr_load_int(&t->w->stop))
			return;
		sched_yield();
	}
	ck_pr_store_int(&t->sleeping, 1);
	ck_pr_fence_memory();
	if (!ck_pr_load_int(&t->w->stop))
		syscall(SYS_futex, &t->posted, FUTEX_WAIT_PRIVATE, seen, &ms,
			NULL, 0);
	ck_pr_store_int(&t->sleeping, 0);
}

static bool ring_get(struct thr *t, struct pc_batch **b)
{
	bool ok;

	ring_lock(t);
	ok = ck_ring_dequeue_spsc(&t->inbox, t->inbox_buf, b);
	ring_unlock(t);
	return ok;
}

/* Frees every batch waiting in @t's inbox; their descriptors become spare. */
static void pc_consume(struct thr *t)
{
	unsigned int n = t->w->s->threads, i, got = 0;
	struct pc_batch *b;

	while (ring_get(t, &b)) {
		for (i = 0; i < PC_BATCH; i++)
			put(t, b->blk[i]);
		t->spare[t->nspare++] = b;
		got = 1;
	}
	if (got)
		poke(&t->w->t[(t->id + n - 1) % n]);
}

/* Hands @b to the next thread; frees it here only if the run is ending. */
static void pc_push(struct thr *t, struct pc_batch *b)
{
	struct thr *next = &t->w->t[(t->id + 1) % t->w->s->threads];
	unsigned int i;

	while (!ring_put(next, b)) {
		uint32_t seen = ck_pr_load_32(&t->posted);

		if (ck_pr_load_int(&t->w->stop)) {
			for (i = 0; i < PC_BATCH; i++)
				put(t, b->blk[i]);
			t->spare[t->nspare++] = b;
			return;
		}
		pc_consume(t);
		pc_wait(t, seen);
	}
}

static void prodcons(struct thr *t)
{
	struct pc_batch *b;
	unsigned int i;

	while (!stopping(t)) {
		while (!t->nspare && !stopping(t)) {
			uint32_t seen = ck_pr_load_32(&t->posted);

			pc_consume(t);
			if (!t->nspare)
				pc_wait(t, seen);
		}
		if (!t->nspare)
			break;
		b = t->spare[--t->nspare];
		for (i = 0; i < PC_BATCH; i++)
			b->blk[i] = get(t);
		pc_push(t, b);
		pc_consume(t);
	}
}

static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void larson_fill(struct thr *t)
{
	size_t per = t->w->nslots / t->w->s->threads, i;

	for (i = t->id * per; i < (t->id + 1) * per; i++)
		t->w->slots[i] = get(t);
	t->ops = 0;
}

static void larson(struct thr *t)
{
	struct wl *w = t->w;

	while (!stopping(t)) {
		size_t i = (size_t)((rng_next(&t->rng) >> 32) * w->nslots >> 32);
		void *n = get(t), *old;

		tsan_release(&w->slots[i]);
		old = ck_pr_fas_ptr(&w->slots[i], n);
		tsan_acquire(&w->slots[i]);
		put(t, old);
	}
}

static void *thread_main(void *arg)
{
	struct thr *t = arg;
	struct wl *w = t->w;
	void **v = NULL;

	pin(t->id);
	if (w->s->workload == CMP_BURST)
		v = map(w->burst * sizeof(void *));
	if (w->s->workload == CMP_LARSON)
		larson_fill(t);
	pthread_barrier_wait(&w->start);
	t->cpu_ns = thread_cpu_ns();
	t->csw = thread_csw();
	if (w->s->workload == CMP_BURST && v)
		burst(t, v);
	else if (w->s->workload == CMP_PRODCONS)
		prodcons(t);
	else if (w->s->workload == CMP_LARSON)
		larson(t);
	t->end = now_s();
	t->cpu_ns = thread_cpu_ns() - t->cpu_ns;
	t->csw = thread_csw() - t->csw;
	/* Nobody pushes after this barrier: drain what is left in flight. */
	pthread_barrier_wait(&w->stopped);
	if (w->s->workload == CMP_PRODCONS)
		pc_consume(t);
	if (v)
		munmap(v, w->burst * sizeof(void *));
	return NULL;
}

static uint64_t live_blocks(struct wl *w)
{
	uint64_t sum = 0;
	unsigned int i;

	for (i = 0; i < w->s->threads; i++)
		sum += ck_pr_load_64(&w->t[i].live);
	return sum;
}

static int setup(struct wl *w, const struct cmp_spec *s)
{
	unsigned int i, j, n = s->threads;
	size_t per;

	w->t = map(n * sizeof(*w->t));
	if (!w->t)
		return -1;
	per = s->size >= (2u << 20) / 16 ? 16 : (2u << 20) / s->size;
	w->nslots = per > 4096 ? 4096 * (size_t)n : per * n;
	per = (1u << 20) / s->size;
	w->burst = per < 16 ? 16 : per > 1024 ? 1024 : per;
	if (s->workload == CMP_LARSON && !(w->slots = map(w->nslots * sizeof(void *))))
		return -1;
	for (i = 0; i < n; i++) {
		struct thr *t = &w->t[i];

		t->w = w;
		t->id = i;
		t->rng = s->seed + i;
		ck_ring_init(&t->inbox, PC_RING);
#ifdef CMP_TSAN
		pthread_mutex_init(&t->ring_mutex, NULL);
#endif
		if (s->workload != CMP_PRODCONS)
			continue;
		for (j = 0; j <= PC_RING; j++) {
			t->spare[j] = map(sizeof(struct pc_batch));
			if (!t->spare[j])
				return -1;
		}
		t->nspare = PC_RING + 1;
	}
	pthread_barrier_init(&w->start, NULL, n + 1);
	pthread_barrier_init(&w->stopped, NULL, n);
	return 0;
}

/* Waits out the run, sampling the live blocks every 2 ms. */
static uint64_t supervise(struct wl *w, double t0)
{
	struct timespec tick = { 0, 2000000 };
	uint64_t peak = 0, live;
	unsigned int i, done;

	for (;;) {
		live = live_blocks(w);
		if (live > peak && live < (1ull << 62))
			peak = live;
		if (now_s() - t0 >= w->s->seconds)
			break;
		for (i = 0, done = 0; i < w->s->threads; i++)
			done += ck_pr_load_64(&w->t[i].ops) >= w->s->max_ops;
		if (done == w->s->threads)
			break;
		nanosleep(&tick, NULL);
	}
	ck_pr_store_int(&w->stop, 1);
	return peak;
}

int cmp_run_workload(const struct cmp_spec *s, const struct cmp_alloc *a,
		     struct cmp_result *r)
{
	struct wl w = { .s = s, .a = a };
	unsigned int i;
	uint64_t peak, trips;
	double t0, end = 0;

	if (s->threads < 1 || s->threads > CMP_MAX_THREADS || setup(&w, s))
		return -1;
	for (i = 0; i < s->threads; i++)
		if (pthread_create(&w.t[i].tid, NULL, thread_main, &w.t[i]))
			return -1;
	pthread_barrier_wait(&w.start);
	t0 = now_s();
	/* Larson's fill is done: count the holds of the timed part only. */
	trips = a->lock_trips ? a->lock_trips(a->ctx) : 0;
	peak = supervise(&w, t0);
	for (i = 0; i < s->threads; i++) {
		pthread_join(w.t[i].tid, NULL);
		r->ops += w.t[i].ops;
		r->errors += w.t[i].errors;
		r->cpu_ns += w.t[i].cpu_ns;
		r->csw += w.t[i].csw;
		if (w.t[i].end > end)
			end = w.t[i].end;
	}
	if (a->lock_trips)
		r->lock_trips = a->lock_trips(a->ctx) - trips;
	for (i = 0; i < w.nslots && w.slots; i++) {
		if (*(uint64_t *)w.slots[i] != tag_of(w.slots[i]))
			r->errors++;
		a->free(a->ctx, w.slots[i]);
	}
	if (s->workload == CMP_LARSON && w.nslots > peak)
		peak = w.nslots;
	r->secs = end - t0;
	r->mops = r->secs > 0 ? r->ops / r->secs / 1e6 : 0;
	r->peak_live_kib = peak * s->size / 1024;
	return 0;
}
