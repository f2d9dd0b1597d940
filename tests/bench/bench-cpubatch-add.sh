#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# Instructions per lb_cpubatch_add() call, counted by callgrind: the inclusive
# cost of every call to lb_cpubatch_add divided by the number of calls, per
# calling loop of bench_cpubatch_add (see the comment at its top). Instruction
# counts are stable where wall time is not. The floor of the flushing loop,
# floor_add() (an array append plus a plain list splice per 31; no lock, no
# atomics, no clock reads), is counted the same way, and the flushing
# loop's ratio to it printed.
#
# usage: bench-cpubatch-add.sh VALGRIND BENCH_PROGRAM [--json]
valgrind=$1
prog=$2
json=${3:-}
if [ -z "$valgrind" ]; then
	echo "bench-cpubatch-add: valgrind not found at configure time; skipped"
	exit 0
fi
out=$(mktemp "${TMPDIR:-/tmp}/lb-callgrind.XXXXXX") || exit 1
trap 'rm -f "$out" "$out.log"' EXIT
if ! "$valgrind" --tool=callgrind --callgrind-out-file="$out" \
	--compress-strings=no --compress-pos=no "$prog" --callgrind \
	>"$out.log" 2>&1; then
	cat "$out.log" >&2
	exit 1
fi
# After "cfn=lb_cpubatch_add" come "calls=N ..." and the inclusive cost line.
src=$(sed -n 's/^cpu_source=//p' "$out.log")
awk -v json="$json" -v src="$src" '
/^fn=/ { fn = substr($0, 4) }
/^cfn=/ { cfn = substr($0, 5) }
/^calls=/ {
	split($0, a, /[= ]/)
	calls = a[2]
	getline
	if (cfn == "lb_cpubatch_add" || cfn ~ /^floor_add($|\.)/) {
		n[fn] += calls
		ir[fn] += $2
	}
}
function per(f) { return n[f] ? ir[f] / n[f] : -1 }
END {
	split("loop_noflush_injected loop_noflush_cpu loop_all_injected", f, " ")
	desc["loop_noflush_injected"] = "no-flush path, injected CPU id"
	desc["loop_noflush_cpu"] = "no-flush path, CPU id: " src
	desc["loop_all_injected"] = "all adds, a flush every 31st"
	if (json == "--json") {
		printf "{\"bench\":\"cpubatch_add\",\"tool\":\"callgrind\","
		printf "\"cpu_source\":\"%s\"", src
		for (i = 1; i <= 3; i++)
			printf ",\"%s\":{\"calls\":%d,\"instructions_per_add\":%.1f}",
			       substr(f[i], 6), n[f[i]], per(f[i])
		printf ",\"floor_all\":{\"calls\":%d,\"instructions_per_add\":%.1f},\"all_over_floor\":%.3f",
		       n["loop_floor_all"], per("loop_floor_all"),
		       per("loop_floor_all") > 0 ? per(f[3]) / per("loop_floor_all") : 0
		printf "}\n"
		exit
	}
	printf "instructions per lb_cpubatch_add (no-flush path): %.1f\n",
	       per(f[1])
	printf "%-38s %10s %12s\n", "loop", "calls", "instr/add"
	for (i = 1; i <= 3; i++)
		printf "%-38s %10d %12.1f\n", desc[f[i]], n[f[i]], per(f[i])
	printf "%-38s %10d %12.1f\n", "floor: array + list splice per 31", n["loop_floor_all"], per("loop_floor_all")
	if (per("loop_floor_all") > 0)
		printf "all adds (flush every 31st) / floor: %.2fx (instructions)\n", per(f[3]) / per("loop_floor_all")
}' "$out"
