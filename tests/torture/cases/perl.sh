# SPDX-License-Identifier: MIT
# perl: fork and waitpid, pipes both ways (open -| and |-), system and
# backticks, socketpair, signals (%SIG, alarm, kill), ithreads with a
# shared queue, file I/O with seek, sysread and flock, sprintf, sort,
# regexes, Storable, Digest::SHA and JSON::PP from perl's core.
# torture: quick timeout=180
. "$TORTURE_CASES/lib.sh"
cat > t.pl <<'EOF'
use strict;
use warnings;
use Fcntl qw(:flock SEEK_SET);
use Socket;
use POSIX ();
use Storable qw(freeze thaw);
use Digest::SHA qw(sha256_hex);
use JSON::PP;
use threads;
use Thread::Queue;
$| = 1;

my @kids;
for my $i (1 .. 8) {
	my $pid = fork // die "fork: $!";
	if ($pid == 0) { POSIX::_exit($i * 3); }
	push @kids, $pid;
}
my @codes = map { waitpid($_, 0); $? >> 8 } @kids;
print "fork codes: @codes\n";

open(my $from, '-|', 'seq', '1', '1000') or die;
my $sum = 0;
$sum += $_ while <$from>;
close $from;
print "sum from seq: $sum\n";
open(my $to, '|-', 'sort -r | head -n 2') or die;
print $to "$_\n" for qw(apple kiwi banana cherry);
close $to;
print "system: ", system('sh', '-c', 'exit 4') >> 8, "\n";
my $bt = `echo backtick; echo err >&2`;
print "backticks: $bt";

socketpair(my $a, my $b, AF_UNIX, SOCK_STREAM, PF_UNSPEC) or die;
if (my $pid = fork) {
	close $b;
	print $a "ping\n";
	$a->flush;
	my $answer = <$a>;
	print "socketpair: $answer";
	waitpid($pid, 0);
} else {
	close $a;
	my $q = <$b>;
	chomp $q;
	print $b uc($q) . " back\n";
	$b->flush;
	POSIX::_exit(0);
}

my $got = 0;
$SIG{USR1} = sub { $got++ };
kill 'USR1', $$ for 1 .. 3;
select(undef, undef, undef, 0.05) while $got < 3;
print "signals: $got\n";
my $alarmed = eval {
	local $SIG{ALRM} = sub { die "alarm\n" };
	alarm 1;
	select(undef, undef, undef, 5);
	alarm 0;
	0;
} // $@;
print "alarm: $alarmed";

my $queue = Thread::Queue->new;
my @workers = map {
	my $n = $_;
	threads->create(sub {
		my $s = 0;
		$s += $_ for 1 .. 10000 * $n;
		$queue->enqueue("$n:$s");
		return $n;
	});
} 1 .. 4;
my @joined = map { $_->join } @workers;
my @items = sort map { $queue->dequeue } 1 .. 4;
print "threads: @joined / @items\n";

open(my $fh, '+>', 'data.bin') or die;
flock($fh, LOCK_EX) or die;
print $fh pack('N*', 1 .. 5000);
seek($fh, 4 * 100, SEEK_SET);
sysread($fh, my $buf, 8);
print "seek/read: ", join(',', unpack('N*', $buf)), "\n";
close $fh;
print "size: ", -s 'data.bin', "\n";

my %count;
$count{ length $_ }++ for map { sprintf('%x', $_ * 2654435761 % 2**32) } 1 .. 5000;
print "hex lengths: ", join(' ', map { "$_=$count{$_}" } sort keys %count), "\n";
my $text = join ' ', map { "word$_" } 1 .. 500;
my @m = $text =~ /\bword(\d*7)\b/g;
print "regex matches: ", scalar(@m), "\n";
my $thawed = thaw(freeze({ list => [1 .. 10], name => 'x' }));
print "storable: ", scalar @{ $thawed->{list} }, " $thawed->{name}\n";
print "sha256: ", sha256_hex($text), "\n";
print "json: ", JSON::PP->new->canonical->encode({ b => [1, 2], a => 'z' }), "\n";
exit 3;
EOF
status "perl" perl t.pl 2> perl.err
cat perl.err
