#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# report.sh [--keep OLD.md] [--matrix DIR] BASE.LOG PATCHED.LOG COMMAND
#                                          -> RESULTS.md on stdout
# report.sh --verdict BASE.LOG PATCHED.LOG -> exit 0 iff the goals are met
# report.sh --matrix-verdict DIR CONFIG    -> exit 0 iff that config passed
# report.sh --trim LOG                     -> the log lines RESULTS.md uses
#
# Reads the "VMTEST ..." lines that vm/init prints on the guest console.
# --keep copies every block of OLD.md between "<!-- keep -->" and
# "<!-- /keep -->" lines (hand-written status, slowdowns reported as
# unknown) into the new report, so that a run cannot drop them; --matrix
# reads the matrix-<config>.status files and logs vm-matrix leaves in DIR.
set -eu

# The console interleaves firmware escape sequences with the first line.
# A log that does not exist (a guest that never ran) reads as empty.
clean() {
	[ -f "$1" ] || return 0
	tr -d '\r' < "$1" | sed -n 's/^.*\(VMTEST .*\)$/\1/p'
}

if [ "$1" = --trim ]; then
	clean "$2"
	# A guest that never finished: show how far its console got.
	if ! grep -q 'VMTEST done' "$2"; then
		echo "--- last console lines ---"
		tr -d '\r' < "$2" | tail -n 30
	fi
	exit 0
fi

verdict=0
keep=
matrix=
while [ $# -gt 0 ]; do
	case $1 in
	--verdict) verdict=1; shift ;;
	--matrix-verdict) verdict=2; shift ;;
	--keep) keep=$2; shift 2 ;;
	--matrix) matrix=$2; shift 2 ;;
	*) break ;;
	esac
done
if [ $verdict = 2 ]; then
	# The matrix config's log stands in for both kernels below.
	matrix=$1
	mcfg=$2
	set -- "$matrix/matrix-$mcfg.log" "$matrix/matrix-$mcfg.log"
fi
base=$1
patched=$2
cmd=${3:-}

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
cases=$(awk '$2 == "case" { print $3 }' "$tmp/b" "$tmp/p" | awk '!seen[$0]++')
dcases=$(awk '$2 == "drains" { print $3 }' "$tmp/b" "$tmp/p" | awk '!seen[$0]++')

# case_field FILE CASE KEY: a key=value of a guest case line (rc, ...)
case_field() {
	awk -v c="$2" -v k="$3" '$2 == "case" && $3 == c {
		for (i = 4; i <= NF; i++)
			if (index($i, k "=") == 1) { print substr($i, length(k) + 2); exit }
	}' "$1"
}
case_rest() {
	awk -v c="$2" '$2 == "case" && $3 == c { $1 = $2 = $3 = $4 = ""; sub(/^ +/, ""); print; exit }' "$1"
}
# drains FILE CASE FUNC: calls counted by the function profiler
drains() {
	awk -v c="$2" -v f="$3" '$2 == "drains" && $3 == c {
		for (i = 4; i <= NF; i++)
			if (index($i, f "=") == 1) { print substr($i, length(f) + 2); exit }
	}' "$1"
}
# need_keys FILE CASE / forbid_keys FILE CASE: vm/init's "need" and
# "forbid" lines for CASE.
need_keys() {
	awk -v c="$2" '$2 == "need" && $3 == c { $1 = $2 = $3 = ""; print; exit }' "$1"
}
forbid_keys() {
	awk -v c="$2" '$2 == "forbid" && $3 == c { $1 = $2 = $3 = ""; print; exit }' "$1"
}
# counter FILE CASE KEY: a counters delta (absent: 0)
counter() {
	awk -v c="$2" -v k="$3" '$2 == "counters" && $3 == c {
		for (i = 4; i <= NF; i++)
			if (index($i, k "=") == 1) { print substr($i, length(k) + 2); exit }
		print 0; exit
	}' "$1"
}
# key_value FILE CASE KEY: a counters key (with a ".") or a drain count
key_value() {
	case $3 in
	*.*) counter "$1" "$2" "$3" ;;
	*) drains "$1" "$2" "$3" ;;
	esac
}
# path_failures BASE PATCHED CASE: one line per required key that stayed
# 0 (counters keys on both kernels, functions on the patched one) and per
# forbidden function the patched kernel called; nothing if CASE is fine.
path_failures() {
	for k in $(need_keys "$2" "$3"); do
		v=$(key_value "$2" "$3" "$k")
		[ "${v:-0}" != 0 ] || echo "$k ran 0 times (patched)"
		case $k in *.*)
			[ "$1" != "$2" ] || continue
			v=$(key_value "$1" "$3" "$k")
			[ "${v:-0}" != 0 ] || echo "$k ran 0 times (unpatched)" ;;
		esac
	done
	for k in $(forbid_keys "$2" "$3"); do
		v=$(drains "$2" "$3" "$k")
		[ "${v:-0}" = 0 ] || echo "$k ran $v times, must not (patched)"
	done
	expect_failures "$2" "$3"
}
# expect_failures PATCHED CASE: the case's "expect KEY OP N" lines that
# its drain counts on the patched kernel do not meet.
expect_failures() {
	awk -v c="$2" '$2 == "expect" && $3 == c { print $4, $5, $6 }' "$1" |
	while read -r k op n; do
		v=$(drains "$1" "$2" "$k")
		v=${v:-0}
		case $op in
		eq) [ "$v" -eq "$n" ] ;;
		le) [ "$v" -le "$n" ] ;;
		ge) [ "$v" -ge "$n" ] ;;
		*) false ;;
		esac || echo "$k ran $v times, expected $op $n (patched)"
	done
}
# remote_failure PATCHED CASE: a 16K or 64K case not declared "noremote"
# in which the targeted remote drain never ran.
remote_failure() {
	case $2 in *_16K|*_64K) ;; *) return 0 ;; esac
	awk -v c="$2" '$2 == "noremote" && $3 == c { f = 1 } END { exit !f }' "$1" &&
		return 0
	v=$(drains "$1" "$2" lru_drain_folio_work_fn)
	[ "${v:-0}" != 0 ] ||
		echo "the targeted remote drain (lru_drain_folio_work_fn) ran 0 times (patched)"
}
debug_locks() {
	awk '$2 == "debug_locks" { print $3; exit }' "$1"
}
names() {
	awk '$2 == "case" || $2 == "selftest" || $2 == "bench" { print $2, $3 }' "$1" | sort
}

# spread RUNS MEDIAN: (max - min) / median of comma-separated runs
spread() {
	echo "$1" | tr ',' '\n' | awk -v m="$2" 'NF {
		if (n++ == 0 || $1 < lo) lo = $1; if ($1 > hi) hi = $1 }
		END { if (n && m > 0) printf "%.2f", (hi - lo) / m; else print "n/a" }'
}
# warm RUNS: the runs without the first, which warms up (swap, page
# cache, the first reclaim of the memcg) and is not compared.
warm() {
	echo "$1" | cut -s -d, -f2-
}
# median RUNS: the median of comma-separated runs
median() {
	echo "$1" | tr ',' '\n' | awk 'NF' | sort -n |
		awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'
}
# time_verdict BASE_RUNS PATCHED_RUNS: slower/faster only when the two
# ranges of runs do not overlap, else unknown.
time_verdict() {
	printf '%s\n%s\n' "$1" "$2" | awk -F, 'NR <= 2 {
		lo[NR] = hi[NR] = ""; for (i = 1; i <= NF; i++) if ($i != "") {
			if (lo[NR] == "" || $i + 0 < lo[NR]) lo[NR] = $i + 0
			if (hi[NR] == "" || $i + 0 > hi[NR]) hi[NR] = $i + 0 } }
		END {
			if (lo[1] == "" || lo[2] == "") print "unknown (no runs)"
			else if (lo[2] > hi[1]) print "slower (ranges apart)"
			else if (hi[2] < lo[1]) print "faster (ranges apart)"
			else print "unknown (ranges overlap)" }'
}
# matrix_eval DIR CONFIG: sets m_built, m_booted, m_passed (of m_total
# guest cases and selftests), m_na (not applicable: the config dropped
# TRANSPARENT_HUGEPAGE, as PREEMPT_RT does in 6.12, and the case needs
# mTHPs), m_failed (names), m_warn (dmesg reports, debug_locks, build
# warnings) for one vm-matrix config.
mstatus() {
	[ -f "$1/matrix-$2.status" ] || return 0
	awk -F= -v k="$3" '$1 == k { print $2; exit }' "$1/matrix-$2.status"
}
matrix_eval() {
	m=$tmp/m.$2
	clean "$1/matrix-$2.log" > "$m"
	m_built=$(mstatus "$1" "$2" built)
	m_built=${m_built:-not run}
	m_dropped=$(mstatus "$1" "$2" dropped)
	if grep -q '^VMTEST done' "$m"; then
		m_booted=yes
	elif grep -q '^VMTEST kernel' "$m"; then
		m_booted="yes, did not finish (qemu rc $(mstatus "$1" "$2" qemu_rc))"
	elif [ "$m_built" = yes ]; then
		m_booted=no
	else
		m_booted="not run"
	fi
	m_total=0 m_passed=0 m_na=0 m_failed=
	for c in $(awk '$2 == "case" { print $3 }' "$m"); do
		m_total=$((m_total + 1))
		rc=$(case_field "$m" $c rc)
		if [ "$rc" = 0 ] && [ -z "$(path_failures "$m" "$m" $c)" ]; then
			m_passed=$((m_passed + 1))
		elif { [ "$rc" = 77 ] || [ "$rc" = mthp-unavailable ] ||
		       case $c in *_16K|*_64K|pcache_*) true ;; *) false ;; esac; } &&
		     case ",$m_dropped," in *,CONFIG_TRANSPARENT_HUGEPAGE,*) true ;; *) false ;; esac; then
			m_na=$((m_na + 1))
		else
			m_failed="$m_failed $c"
		fi
	done
	for t in $(awk '$2 == "selftest" { print $3 }' "$m"); do
		m_total=$((m_total + 1))
		if st_pass "$m" $t || [ "$(st_rc "$m" $t)" = 4 ]; then
			m_passed=$((m_passed + 1))
		else
			m_failed="$m_failed $t"
		fi
	done
	m_warn="$(awk '$2 == "dmesg"' "$m" | wc -l) dmesg reports, debug_locks $(debug_locks "$m"), $(mstatus "$1" "$2" build_warnings) build warnings"
}

if [ $verdict = 2 ]; then
	matrix_eval "$matrix" "$mcfg"
	ok=0
	if [ "$m_built" != yes ] || [ "$m_booted" != yes ]; then
		echo "vm-matrix: $mcfg: built $m_built, booted $m_booted" >&2; ok=1
	fi
	if [ -n "$m_failed" ]; then
		echo "vm-matrix: $mcfg: failed:$m_failed" >&2; ok=1
	fi
	if awk '$2 == "dmesg"' "$tmp/m.$mcfg" | grep -q . ||
	   [ "$(debug_locks "$tmp/m.$mcfg")" != 1 ]; then
		echo "vm-matrix: $mcfg: kernel warnings: $m_warn" >&2; ok=1
	fi
	[ $ok = 0 ] && echo "vm-matrix: $mcfg: $m_passed of $m_total passed, $m_na not applicable"
	exit $ok
fi

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
	for f in b p; do
		[ $f = b ] && which=unpatched || which=patched
		if ! grep -q '^VMTEST done' "$tmp/$f"; then
			echo "vm-test: $which guest did not finish (timeout or crash)" >&2; ok=1
		fi
		if [ "$(debug_locks "$tmp/$f")" != 1 ]; then
			echo "vm-test: $which: debug_locks is '$(debug_locks "$tmp/$f")', not 1" >&2; ok=1
		fi
		if awk '$2 == "dmesg"' "$tmp/$f" | grep -q .; then
			echo "vm-test: $which: kernel warnings in dmesg (see RESULTS.md)" >&2; ok=1
		fi
		for c in $cases; do
			if [ "$(case_field "$tmp/$f" $c rc)" != 0 ]; then
				echo "vm-test: case $c failed on the $which kernel" >&2; ok=1
			fi
		done
	done
	if [ "$(names "$tmp/b")" != "$(names "$tmp/p")" ]; then
		echo "vm-test: the two kernels did not run the same cases" >&2; ok=1
	fi
	# lru_add_drain_all() in the pin and split cases: at most a tenth.
	for c in $dcases; do
		# pin_fallback exists to drain all CPUs once, as 6.12.117 does
		case $c in pin_fallback_*) continue ;; pin_*|split_*) ;; *) continue ;; esac
		a=$(drains "$tmp/b" $c lru_add_drain_all_case)
		b=$(drains "$tmp/p" $c lru_add_drain_all_case)
		if ! awk -v a="${a:-0}" -v b="${b:-x}" 'BEGIN { exit !(b != "x" && b * 10 <= a || b == 0) }'; then
			echo "vm-test: $c: lru_add_drain_all() $b times patched, $a unpatched" >&2; ok=1
		fi
	done
	# A case that does not run the path it is there for is a failed case.
	for c in $dcases; do
		path_failures "$tmp/b" "$tmp/p" $c | sed "s/^/vm-test: $c: /" >&2
		[ -z "$(path_failures "$tmp/b" "$tmp/p" $c)" ] || ok=1
	done
	for c in $cases; do
		r=$(remote_failure "$tmp/p" $c)
		[ -z "$r" ] || { echo "vm-test: $c: $r" >&2; ok=1; }
	done
	# Reclaim time, warm-up run left out: patched no more than 10% over
	# unpatched by median, and not slower with the ranges apart.
	for c in $cases; do
		case $c in reclaim_*) ;; *) continue ;; esac
		br=$(warm "$(case_field "$tmp/b" $c runs_us)")
		pr=$(warm "$(case_field "$tmp/p" $c runs_us)")
		bm=$(median "$br"); pm=$(median "$pr")
		v=$(time_verdict "$br" "$pr")
		if [ -z "$bm" ] || [ -z "$pm" ] || [ "${v%% *}" = slower ] ||
		   ! awk -v a="$bm" -v b="$pm" 'BEGIN { exit !(b <= 1.1 * a) }'; then
			echo "vm-test: $c: patched median $pm us vs $bm us unpatched, $v (first run left out)" >&2
			ok=1
		fi
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
table by vm/report.sh; the lines it reads are in results/base.log and
results/patched.log). Both kernels are built from the same debug config
(tinyconfig + vm/test.config: LOCK_STAT, PROVE_LOCKING,
DEBUG_ATOMIC_SLEEP, PREEMPT with DEBUG_PREEMPT, DEBUG_VM, MGLRU, swap on
zram, function profiler) and booted in qemu TCG with $cpus CPUs, 2 GiB and
\`movablecore=50%\`; unpatched: $kb, patched: $kp (the patches in
patches/series). Every case below runs on both kernels under these
checks.
EOT

# The hand-written sections of the report this one replaces.
if [ -n "$keep" ] && [ -f "$keep" ]; then
	awk '/^<!-- \/keep -->$/ { print; print ""; on = 0; next }
	     /^<!-- keep -->$/ { on = 1 }
	     on' "$keep"
fi

cat <<EOT
## Config matrix

\`make -C kernel-port vm-matrix\`: the patched kernel built with
vm/test.config plus each vm/matrix/<config>.config, booted with the same
initramfs (vm-matrix's vCPU count), one row per config.  "dropped": the
fragment lines olddefconfig did not keep (6.12's THP depends on
!PREEMPT_RT, so the RT kernel has no mTHPs and its mTHP cases are not
applicable).  Cases passed counts the guest cases (rc 0 and every path
they need ran) and the selftests.

| config | built | booted | cases passed | not applicable | failed | warnings | dropped |
|---|---|---|---|---|---|---|---|
EOT
for mc in default kcsan offstack rt; do
	if [ -n "$matrix" ] && [ -f "$matrix/matrix-$mc.status" ]; then
		matrix_eval "$matrix" "$mc"
		echo "| $mc | $m_built | $m_booted | $m_passed of $m_total | $m_na | ${m_failed:-none} | $m_warn | $m_dropped |"
	else
		echo "| $mc | not run | not run | not run | - | - | - | - |"
	fi
done

cat <<EOT

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
The run times are one run per kernel in TCG on a shared host: they are
raw figures, and whether the patched kernel is slower or faster there is
unknown (no repetitions to tell the host's noise from the kernel).

## mm selftests

Exit status of each test (0 pass, 4 skip, anything else fail), with its
kselftest totals line. \`_16K\` runs have 16K mTHP enabled for anonymous
memory; \`gup_test_L\` is \`gup_test -L -m 64 -n 512 -t\` (longterm pins,
which migrate folios out of ZONE_MOVABLE). split_huge_page_test runs for
at most 150 s: its anonymous, zero-page, PTE-mapped and tmpfs THP splits
(its first three tests) run first, while its nine pagecache-to-order
subtests write a 4 MiB file one byte per write() (minutes each under TCG)
and skip on tmpfs anyway; it counts as passed when it printed only "ok"
lines before the limit.  \`split_huge_page_test_16K\` and \`_64K\` run it
to the end (no time limit) with 16K or 64K mTHP enabled.

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

cat <<EOT

## Guest cases

Each case prints its result line (below), a drains line (next section)
and a counters line (the vmstat, mTHP and khugepaged counters that moved);
vm/init names, per case, the functions and counters the case exists to
reach (\`need\`) and the ones the patched kernel must not call there
(\`forbid\`), and a case whose needed path ran 0 times fails (the "new
path" column of the drain table).

vm/lrucase.c: 16K mTHPs faulted on CPU 0 and half of each unmapped from
CPU 1, then split from CPU 1 through debugfs \`split_huge_pages\`
(\`split_debugfs\`) or by the deferred-split shrinker through a memcg's
\`memory.reclaim\`, once, then again after CPU 0's LRU cache was drained
(\`split_reclaim\`; the patched shrinker only drains its own CPU, but
memory.reclaim's last retry calls \`lru_add_drain_all()\` itself, which
empties CPU 0's cache too, so on both kernels the first reclaim already
splits everything);
\`large_*\` count mapped pages still in a large folio. \`pin_longterm\`:
mTHPs faulted on CPU 0 in ZONE_MOVABLE, pinned FOLL_LONGTERM from CPU 1
through debugfs \`gup_test\` (PIN_LONGTERM_BENCHMARK), which migrates them.
\`hotplug\`: CPU 1 offline and back online during the 16K benchmark.
\`split_limit\`: the same partial unmaps in a memcg whose memory.max is
set just above its usage, then more faults from CPU 1: the deferred-split
shrinker runs from direct reclaim, without memory.reclaim's own
\`lru_add_drain_all()\`, so its local-only drain is what splits (the
folios still in CPU 0's cache stay whole).  vm/drainrace.c:
\`hotplug_race\` pins, from CPU 0, mTHPs just faulted on CPU 1..n-1
while CPU 1 goes offline and online; \`drainall_race\` the same while
another thread runs \`lru_add_drain_all()\` (drop_caches).
vm/mthpcase.c: \`madv_*\`, MADV_FREE/COLD/PAGEOUT from CPU 1 on whole
folios and on half folios (splits, the last of them held by CPU 0's
cache); \`mlock\`; \`migrate\`, move_pages() to node 1 and mbind() back
(numa=fake=2); \`khugepaged\`, a collapse of mTHP-mapped PMDs.
vm/pcachecase.c: \`pcache_within_size\`, a tmpfs huge=within_size file,
hole punch, truncate and invalidation with its data checked.
\`reclaim_*\`: see below. rc 0 is a pass (77: the kernel lacks an
interface the case needs; that fails too).

| case | unpatched | patched |
|---|---|---|
EOT
for c in $cases; do
	echo "| $c | rc=$(case_field "$tmp/b" $c rc) $(case_rest "$tmp/b" $c) | rc=$(case_field "$tmp/p" $c rc) $(case_rest "$tmp/p" $c) |"
done

cat <<EOT

## Drain calls

Calls counted with the function tracer during each case (set_ftrace_filter:
\`lru_add_drain_all\`, with, in brackets, the calls that are the case's own,
i.e. not memory.reclaim's last-retry drain; \`lru_drain_folio_work_fn\`, the work item of a
targeted drain of another CPU, patched kernel only; \`lru_add_drain_cpu\`,
the drain of one CPU's batches that every drain ends in, local ones
included, from any caller; \`lru_add_drain()\` itself is not traceable).
Goal: \`lru_add_drain_all\` in the pin and split cases at most a tenth of
unpatched (goal 0).

The last two columns count the new paths on the patched kernel: calls of
\`lru_cache_drain_folio_holders()\` and, of those, the remote drains
(work items).  A split, pin or hotplug case whose new path (remote drain;
for splits from reclaim, where only local drains are allowed, the entry
point) ran 0 times fails: it does not test what it is there for.

| case | lru_add_drain_all unpatched | lru_add_drain_all patched | lru_add_drain_cpu unpatched | lru_add_drain_cpu patched | targeted drain calls patched | targeted remote drains patched | new path |
|---|---|---|---|---|---|---|---|
EOT
for c in $dcases; do
	if [ -z "$(need_keys "$tmp/p" $c)$(forbid_keys "$tmp/p" $c)" ]; then
		verdict_c=-
	else
		verdict_c=$(path_failures "$tmp/b" "$tmp/p" $c | paste -sd';' -)
		verdict_c="${verdict_c:+FAILED: $verdict_c}"
		verdict_c="${verdict_c:-ran: $(need_keys "$tmp/p" $c | sed 's/^ *//')}"
	fi
	echo "| $c | $(drains "$tmp/b" $c lru_add_drain_all) ($(drains "$tmp/b" $c lru_add_drain_all_case)) | $(drains "$tmp/p" $c lru_add_drain_all) ($(drains "$tmp/p" $c lru_add_drain_all_case)) | $(drains "$tmp/b" $c lru_add_drain_cpu) | $(drains "$tmp/p" $c lru_add_drain_cpu) | $(drains "$tmp/p" $c lru_cache_drain_folio_holders) | $(drains "$tmp/p" $c lru_drain_folio_work_fn) | $verdict_c |"
done

cat <<EOT

## Reclaim time (the two ported postings)

\`lrucase reclaim-time\`: in a memcg, 16K mTHP, swap on zram: fault the
region, then each run touches it all again (swapping half back in) and
times one \`memory.reclaim\` of half of it. \`reclaim_mglru\` runs with
MGLRU on (scan_folios()/inc_min_seq(): the prefetch patch),
\`reclaim_classic\` with \`lru_gen/enabled\` off (folio_referenced_one():
the batched young-bit patch). The patched kernel has the whole series, so
each figure is the series against 6.12.117 on that path, in TCG, where
prefetchw is not modelled: they show neither a speed-up nor its absence;
the ratio of medians below is reported as it is, regressions included.

Both guests run at the same time, so their runs interleave in time on
the host.  The first run of each kernel warms up and is left out of the
medians, spreads and verdicts (it is still listed with the raw runs).
Spread is (max - min) / median of each kernel's other runs.  A verdict
is given only when the two kernels' ranges of those runs do not
overlap; otherwise the difference is unknown, with the raw runs.
vm-test's goal for these cases: patched median at most 1.1 times the
unpatched one, and not slower with the ranges apart.

| case | median unpatched | median patched | patched / unpatched | spread unpatched | spread patched | verdict | runs unpatched (us) | runs patched (us) |
|---|---|---|---|---|---|---|---|---|
EOT
for c in $cases; do
	case $c in reclaim_*) ;; *) continue ;; esac
	br=$(case_field "$tmp/b" $c runs_us); pr=$(case_field "$tmp/p" $c runs_us)
	bw=$(warm "$br"); pw=$(warm "$pr")
	bm=$(median "$bw"); pm=$(median "$pw")
	echo "| $c | ${bm} us | ${pm} us | $(ratio "$bm" "$pm") | $(spread "$bw" "$bm") | $(spread "$pw" "$pm") | $(time_verdict "$bw" "$pw") | $br | $pr |"
done

echo
echo "## Kernel warnings and debug checks"
echo
for f in b p; do
	[ $f = b ] && which=unpatched || which=patched
	if grep -q '^VMTEST done' "$tmp/$f"; then
		echo "- $which: guest finished; debug_locks = $(debug_locks "$tmp/$f")"
	else
		echo "- $which: guest did NOT finish (timeout or crash)"
	fi
	n=$(awk '$2 == "dmesg"' "$tmp/$f" | wc -l)
	if [ "$n" = 0 ]; then
		echo "- $which: no WARNING/BUG/Oops/bad page/lockdep report in dmesg"
	else
		awk -v w="$which" '$2 == "dmesg" { $1 = $2 = ""; sub(/^ +/, ""); print "- " w ": \`" $0 "\`" }' "$tmp/$f"
	fi
done
