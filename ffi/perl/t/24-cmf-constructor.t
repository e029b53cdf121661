# Mcpool->new side by side with Cache::Memcached::Fast's: no servers (none, or an empty list)
# gives a client whose commands fail softly (CMF's; here with last_error "no servers"),
# CMF's validation messages come first in ours (its t/validation.t matches them with ^), and
# an option the core refuses croaks at the caller's line, not inside Mcpool.pm.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";

BEGIN {
    require McpoolTest;
    McpoolTest::needs('libcache-memcached-fast-perl', qw(Cache::Memcached::Fast));
}
use Mcpool;

# What each call returns, in list and scalar context, as text.
sub answers {
    my $m = shift;
    my @out;
    for my $c ([ set => 'k', 1 ], [ get => 'k' ], [ get_multi => 'a', 'b' ], [ gets => 'k' ],
        [ add => 'k', 1 ], [ incr => 'k' ], [ delete => 'k' ], [ touch => 'k', 1 ],
        [ flush_all => ], [ server_versions => ], [ cas => 'k', 1, 1 ], [ gat => 1, 'k' ],
        [ append => 'k', 'x' ], [ namespace => ])
    {
        my ($n, @a) = @$c;
        my @l = $m->$n(@a);
        my $s = $m->$n(@a);
        my $t = sub { !defined $_[0] ? 'undef' : ref $_[0] eq 'HASH' ? '{' . join(',', %{ $_[0] }) . '}' : "'$_[0]'" };
        push @out, "$n: (" . join(',', map { $t->($_) } @l) . ') ' . $t->($s);
    }
    return \@out;
}

for my $args ({}, { servers => [] }) {
    my $what = %$args ? 'servers => []' : 'no servers';
    my $cmf = Cache::Memcached::Fast->new({%$args});
    my $m = eval { Mcpool->new({%$args}) };
    ok($m, "$what: a client, as Cache::Memcached::Fast's") or diag $@;
    next unless $m;
    is_deeply(answers($m), answers($cmf), "$what: every command answers as CMF's (nothing)");
    $m->set('k', 1);
    like(Mcpool::last_error(), qr/^set: no servers/, "$what: last_error says why");
    is_deeply([ $m->set_multi([ 'a', 1 ], [ 'b', 2 ]) ], [ undef, undef ],
        "$what: set_multi in list context: one undef per item");
    is_deeply(scalar $m->set_multi([ 'a', 1 ]), {}, "$what: ... an empty hash in scalar context");
    ok(eval { $m->disconnect_all; 1 }, "$what: disconnect_all is fine");
    isa_ok($m, 'Mcpool');
}
# new() without arguments, as Cache::Memcached::Fast->new() (tester finding perl 4)
{
    my $cmf = Cache::Memcached::Fast->new();
    my $m = eval { Mcpool->new() };
    ok($m, 'new(): a client, as Cache::Memcached::Fast\'s') or diag $@;
    is_deeply(answers($m), answers($cmf), 'new(): every command answers as CMF\'s (nothing)') if $m;
    eval { Mcpool->new({ servers => 'h:1' }) };
    like($@, qr/servers must be an array reference of servers/, 'servers not an array: said so');
    unlike($@, qr/at least one/, '... not "at least one server" (an empty list is accepted)');
}
{
    my $m = Mcpool->new({ servers => [], namespace => 'ns:' });
    is($m->namespace, 'ns:', 'no servers: the namespace is kept');
    eval { Mcpool->new({ servers => [], io_timeout => 'abc' }) };
    like($@, qr/io_timeout/, 'no servers: options are still checked');
}

# CMF's message first, as its t/validation.t matches it
for my $c ([ [[ 'localhost:11211', -1 ]] => qr/^Server weight should be positive/ ],
    [ [ [] ] => qr/^server should be \[\$addr, \$weight\]/ ],
    [ [ {} ] => qr/^server should have \{ address => \$addr \}/ ],
    [ [ qr// ] => qr/^Not a hash or array reference/ ])
{
    my ($servers, $re) = @$c;
    eval { Cache::Memcached::Fast->new({ servers => $servers }) };
    like($@, $re, "CMF: $re");
    eval { Mcpool->new({ servers => $servers }) };
    like($@, $re, "Mcpool: the same message first");
}
eval { Mcpool->new({ servers => [[ 'localhost:11211', -1 ]] }) };
like($@, qr/localhost:11211, weight -1/, '... which names the server and the weight after it');

# An option the core refuses croaks at the caller's line (Carp), as those checked in Perl
for my $o ([ fail_open => 'maybe' ], [ protocol => 'smoke' ], [ io_timeout => 'abc' ]) {
    my $line = __LINE__ + 1;
    eval { Mcpool->new({ servers => ['127.0.0.1:1'], @$o }) };
    like($@, qr/\Q$o->[0]\E.* at \Q$0\E line $line\.$/, "$o->[0] => '$o->[1]': croaks at the caller's line");
    unlike($@, qr/Mcpool\.pm/, '... not inside Mcpool.pm');
}
{
    my $m = Mcpool->new({ servers => ['127.0.0.1:1'] });
    my $line = __LINE__ + 1;
    eval { $m->set_servers(['127.0.0.1:0']) };
    like($@, qr/ at \Q$0\E line $line\.$/, "set_servers with an address the core refuses: the caller's line");
}

# Cache::Memcached::Fast's IPv6 spelling (split at the last colon) is the core's bracketed one
{
    my $m = Mcpool->new({ servers => ['::1:11311', 'fe80::1:11312', ['::1:11313', 2],
        { address => '::ffff:127.0.0.1:11314' }, '127.0.0.1:11315:10'] });
    is_deeply([ $m->server_labels ], ['[::1]:11311', '[fe80::1]:11312', '[::1]:11313',
        '[::ffff:127.0.0.1]:11314', '127.0.0.1:11315'], "CMF's '::1:PORT' is [::1]:PORT; host:port:name unchanged");
}

# Two placements given (tester finding options 2): ketama_points above 0 and a distribution by
# name are refused, naming both, as the core refuses any option set twice; either alone works.
for my $d ('cmf-ketama:150', 'libmemcached-ketama') {
    my $m = eval { Mcpool->new({ servers => ['127.0.0.1:11311'], ketama_points => 100,
                                 distribution => $d }) };
    ok(!$m, "ketama_points 100 with distribution $d is refused");
    like($@, qr/distribution given twice \(as ketama_points and distribution\)/, '... naming both');
    ok(Mcpool->new({ servers => ['127.0.0.1:11311'], distribution => $d }), "$d alone builds");
    ok(Mcpool->new({ servers => ['127.0.0.1:11311'], ketama_points => 0, distribution => $d }),
       "$d with ketama_points 0 builds");
}

done_testing;
