# fork(): parent and child keep using the same object with correct values; the child opens its
# own connections (the core's fork generation), so replies never cross between processes.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;
use POSIX ();

my $srv = start_memcached();
my $m = Mcpool->new({ servers => [$srv] });
my $p = unique('fork');

is($m->set("${p}parent", 'from parent'), 1, 'parent sets before fork (its connection is pooled)');
$m->set("${p}n$_", "v$_") for 1 .. 100;

my @kids;
for my $c (1 .. 3) {
    my $pid = fork();
    die "fork: $!" unless defined $pid;
    if ($pid == 0) {
        my $bad = 0;
        # Interleave with the parent: each process reads its own keys many times over.
        for my $round (1 .. 200) {
            my $i = 1 + ($round * $c) % 100;
            $bad++ unless ($m->get("${p}n$i") // '') eq "v$i";
            $m->set("${p}child$c-$round", "c$c-$round") or $bad++;
            $bad++ unless ($m->get("${p}child$c-$round") // '') eq "c$c-$round";
        }
        my $h = $m->get_multi(map { "${p}n$_" } 1 .. 100);
        $bad++ unless keys(%$h) == 100 && !grep { $h->{"${p}n$_"} ne "v$_" } 1 .. 100;
        $bad++ unless ($m->get("${p}parent") // '') eq 'from parent';
        $m->set("${p}done$c", "child $c ok") or $bad++;
        exit($bad ? 1 : 0);    # a normal exit: the child's DESTROY frees its copy
    }
    push @kids, $pid;
}

my $bad = 0;
for my $round (1 .. 300) {
    my $i = 1 + $round % 100;
    $bad++ unless ($m->get("${p}n$i") // '') eq "v$i";
    $m->set("${p}p$round", "p$round") or $bad++;
    $bad++ unless ($m->get("${p}p$round") // '') eq "p$round";
}
is($bad, 0, 'parent: every value correct while the children run');

for my $pid (@kids) {
    my $deadline = time + 30;
    my $r = 0;
    while (time < $deadline) {
        $r = waitpid($pid, POSIX::WNOHANG());
        last if $r == $pid;
        select undef, undef, undef, 0.05;
    }
    if ($r != $pid) { kill 'KILL', $pid; waitpid $pid, 0; fail("child $pid did not finish in 30 s") }
    else { is($? >> 8, 0, "child $pid: every value correct, and it exited cleanly") }
}
is($m->get("${p}done$_"), "child $_ ok", "parent reads the write of child $_") for 1 .. 3;
is($m->get("${p}parent"), 'from parent', 'parent still works after the children exited');

# A worker's cost before it is used (Cache::Memcached::Fast connects at the first command):
# a fresh object opens no connection and starts no thread until its first call.
{
    use IO::Socket::INET;
    my $l = IO::Socket::INET->new(Listen => 5, LocalAddr => '127.0.0.1', LocalPort => 0,
                                  Proto => 'tcp', Blocking => 0) or die "listen: $!";
    my $addr = '127.0.0.1:' . $l->sockport;
    my $threads = sub { open my $f, '<', '/proc/self/status' or return -1;
                        while (<$f>) { return $1 if /^Threads:\s+(\d+)/ } -1 };
    my $before = $threads->();
    my $lazy = Mcpool->new({ servers => [$addr] });
    my ($accepted, $started) = (0, 0);
    for (1 .. 15) {    # watch for 300 ms (bounded): nothing may happen in the background
        $accepted++ if $l->accept;
        $started++ if $threads->() != $before;
        select undef, undef, undef, 0.02;
    }
    is($accepted, 0, 'a fresh client opens no connection before its first call');
    is($started, 0, 'a fresh client starts no thread before its first call');
}

# A client made, used and dropped right before a fork (a preforking server that fills the
# cache at start-up with a client of its own, then forks its workers): the child's first
# client must work. The dropped client's background thread once waited on, parked, for a
# job that no longer mattered, and a child forked in that window spun in its first call.
{
    my $failed = '';
    for my $round (1 .. 100) {
        {
            my $fc = Mcpool->new({ servers => [$srv] });
            $fc->set("${p}drop$round", "r$round") or ($failed = "parent set, round $round"), last;
        }
        my $pid = fork();
        die "fork: $!" unless defined $pid;
        if ($pid == 0) {
            my $c = Mcpool->new({ servers => [$srv] });
            my $ok = ($c->get("${p}drop$round") // '') eq "r$round"
                && $c->set("${p}kid$round", "k$round");
            undef $c;    # and its end (where the child once spun)
            POSIX::_exit($ok ? 0 : 1);
        }
        my ($deadline, $r) = (time + 30, 0);
        while (time < $deadline) {
            $r = waitpid($pid, POSIX::WNOHANG());
            last if $r == $pid;
            select undef, undef, undef, 0.01;
        }
        if ($r != $pid) { kill 'KILL', $pid; waitpid $pid, 0; $failed = "round $round: child stuck 30 s"; last }
        if ($?) { $failed = "round $round: child's calls failed ($?)"; last }
    }
    is($failed, '', 'a child forked right after a client was dropped works, 100 rounds');
}

# The POD says what a call carried into a forked child gets (MCPOOL_FORKED), where it
# describes fork (tester finding prefork 2: it did not).
{
    my $pm = do { local (@ARGV, $/) = $INC{'Mcpool.pm'}; <> };
    my ($fork) = $pm =~ /^=head1 FORK AND THREADS\n(.*?)^=head1 /ms;
    like($fork // '', qr/C<MCPOOL_FORKED>/, 'POD "FORK AND THREADS" names MCPOOL_FORKED');
    like($fork // '', qr/never as misses/, '... and what the child\'s call gets');
}
done_testing;
