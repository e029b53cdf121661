# libmemcached_config given beside other options (tester finding migrate 1): the core applied
# the string as "the libmemcached preset, then each word", after the options Mcpool.pm set
# before it, so it silently replaced them (io_timeout, distribution). The options set by name
# win, whatever the order: a get from a server that accepts and never answers ends after
# io_timeout 0.3 s, not the string's --POLL-TIMEOUT of 5 s, and keys are placed by the
# distribution asked for.
use strict;
use warnings;
use Test::More;
use Mcpool;
use IO::Socket::INET;
use Time::HiRes qw(time);

my @silent = map {
    IO::Socket::INET->new(Listen => 64, LocalAddr => '127.0.0.1', LocalPort => 0, Proto => 'tcp')
        or die "listen: $!"
} 1 .. 3;
my @servers = map { '127.0.0.1:' . $_->sockport } @silent;
my $words = join ' ', map {"--SERVER=$_"} @servers;

{
    my $c = Mcpool->new({ libmemcached_config => "--SERVER=$servers[0] --POLL-TIMEOUT=5000",
        io_timeout => 0.3 });
    my $t = time;
    my $v = $c->get('k');
    my $took = time - $t;
    is($v, undef, 'nothing from the silent server');
    like(Mcpool::last_error(), qr/tim/i, '... a timeout');
    cmp_ok($took, '<', 2, "io_timeout 0.3 beside --POLL-TIMEOUT=5000: the get took ${took}s");
}

my @keys = map {"key$_"} 1 .. 500;
my $dist = 'libmemcached-ketama-weighted';
my $plain = Mcpool->new({ libmemcached_config => $words });
my $ring = Mcpool->new({ servers => \@servers, distribution => $dist });
my $both = Mcpool->new({ libmemcached_config => $words, distribution => $dist });
my $differs = grep { $plain->server_for($_) ne $ring->server_for($_) } @keys;
ok($differs > 50, "the string alone places $differs keys of 500 elsewhere than $dist");
my $wrong = grep { $both->server_for($_) ne $ring->server_for($_) } @keys;
is($wrong, 0, "libmemcached_config with distribution => $dist: every key where $dist puts it");

done_testing();
