#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# Smoke-run every example with tiny parameters: they must run to the end
# (lru-fault verifies its own bookkeeping and exits 1 on a mismatch), print
# well-formed output, and reject bad flags with exit status 2.
set -eu
b=${top_builddir:-.}
lf="$b/examples/lru-fault"

fail() {
	echo "not ok: $*" >&2
	exit 1
}

json=$("$lf" --threads 2 --mem 256K --loops 2 --json)
for key in size_bytes mode threads ops_per_sec add_acquisitions \
	   release_acquisitions contended wait_ns_total wait_ns_max; do
	case $json in
	*"\"$key\":"*) ;;
	*) fail "lru-fault --json lacks \"$key\"" ;;
	esac
done
case $json in
*'"verified":false'*) fail "lru-fault --json reports a failed run" ;;
esac

# Counts that do not depend on scheduling: one thread, 124K per loop, two
# loops. Baseline takes the lock once per add; bypass once per 16K add;
# unmapping takes it once per 31 objects (31 x 4K, 7 x 16K: once a loop).
json=$("$lf" --threads 1 --mem 124K --loops 2 --sizes 4K,16K \
	--modes baseline,bypass,limit --json)
expect() {
	line=$(printf '%s\n' "$json" | grep "\"size_bytes\":$1,\"mode\":\"$2\"")
	case $line in
	*"\"add_acquisitions\":$3,\"release_acquisitions\":$4,"*) ;;
	*) fail "lru-fault $1 $2: want $3 add and $4 release acquisitions: $line" ;;
	esac
}
expect 4096 baseline 62 2
expect 16384 baseline 14 2
expect 16384 bypass 14 2
expect 4096 limit 0 0

# --split-every: one thread adds 62 objects, so 15 splits, every other one
# pinned by a third party (7 BUSY). A settle flushes one slot per DRAINED
# outcome, none otherwise, and never runs drain_all.
json=$("$lf" --threads 1 --mem 124K --loops 2 --sizes 4K --modes weighted \
	--split-every 4 --json)
for want in '"settles":15,' '"busy":7,' '"settle_errors":0,' \
	    '"slots_per_settled":0.0000,' '"slots_per_busy":0.0000,' \
	    '"drain_all_passes":0'; do
	case $json in
	*"$want"*) ;;
	*) fail "lru-fault --split-every 4: want $want: $json" ;;
	esac
done
case $json in
*'"slots_per_drained":0.0000,'* | *'"slots_per_drained":1.0000,'*) ;;
*) fail "lru-fault --split-every 4: DRAINED settles flushed other than 1 slot" ;;
esac
"$lf" --threads 3 --mem 128K --loops 2 --split-every 3 >/dev/null

"$lf" --threads 3 --mem 128K --loops 1 --sizes 4K,16K,64K,128K \
	--modes baseline,bypass,weighted,limit >/dev/null
"$lf" --threads 4 --mem 64K --loops 3 --lock spin >/dev/null
"$lf" --threads 4 --mem 64K --loops 3 --lock mutex --sizes 8K \
	--modes weighted >/dev/null
"$lf" --help | grep -q '^usage: lru-fault' || fail "lru-fault --help"
for kind in ticket mcs clh; do
	"$lf" --threads 2 --mem 64K --loops 2 --lock "$kind" --sizes 4K \
		--modes weighted,limit >/dev/null || fail "lru-fault --lock $kind"
done
# --causes: weighted and limit again with 1 thread, and the split.
json=$("$lf" --threads 2 --mem 64K --loops 2 --sizes 4K \
	--modes weighted,limit --causes --json)
for key in gap_ns fast_path_ns hold_growth_ns sharing_rest_ns; do
	case $json in
	*"\"$key\":"*) ;;
	*) fail "lru-fault --causes --json lacks \"$key\"" ;;
	esac
done
"$lf" --threads 2 --mem 64K --loops 2 --sizes 4K --modes weighted,limit \
	--causes | grep -q '^  fast path' || fail "lru-fault --causes table"

for bad in "--threads 0" "--threads x" "--mem 0" "--mem 3K --sizes 4K" \
	   "--sizes 6K" "--sizes 4K,4K" "--modes fast" "--modes" \
	   "--lock rw" "--loops 0" "--split-every 0" "--bogus" "extra"; do
	set +e
	# shellcheck disable=SC2086 # word splitting is the point
	err=$("$lf" $bad 2>&1 >/dev/null)
	rc=$?
	set -e
	[ "$rc" -eq 2 ] || fail "lru-fault $bad: exit $rc, expected 2"
	case $err in
	*"usage: lru-fault"*) ;;
	*) fail "lru-fault $bad: no usage on stderr" ;;
	esac
done

for ex in ${EXTRA_EXAMPLES:-}; do
	"$b/examples/$ex" --smoke >/dev/null
done
echo ok
