/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The drain protocol of lb_cpubatch (lb_cpubatch) as a Promela model.
 *
 * What is modelled, and where it lives in C:
 *   add, lock path ............ lb_cpubatch_add() + add_flush()        lib/cpubatch/create.c
 *   add, rseq owner path ...... the restartable sequence of DESIGN.md
 *                               "Per-CPU identity and the fast path"
 *   swap-out .................. lbi_swap_out()                      lib/cpubatch/create.c
 *   commit, put, in-flight .... commit_runs(), lbi_flush_buf()      lib/cpubatch/create.c
 *   drain_obj ................. lb_cpubatch_drain_obj(), lbi_lock_node_slot()
 *                                                                   lib/cpubatch/drain.c
 *   drain_all + coalescing .... drain_all(), drain_slot_pass(), slot_idle()
 *                                                                   lib/cpubatch/drain.c
 *   disable / enable .......... lb_cpubatch_disable(), lb_cpubatch_enable() lib/cpubatch/drain.c
 *   settle .................... settle(), settle_cached(), home_in_flight()
 *                                                                   lib/cpubatch/settle.c
 *   stop flag + fence ......... remote access of DESIGN.md: stop the slot,
 *                               membarrier(PRIVATE_EXPEDITED_RSEQ, FLAG_CPU)
 *
 * NTHR threads share NSLOTS CPUs (one slot per CPU). Thread t owns object t
 * and is the only one that adds, drains or settles it, as a user owns the
 * objects it passes in; every thread may drain_all, disable and enable, and
 * those passes touch everybody's slots. Threads 0 .. NLONG - 1 perform NOPS
 * operations, the others one, each chosen nondeterministically, on a CPU
 * picked anew for each (migration). A batch holds MAXNR = 2 entries. The
 * default bounds (3 threads, 2 slots, 2 + 1 + 1 operations) are what an
 * exhaustive search finishes in about a minute on the CI machine.
 *
 * Three choices of the rseq design are fixed by this model (each has a
 * negative control below):
 *   - remote access sets the stop flag only under the slot lock, and clears
 *     it before unlocking (a flag set before the lock is cleared by the
 *     first of two remotes while the second works: STOP_BEFORE_LOCK);
 *   - a drain pass may skip the fence of an empty slot, disable's may not
 *     (SKIP_EMPTY_FENCE);
 *   - drain_obj waits, under the drain mutex, for the flushes of the
 *     node's home slot by flipping its epoch, and for every slot's when
 *     the node is marked "moved": an add that changed the home while the
 *     old home had a flush in flight, which may still hold the object
 *     (DO_HOMEONLY ignores the mark, NOMARK never sets it); it waits also
 *     after flushing the batch that held the object (DO_FOUND_NOWAIT).
 *
 * Not modelled: the generation in &lb_node.home (only the owner moves its
 * object here, so the clearing compare-and-swap cannot meet a move),
 * and three slots (a mark that a later move could drop, were it not
 * sticky, needs a third slot to be missed).
 *
 * Ghost state, used only by the assertions:
 *   cached[o]   slot + 1 whose batch holds o (0: none)
 *   infl[o]     flushes that swapped o out and have not yet run @put
 *   quiet       disables that have returned and not been enabled again
 *
 * Properties (all assertions, plus spin's invalid end states = deadlock):
 *   P1 no object lost or committed twice: a batch entry always belongs to
 *      its slot, commit only sees objects in flight, and at the end every
 *      cached object is still in its slot's batch;
 *   P2 settle never says SETTLED while a batch holds a reference;
 *   P3 drain_obj never returns while its object is cached or in flight
 *      (also when it was re-added, to its home slot or the other one,
 *      while a flush of it was between swap-out and @put);
 *   P4 drain_all returns only after the caller's earlier add is committed;
 *   P5 after disable returns, no add leaves an object cached until enable;
 *   P6 no deadlock: every thread terminates (invalid end state otherwise).
 *
 * Variants (spin -D...); all but NORSEQ are negative controls that must fail:
 *   NOSTOP          the rseq section does not check the stop flag
 *   NOFENCE         remote access sets the stop flag but does not fence
 *   STOP_BEFORE_LOCK  stop is set before the slot lock is taken, so a
 *                   second remote clears it under the first one's feet
 *   SKIP_EMPTY_FENCE  remote access skips the fence for an empty slot,
 *                   also in disable's pass
 *   DO_NOWAIT       drain_obj does not wait for in-flight flushes
 *   DO_HOMEONLY     drain_obj waits only for its object's home slot, the
 *                   "moved" mark ignored (the wait before the mark)
 *   DO_FOUND_NOWAIT drain_obj that flushed the batch holding its object
 *                   does not wait for earlier flushes of it
 *   NOMARK          adds never mark a node "moved"
 *                   (the last three need one thread to add, re-add and
 *                   drain: NOPS=3; check.sh runs them with NTHR=2)
 *   PUT_EARLY       a flush runs @put before its commit
 *   NORSEQ          no rseq path at all (the lock path alone; passes)
 */

#ifndef NTHR
#define NTHR	3
#endif
#ifndef NSLOTS
#define NSLOTS	2
#endif
#ifndef NOPS
#define NOPS	2		/* operations of threads 0 .. NLONG - 1 */
#endif
#ifndef NLONG
#define NLONG	1		/* the other threads perform one */
#endif
#define MAXNR	2		/* batch entries; the second add flushes */
#define NONE	255

/* Slots (struct lbi_slot) */
byte slock[NSLOTS];		/* ck spinlock: 0 free, else thread + 1 */
bit  stop[NSLOTS];		/* rseq stop flag */
byte nr[NSLOTS];		/* batch.nr: the rseq commit store */
byte ent[NSLOTS * MAXNR];	/* batch.objs[] */
byte epoch[NSLOTS];		/* s->epoch, only its low bit matters */
byte einf[NSLOTS * 2];		/* s->epoch_inflight[2] */
byte inflight[NSLOTS];		/* s->inflight */

/* Per CPU: the thread whose rseq critical section runs there (thread + 1). */
byte cs[NSLOTS];
bit  aborted[NTHR];

/* Instance (struct lb_cpubatch, struct lbi_drain) */
byte dmutex;			/* drain.lock: 0 free, else thread + 1 */
bit gen;			/* drain.gen, low bit */
byte disabled;			/* pc->disabled */

/* Nodes (struct lb_node), one per object */
byte nslot[NTHR];		/* n->slot: slot + 1, 0 = not cached */
byte home[NTHR];		/* n->home: the slot bits */
bit  moved[NTHR];		/* n->home: LBI_HOME_MOVED */

/* The user's object: references besides the owner's (@get / @put) */
byte refs[NTHR];

/* Ghost */
byte cached[NTHR];
byte infl[NTHR];
byte quiet;

/* --- locks ------------------------------------------------------------ */

inline lock(l, me)   { atomic { l == 0 -> l = me + 1 } }
inline unlock(l)     { l = 0 }

/*
 * membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ, FLAG_CPU, s): an rseq
 * critical section running on CPU s is aborted before it executes another
 * instruction, and the call returns after that (the kernel IPIs the CPU
 * and waits).
 */
inline fence(s)
{
	atomic {
		if
		:: cs[s] != 0 -> aborted[cs[s] - 1] = 1; cs[s] = 0
		:: else -> skip
		fi
	}
}

/*
 * Remote (and lock-path) access to slot s: the slot lock, then the stop
 * flag, then the fence; owners that see the flag take the lock path. The
 * order matters: see STOP_BEFORE_LOCK.
 */
inline slot_enter(s, me)
{
#ifdef STOP_BEFORE_LOCK
	stop[s] = 1;
	fence(s);
	lock(slock[s], me);
#else
	lock(slock[s], me);
	stop[s] = 1;
#ifndef NOFENCE
	fence(s);
#endif
#endif
}

/*
 * The same for one slot of a drain pass, which may skip the fence when the
 * slot is empty (DESIGN.md: "skip it for empty slots"): a section still
 * running there adds after the pass, which drain_all allows. Disable's
 * pass may not skip it: that section read "not disabled" before the raise
 * and would leave its object cached after disable returned
 * (SKIP_EMPTY_FENCE lets it skip, and fails P5).
 */
inline slot_enter_pass(s, me, fence_empty)
{
	lock(slock[s], me);
	stop[s] = 1;
#ifdef SKIP_EMPTY_FENCE
	if
	:: nr[s] != 0 -> fence(s)
	:: else -> skip
	fi
#else
	if
	:: nr[s] != 0 || fence_empty -> fence(s)
	:: else -> skip
	fi
#endif
}

inline slot_leave(s)
{
	atomic { stop[s] = 0; unlock(slock[s]) }
}

/* --- flush: lbi_swap_out() + lbi_flush_buf()/commit_runs() ------------- */

/*
 * lbi_swap_out(), under the slot lock with the slot stopped. Two steps, as
 * in C: the counters and the copy (memcpy of batch.objs), then the nodes
 * and lbi_wbatch_reinit(). Anything that writes the batch between the two
 * is lost, which is what the stop flag prevents.
 */
inline swap_out(s, bufe, b0, b1, bn)
{
	atomic {
		bufe = epoch[s] & 1;
		inflight[s]++;
		einf[s * 2 + bufe]++;
		bn = nr[s];
		b0 = ent[s * MAXNR];
		b1 = (bn > 1 -> ent[s * MAXNR + 1] : NONE);
		if
		:: bn == 0 -> b0 = NONE
		:: else -> skip
		fi
	}
	atomic {
		/* P1: every entry is an object this slot holds, once. */
		if
		:: b0 != NONE ->
			assert(cached[b0] == s + 1);	/* P1 */
			cached[b0] = 0; infl[b0]++; nslot[b0] = 0
		:: else -> skip
		fi;
		if
		:: b1 != NONE ->
			assert(cached[b1] == s + 1);	/* P1 */
			cached[b1] = 0; infl[b1]++; nslot[b1] = 0
		:: else -> skip
		fi;
		nr[s] = 0
	}
}

/* commit_runs(): commit under the back-end lock, @put, then the counters. */
inline flush(s, bufe, b0, b1)
{
#ifdef PUT_EARLY
	atomic {
		if
		:: b0 != NONE -> refs[b0]--
		:: else -> skip
		fi;
		if
		:: b1 != NONE -> refs[b1]--
		:: else -> skip
		fi
	}
#endif
	atomic {
		/*
		 * commit (P1: only objects in flight reach the back-end), then
		 * @put: the batch's reference goes
		 */
		if
		:: b0 != NONE -> assert(infl[b0] > 0); infl[b0]--	/* P1 */
		:: else -> skip
		fi;
		if
		:: b1 != NONE -> assert(infl[b1] > 0); infl[b1]--	/* P1 */
		:: else -> skip
		fi;
#ifndef PUT_EARLY
		if
		:: b0 != NONE -> refs[b0]--
		:: else -> skip
		fi;
		if
		:: b1 != NONE -> refs[b1]--
		:: else -> skip
		fi
#endif
	}
	atomic {
		/* release fence, then epoch_inflight and inflight drop */
		einf[s * 2 + bufe]--;
		inflight[s]--;
		bufe = 0; b0 = 0; b1 = 0	/* dead from here: fewer states */
	}
}

/* --- add --------------------------------------------------------------- */

/*
 * lbi_set_home(): an add entering slot s records it as the object's home;
 * a change of home while the old home has a flush in flight marks the
 * node "moved" (NOMARK: never). The generation is left out: only the
 * owner moves its object here, so the clearing compare-and-swap always
 * finds what it read. The mark stays until a drain that waited for every slot clears it. The
 * adder has read n->slot == 0 before: any flush that took the object out
 * of a batch is counted already.
 */
inline set_home(o, s)
{
	if
	:: home[o] != s + 1 ->
#ifndef NOMARK
		if
		:: home[o] != 0 && inflight[home[o] - 1] != 0 -> moved[o] = 1
		:: else -> skip
		fi;
#endif
		home[o] = s + 1
	:: else -> skip
	fi
}

/*
 * lb_cpubatch_add(), lock path: lock, append, and flush when the batch is full
 * or the instance is disabled (add_cause()).
 */
inline add_locked(o, s, me, bufe, b0, b1, bn)
{
	slot_enter(s, me);
	atomic {
		assert(cached[o] == 0);	/* P1 */
		ent[s * MAXNR + nr[s]] = o;
		nr[s]++;
		nslot[o] = s + 1;
		set_home(o, s);
		refs[o]++;		/* @get */
		cached[o] = s + 1
	}
	if
	:: nr[s] == MAXNR || disabled > 0 ->
		swap_out(s, bufe, b0, b1, bn);
		slot_leave(s);
		flush(s, bufe, b0, b1)
	:: else ->
		assert(quiet == 0);	/* P5 */
		slot_leave(s)
	fi
}

/*
 * The owner fast path, as DESIGN.md lists its steps: read cpu_id, index
 * the slot, arm, check the stop flag, do the work, one committing store.
 * Each step is one instruction group; an abort (fence or preemption by
 * another thread's section on the CPU) may land between any two, and the
 * abort handler restarts. An add that would fill the batch, or one made
 * while disabled, takes the lock path (the flush is never in the section).
 * The object's @get runs before the section (it is the caller's code).
 */
inline add_rseq(o, me, s, n, bufe, b0, b1, bn)
{
	refs[o]++;	/* @get, before the section: it is the caller's code */
restart:
	/* read cpu_id (migration: any CPU), index the slot, arm */
	atomic {
		select(s : 0 .. NSLOTS - 1);
		if
		:: cs[s] != 0 -> aborted[cs[s] - 1] = 1	/* preempted */
		:: else -> skip
		fi;
		cs[s] = me + 1;
		aborted[me] = 0
	}
	/*
	 * Check the stop flag and whether a flush would be needed, then the
	 * work: the entry and the node, both beyond the committed count. One
	 * model step: an abort between them would discard the work anyway.
	 */
	atomic {
		if
		:: aborted[me] -> goto restart
		:: else -> skip
		fi;
		if
#ifndef NOSTOP
		:: stop[s] -> cs[s] = 0; goto slowpath
#endif
		:: nr[s] + 1 >= MAXNR || disabled > 0 -> cs[s] = 0; goto slowpath
		:: else ->
			n = nr[s];
			ent[s * MAXNR + n] = o;
			set_home(o, s);
			nslot[o] = s + 1
		fi
	}
	/* the committing store */
	atomic {
		if
		:: aborted[me] -> nslot[o] = 0; goto restart	/* abort handler */
		:: else ->
			assert(cached[o] == 0);	/* P1 */
			assert(quiet == 0);		/* P5 */
			nr[s] = n + 1;
			cached[o] = s + 1;
			cs[s] = 0
		fi
	};
	goto added;
slowpath:
	nslot[o] = 0;
	refs[o]--;	/* the lock path takes its own */
	add_locked(o, s, me, bufe, b0, b1, bn);
added:
	skip
}

/* --- drains ------------------------------------------------------------ */

/* One slot of a drain_all pass: flip the epoch, flush, wait for the old. */
inline drain_pass(s, me, forced, old, bufe, b0, b1, bn)
{
	slot_enter_pass(s, me, forced);
	old = epoch[s] & 1;
	epoch[s] = (epoch[s] + 1) & 1;
	if
	:: nr[s] > 0 ->
		swap_out(s, bufe, b0, b1, bn);
		slot_leave(s);
		flush(s, bufe, b0, b1)
	:: else -> slot_leave(s)
	fi;
	(einf[s * 2 + old] == 0)
}

/* drain_all(): coalesce with a pass that started after our sample. */
inline drain_all(me, forced, s, g, old, bufe, b0, b1, bn)
{
	g = gen;
	lock(dmutex, me);
	if
	:: !forced && gen != g -> unlock(dmutex)
	:: else ->
		gen = 1 - gen;	/* a wrap only costs a pass */
		s = 0;
		do
		:: s < NSLOTS ->
			if
			:: forced -> drain_pass(s, me, forced, old, bufe, b0, b1, bn)
			:: else ->
				/* slot_idle(): the count, then the in-flight counter */
				if
				:: nr[s] == 0 ->
					if
					:: inflight[s] == 0 -> skip
					:: else -> drain_pass(s, me, forced, old, bufe, b0, b1, bn)
					fi
				:: else -> drain_pass(s, me, forced, old, bufe, b0, b1, bn)
				fi
			fi;
			s++
		:: else -> break
		od;
		unlock(dmutex)
	fi
}

/*
 * lbi_wait_flushes(): nothing in flight is one load; otherwise, under the
 * drain mutex so that epoch flips stay one at a time, flip slot s's epoch
 * under its lock (no batch change, no stop, no fence) and wait until the
 * old epoch's flushes have run @put.
 */
inline wait_flushes(s, me, old)
{
	if
	:: inflight[s] != 0 ->
		lock(dmutex, me);
		lock(slock[s], me);
		old = epoch[s] & 1;
		epoch[s] = (epoch[s] + 1) & 1;
		unlock(slock[s]);
		(einf[s * 2 + old] == 0);
		unlock(dmutex)
	:: else -> skip
	fi
}

/*
 * lbi_wait_home(): the flushes that may hold an object whose node read
 * (hh, hm): its home slot's, or every slot's when it is marked moved.
 * DO_HOMEONLY ignores the mark (the wait before the mark existed).
 */
inline wait_home(hh, hm, me, s, old)
{
#ifdef DO_HOMEONLY
	hm = 0;
#endif
	if
	:: hm ->
		s = 0;
		do
		:: s < NSLOTS -> wait_flushes(s, me, old); s++
		:: else -> break
		od
	:: else ->
		if
		:: hh != 0 -> s = hh - 1; wait_flushes(s, me, old)
		:: else -> skip
		fi
	fi
}

/* lbi_home_in_flight(): settle's look at the same flushes, no wait. */
#if NSLOTS > 2
#error "HOME_BUSY reads slots 0 and NSLOTS - 1 only"
#endif
#define HOME_BUSY(o) (moved[o] -> (inflight[0] + inflight[NSLOTS - 1] != 0) : \
		      (home[o] != 0 && inflight[home[o] - 1] != 0))

/*
 * lb_cpubatch_drain_obj(): flush the slot that holds the node, then wait
 * until no flush that started before holds the object. Found in a batch:
 * the home read under the slot lock, then the flush, then the wait
 * (DO_FOUND_NOWAIT: none, as before the object could be re-added with a
 * flush of it in flight). Not cached (lbi_wait_node_flush()): read the
 * home, wait, and clear the mark by compare-and-swap when the home and
 * its generation did not change. The object may have been re-added
 * elsewhere while an older flush of it was still running: the mark makes
 * the wait read every slot (DO_HOMEONLY fails without it).
 */
inline drain_obj(o, me, s, old, hh, hm, bufe, b0, b1, bn)
{
	/* lbi_lock_node_slot(): the hint, then the check under the lock */
	s = nslot[o];
	if
	:: s != 0 ->
		s--;
		slot_enter(s, me);
		if
		:: nslot[o] == s + 1 ->
			hh = home[o]; hm = moved[o];
			swap_out(s, bufe, b0, b1, bn);
			slot_leave(s);
			flush(s, bufe, b0, b1);
#if !defined(DO_NOWAIT) && !defined(DO_FOUND_NOWAIT)
			wait_home(hh, hm, me, s, old);
#endif
			goto drained
		:: else -> slot_leave(s)
		fi
	:: else -> skip
	fi;
#ifndef DO_NOWAIT
	atomic { hh = home[o]; hm = moved[o] };
	wait_home(hh, hm, me, s, old);
	atomic {
		if
		:: hm && moved[o] && home[o] == hh -> moved[o] = 0
		:: else -> skip
		fi
	};
#endif
drained:
	assert(infl[o] + cached[o] == 0)	/* P3 */
}

/*
 * settle(o, expected = 1): the owner holds one reference; refcount() is
 * 1 + the batch's reference while cached or in flight. SETTLED, DRAINED
 * or BUSY; the 10 ms deadline of the in-flight wait is a nondeterministic
 * give-up.
 */
inline settle(o, me, s, r, bufe, b0, b1, bn)
{
	do
	:: s = nslot[o];
		if
		:: s != 0 ->
			s--;
			slot_enter(s, me);
			if
			:: nslot[o] == s + 1 ->
				/* settle_cached(): R - 1 == expected: drain the slot */
				r = 1 + refs[o];
				if
				:: r - 1 == 1 ->
					swap_out(s, bufe, b0, b1, bn);
					slot_leave(s);
					flush(s, bufe, b0, b1)
				:: else -> slot_leave(s)	/* BUSY */
				fi;
				break
			:: else -> slot_leave(s)	/* moved: chase */
			fi
		:: else ->
			r = 1 + refs[o];
			if
			:: nslot[o] != 0 -> skip	/* re-added between the reads */
			:: r == 1 ->
				assert(cached[o] == 0 && infl[o] == 0);	/* P2 */
				break
			:: r > 2 -> break		/* BUSY */
			:: r == 2 ->
				/* home_in_flight() */
				if
				:: HOME_BUSY(o) ->
					/* wait and look again, or the deadline: BUSY */
					if
					:: (!HOME_BUSY(o))
					:: break
					fi
				:: else ->
					r = 1 + refs[o];
					if
					:: r == 1 -> assert(cached[o] == 0 && infl[o] == 0)	/* P2 */
					:: else -> skip	/* BUSY */
					fi;
					break
				fi
			fi
		fi
	od
}

/* lb_cpubatch_disable(): raise the count, then a forced pass over every slot. */
inline disable(me, s, g, old, bufe, b0, b1, bn)
{
	disabled++;
	drain_all(me, 1, s, g, old, bufe, b0, b1, bn);
	quiet++
}

inline enable()
{
	atomic { quiet--; disabled-- }
}

/* --- threads ----------------------------------------------------------- */

proctype worker(byte me)
{
	byte k, s, n, g, old, r, bufe, b0, b1, bn, hh;
	bit hm;
	byte obj = me;	/* the object this thread owns */
	bool was;

	for (k : 1 .. (me < NLONG -> NOPS : 1)) {
		if
		:: cached[obj] == 0 ->
#ifdef NORSEQ
			select(s : 0 .. NSLOTS - 1);
			add_locked(obj, s, me, bufe, b0, b1, bn)
#else
			if
			:: add_rseq(obj, me, s, n, bufe, b0, b1, bn)
			:: select(s : 0 .. NSLOTS - 1);	/* cpu_id < 0, stop seen ... */
			   add_locked(obj, s, me, bufe, b0, b1, bn)
			fi
#endif
		:: drain_obj(obj, me, s, old, hh, hm, bufe, b0, b1, bn)
		:: settle(obj, me, s, r, bufe, b0, b1, bn)
		:: was = (cached[obj] != 0);
		   drain_all(me, 0, s, g, old, bufe, b0, b1, bn);
		   /* P4: our add was in a batch before the call: gone now */
		   assert(!was || (cached[obj] == 0 && infl[obj] == 0))	/* P4 */
		:: k == 1 ->
		   disable(me, s, g, old, bufe, b0, b1, bn);
		   enable()
		fi;
		/* locals are dead between operations: fewer states */
		atomic { s = 0; n = 0; g = 0; old = 0; r = 0; bufe = 0; b0 = 0; b1 = 0; bn = 0; was = 0;
			 hh = 0; hm = 0 }
	}
}

init
{
	byte t, s, c;

	atomic {
		for (t : 0 .. NTHR - 1) {
			run worker(t)
		}
	}
	(_nr_pr == 1);
	/* P1 at the end: every cached object is in its slot's batch, once. */
	for (t : 0 .. NTHR - 1) {
		assert(infl[t] == 0);	/* P1 */
		if
		:: cached[t] != 0 ->
			s = cached[t] - 1;
			c = 0;
			if
			:: nr[s] > 0 && ent[s * MAXNR] == t -> c++
			:: else -> skip
			fi;
			if
			:: nr[s] > 1 && ent[s * MAXNR + 1] == t -> c++
			:: else -> skip
			fi;
			assert(c == 1)	/* P1: lost */
		:: else -> skip
		fi
	}
	for (s : 0 .. NSLOTS - 1) {
		c = 0;
		for (t : 0 .. NTHR - 1) {
			if
			:: cached[t] == s + 1 -> c++
			:: else -> skip
			fi
		}
		assert(c == nr[s])	/* P1 */
	}
}
