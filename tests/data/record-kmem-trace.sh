#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# Record the kernel's own page allocator with tracefs while a parallel build
# runs, and convert the recording into the pcp-replay trace format.
#
# Usage (as root, on a machine with tracefs and the kmem events):
#   tests/data/record-kmem-trace.sh [-d SECONDS] [-o OUTDIR] [-s SRCDIR]
#
#   -d  recording window in seconds (default 8)
#   -o  output directory (default: a new directory under /tmp)
#   -s  a C project with an Autotools build to run `make -j2` on, over and
#       over, during the window (default: a scratch copy of this project)
#
# Output in OUTDIR: raw.txt (trace_pipe text), zoneinfo.before/.after,
# stats.cpuN (ring-buffer statistics, losses), and trace.txt.xz (the
# converted trace, see tests/data/README.md). Nothing here runs in
# `make check`: CI machines usually have no tracefs.
set -eu

secs=8
out=
src=
while getopts d:o:s: opt; do
	case $opt in
	d) secs=$OPTARG ;;
	o) out=$OPTARG ;;
	s) src=$OPTARG ;;
	*) echo "usage: $0 [-d secs] [-o outdir] [-s srcdir]" >&2; exit 2 ;;
	esac
done
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
[ -n "$out" ] || out=$(mktemp -d /tmp/kmem-trace.XXXXXX)
mkdir -p "$out"

T=/sys/kernel/tracing
if [ ! -d "$T/events/kmem" ]; then
	mount -t tracefs nodev "$T"
fi
[ -d "$T/events/kmem" ] || { echo "no kmem events in $T" >&2; exit 1; }

# The workload: a real parallel build, repeated until the window closes.
if [ -z "$src" ]; then
	src=$out/src
	rm -rf "$src"
	git -C "$top" archive --prefix=src/ HEAD | tar -x -C "$out"
	(cd "$src" && ./bootstrap.sh >/dev/null 2>&1 || autoreconf -fi >/dev/null 2>&1)
	(cd "$src" && ./configure --disable-tests >/dev/null)
fi

events="mm_page_alloc mm_page_free mm_page_free_batched \
	mm_page_alloc_zone_locked mm_page_pcpu_drain"

echo 0 > "$T/tracing_on"
echo > "$T/trace"
echo 65536 > "$T/buffer_size_kb"
for e in $events; do
	echo 1 > "$T/events/kmem/$e/enable"
done

rm -f "$out/stop"
(while [ ! -e "$out/stop" ]; do
	make -C "$src" -s clean >/dev/null 2>&1 || true
	make -C "$src" -s -j2 >/dev/null 2>&1 || true
done) &
build=$!
sleep 2	# let the build get going before the window opens

cat /proc/zoneinfo > "$out/zoneinfo.before"
cat "$T/trace_pipe" > "$out/raw.txt" &
reader=$!
echo 1 > "$T/tracing_on"
sleep "$secs"
echo 0 > "$T/tracing_on"
cat /proc/zoneinfo > "$out/zoneinfo.after"
for c in "$T"/per_cpu/cpu*; do
	cat "$c/stats" > "$out/stats.$(basename "$c")"
done
sleep 1	# let the reader empty the ring
kill "$reader" 2>/dev/null || true
touch "$out/stop"	# the build loop ends after the current build
wait "$build" 2>/dev/null || true
for e in $events; do
	echo 0 > "$T/events/kmem/$e/enable"
done
echo 1408 > "$T/buffer_size_kb"

nproc=$(getconf _NPROCESSORS_CONF)
perl "$here/kmem2pcp.pl" --zoneinfo "$out/zoneinfo.before" --zone Normal \
	--cpus "$nproc" --kernel "$(uname -r)" < "$out/raw.txt" |
	xz -9e > "$out/trace.txt.xz"
echo "recorded $secs s into $out"
grep -h 'overrun\|dropped' "$out"/stats.cpu* || true
