#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# lru-fault's limit mode is the floor the other modes are judged against:
# a plain list per thread, no lock, no atomic instruction, no clock read
# per object. Its code lives alone in examples/lru-fault-limit.c so that
# this can be checked on the object file, not assumed:
#
# - no undefined symbol: a lock (lb_lock_*, pthread_*), a clock read
#   (clock_gettime), an lb_lru call or any other call out of the file
#   would be one. Symbols of sanitizer and coverage instrumentation are
#   the build's, not the program's, and are left out;
# - no instruction that is atomic (a lock prefix, xchg with memory,
#   which is locked without one), a fence, a syscall, or a time-stamp
#   read (rdtsc), and no indirect call;
# - a run takes no lock: lru-fault reports 0 acquisitions for limit mode
#   (own-lru, the same loop over an lb_lru per thread, takes one per
#   object and per release batch, so the count is known to be live).
set -u
b=${top_builddir:-.}
obj="$b/examples/lru-fault-limit.o"
fail=0
lf="$b/examples/lru-fault"

echo "1..3"
if ! command -v nm >/dev/null 2>&1 || ! command -v objdump >/dev/null 2>&1; then
	echo "ok 1 # SKIP binutils (nm, objdump) not installed"
	echo "ok 2 # SKIP binutils (nm, objdump) not installed"
elif [ ! -f "$obj" ]; then
	fail=1; echo "not ok 1 - $obj not built"
	fail=1; echo "not ok 2 - $obj not built"
else
	und=$(nm -u "$obj" | awk '{ print $NF }' |
	      grep -Ev '^(__(asan|tsan|ubsan|sanitizer|msan|lsan)_|__gcov|__llvm_|__stack_chk_fail$|_GLOBAL_OFFSET_TABLE_$)' |
	      tr '\n' ' ')
	if [ -z "$und" ]; then
		echo "ok 1 - limit mode calls nothing outside its file"
	else
		fail=1; echo "not ok 1 - limit mode calls out: $und"
	fi
	bad=$(objdump -d --no-show-raw-insn "$obj" |
	      grep -E '^[[:space:]]+[0-9a-f]+:' |
	      grep -Ei '[[:space:]](lock|xchg[bwlq]?[[:space:]].*\(|cmpxchg|[lms]fence|syscall|sysenter|int[[:space:]]+\$0x80|rdtscp?|call[q]?[[:space:]]+\*)' |
	      head -n 5)
	if [ -z "$bad" ]; then
		echo "ok 2 - limit mode has no atomic, fence, syscall, clock or indirect call"
	else
		fail=1; echo "not ok 2 - limit mode instructions:"
		printf '%s\n' "$bad" | sed 's/^/#   /'
	fi
fi

json=$("$lf" --threads 2 --mem 124K --loops 2 --sizes 4K --modes limit,own-lru --json)
lim=$(printf '%s\n' "$json" | grep '"mode":"limit"')
own=$(printf '%s\n' "$json" | grep '"mode":"own-lru"')
case $lim in
*'"add_acquisitions":0,"release_acquisitions":0,'*'"verified":true'*)
	case $own in
	*'"add_acquisitions":124,"release_acquisitions":4,'*'"verified":true'*)
		echo "ok 3 - limit mode takes no lock (own-lru: one per add)" ;;
	*) fail=1; echo "not ok 3 - own-lru lock count not live: $own" ;;
	esac ;;
*) fail=1; echo "not ok 3 - limit mode took a lock or failed: $lim" ;;
esac
exit $fail
