# CHI::Driver::Mcpool with a server down (tester finding frameworks 2): every CHI method
# answers as CHI::Driver::Memcached::Fast does (a miss, undef, false; never an uncaught die),
# for a client whose only server is a closed port and for one with a live memcached plus a
# closed port. CHI wraps the driver's fetch in eval + on_get_error only inside get(); its
# get_object, get_expires_at, is_valid, exists_and_is_expired, expire, add, replace and append
# call fetch bare, so the driver's failed read used to die out of them, even with
# on_get_error => 'ignore'. Each failed read still reaches on_get_error, exactly once (get()'s
# as before), and each failed store on_set_error.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";

BEGIN {
    require Log::Any::Test;    # before Log::Any is loaded (by CHI): CHI's log, collected
    require McpoolTest;
    McpoolTest::needs('libchi-perl libchi-driver-memcached-perl libcache-memcached-fast-perl',
        qw(CHI Cache::Memcached::Fast CHI::Driver::Memcached::Fast));
}

use McpoolTest;
use IO::Socket::INET;
use Log::Any qw($log);
use CHI;
use CHI::Constants qw(CHI_Max_Time);

my $live = start_memcached();
my $dead = do {    # a port nothing listens on: connections are refused at once
    my $s = IO::Socket::INET->new(Listen => 1, LocalAddr => '127.0.0.1', LocalPort => 0) or die $!;
    my $p = $s->sockport;
    close $s;
    "127.0.0.1:$p";
};
my $ns = unique('down');
$ns =~ s/-$//;

# A cache of $driver over @$servers whose on_get_error / on_set_error count into %$count
# (or are given as %extra).
sub cache {
    my ($driver, $servers, $count, %extra) = @_;
    return CHI->new(driver => $driver, servers => $servers, namespace => $ns,
        on_get_error => sub { $count->{get}++ }, on_set_error => sub { $count->{set}++ }, %extra);
}

# A result compared across drivers: a cache object as its value.
sub shown {
    my @r = @_;
    return [ map { ref $_ eq 'CHI::CacheObject' ? [ 'object', $_->value ] : $_ } @r ];
}

# Runs $code, returning [ died => message ] or [ returned => [list] ].
sub run {
    my $code = shift;
    my @r;
    return eval { @r = $code->(); 1 } ? [ returned => shown(@r) ] : [ died => "$@" ];
}

# Every CHI method, on the key $k (whose server is down), as [ name, code, reads reported,
# stores reported, how the two drivers' answers compare ].
my @methods = (
    [ get                   => sub { $_[0]->get($_[1]) },                        1, 0 ],
    [ get_object            => sub { $_[0]->get_object($_[1]) },                 1, 0 ],
    [ get_expires_at        => sub { $_[0]->get_expires_at($_[1]) },             1, 0 ],
    [ is_valid              => sub { $_[0]->is_valid($_[1]) },                   1, 0 ],
    [ exists_and_is_expired => sub { $_[0]->exists_and_is_expired($_[1]) },      1, 0 ],
    [ expire                => sub { $_[0]->expire($_[1]) },                     1, 0 ],
    [ add                   => sub { $_[0]->add($_[1], 'v') },                   1, 1 ],
    [ replace               => sub { $_[0]->replace($_[1], 'v') },               1, 0 ],
    [ append                => sub { $_[0]->append($_[1], 'v') },                1, 0 ],
    [ fetch                 => sub { $_[0]->fetch($_[1]) },                      1, 0 ],
    [ compute               => sub { $_[0]->compute($_[1], '1m', sub { 'c' }) }, 1, 1 ],
    [ 'compute (list)'      => sub { my @v = $_[0]->compute($_[1], sub { (1, 2) }); [@v] }, 1, 1 ],
    [ set                   => sub { $_[0]->set($_[1], 'v') },                   0, 1 ],
    [ remove                => sub { $_[0]->remove($_[1]) },                     0, 0 ],
    # get_multi_*: a failed key is a miss, silently, as with the stock driver (POD "Errors")
    [ fetch_multi_hashref       => sub { $_[0]->fetch_multi_hashref([ $_[1] ]) },       0, 0 ],
    [ get_multi_arrayref        => sub { $_[0]->get_multi_arrayref([ $_[1] ]) },        0, 0 ],
    [ get_multi_hashref         => sub { $_[0]->get_multi_hashref([ $_[1] ]) },         0, 0 ],
    [ get_multi_hashref_objects => sub { $_[0]->get_multi_hashref_objects([ $_[1] ]) }, 0, 0 ],
    # their return values are not CHI's API (the stock driver's are 0 and '', Mcpool's none):
    # compared as booleans
    [ set_multi    => sub { scalar $_[0]->set_multi({ $_[1] => 'v' }) ? 'true' : 'false' }, 0, 1 ],
    [ remove_multi => sub { scalar $_[0]->remove_multi([ $_[1] ]) ? 'true' : 'false' },      0, 0 ],
);
# What memcached cannot do: both drivers croak "not supported", server or no server.
my @unsupported = qw(clear get_keys get_namespaces is_empty purge dump_as_hash);

for my $layout ([ 'the only server a closed port' => [$dead] ],
    [ 'a live memcached and a closed port' => [ $live, $dead ] ])
{
    my ($name, $servers) = @$layout;
    my (%cmf_count, %mcp_count);
    my $cmf = cache('Memcached::Fast', $servers, \%cmf_count);
    my $mcp = cache('Mcpool', $servers, \%mcp_count);

    # The keys on the closed port (all of them for the first layout), as each driver places
    # them: stored and read back, or not.
    my @keys = map { "key$_" } 1 .. 40;
    my %down;
    for my $d ([ cmf => $cmf ], [ mcp => $mcp ]) {
        my ($n, $c) = @$d;
        $down{$n} = [ grep { $c->set($_, 1); !defined $c->get($_) } @keys ];
        $c->remove($_) for @keys;
    }
    is_deeply($down{mcp}, $down{cmf}, "$name: the same keys on the closed port for both drivers");
    my ($k) = @{ $down{mcp} } or BAIL_OUT("$name: no key on the closed port");
    my ($up) = grep { my $x = $_; !grep { $_ eq $x } @{ $down{mcp} } } @keys;
    ok(@$servers == 1 || defined $up, "$name: some key on the live server");
    %cmf_count = %mcp_count = ();

    for my $m (@methods) {
        my ($method, $code, $reads, $stores) = @$m;
        %cmf_count = %mcp_count = ();
        my $want = run(sub { $code->($cmf, $k) });
        my $got  = run(sub { $code->($mcp, $k) });
        is($want->[0], 'returned', "$name: $method: CHI::Driver::Memcached::Fast answers");
        is_deeply($got, $want, "$name: $method: Mcpool answers as it does")
            or diag explain { mcpool => $got, cmf => $want };
        is($mcp_count{get} // 0, $reads, "$name: $method: on_get_error called $reads time(s)");
        is($mcp_count{set} // 0, $stores, "$name: $method: on_set_error called $stores time(s)");
    }
    for my $method (@unsupported) {
        for my $c ($cmf, $mcp) {
            my $r = run(sub { $c->$method });
            like($r->[1], qr/method '$method' not supported/,
                "$name: $method: " . $c->short_driver_name . ' croaks "not supported"');
        }
    }

    # With on_get_error / on_set_error => 'ignore' (the tester's case): nothing dies, nothing
    # is logged or warned.
    my $quiet = CHI->new(driver => 'Mcpool', servers => $servers, namespace => $ns,
        on_get_error => 'ignore', on_set_error => 'ignore');
    for my $m (@methods) {
        my @w;
        $log->clear;
        my $r = do { local $SIG{__WARN__} = sub { push @w, @_ }; run(sub { $m->[1]->($quiet, $k) }) };
        is($r->[0], 'returned', "$name: $m->[0] with on_get_error => 'ignore': no die")
            or diag $r->[1];
        is_deeply([ @w, map { $_->{message} } grep { $_->{level} =~ /^(?:error|warning)$/ } @{ $log->msgs } ],
            [], '... nothing warned or logged');
    }

    # By default (on_get_error 'log') each failed read is logged once, as get()'s is.
    my $logged = CHI->new(driver => 'Mcpool', servers => $servers, namespace => $ns);
    for my $method (qw(get get_object is_valid)) {
        $log->clear;
        ok(!defined $logged->$method($k), "$name: $method (default on_get_error): a miss");
        my @err = grep { $_->{level} eq 'error' } @{ $log->msgs };
        is(scalar @err, 1, '... one error logged');
        like($err[0]{message} // '', qr/^error during cache get for namespace='\Q$ns\E', key='$k'.*: Mcpool: get $k failed: /s,
            '... naming the key and the failure');
    }

    # on_get_error => 'die' is obeyed by every read, and each error is handled once: get()'s
    # own read is not reported by fetch and again by get().
    my $strict = CHI->new(driver => 'Mcpool', servers => $servers, namespace => $ns,
        on_get_error => 'die');
    for my $method (qw(get get_object is_valid)) {
        my $r = run(sub { $strict->$method($k) });
        is($r->[0], 'died', "$name: $method with on_get_error => 'die': dies");
        like($r->[1], qr/^error during cache get for namespace='\Q$ns\E', key='$k'.*: Mcpool: get $k failed: /s,
            '... with the failure');
        unlike($r->[1], qr/error during .*error during /s, '... handled once');
    }

    # A read made while get() runs but not by it (an expire_if callback, an on_get_error
    # handler that reads) is reported as any other; get()'s own read is unaffected.
    if (defined $up) {
        my %count;
        my $c = cache('Mcpool', $servers, \%count);
        $c->set($up, 'here');
        my $inner;
        is($c->get($up, expire_if => sub { $inner = run(sub { $c->is_valid($k) }); 0 }), 'here',
            "$name: get with an expire_if that reads a key on the closed port: the value");
        is_deeply($inner, [ returned => [] ], '... the inner read: false, no die');
        is($count{get}, 1, '... reported once');
        %count = ();
        my @seen;
        my $reads = cache('Mcpool', $servers, \%count,
            on_get_error => sub { push @seen, $c->get($up) });
        ok(!defined $reads->get($k), "$name: get with an on_get_error that reads: a miss");
        is_deeply(\@seen, ['here'], '... the handler ran once and read its key');
        %count = ();
        my $g = run(sub { $c->get_object($k) });
        is_deeply($g, [ returned => [undef] ], '... and get_object after it: a miss')
            and is($count{get}, 1, '... reported once');

        # A live key: the drivers answer alike (hits).
        for my $m (@methods) {
            my ($method, $code) = @$m;
            next if $method =~ /^(?:remove|set_multi|remove_multi|fetch|fetch_multi_hashref|get_multi_hashref_objects)$/;
            $_->set($up, 'v', { expires_at => 2_000_000_000 }) for $cmf, $mcp;
            my $want = run(sub { $code->($cmf, $up) });
            my $got  = run(sub { $code->($mcp, $up) });
            is_deeply($got, $want, "$name: $method of a key on the live server: as the stock driver")
                or diag explain { mcpool => $got, cmf => $want };
        }
        $_->set($up, 'v') for $cmf, $mcp;
        is_deeply(run(sub { $mcp->get_multi_hashref([ $up, $k ]) }),
            run(sub { $cmf->get_multi_hashref([ $up, $k ]) }),
            "$name: get_multi_hashref over both servers: the live key found, the other a miss");
    }
}

# append whose store fails (a value over memcached's 1 MB; the stock driver answers 1, its
# store failing silently): reported to on_set_error, not a die out of append.
{
    my (%count, %cmf_count);
    my $mcp = cache('Mcpool', [$live], \%count);
    my $cmf = cache('Memcached::Fast', [$live], \%cmf_count);
    my $k = 'append-too-large';
    my $big = 'x' x (2 * 1024 * 1024);
    $cmf->set($k, 'a');
    my $want = run(sub { $cmf->append($k, $big) });
    $mcp->set($k, 'a');
    my $got = run(sub { $mcp->append($k, $big) });
    is_deeply($got, $want, 'append whose store fails: answers as the stock driver');
    is($count{set}, 1, '... the failed store reported to on_set_error');
    is($mcp->get($k), $cmf->get($k), '... the value then: as the stock driver\'s');
    my $die = CHI->new(driver => 'Mcpool', servers => [$live], namespace => $ns,
        on_set_error => 'die');
    $die->set($k, 'a');
    like(run(sub { $die->append($k, $big) })->[1],
        qr/^error during cache set for namespace='\Q$ns\E', key='$k'.*Mcpool: set $k failed: /s,
        "... with on_set_error => 'die': dies with it");
}

done_testing();
