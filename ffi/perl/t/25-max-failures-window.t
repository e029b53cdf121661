# max_failures counts the failures within failure_timeout, side by side with
# Cache::Memcached::Fast ("if there happened max_failures in failure_timeout seconds, the
# client does not try to connect to this particular server for another failure_timeout
# seconds"): a success in between does not reset the count. Mcpool used to count
# consecutive failures, so a flapping server (fails, recovers briefly, fails again) that CMF
# rests kept being hit.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Cache::Memcached::Fast;
use Mcpool;

my $srv = start_memcached();
my $p = unique('mfw');
my %o = (servers => [$srv], max_failures => 2, failure_timeout => 60, connect_timeout => 0.5,
         io_timeout => 0.5);
my %c = (cmf => Cache::Memcached::Fast->new({%o}), mcpool => Mcpool->new({%o}));

my @steps;
sub step {
    my ($what) = @_;
    my %r = map { $_ => ($c{$_}->set("${p}$_", 'v') ? 1 : 0) } sort keys %c;
    push @steps, [ $what, \%r ];
}
step('up');
stop_memcached($srv);
step('down');
restart_memcached($srv);
step('up again');
stop_memcached($srv);
step('down again');
restart_memcached($srv);
step('up a third time');

for my $s (@steps) {
    my ($what, $r) = @$s;
    is($r->{mcpool}, $r->{cmf}, "$what: Mcpool as Cache::Memcached::Fast ($r->{cmf})");
}
is_deeply([ map { $_->[1]{cmf} } @steps ], [ 1, 0, 1, 0, 0 ],
          'CMF: the second failure within failure_timeout rests the server, a success between');
my ($state) = @{ $c{mcpool}->server_states };
ok(!$state->{alive}, 'Mcpool: the server is marked dead');
ok(!$c{mcpool}->get("${p}mcpool"), '... and stays rested (no new try) while up');

# Without max_failures (CMF's default 0) nothing is ever rested, window or not.
my $never = Mcpool->new({ servers => [$srv], failure_timeout => 60 });
stop_memcached($srv);
ok(!$never->set("${p}n", 'v'), 'max_failures 0: down: fails');
restart_memcached($srv);
ok($never->set("${p}n", 'v'), '... up: stored at once');
stop_memcached($srv);
ok(!$never->set("${p}n", 'v'), '... down again: fails');
restart_memcached($srv);
ok($never->set("${p}n", 'v'), '... up again: stored at once');

# The core's own name: one option set by two arguments is refused.
ok(!eval { Mcpool->new({ servers => [$srv], failure_timeout => 5, failure_window => '5s' }) },
   'failure_timeout with failure_window: refused');
like($@, qr/option failure_window given twice \(as failure_timeout and failure_window\)/,
     '... naming both');

done_testing();
