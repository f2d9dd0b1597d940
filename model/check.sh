#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# make model: check model/drain.pml with spin, exhaustively, then run each
# negative control (a variant with one protocol step removed) and require
# that spin finds the violation it exists to show.
#
# Usage: check.sh SRCDIR/model/drain.pml [SECONDS]
# SECONDS bounds each pan run (default 600); a run cut short fails.
set -u
model=$1
limit=${2:-600}
cc=${CC_FOR_MODEL:-cc}
work=$(mktemp -d "${TMPDIR:-/tmp}/lb-model.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
cp "$model" "$work/drain.pml" || exit 1
cd "$work" || exit 1
fail=0

# pan: -m depth bound; COLLAPSE compresses states; MEMLIM in MB.
# PAN_CFLAGS / PAN_FLAGS switch a run to bitstate.
pan() {
	name=$1; shift
	rm -f pan pan.c drain.pml.trail
	spin "$@" -a drain.pml >spin.log 2>&1 || { cat spin.log; return 2; }
	$cc -O2 ${PAN_CFLAGS:--DCOLLAPSE} -DMEMLIM=1500 -o pan pan.c 2>cc.log ||
		{ cat cc.log; return 2; }
	timeout "$limit" ./pan -m200000 ${PAN_FLAGS:-} >"$name.out" 2>&1
	rc=$?
	test $rc -eq 124 && { echo "$name: over ${limit}s"; return 2; }
	grep -q "reached -DMEMLIM" "$name.out" && { echo "$name: out of memory"; return 2; }
	return 0
}

# Which property a run violated, from pan's message.
violated() {
	msg=$(grep -m1 "^pan:[0-9]*: " "$1.out" | sed 's/^pan:[0-9]*: //; s/ (at depth.*//')
	case $msg in
	"invalid end state"*) p="P6 deadlock";;
	*was*) p="P4 drain_all returned before an earlier add was committed";;
	*"&&(infl["*) p="P2 settle said SETTLED while a batch held a reference";;
	*"+cached["*) p="P3 drain_obj returned with its object in flight";;
	*quiet*) p="P5 an object stayed cached after disable returned";;
	"assertion violated"*) p="P1 object lost or committed twice";;
	*) p="unknown";;
	esac
	echo "$p: $msg"
}

echo "== drain.pml: 3 threads x 2 slots, exhaustive"
if pan main; then
	grep -E "errors:|states, stored|transitions|elapsed time" main.out | sed 's/^/   /'
	if grep -q "errors: 0" main.out; then
		echo "PASS drain.pml: P1..P6 hold"
	else
		echo "FAIL drain.pml: $(violated main)"
		fail=1
	fi
else
	fail=1
fi

# Moves: one thread adds its object, adds it again (to either slot) while
# the other thread's flush may hold it between swap-out and @put, and
# drains it; four operations, so that a move, a drain that clears the
# mark and a drain after it all fit.
echo "== drain.pml: 2 threads x 2 slots, 4 + 1 operations (re-add while in flight), exhaustive"
if pan move -DNTHR=2 -DNOPS=4; then
	grep -E "errors:|states, stored|transitions|elapsed time" move.out | sed 's/^/   /'
	if grep -q "errors: 0" move.out; then
		echo "PASS drain.pml (moves): P1..P6 hold"
	else
		echo "FAIL drain.pml (moves): $(violated move)"
		fail=1
	fi
else
	fail=1
fi

# LB_MODEL_DEEP=1: two threads with two operations each, bitstate (128 MB,
# about 90 million states, 2.5 minutes): a wider sweep, not exhaustive.
if test "${LB_MODEL_DEEP:-0}" = 1; then
	echo "== drain.pml: 3 threads x 2 slots, 2 + 2 + 1 operations, bitstate"
	if PAN_CFLAGS=-DBITSTATE PAN_FLAGS=-w30 pan deep -DNLONG=2; then
		grep -E "errors:|states, stored|hash factor|elapsed time" deep.out | sed 's/^/   /'
		if grep -q "errors: 0" deep.out; then
			echo "PASS drain.pml (bitstate): no violation found"
		else
			echo "FAIL drain.pml (bitstate): $(violated deep)"
			fail=1
		fi
	else
		fail=1
	fi
fi

# Negative controls: each must be caught.
# NAME:X=1:Y=2 adds -DX=1 -DY=2 (a variant that needs other bounds; the
# move variants run in the small configuration above, with three
# operations: add, re-add, drain).
mv='NTHR=2:NOPS=3'
for v in ${LB_MODEL_VARIANTS:-NOSTOP NOFENCE STOP_BEFORE_LOCK SKIP_EMPTY_FENCE DO_NOWAIT \
	 DO_HOMEONLY:$mv DO_FOUND_NOWAIT:$mv NOMARK:$mv PUT_EARLY}; do
	name=${v%%:*}
	set -- "-D$name"
	rest=${v#"$name"}
	while test -n "$rest"; do
		rest=${rest#:}
		set -- "$@" "-D${rest%%:*}"
		case $rest in *:*) rest=${rest#*:};; *) rest=;; esac
	done
	if pan "$name" "$@"; then
		if grep -q "errors: 0" "$name.out"; then
			echo "FAIL -D$name: no violation found (the model lost its teeth)"
			fail=1
		else
			echo "PASS -D$name caught: $(violated "$name")"
		fi
	else
		fail=1
	fi
done
exit $fail
