# io_timeout per server set (Cache::Memcached::Fast's rule): a multi-key call over several
# deliberately silent fake servers (listeners that accept and never answer) and one real
# memcached returns within about one io_timeout, not one per silent server; the real
# server's keys succeed, the silent servers' keys fail.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;
use IO::Socket::INET;
use Time::HiRes qw(time);

my $real = start_memcached();
my @silent = map {
    IO::Socket::INET->new(Listen => 64, LocalAddr => '127.0.0.1', LocalPort => 0, Proto => 'tcp')
        or die "listen: $!"
} 1 .. 5;
my @servers = map { '127.0.0.1:' . $_->sockport } @silent;
splice @servers, 2, 0, $real;
my $io = 0.4;
my $m = Mcpool->new({ servers => \@servers, io_timeout => $io, max_failures => 0 });
my $p = unique('mt');
my @keys = map { "$p$_" } 1 .. 60;
my %on_real = map { $_ => ($m->server_for($_) eq $real) } @keys;
ok((grep { $on_real{$_} } @keys) && (grep { !$on_real{$_} } @keys), 'keys on both kinds');
# Each call: within 3 io_timeouts (it was one per silent server in turn: 5 here).
my $bound = 3 * $io;

my $t = time;
my $set = $m->set_multi(map { [$_, "v$_"] } @keys);
my $took = time - $t;
cmp_ok($took, '<', $bound, "set_multi over 5 silent servers took ${took}s");
is(!!$set->{$_}, !!$on_real{$_}, "set_multi $_") for @keys[0 .. 9];

$t = time;
my $got = $m->get_multi(@keys);
$took = time - $t;
cmp_ok($took, '<', $bound, "get_multi over 5 silent servers took ${took}s");
for my $k (@keys) {
    if ($on_real{$k}) { is($got->{$k}, "v$k", "get_multi hit $k") }
    else              { ok(!exists $got->{$k}, "get_multi: silent server's $k absent") }
}

$t = time;
my $del = $m->delete_multi(@keys);
$took = time - $t;
cmp_ok($took, '<', $bound, "delete_multi over 5 silent servers took ${took}s");
is(!!$del->{$_}, !!$on_real{$_}, "delete_multi $_") for @keys[0 .. 9];

done_testing();
