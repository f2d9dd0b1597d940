#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# Instructions per add, embedded node vs side table, counted by callgrind:
# for each loop of bench_nodetab_add, the inclusive cost of the calls it
# makes to the add function of its kind, divided by their number. The
# "table/embedded" ratio is taken within this one run.
#
# usage: bench-nodetab-add.sh VALGRIND BENCH_PROGRAM
valgrind=$1
prog=$2
if [ -z "$valgrind" ]; then
	echo "bench-nodetab-add: valgrind not found at configure time; skipped"
	exit 0
fi
out=$(mktemp "${TMPDIR:-/tmp}/lb-callgrind.XXXXXX") || exit 1
trap 'rm -f "$out" "$out.log"' EXIT
"$valgrind" --tool=callgrind --callgrind-out-file="$out" \
	--compress-strings=no --compress-pos=no "$prog" --callgrind \
	>"$out.log" 2>&1 || { cat "$out.log" >&2; exit 1; }
awk '
/^fn=/ { fn = substr($0, 4) }
/^cfn=/ { cfn = substr($0, 5) }
/^calls=/ {
	split($0, a, /[= ]/)
	calls = a[2]
	getline
	if ((fn ~ /^loop_embedded/ && cfn == "lb_cpubatch_add") ||
	    (fn ~ /^loop_table/ && cfn == "lb_nodetab_add")) {
		n[fn] += calls
		ir[fn] += $2
	}
}
function per(f) { return n[f] ? ir[f] / n[f] : -1 }
END {
	printf "%-24s %10s %12s\n", "loop", "calls", "instr/add"
	split("embedded_noflush table_noflush embedded_all table_all", f, " ")
	for (i = 1; i <= 4; i++)
		printf "%-24s %10d %12.1f\n", f[i], n["loop_" f[i]],
		       per("loop_" f[i])
	printf "table/embedded: no-flush %.2fx, all adds %.2fx\n",
	       per("loop_table_noflush") / per("loop_embedded_noflush"),
	       per("loop_table_all") / per("loop_embedded_all")
}' "$out"
