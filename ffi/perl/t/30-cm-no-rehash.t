# Cache::Memcached's no_rehash (tester findings perlcompat 2, migrate 3): it got an "Unknown
# arguments" warning and then the opposite happened (a dead server's keys went to another
# server). no_rehash => 1 is the core's failover fail-fast, no_rehash => 0 its rehash (as
# Cache::Memcached's get_sock loop), compared here with Cache::Memcached itself; given with
# failover too it croaks naming both (the rule for one option set by two arguments).
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;
use IO::Socket::INET;

my $live = start_memcached();
my $dead = do {    # a port nothing listens on
    my $s = IO::Socket::INET->new(Listen => 1, LocalAddr => '127.0.0.1', LocalPort => 0)
        or die "listen: $!";
    '127.0.0.1:' . $s->sockport;
};
my $p = unique('nr');
my $direct = Mcpool->new({ servers => [$live] });
my $have_cm = eval { require Cache::Memcached; 1 };

# a key Cache::Memcached (and the cache-memcached placement) puts on the dead server
my $placer = Mcpool->new({ servers => [$live, $dead], preset => 'cache-memcached' });
my ($key) = grep { $placer->server_for($_) eq $dead } map {"$p$_"} 1 .. 100;
ok(defined $key, 'a key on the dead server');

for my $case (
    [ { preset => 'cache-memcached', no_rehash => 1 }, 0 ],
    [ { preset => 'cache-memcached', no_rehash => 0 }, 1 ],
    [ { preset => 'cache-memcached' }, 1 ],
    # under Cache::Memcached::Fast's defaults a server is marked dead only with max_failures
    [ { no_rehash => 0, max_failures => 1 }, 1 ],
    [ { no_rehash => 1, max_failures => 1 }, 0 ],
    [ { no_rehash => 1 }, 0 ],
) {
    my ($args, $moves) = @$case;
    my $desc = join ', ', map {"$_ => $args->{$_}"} sort keys %$args;
    my @w;
    local $SIG{__WARN__} = sub { push @w, @_ };
    my $mc = Mcpool->new({ servers => [$live, $dead], %$args });
    is("@w", '', "{ $desc }: no warning (no_rehash is known)");
    $direct->delete($key);
    my $ok;
    $ok = $mc->set($key, 'v') for 1 .. 3;
    if ($moves) {
        ok($ok, "{ $desc }: set of the dead server's key stored elsewhere");
        is($direct->get($key), 'v', "{ $desc }: ... on the live server");
        is($mc->get($key), 'v', "{ $desc }: ... and read from there");
    } else {
        is($ok, undef, "{ $desc }: set of the dead server's key fails");
        like(Mcpool::last_error(), qr/\Q$dead\E/, "{ $desc }: ... last_error names the server");
        is($direct->get($key), undef, "{ $desc }: ... nothing on the live server");
    }
}

SKIP: {
    skip 'Cache::Memcached is not installed', 4 unless $have_cm;
    for my $nr (0, 1) {
        $direct->delete($key);
        my $cm = Cache::Memcached->new({ servers => [$live, $dead], no_rehash => $nr });
        my $mc = Mcpool->new({ servers => [$live, $dead], no_rehash => $nr,
            preset => 'cache-memcached' });
        my $cm_ok = $cm->set($key, 'cm') ? 1 : 0;
        my $cm_there = defined $direct->get($key) ? 1 : 0;
        $direct->delete($key);
        my $mc_ok = $mc->set($key, 'mc') ? 1 : 0;
        my $mc_there = defined $direct->get($key) ? 1 : 0;
        is($mc_ok, $cm_ok, "no_rehash => $nr: set answers as Cache::Memcached's ($cm_ok)");
        is($mc_there, $cm_there, "no_rehash => $nr: the live server has the key as there");
    }
}

for my $fo ('fail-fast', 'rehash') {
    for my $nr (0, 1) {
        my $mc = eval { Mcpool->new({ servers => [$live], no_rehash => $nr, failover => $fo }) };
        my $err = $@;
        ok(!$mc, "no_rehash => $nr with failover => $fo: refused");
        like($err, qr/option failover given twice \(as no_rehash and failover\)/,
            '... naming both') or diag $err;
    }
}

done_testing();
