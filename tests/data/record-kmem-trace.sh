#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# Record the kernel's own page allocator with tracefs while a workload
# runs, and convert the recording into the pcp-replay trace format.
#
# Usage (as root, on a machine with tracefs and the kmem events):
#   tests/data/record-kmem-trace.sh [-d SECONDS] [-o OUTDIR] [-s SRCDIR]
#                                   [-w build|pipe|anon|copy|sort|tar]
#
#   -d  recording window in seconds (default 8)
#   -o  output directory (default: a new directory under /tmp)
#   -s  a C project with an Autotools build to run `make -j2` on, over and
#       over, during the window (default: a scratch copy of this project)
#   -w  the workload, repeated until the window closes:
#       build  `make -j2` of SRCDIR after `make clean` (default)
#       pipe   a producer and a consumer process: 64 MiB through a pipe
#              (dd | dd, 64 KiB writes), then a 200 ms pause
#       anon   two processes, each mapping 64 MiB of anonymous memory,
#              writing every page, unmapping it, 400 ms pause
#       copy   cp of a 128 MiB file whose page cache was dropped first
#              (so reading allocates too), then rm of the copy
#       sort   seq 1 1000000 | shuf | sort -n into a file, then rm of it:
#              pipes, anonymous buffers and page cache in one job
#       tar    tar of /usr/include piped into a tar that unpacks it, then
#              rm -rf of the copy: pipes, page cache, inodes and dentries
#
# The decay ticks are recorded too: workqueue_execute_start of
# vmstat_update (filtered by its address), one per CPU and interval.
#
# Output in OUTDIR: raw.txt (trace_pipe text), zoneinfo.before/.after,
# stats.cpuN (ring-buffer statistics, losses), and trace.txt.xz (the
# converted trace, see tests/data/README.md). Nothing here runs in
# `make check`: CI machines usually have no tracefs.
set -eu

secs=8
out=
src=
work=build
while getopts d:o:s:w: opt; do
	case $opt in
	d) secs=$OPTARG ;;
	o) out=$OPTARG ;;
	s) src=$OPTARG ;;
	w) work=$OPTARG ;;
	*) echo "usage: $0 [-d secs] [-o outdir] [-s srcdir] [-w workload]" >&2
	   exit 2 ;;
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

# The workload, repeated until the window closes.
one_round() {
	case $work in
	build)
		make -C "$src" -s clean >/dev/null 2>&1 || true
		make -C "$src" -s -j2 >/dev/null 2>&1 || true ;;
	pipe)
		dd if=/dev/zero bs=64k count=1024 status=none |
			dd of=/dev/null bs=64k status=none
		sleep 0.2 ;;
	anon)
		for k in 1 2; do
			perl -e 'my $s = "x" x (64 << 20); undef $s;' &
		done
		wait
		sleep 0.4 ;;
	copy)
		dd if="$out/copy.src" iflag=nocache count=0 status=none
		cp "$out/copy.src" "$out/copy.dst"
		rm -f "$out/copy.dst" ;;
	sort)
		seq 1 1000000 | shuf | sort -n > "$out/sort.out"
		rm -f "$out/sort.out"
		sleep 0.2 ;;
	tar)
		mkdir -p "$out/tar.dst"
		tar -cf - -C /usr/include . 2>/dev/null |
			tar -xf - -C "$out/tar.dst" 2>/dev/null
		rm -rf "$out/tar.dst" ;;
	esac
}
case $work in
build|pipe|anon|copy|sort|tar) ;;
*) echo "unknown workload $work" >&2; exit 2 ;;
esac
if [ "$work" = copy ]; then
	dd if=/dev/urandom of="$out/copy.src" bs=1M count=128 status=none
fi
if [ "$work" = build ] && [ -z "$src" ]; then
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
echo 131072 > "$T/buffer_size_kb"
for e in $events; do
	echo 1 > "$T/events/kmem/$e/enable"
done
wq=$T/events/workqueue/workqueue_execute_start
vmstat=$(awk '$3 == "vmstat_update" { print $1; exit }' /proc/kallsyms)
if [ -d "$wq" ] && [ -n "$vmstat" ]; then
	echo "function == 0x$vmstat" > "$wq/filter"
	echo 1 > "$wq/enable"
fi

rm -f "$out/stop"
(while [ ! -e "$out/stop" ]; do one_round; done) &
build=$!
sleep 2	# let the build get going before the window opens

cat /proc/zoneinfo > "$out/zoneinfo.before"
cat "$T/trace_pipe" > "$out/raw.txt" &
reader=$!
echo 1 > "$T/tracing_on"
sleep "$secs"
echo 0 > "$T/tracing_on"
cat /proc/zoneinfo > "$out/zoneinfo.after"
# Let the reader empty the ring (it may lag the window by many seconds
# on a loaded machine), then keep the final statistics: "read events"
# summed over the CPUs must equal the lines of raw.txt, and overrun and
# dropped events must be 0.
for i in $(seq 600); do
	left=$(cat "$T"/per_cpu/cpu*/stats | awk '/^entries:/ { n += $2 } END { print n + 0 }')
	[ "$left" -eq 0 ] && break
	sleep 1
done
sleep 1
for c in "$T"/per_cpu/cpu*; do
	cat "$c/stats" > "$out/stats.$(basename "$c")"
done
kill "$reader" 2>/dev/null || true
touch "$out/stop"	# the build loop ends after the current build
wait "$build" 2>/dev/null || true
for e in $events; do
	echo 0 > "$T/events/kmem/$e/enable"
done
if [ -d "$wq" ]; then
	echo 0 > "$wq/enable"
	echo 0 > "$wq/filter"
fi
rm -rf "$out/copy.src" "$out/copy.dst" "$out/sort.out" "$out/tar.dst"
echo 1408 > "$T/buffer_size_kb"

nproc=$(getconf _NPROCESSORS_CONF)
perl "$here/kmem2pcp.pl" --zoneinfo "$out/zoneinfo.before" \
	--zoneinfo-after "$out/zoneinfo.after" --zone Normal \
	--cpus "$nproc" --kernel "$(uname -r)" < "$out/raw.txt" |
	xz -9e > "$out/trace.txt.xz"
echo "recorded $secs s into $out"
grep -h 'overrun\|dropped' "$out"/stats.cpu* || true
