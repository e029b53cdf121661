# disconnect_all closes the connections and nothing else (Cache::Memcached::Fast's): the
# metrics keep counting from where they were and a server marked dead stays dead (not tried
# again before its failure_timeout). Against a real memcached and a port nothing listens on.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use IO::Socket::INET;
use Mcpool;

my $srv = start_memcached();
my $gone = do {    # a port nothing listens on: a server stopped
    my $s = start_memcached();
    stop_memcached($s);
    $s;
};
my $m = Mcpool->new({ servers => [ $srv, $gone ], max_failures => 1, failure_timeout => 60 });
my $p = unique('disc');
my ($live, $dead);
for my $i (0 .. 500) {
    my $s = $m->server_for("$p$i");
    $live //= "$p$i" if $s eq $srv;
    $dead //= "$p$i" if $s eq $gone;
    last if $live && $dead;
}
ok($m->set($live, 'v'), 'set on the live server');
is($m->get($live), 'v', '... read back');
ok(!defined $m->get($dead), 'the stopped server: a failure');
my $before = $m->metrics;
my ($state) = grep { $_->{server} eq $gone } @{ $m->server_states };
ok(!$state->{alive}, '... which marks it dead');
is($before->{$srv}{pool_open}, 1, 'one open connection to the live server');

$m->disconnect_all;
is(Mcpool::last_error(), '', 'disconnect_all: no error');
my $after = $m->metrics;
is($after->{$srv}{pool_open}, 0, 'the connection is closed now');
is($after->{$srv}{operations}, $before->{$srv}{operations}, 'the metrics are kept (operations)');
is($after->{$srv}{connects}, 1, '... (connects)');
is($after->{$gone}{connect_errors}, $before->{$gone}{connect_errors}, '... (connect_errors)');
($state) = grep { $_->{server} eq $gone } @{ $m->server_states };
ok(!$state->{alive}, 'the dead server stays dead');

is($m->get($live), 'v', 'the next call works');
is($m->metrics->{$srv}{connects}, 2, '... on a new connection');
ok(!defined $m->get($dead), 'the dead server: still a failure');
like(Mcpool::last_error(), qr/dead/i, '... refused as dead, not tried again');
is($m->metrics->{$gone}{connect_errors}, $before->{$gone}{connect_errors},
    '... no new connect to it (no second server_down)');

stop_memcached($srv);
done_testing;
