#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# Smoke-run examples/pagecache: the check mode must agree with the exact-LRU
# model and verify itself (exit 0), --json must carry the report's fields,
# and bad flags must exit with status 2.
set -eu
b=${top_builddir:-.}
pc="$b/examples/pagecache"

fail() {
	echo "not ok: $*" >&2
	exit 1
}

"$pc" --check --entries 256 --ops 20000 --page-size 64 >/dev/null ||
	fail "pagecache --check failed"
json=$("$pc" --threads 3 --entries 128 --ops 5000 --page-size 64 --json)
for key in hit_ratio ops_per_sec eviction settle lru_paths \
	   lru_acquisitions_per_insert lru_lock pool_lock pool_free_at_exit \
	   stale_reads verified; do
	case $json in
	*"\"$key\":"*) ;;
	*) fail "pagecache --json lacks \"$key\"" ;;
	esac
done
case $json in
*'"verified":true'*) ;;
*) fail "pagecache --json reports a failed run" ;;
esac
for bad in "--threads 0" "--skew x" "--page-size 8" "--bogus" "extra"; do
	rc=0
	# shellcheck disable=SC2086
	"$pc" $bad >/dev/null 2>&1 || rc=$?
	[ "$rc" = 2 ] || fail "pagecache $bad: exit $rc, want 2"
done
echo "ok: pagecache"
