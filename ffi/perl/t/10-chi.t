# CHI::Driver::Mcpool against CHI's own driver test suite (CHI::t::Driver, from Debian's
# libchi-perl), run against a private memcached as CHI::Driver::Memcached's tests run it:
# the generic tests, the cache flushed before each test (get_keys and clear only for the
# suite: t/lib/CHI/Test/Driver/Mcpool.pm). Then what the generic suite does not cover: set_multi's one
# pipelined call with per-item expiry on the backend, remove_multi, keys memcached's text
# protocol cannot carry, and a store on a down server reaching on_set_error.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";

BEGIN {
    require McpoolTest;
    McpoolTest::needs('libchi-perl libtest-class-perl libtest-deep-perl libtest-exception-perl '
            . 'libtest-warn-perl',
        qw(CHI CHI::Test CHI::t::Driver Test::Class Test::Deep Test::Exception Test::Warn));
}

use McpoolTest;
use CHI::Test::Driver::Mcpool;

my $SRV = start_memcached();

package CHI::t::Driver::Mcpool;
use strict;
use warnings;
use CHI::Test;
use base qw(CHI::t::Driver);

# The driver with get_keys over the suite's fixed keys (t/lib/CHI/Test/Driver/Mcpool.pm), as
# CHI::Driver::Memcached's tests use CHI::Test::Memcached::Driver. get_namespaces stays
# unsupported.
sub testing_driver_class { 'CHI::Test::Driver::Mcpool' }
sub supports_get_namespaces     { 0 }
sub supports_expires_on_backend { 1 }    # store passes the expiry to memcached

sub new_cache_options {
    my $self = shift;
    @CHI::Test::Driver::Mcpool::KEYS = grep { !ref } @{ $self->{all_test_keys} || [] };
    return ($self->SUPER::new_cache_options(), servers => [$SRV]);
}

sub clear_memcached : Test(setup) {
    my $self = shift;
    $self->new_cache->memd->flush_all;
}

sub test_unsupported : Tests {
    my $self = shift;
    my $cache = CHI->new(driver => 'Mcpool', servers => [$SRV]);
    isa_ok($cache, 'CHI::Driver::Mcpool');
    for my $m (qw(clear get_keys get_namespaces is_empty purge dump_as_hash)) {
        throws_ok { $cache->$m } qr/not supported/, "$m is not supported";
    }
}

sub test_namespace_is_the_key_prefix : Tests {
    my $self = shift;
    my $cache = $self->new_cache(namespace => 'chi-ns');
    $cache->set('k', 'v');
    my $raw = Mcpool->new({ servers => [$SRV] });
    ok(defined $raw->get('chi-ns:k'), 'the item is stored under "namespace:key"');
    is($self->new_cache(namespace => 'chi-ns')->get('k'), 'v', 'another cache of the namespace reads it');
    ok(!defined $self->new_cache(namespace => 'other')->get('k'), 'another namespace does not');
}

sub test_set_multi_is_one_batch : Tests {
    my $self = shift;
    my $cache = $self->new_cache(expires_on_backend => 1);
    my $calls = 0;
    no warnings 'redefine';
    my $orig = \&Mcpool::set;
    local *Mcpool::set = sub { $calls++; goto &$orig };
    $cache->set_multi({ a1 => 'x', a2 => [1, 2], a3 => 'z' }, { expires_in => 100 });
    # 3 s, not 1: memcached's clock counts whole seconds, so an item of 1 s may be gone a
    # moment after it is stored (CI found it gone before the read below); 3 s leaves at
    # least 2 s for that read, whatever the load.
    $cache->set_multi({ b1 => 'short' }, { expires_in => 3 });
    is($calls, 0, 'set_multi does not store key by key');
    cmp_deeply($cache->get_multi_hashref([qw(a1 a2 a3 b1)]),
        { a1 => 'x', a2 => [1, 2], a3 => 'z', b1 => 'short' }, 'all stored');
    my $raw = Mcpool->new({ servers => [$SRV], namespace => 'Default:' });
    # memcached itself expires b1 (expires_on_backend), whatever CHI's own expiry says.
    my $gone = 0;
    for (1 .. 200) {    # up to 10 s
        select undef, undef, undef, 0.05;
        last if $gone = !defined $raw->get('b1');
    }
    ok($gone, 'the 3 s item expired on the server');
    ok(defined $raw->get('a1'), 'the 100 s items did not');
    $cache->remove_multi([qw(a1 a2)]);
    cmp_deeply($cache->get_multi_hashref([qw(a1 a2 a3)]), { a1 => undef, a2 => undef, a3 => 'z' },
        'remove_multi');
}

sub test_any_key : Tests {
    my $self = shift;
    my $cache = $self->new_cache;
    for my $k ("with space", "new\nline", "tab\there", "\x{263a} smile", "%41 literal", 'A') {
        $cache->set($k, "v:$k");
        is($cache->get($k), "v:$k", 'key ' . CHI::Util::dump_one_line($k));
    }
    is($cache->get('A'), 'v:A', '"%41 literal" and "A" are different keys');
}

sub test_down_server_reaches_on_set_error : Tests {
    my $self = shift;
    my $dead = do {
        my $s = IO::Socket::INET->new(Listen => 1, LocalAddr => '127.0.0.1', LocalPort => 0) or die $!;
        my $p = $s->sockport;
        close $s;
        "127.0.0.1:$p";
    };
    my $cache = CHI->new(driver => '+CHI::Driver::Mcpool', servers => [$dead], connect_timeout => 0.5,
        on_set_error => 'die');
    throws_ok { $cache->set('k', 'v') } qr/error during cache set.*Mcpool: set k failed/s,
        'a failed store dies into on_set_error';
    ok(!defined $cache->get('k'), 'a failed read is a miss');
    my @errors;
    $cache = CHI->new(driver => '+CHI::Driver::Mcpool', servers => [$dead], connect_timeout => 0.5,
        on_set_error => sub { push @errors, $_[0] });
    $cache->set_multi({ k1 => 1, k2 => 2 });
    is(scalar @errors, 2, 'set_multi: on_set_error for each failed item');
}

package main;

CHI::t::Driver::Mcpool->runtests;
