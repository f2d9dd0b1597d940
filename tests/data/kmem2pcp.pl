#!/usr/bin/perl
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# Convert tracefs text (trace_pipe) of the kmem page events into the
# pcp-replay trace format (tests/data/README.md):
#
#   kmem2pcp.pl --zoneinfo FILE [--zone Normal] [--cpus N] [--kernel VER]
#               [--max-order 3] < raw.txt > trace.txt
#
# Only pages of the chosen zone are kept (pfn inside its span). Object ids
# are small integers reused after a free, so the file compresses well; a
# free of a page allocated before the window gets a fresh id that was
# never allocated (the replay takes such an object from the back-end
# outside the statistics). mm_page_free_batched is counted but not
# replayed: the kernel emits mm_page_free for the same page too.
#
# Kernel lock holds are counted per CPU: a run of mm_page_alloc_zone_locked
# (percpu_refill=1) events, or of mm_page_pcpu_drain events, on one CPU
# with no other event of that CPU in between is one zone->lock hold.
use strict;
use warnings;
use Getopt::Long;

my ($zinfo, $zone, $cpus, $kernel, $max_order) = ('', 'Normal', 0, '', 3);
GetOptions('zoneinfo=s' => \$zinfo, 'zone=s' => \$zone, 'cpus=i' => \$cpus,
	   'kernel=s' => \$kernel, 'max-order=i' => \$max_order)
	or die "bad options\n";

# Zone span and per-CPU pageset parameters from /proc/zoneinfo.
my ($start, $span, $batch, $hmin, $hmax, $in, $ncpu) = (0, 0, 0, 0, 0, 0, 0);
my @pcp;
open(my $zf, '<', $zinfo) or die "$zinfo: $!\n";
while (<$zf>) {
	if (/^Node \d+, zone\s+(\S+)/) { $in = ($1 eq $zone); next; }
	next unless $in;
	$span = $1 if /^\s+spanned\s+(\d+)/;
	$start = $1 if /^\s+start_pfn:\s+(\d+)/;
	if (/^\s+cpu:\s+(\d+)/) { $ncpu = $1 + 1; }
	$pcp[$ncpu - 1]{count} = $1 if /^\s+count:\s+(\d+)/ && $ncpu;
	$pcp[$ncpu - 1]{high} = $1 if /^\s+high:\s+(\d+)/ && $ncpu;
	$batch = $1 if /^\s+batch:\s+(\d+)/;
	$hmin = $1 if /^\s+high_min:\s+(\d+)/;
	$hmax = $1 if /^\s+high_max:\s+(\d+)/;
}
close $zf;
die "zone $zone not found in $zinfo\n" unless $span && $batch;
$cpus ||= $ncpu;
my $end = $start + $span;

my (%id_of, @free_ids, $next_id, @out);
my (%n, $t0, $tlast, $tick_at, @run, %holds);
$next_id = 0;
my ($allocs, $frees, $foreign, $dropped_order, $other_zone) = (0) x 5;

sub new_id { return @free_ids ? pop(@free_ids) : $next_id++; }

# Close the lock-hold run of a CPU when another of its events arrives.
sub run_break {
	my ($cpu, $kind) = @_;
	my $r = $run[$cpu] // '';
	return if $r eq $kind;
	$run[$cpu] = $kind;
	$holds{$kind}++ if $kind eq 'refill' || $kind eq 'drain';
}

while (<STDIN>) {
	next unless /\[(\d+)\]\s+\S+\s+([\d.]+): (mm_page_\w+): .*?pfn=0x([0-9a-f]+) order=(\d+)(.*)$/;
	my ($cpu, $ts, $ev, $pfn, $order, $rest) = ($1 + 0, $2, $3, hex($4), $5, $6);
	$n{$ev}++;
	$t0 //= $ts;
	$tick_at //= $t0 + 1.0;
	$tlast = $ts;
	while ($ts >= $tick_at) { push @out, "t"; $tick_at += 1.0; }
	if ($pfn < $start || $pfn >= $end) { $other_zone++; next; }
	if ($ev eq 'mm_page_alloc_zone_locked') {
		my ($refill) = $rest =~ /percpu_refill=(\d+)/;
		if ($refill) {
			run_break($cpu, 'refill');
			$n{refill_pages} += 1 << $order;
		} else {
			run_break($cpu, 'buddy');
			$n{buddy_allocs}++;
		}
		next;
	}
	if ($ev eq 'mm_page_pcpu_drain') {
		run_break($cpu, 'drain');
		$n{drain_pages} += 1 << $order;
		next;
	}
	next if $ev eq 'mm_page_free_batched';
	run_break($cpu, 'other');
	if ($order > $max_order) { $dropped_order++; next; }
	if ($ev eq 'mm_page_alloc') {
		if (exists $id_of{$pfn}) {	# its free fell outside the zone or window
			push @free_ids, delete $id_of{$pfn};
		}
		my $id = new_id();
		$id_of{$pfn} = $id;
		push @out, "a $cpu $order $id";
		$allocs++;
	} elsif ($ev eq 'mm_page_free') {
		my $id;
		if (exists $id_of{$pfn}) {
			$id = delete $id_of{$pfn};
			push @out, "f $cpu $order $id";
			push @free_ids, $id;
		} else {
			$id = $next_id++;	# never allocated in the window
			push @out, "f $cpu $order $id";
			$foreign++;
		}
		$frees++;
	}
}

my $dur = defined $t0 ? $tlast - $t0 : 0;
print "# lockbatch pcp trace v1\n";
printf "# recorded with tracefs kmem events, kernel %s, %d CPUs, %.3f s, zone %s\n",
	$kernel || 'unknown', $cpus, $dur, $zone;
for my $e (sort keys %n) { print "# events $e $n{$e}\n"; }
printf "# kept: %d allocs, %d frees (%d of pages allocated before the window),"
	. " %d events of order > %d dropped, %d events of other zones\n",
	$allocs, $frees, $foreign, $dropped_order, $max_order, $other_zone;
for my $c (0 .. $#pcp) {
	printf "# zoneinfo before: cpu %d count %d high %d\n", $c,
		$pcp[$c]{count} // 0, $pcp[$c]{high} // 0;
}
print "\@conf cpus=$cpus batch=$batch high_min=$hmin high_max=$hmax max_order=$max_order\n";
printf "\@kernel refill_holds=%d refill_units=%d drain_holds=%d drain_units=%d\n",
	$holds{refill} // 0, $n{refill_pages} // 0, $holds{drain} // 0,
	$n{drain_pages} // 0;
print "$_\n" for @out;
