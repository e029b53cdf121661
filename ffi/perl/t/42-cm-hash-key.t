# Cache::Memcached's [$hash, $key] key form under preset => 'cache-memcached' (tester finding
# keys 3): refused with a croak that says why (mcpool places every key by its own hash and
# cannot honour the caller's; pass the key; its server may differ from Cache::Memcached's),
# not the generic "not a reference (ARRAY)"; nothing is stored.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;

my $srv = start_memcached();
my $p   = unique('hk');
my $k   = "${p}key";

my $m    = Mcpool->new({ servers => [$srv], preset => 'cache-memcached' });
my $seen = Mcpool->new({ servers => [$srv] });

my $why = qr/the key is an array reference of two elements, Cache::Memcached's \[\$hash, \$key\] form, whose \$hash picks the server; mcpool places every key by the hash of the key itself and cannot honour a caller's hash: pass the key \(\$key\) instead; its server may then differ from the one Cache::Memcached picks for \[\$hash, \$key\]/;

my %calls = (
    set        => sub { $m->set([ 7, $k ], 'v') },
    add        => sub { $m->add([ 7, $k ], 'v') },
    get        => sub { $m->get([ 7, $k ]) },
    get_multi  => sub { $m->get_multi("${p}other", [ 7, $k ]) },
    delete     => sub { $m->delete([ 7, $k ]) },
    incr       => sub { $m->incr([ 7, $k ]) },
    set_multi  => sub { $m->set_multi([ "${p}other", 'o' ], [ [ 7, $k ], 'v' ]) },
    set_multi_noreply => sub { $m->set_multi_noreply([ [ 7, $k ], 'v' ]) },
);
for my $name (sort keys %calls) {
    ok(!eval { $calls{$name}->(); 1 }, "$name of [\$hash, \$key] croaks");
    like($@, qr/^Mcpool::\Q$name\E: $why/, "$name: ... saying why");
}
is_deeply($seen->get_multi($k, "${p}other"), {}, 'nothing stored (the batch croaked before sending)');

# Other references keep the generic message.
for my $ref ([ [$k], 'ARRAY' ], [ [ 1, 2, $k ], 'ARRAY' ], [ { 7 => $k }, 'HASH' ]) {
    ok(!eval { $m->set($ref->[0], 'v'); 1 }, "a $ref->[1] reference of another shape croaks");
    like($@, qr/^Mcpool::set: the key must be a string, not a reference \($ref->[1]\)/,
        '... with the generic message');
}

# The key itself works.
ok($m->set($k, 'v'), 'the key itself is stored');
is($seen->get($k), 'v', '... and readable');

done_testing();
