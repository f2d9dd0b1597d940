#!/usr/bin/perl
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# Convert tracefs text (trace_pipe) of the kmem page events into the
# pcp-replay trace format (tests/data/README.md):
#
#   kmem2pcp.pl --zoneinfo FILE [--zoneinfo-after FILE] [--zone Normal]
#               [--cpus N] [--kernel VER] [--max-order 3] [--pmd-order 9]
#               < raw.txt > trace.txt
#
# Only pages of the chosen zone are kept (pfn inside its span), and only
# of the orders the kernel's per-CPU lists take (pcp_allowed_order()):
# 0..--max-order and --pmd-order (THP; 0 to drop it). The others go to the
# buddy lists directly and are counted as dropped. Object ids
# are small integers reused after a free, so the file compresses well; a
# free of a page allocated before the window gets a fresh id that was
# never allocated (the replay takes such an object from the back-end
# outside the statistics). mm_page_free_batched is counted but not
# replayed: the kernel emits mm_page_free for the same page too.
#
# Kernel lock holds are counted per CPU: a run of mm_page_alloc_zone_locked
# (percpu_refill=1) events, or of mm_page_pcpu_drain events, on one CPU
# with no other event of that CPU in between (mm_page_free_batched, which
# marks each page a batched free commits, counts) is one zone->lock hold. Each
# hold is also written into the trace where it ended ("r CPU UNITS" for a
# refill, "d CPU UNITS" for a drain from the free path or a drain of all
# CPUs, "D CPU UNITS" for a drain by the CPU's vmstat_update, i.e. decay),
# so a replay can compare hold by hold. Events of orders above
# --max-order neither join nor break a run and are not counted.
#
# Allocations carry the migratetype of the request ("a CPU ORDER ID MT"):
# the kernel keeps one list per migratetype and order. A free goes to the
# list of its pageblock's migratetype: the type the pageblock's pages
# carry most often in refills and drains, else the type the page was
# allocated with, else MOVABLE ("f CPU ORDER ID MT"). When the recording has vmstat_update events
# (workqueue_execute_start), the ticks are per CPU ("t CPU") at the times
# they ran; else one "t" a second for every CPU. "z 1"/"z 0": the zone's
# ZONE_BELOW_HIGH flag was set/cleared (see zone_free()). "@start" lines give each
# CPU's pageset count and high from the zoneinfo taken before the window,
# and what the trace shows each list held then ("lists=PINDEX:OBJECTS,...",
# known= their units): a list gave out at least what it gave before its
# first refill, net of frees into it and drains from it; exactly that if
# it was refilled in the window (it ran empty), else at least that
# ("PINDEX:OBJECTS+", the count's remainder can only be there). "@end"
# lines give count and high from --zoneinfo-after, to check a replay's
# end state.
use strict;
use warnings;
use Getopt::Long;

my ($zinfo, $zone, $cpus, $kernel, $max_order, $pmd_order) =
	('', 'Normal', 0, '', 3, 9);
my $zinfo_after = '';
GetOptions('zoneinfo=s' => \$zinfo, 'zone=s' => \$zone, 'cpus=i' => \$cpus,
	   'zoneinfo-after=s' => \$zinfo_after,
	   'kernel=s' => \$kernel, 'max-order=i' => \$max_order,
	   'pmd-order=i' => \$pmd_order)
	or die "bad options\n";

# Zone span and per-CPU pageset parameters from /proc/zoneinfo.
my ($start, $span, $batch, $hmin, $hmax, $in, $ncpu) = (0, 0, 0, 0, 0, 0, 0);
my ($zfree, $wmark_high) = (0, 0);
my @pcp;
open(my $zf, '<', $zinfo) or die "$zinfo: $!\n";
while (<$zf>) {
	if (/^Node \d+, zone\s+(\S+)/) { $in = ($1 eq $zone); next; }
	next unless $in;
	$span = $1 if /^\s+spanned\s+(\d+)/;
	$zfree = $1 if /^\s+pages free\s+(\d+)/;
	$wmark_high = $1 if /^\s+high\s+(\d+)$/;
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

# The pagesets when the window closed, to check a replay's end state.
my @pcp_after;
if ($zinfo_after) {
	my ($inz, $nc) = (0, 0);
	open(my $za, '<', $zinfo_after) or die "$zinfo_after: $!\n";
	while (<$za>) {
		if (/^Node \d+, zone\s+(\S+)/) { $inz = ($1 eq $zone); next; }
		next unless $inz;
		$nc = $1 + 1 if /^\s+cpu:\s+(\d+)/;
		$pcp_after[$nc - 1]{count} = $1 if /^\s+count:\s+(\d+)/ && $nc;
		$pcp_after[$nc - 1]{high} = $1 if /^\s+high:\s+(\d+)/ && $nc;
	}
	close $za;
}
$cpus ||= $ncpu;
my $end = $start + $span;

my (%id_of, @free_ids, $next_id, @out);
my (%n, $t0, $tlast, $tick_at, @run, @run_units, @run_decay, @tick_armed,
    %holds, %pb_mt, %mt_of, $percpu_ticks);
$next_id = 0;
my ($allocs, $frees, $foreign, $dropped_order, $other_zone, $top_order) = (0) x 6;

sub new_id { return @free_ids ? pop(@free_ids) : $next_id++; }

# Close the lock-hold run of a CPU when another of its events arrives,
# and write the hold that ended.
sub run_end {
	my ($cpu) = @_;
	my $r = $run[$cpu] // '';
	if ($r eq 'refill') {
		push @out, "r $cpu $run_units[$cpu]";
	} elsif ($r eq 'drain') {
		push @out, ($run_decay[$cpu] ? 'D' : 'd') . " $cpu $run_units[$cpu]";
		$holds{decay}++ if $run_decay[$cpu];
		$n{decay_pages} += $run_units[$cpu] if $run_decay[$cpu];
	}
}

sub run_break {
	my ($cpu, $kind, $comm) = @_;
	my $r = $run[$cpu] // '';
	return if $r eq $kind;
	run_end($cpu);
	$run[$cpu] = $kind;
	$run_units[$cpu] = 0;
	# A drain that follows the CPU's vmstat_update, by its kworker, is
	# decay_pcp_high()'s.
	$run_decay[$cpu] = $kind eq 'drain' && $tick_armed[$cpu] &&
			   $comm =~ /^kworker/;
	$tick_armed[$cpu] = 0 if $kind ne 'drain';
	$holds{$kind}++ if $kind eq 'refill' || $kind eq 'drain';
}

# order_to_pindex(): the kernel's list of an order and migratetype.
sub pindex {
	my ($order, $mt) = @_;
	$mt = 1 unless defined $mt && $mt >= 0 && $mt < 3;
	return $order > 3 ? 12 + ($mt == 1) : 3 * $order + $mt;
}

# The lists' contents when the window opened: a list holds at least what
# it gave out before any refill, net of what it received and lost to
# drains (x + net(t) >= 0 at every t, equality when it ran empty).
my (%net, %min_net, %refilled);
sub list_move {
	my ($cpu, $pi, $d) = @_;
	my $k = "$cpu $pi";
	$net{$k} += $d;
	$min_net{$k} = $net{$k} if $net{$k} < ($min_net{$k} // 0);
}

# ZONE_BELOW_HIGH. The zone's free pages follow from the zoneinfo before
# the window and the pages the events move to and from the buddy lists
# (refills and other buddy allocations out; drains, and frees of orders
# without a per-CPU list, in). get_page_from_freelist() sets the flag when
# an allocation finds free pages at or below the high watermark;
# free_frozen_page_commit() clears it after a flush that leaves them
# above. Written as "z 1" and "z 0" where it happened.
my ($below_high, $zfree_min, $drain_cpu) = (0, undef, -1);
sub zone_free {
	my ($cpu, $ev, $order, $comm) = @_;
	my $pcp_order = $order <= $max_order || $order == $pmd_order;

	if ($ev eq 'mm_page_alloc_zone_locked') {
		$zfree -= 1 << $order;
	} elsif ($ev eq 'mm_page_pcpu_drain') {
		$zfree += 1 << $order;
		$drain_cpu = $cpu unless $tick_armed[$cpu] && $comm =~ /^kworker/;
		return;
	} elsif ($ev eq 'mm_page_free' && !$pcp_order) {
		$zfree += 1 << $order;
	} elsif ($ev eq 'mm_page_alloc' && !$below_high &&
		 $zfree <= $wmark_high) {
		$below_high = 1;
		push @out, 'z 1';
		$n{below_high_set}++;
	}
	$zfree_min = $zfree if !defined $zfree_min || $zfree < $zfree_min;
	# The next event after a flush of the free path ends that flush.
	if ($drain_cpu >= 0 && $below_high && $zfree > $wmark_high) {
		$below_high = 0;
		push @out, 'z 0';
		$n{below_high_clear}++;
	}
	$drain_cpu = -1;
}

my @lines = <STDIN>;
$percpu_ticks = grep { /workqueue_execute_start: .*function vmstat_update/ } @lines;
# The migratetype of each pageblock, the one its pages most often carry
# on the buddy lists (refills and drains name it): a free joins the list
# of its pageblock's type (free_frozen_pages()).
my %pb_votes;
for (@lines) {
	next unless /: mm_page_(?:alloc_zone_locked|pcpu_drain): .*?pfn=0x([0-9a-f]+) .*?migratetype=(\d+)/;
	$pb_votes{hex($1) >> 9}[$2]++ if $2 < 3;
}
for my $pb (keys %pb_votes) {
	my $v = $pb_votes{$pb};
	my ($best) = sort { ($v->[$b] // 0) <=> ($v->[$a] // 0) } 0 .. 2;
	$pb_mt{$pb} = $best;
}
for (@lines) {
	if (/^\s*(.*?)-\d+\s+\[(\d+)\]\s+\S+\s+([\d.]+): workqueue_execute_start: .*function vmstat_update/) {
		my ($cpu, $ts) = ($2 + 0, $3);
		$t0 //= $ts;
		$tlast = $ts;
		$n{vmstat_update}++;
		push @out, "t $cpu";
		$tick_armed[$cpu] = 1;
		next;
	}
	next unless /^\s*(.*?)-\d+\s+\[(\d+)\]\s+\S+\s+([\d.]+): (mm_page_\w+): .*?pfn=0x([0-9a-f]+) order=(\d+)(.*)$/;
	my ($comm, $cpu, $ts, $ev, $pfn, $order, $rest) = ($1, $2 + 0, $3, $4, hex($5), $6, $7);
	my ($mt) = $rest =~ /migratetype=(-?\d+)/;
	$n{$ev}++;
	$t0 //= $ts;
	$tick_at //= $t0 + 1.0;
	$tlast = $ts;
	while (!$percpu_ticks && $ts >= $tick_at) { push @out, "t"; $tick_at += 1.0; }
	if ($pfn < $start || $pfn >= $end) { $other_zone++; next; }
	zone_free($cpu, $ev, $order, $comm);
	if ($order > $max_order && $order != $pmd_order) {
		$dropped_order++ unless $ev eq 'mm_page_free_batched';
		next;
	}
	$top_order = $order if $order > $top_order;
	if ($ev eq 'mm_page_alloc_zone_locked') {
		my ($refill) = $rest =~ /percpu_refill=(\d+)/;
		if ($refill) {
			$refilled{"$cpu " . pindex($order, $mt)} = 1;
			list_move($cpu, pindex($order, $mt), 1);
			run_break($cpu, 'refill', $comm);
			$run_units[$cpu] += 1 << $order;
			$n{refill_pages} += 1 << $order;
		} else {
			run_break($cpu, 'buddy', $comm);
			$n{buddy_allocs}++;
		}
		next;
	}
	if ($ev eq 'mm_page_pcpu_drain') {
		list_move($cpu, pindex($order, $mt), -1);
		run_break($cpu, 'drain', $comm);
		$run_units[$cpu] += 1 << $order;
		$n{drain_pages} += 1 << $order;
		next;
	}
	# free_unref_folios() emits mm_page_free for a whole batch first,
	# then mm_page_free_batched as it commits each page to the list: a
	# drain between two commits is a hold of its own.
	run_break($cpu, 'other', $comm);
	next if $ev eq 'mm_page_free_batched';
	if ($ev eq 'mm_page_alloc') {
		if (exists $id_of{$pfn}) {	# its free fell outside the zone or window
			push @free_ids, delete $id_of{$pfn};
			delete $mt_of{$pfn};
		}
		# HIGHATOMIC and above use the MOVABLE list (order_to_pindex()).
		$mt = 1 unless defined $mt && $mt >= 0 && $mt < 3;
		my $id = new_id();
		$id_of{$pfn} = $id;
		$mt_of{$pfn} = $mt;
		list_move($cpu, pindex($order, $mt), -1);
		push @out, "a $cpu $order $id $mt";
		$allocs++;
	} elsif ($ev eq 'mm_page_free') {
		my $id;
		my $amt = delete $mt_of{$pfn};
		my $fmt = $pb_mt{$pfn >> 9} // $amt // 1;
		list_move($cpu, pindex($order, $fmt), 1);
		if (exists $id_of{$pfn}) {
			$id = delete $id_of{$pfn};
			push @out, "f $cpu $order $id $fmt";
			push @free_ids, $id;
		} else {
			$id = $next_id++;	# never allocated in the window
			push @out, "f $cpu $order $id $fmt";
			$foreign++;
		}
		$frees++;
	}
}
run_end($_) for 0 .. $#run;

my $dur = defined $t0 ? $tlast - $t0 : 0;
print "# lockbatch pcp trace v1\n";
printf "# recorded with tracefs kmem events, kernel %s, %d CPUs, %.3f s, zone %s\n",
	$kernel || 'unknown', $cpus, $dur, $zone;
for my $e (sort keys %n) { print "# events $e $n{$e}\n"; }
printf "# kept: %d allocs, %d frees (%d of pages allocated before the window),"
	. " %d events of orders %d..%d and above %d dropped (no per-CPU list),"
	. " %d events of other zones\n",
	$allocs, $frees, $foreign, $dropped_order, $max_order + 1,
	$pmd_order - 1, $pmd_order, $other_zone;
$max_order = $top_order if $top_order > $max_order;
printf "# zone free pages at the end (from the events): %d, lowest %d;"
	. " high watermark %d\n", $zfree, $zfree_min // $zfree, $wmark_high;
for my $c (0 .. $#pcp) {
	printf "# zoneinfo before: cpu %d count %d high %d\n", $c,
		$pcp[$c]{count} // 0, $pcp[$c]{high} // 0;
}
print "\@conf cpus=$cpus batch=$batch high_min=$hmin high_max=$hmax max_order=$max_order\n";
printf "\@kernel refill_holds=%d refill_units=%d drain_holds=%d drain_units=%d"
	. " decay_holds=%d decay_units=%d\n",
	$holds{refill} // 0, $n{refill_pages} // 0, $holds{drain} // 0,
	$n{drain_pages} // 0, $holds{decay} // 0, $n{decay_pages} // 0;
for my $c (0 .. $#pcp) {
	my ($sum, @l) = (0);
	for my $pi (0 .. 13) {
		my $x = -($min_net{"$c $pi"} // 0);
		my $exact = $refilled{"$c $pi"};
		next unless $x > 0 || !$exact;
		my $order = $pi >= 12 ? $pmd_order : int($pi / 3);
		push @l, "$pi:$x" . ($exact ? '' : '+');
		$sum += $x << $order;
	}
	printf "\@start cpu=%d count=%d high=%d known=%d lists=%s\n", $c,
		$pcp[$c]{count} // 0, $pcp[$c]{high} // 0, $sum,
		join(',', @l) || '-';
}
for my $c (0 .. $#pcp_after) {
	printf "\@end cpu=%d count=%d high=%d\n", $c,
		$pcp_after[$c]{count} // 0, $pcp_after[$c]{high} // 0;
}
print "$_\n" for @out;
