#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# stress.sh VARIANT OUTDIR - the built VARIANT (patched, asan or tsan)
# under concurrent SET, DELETE and GET for MC_STRESS_SECONDS (20):
# a small key space and little memory, so items, their chunks and the
# side table's entries are reused all the time, by 4 worker threads, the
# LRU maintainer and the crawler (memcached's defaults), with evictions and
# the slab mover. Fails when:
#   - the server dies before it is stopped, or does not stop cleanly
#     (SIGUSR1: memcached joins its threads, then exits 0);
#   - a GET answer is a value no SET sent for that key (mc-loadgen's
#     values are key-derived, every answer is checked);
#   - any ASan or UBSan report (asan; ubsan.supp holds memcached's own
#     misaligned hash loads), or a TSan report with a frame naming
#     lockbatch or the port (tsan, the rule of check.sh);
#   - the load did not do what it is for (no eviction, no delete that hit,
#     no GET hit).
# Writes OUTDIR/server.log, OUTDIR/loadgen.log, OUTDIR/stats and the
# sanitizer's OUTDIR/san.PID; prints one line of figures.
set -euo pipefail
. "$(dirname "$0")/common.sh"
[ $# -eq 2 ] || mc_die "usage: stress.sh VARIANT OUTDIR"
v=$1 out=$2
bin=$MC_BUILD/$v/memcached-debug
lg=$top_builddir/clients/memcached/bench/mc-loadgen
secs=${MC_STRESS_SECONDS:-20}
[ -x "$bin" ] || mc_die "$v is not built"
[ -x "$lg" ] || mc_die "no $lg: make clients/memcached/bench/mc-loadgen"
rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd)

# A loopback port nobody listens on now (the kernel's choice).
port=$(perl -MIO::Socket::INET -e 'print IO::Socket::INET->new(
	Listen => 1, LocalAddr => "127.0.0.1", LocalPort => 0)->sockport')

# -m 8 with values of 100..4000 bytes over 4000 keys (about 8 MB of
# values): the prefill already evicts. memcached refuses root without -u.
args="-p $port -l 127.0.0.1 -U 0 -t 4 -m 8 -c 1024"
[ "$(id -u)" != 0 ] || args="$args -u root"
( mc_san_env "$v" "$out/san"; exec "$bin" $args ) \
	> "$out/server.log" 2>&1 < /dev/null &
pid=$!

fail=
stopped=
server_gone() { ! kill -0 "$pid" 2>/dev/null; }
stop_server() {
	local i rc=0
	[ -z "$stopped" ] || return 0
	stopped=1
	if server_gone; then
		wait "$pid" || rc=$?
		fail="$fail; the server died under load (status $rc)"
		return 0
	fi
	kill -USR1 "$pid"
	for i in $(seq 600); do
		server_gone && break
		sleep 0.1
	done
	if ! server_gone; then
		kill -KILL "$pid"
		fail="$fail; the server did not stop within 60 s of SIGUSR1"
	fi
	wait "$pid" || rc=$?
	[ "$rc" -eq 0 ] || [ -n "$fail" ] ||
		fail="$fail; the server stopped with status $rc"
}
trap stop_server EXIT

ready=
for i in $(seq 300); do
	if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
		ready=1
		break
	fi
	server_gone && break
	sleep 0.1
done
[ -n "$ready" ] || {
	cat "$out/server.log" >&2
	mc_die "$v: the server did not start on port $port"
}

lg_rc=0
"$lg" --port "$port" --set-conns 8 --get-conns 8 --del-conns 4 \
	--pipeline 8 --threads 2 --keys 4000 --value-size 100 \
	--value-max 4000 --warmup 0 --seconds "$secs" --server-stats \
	--seed "${MC_STRESS_SEED:-1}" > "$out/loadgen.log" 2>&1 || lg_rc=$?
# The server's own view of the run, before it stops.
: > "$out/stats"
if ! server_gone; then
	printf 'stats\r\nstats slabs\r\nquit\r\n' |
		timeout 10 perl -MIO::Socket::INET -e '
		my $s = IO::Socket::INET->new("127.0.0.1:'"$port"'") or exit 1;
		print $s $_ while <STDIN>; print while <$s>;' \
		> "$out/stats" 2>/dev/null || true
fi
stop_server
trap - EXIT

case $lg_rc in
0) ;;
3) fail="$fail; GET answers no SET sent for their key" ;;
*) fail="$fail; mc-loadgen failed (status $lg_rc)" ;;
esac
srv_stat() {
	awk -v k="$1" '$1 == "STAT" && $2 == k { print $3 + 0; exit }' \
		"$out/stats"
}
evictions=$(srv_stat evictions) moved=$(srv_stat slabs_moved)
del_hits=$(srv_stat delete_hits) get_hits=$(srv_stat get_hits)
if [ "$lg_rc" -eq 0 ] && [ -n "$evictions" ]; then
	[ "$evictions" -gt 0 ] || fail="$fail; no eviction (the load is too light)"
	[ "$del_hits" -gt 0 ] || fail="$fail; no DELETE found its key"
	[ "$get_hits" -gt 0 ] || fail="$fail; no GET hit"
fi

# The sanitizer's reports: any under ASan+UBSan; under TSan those that
# name lockbatch or the port.
kind=$(mc_san_kind "$v")
all=0 counted=0 which=all
[ "$v" = tsan ] && which=ours
if [ -n "$kind" ]; then
	# UBSan's reports are in the server's stderr (see mc_san_env).
	set -- "$out"/san.* "$out/server.log"
	[ -e "$1" ] || shift
	all=$(mc_san_count "$kind" all "$@")
	counted=$(mc_san_count "$kind" "$which" "$@")
	if [ "$counted" -gt 0 ]; then
		fail="$fail; $counted sanitizer reports ($which)"
		mc_san_reports "$kind" "$which" "$@" | head -n 200
	fi
fi

ops=$(awk '/ops\/s/ { print $2; exit }' "$out/loadgen.log")
mc_log "$v stress: ${secs} s, ${ops:-?} ops/s, evictions ${evictions:-?}," \
	"slabs moved ${moved:-?}, delete hits ${del_hits:-?}," \
	"get hits ${get_hits:-?}, sanitizer reports $all ($counted counted)"
if [ -n "$fail" ]; then
	echo "== $v stress failed:${fail#;}"
	tail -n 20 "$out/loadgen.log" | cut -c1-300
	tail -n 20 "$out/server.log" | cut -c1-300
	exit 1
fi
