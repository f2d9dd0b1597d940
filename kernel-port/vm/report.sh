#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# report.sh BASE.LOG PATCHED.LOG COMMAND   -> RESULTS.md on stdout
# report.sh --verdict BASE.LOG PATCHED.LOG -> exit 0 iff the goals are met
#
# Reads the "VMTEST ..." lines that vm/init prints on the guest console.
set -eu

verdict=0
if [ "$1" = --verdict ]; then
	verdict=1
	shift
fi
base=$1
patched=$2
cmd=${3:-}

# The console interleaves firmware escape sequences with the first line.
clean() {
	tr -d '\r' < "$1" | sed -n 's/^.*\(VMTEST .*\)$/\1/p'
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
clean "$base" > "$tmp/b"
clean "$patched" > "$tmp/p"

# lock NAME FILE SIZE FIELD: acquisitions (12) or contentions (6)
lock() {
	awk -v s="$2" -v f="$3" '$2 == "lockstat" && $3 == s { print $f; exit }' "$1"
}
bench_ms() {
	awk -v s="$2" '$2 == "benchout" && $3 == s {
		for (i = 1; i <= NF; i++)
			if ($i ~ /^elapsed_ms=/) { sub(/elapsed_ms=/, "", $i); print $i; exit }
	}' "$1"
}
bench_rc() {
	awk -v s="$2" '$2 == "bench" && $3 == s { sub(/rc=/, "", $4); print $4; exit }' "$1"
}
mthp_faults() {
	awk -v s="$2" '$2 == "mthp_faults" && $3 == s { print $4; exit }' "$1"
}
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0) printf "%.3f", b / a; else print "n/a" }'
}
st_field() {
	awk -v n="$2" -v f="$3" '$2 == "selftest" && $3 == n {
		for (i = 4; i <= NF; i++)
			if (index($i, f "=") == 1) { print substr($i, length(f) + 2); exit }
	}' "$1"
}
st_rc() {
	st_field "$1" "$2" rc
}
st_totals() {
	awk -v n="$2" '$2 == "selftest" && $3 == n {
		$1 = $2 = $3 = $4 = $5 = $6 = ""; sub(/^ +/, ""); sub(/^# Totals: /, ""); print; exit
	}' "$1"
}
# st_pass FILE NAME: passed, or stopped at its time limit with only "ok" lines
st_pass() {
	rc=$(st_rc "$1" "$2")
	[ "$rc" = 0 ] && return 0
	[ "$rc" = 143 ] && [ "$(st_field "$1" "$2" notok)" = 0 ] &&
		[ "$(st_field "$1" "$2" ok)" -gt 0 ]
}
st_word() {
	rc=$(st_rc "$1" "$2")
	case "$rc" in
	0) echo pass ;;
	4) echo skip ;;
	"") echo "not run" ;;
	143)
		if st_pass "$1" "$2"; then
			echo "pass ($(st_field "$1" "$2" ok) ok, 0 not ok, stopped at time limit)"
		else
			echo "fail (time limit, $(st_field "$1" "$2" notok) not ok)"
		fi ;;
	*) echo "fail (rc $rc, $(st_field "$1" "$2" notok) not ok)" ;;
	esac
}
tests=$(awk '$2 == "selftest" { print $3 }' "$tmp/b" "$tmp/p" | awk '!seen[$0]++')

if [ $verdict = 1 ]; then
	ok=0
	b16=$(lock "$tmp/b" 16 12); p16=$(lock "$tmp/p" 16 12)
	b4=$(lock "$tmp/b" 4 12); p4=$(lock "$tmp/p" 4 12)
	if ! awk -v a="$b16" -v b="$p16" 'BEGIN { exit !(a > 0 && b <= 0.2 * a) }'; then
		echo "vm-test: 16K acquisitions $p16 > 0.2 x $b16" >&2; ok=1
	fi
	if ! awk -v a="$b4" -v b="$p4" 'BEGIN { exit !(a > 0 && b >= 0.95 * a && b <= 1.05 * a) }'; then
		echo "vm-test: 4K acquisitions $p4 not within 5% of $b4" >&2; ok=1
	fi
	for t in $tests; do
		if st_pass "$tmp/b" $t && ! st_pass "$tmp/p" $t; then
			echo "vm-test: $t passes unpatched but not patched" >&2; ok=1
		fi
	done
	for s in 4 16 64; do
		for f in b p; do
			if [ "$(bench_rc "$tmp/$f" $s)" != 0 ]; then
				echo "vm-test: benchmark failed at ${s}K ($f)" >&2; ok=1
			fi
		done
	done
	[ $ok = 0 ] && echo "vm-test: goals met"
	exit $ok
fi

kb=$(awk '$2 == "kernel" { print $3; exit }' "$tmp/b")
kp=$(awk '$2 == "kernel" { print $3; exit }' "$tmp/p")
cpus=$(awk '$2 == "kernel" { print $5; exit }' "$tmp/p")
args=$(awk '$2 == "benchout" { sub(/^VMTEST benchout [0-9]+ lrubench: /, ""); sub(/ pages_touched.*/, ""); print; exit }' "$tmp/b")

cat <<EOT
# kernel-port results: unpatched vs patched 6.12.117 in qemu

Produced by \`$cmd\` (kernel-port/Makefile; guest script vm/init, this
table by vm/report.sh). Both kernels are built from the same config
(tinyconfig + vm/test.config, with LOCK_STAT and DEBUG_VM) and booted in
qemu TCG with $cpus CPUs, 2 GiB and \`movablecore=50%\`; unpatched: $kb,
patched: $kp (the patches in patches/series).

## lruvec lock, fault/MADV_DONTNEED microbenchmark

\`lrubench\` ($args): each thread writes one byte per
base page of its mapping, then MADV_DONTNEED, every loop. Figures are the
\`&lruvec->lru_lock\` line of /proc/lock_stat, reset just before the run.

| mTHP size | acquisitions unpatched | acquisitions patched | patched / unpatched | contentions unpatched | contentions patched | run time unpatched | run time patched | mTHP faults (unpatched / patched) |
|---|---|---|---|---|---|---|---|---|
EOT
for s in 4 16 64; do
	ba=$(lock "$tmp/b" $s 12); pa=$(lock "$tmp/p" $s 12)
	bc=$(lock "$tmp/b" $s 6); pc=$(lock "$tmp/p" $s 6)
	bm=$(bench_ms "$tmp/b" $s); pm=$(bench_ms "$tmp/p" $s)
	if [ $s = 4 ]; then
		mf="-"
	else
		mf="$(mthp_faults "$tmp/b" $s) / $(mthp_faults "$tmp/p" $s)"
	fi
	echo "| ${s}K | $ba | $pa | $(ratio "$ba" "$pa") | $bc | $pc | ${bm} ms | ${pm} ms | $mf |"
done

cat <<EOT

Goals: 16K patched acquisitions at most 0.2 of unpatched; 4K within ±5%.

## mm selftests

Exit status of each test (0 pass, 4 skip, anything else fail), with its
kselftest totals line. \`_16K\` runs have 16K mTHP enabled for anonymous
memory; \`gup_test_L\` is \`gup_test -L -m 64 -n 512 -t\` (longterm pins,
which migrate folios out of ZONE_MOVABLE). split_huge_page_test runs for
at most 200 s: its anonymous, zero-page, PTE-mapped and tmpfs THP splits
(its first three tests) run first, while its nine pagecache-to-order
subtests write a 4 MiB file one byte per write() (minutes each under TCG)
and skip on tmpfs anyway; it counts as passed when it printed only "ok"
lines before the limit.

| test | unpatched | patched | unpatched totals | patched totals |
|---|---|---|---|---|
EOT
for t in $tests; do
	echo "| $t | $(st_word "$tmp/b" $t) | $(st_word "$tmp/p" $t) | $(st_totals "$tmp/b" $t) | $(st_totals "$tmp/p" $t) |"
done

fails=$(awk '$2 == "detail"' "$tmp/b" "$tmp/p" | wc -l)
if [ "$fails" -gt 0 ]; then
	echo
	echo "Failed subtests:"
	echo
	for f in b p; do
		[ $f = b ] && which=unpatched || which=patched
		awk -v w="$which" '$2 == "detail" { $1 = $2 = ""; sub(/^ +/, ""); print "- " w ": " $0 }' "$tmp/$f"
	done
fi

echo
echo "## Kernel warnings"
echo
for f in b p; do
	[ $f = b ] && which=unpatched || which=patched
	n=$(awk '$2 == "dmesg"' "$tmp/$f" | wc -l)
	if [ "$n" = 0 ]; then
		echo "- $which: no WARNING/BUG/Oops/bad page in dmesg"
	else
		awk -v w="$which" '$2 == "dmesg" { $1 = $2 = ""; sub(/^ +/, ""); print "- " w ": \`" $0 "\`" }' "$tmp/$f"
	fi
done
