# get_bytes: ($bytes, $flags, $as_stored) ([...] in scalar context), never thawed; a value the value format cannot deliver comes as
# memcached holds it (flags as stored), where get warns and returns nothing: the core's
# get_or_stored, the same read as get (Java's getBytes, Python's get_bytes).
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;

my $srv = start_memcached();
my $p = unique('get-bytes');


my $m = Mcpool->new({ servers => [$srv], namespace => $p });
raw_set($srv, "${p}date", 1 << 10, "\x01\x02");   # spymemcached's Date flags
raw_set($srv, "${p}badzip", 2, "not gzip");       # the compressed flag on a body that is not
{
    my @w;
    local $SIG{__WARN__} = sub { push @w, @_ };
    is(scalar(() = $m->get('date')), 0, 'get returns nothing');
    like($w[0] // '', qr/MCPOOL_VALUE_FORMAT/, 'get warns');
}
is_deeply([$m->get_bytes('date')], ["\x01\x02", 1 << 10, 1], 'get_bytes: as stored');
is_deeply([$m->get_bytes('badzip')], ['not gzip', 2, 1], 'get_bytes: a body that does not inflate');
ok($m->set('plain', 'hello'), 'set');
is_deeply([$m->get_bytes('plain')], ['hello', 0, 0], 'get_bytes: a readable value');
is(scalar(() = $m->get_bytes('absent')), 0, 'a miss is nothing');
is($m->last_error // '', '', 'no error for a miss');

# Scalar context: the same list as an array reference, as gets answers [cas, value] (it was
# the list's last element, the as_stored flag: tester finding perl2 2); with the callbacks'
# wrapper too.
my $hooked = Mcpool->new({ servers => [$srv], namespace => $p, on_operation => sub { } });
for my $c ([ plain => $m ], [ hooked => $hooked ]) {
    my ($name, $mc) = @$c;
    my $r = $mc->get_bytes('plain');
    is(ref $r, 'ARRAY', "$name: scalar context: an array reference");
    is_deeply($r, ['hello', 0, 0], "$name: ... of (bytes, flags, as_stored)");
    is_deeply(scalar $mc->get_bytes('date'), ["\x01\x02", 1 << 10, 1], "$name: ... as stored");
    ok(!defined scalar $mc->get_bytes('absent'), "$name: a miss: undef");
    is_deeply([ $mc->get_bytes('plain') ], ['hello', 0, 0], "$name: list context: the list");
}
done_testing;
