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

"$lf" --threads 3 --mem 128K --loops 1 --sizes 4K,16K,64K,128K \
	--modes baseline,bypass,weighted,limit >/dev/null
"$lf" --threads 4 --mem 64K --loops 3 --lock spin >/dev/null
"$lf" --threads 4 --mem 64K --loops 3 --lock mutex --sizes 8K \
	--modes weighted >/dev/null
"$lf" --help | grep -q '^usage: lru-fault' || fail "lru-fault --help"

for bad in "--threads 0" "--threads x" "--mem 0" "--mem 3K --sizes 4K" \
	   "--sizes 6K" "--sizes 4K,4K" "--modes fast" "--modes" \
	   "--lock rw" "--loops 0" "--bogus" "extra"; do
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
