use strict;
use warnings;
use Test::More;

use_ok('Mcpool');
like(Mcpool::library_version(), qr/^\d+\.\d+\.\d+/, 'library_version: ' . Mcpool::library_version());
ok(!eval { Mcpool->new({ servers => 'x' }); 1 }, 'servers not an array reference croaks');
like($@, qr/servers must be an array reference/, '... with a message');
isa_ok(Mcpool->new({ servers => [] }), 'Mcpool', 'no servers: a client whose commands fail');
ok(!eval { Mcpool->new('x'); 1 }, 'non-hash options croak');
like($@, qr/hash reference/, '... with a message');
ok(!eval { Mcpool->new({ servers => [{}] }); 1 }, 'server hash without address croaks');
like($@, qr/server should have \{ address/, '... as Cache::Memcached::Fast words it');
ok(!eval { Mcpool->new({ servers => [['127.0.0.1:1', -1]] }); 1 }, 'negative weight croaks');
like($@, qr/weight should be positive/, '... with a message');
ok(!eval { Mcpool->new({ servers => ['127.0.0.1:notaport'] }); 1 }, 'malformed address croaks');
like($@, qr/MCPOOL_CONFIG/, '... with the C ABI status: ' . ($@ =~ s/\n.*//sr));
# a refusal of the core's names no C function (tester finding retest26 7:
# "MCPOOL_CONFIG: mcpool_client_new: configuration error: ...")
ok(!eval { Mcpool->new({ servers => ['127.0.0.1:11211:2x'] }); 1 }, 'a server name croaks');
like($@, qr/MCPOOL_CONFIG: configuration error: server 127\.0\.0\.1:11211: "2x"/,
    '... in the core\'s words: ' . ($@ =~ s/\n.*//sr));
unlike($@, qr/mcpool_client_new/, '... naming no C function');
{
    my @w;
    local $SIG{__WARN__} = sub { push @w, @_ };
    Mcpool->new({ servers => ['127.0.0.1:1'], bogus => 1 });
    like("@w", qr/Unknown arguments: bogus/, 'unknown arguments warn');
    @w = ();
    Mcpool->new({ servers => ['127.0.0.1:1'], bogus => 1, check_args => 'skip' });
    is("@w", '', 'check_args => skip');
}
# A resolver is refused, never ignored (tester finding leaks 2), check_args or not.
for my $skip (0, 1) {
    ok(!eval { Mcpool->new({ servers => ['svc:11211'], resolver => sub { ['127.0.0.1'] },
                             ($skip ? (check_args => 'skip') : ()) }); 1 },
        "resolver croaks (check_args skip: $skip)");
    like($@, qr/^Mcpool->new: resolver is not available in Perl/, '... saying why');
}
ok(!eval { Mcpool::get(bless(\my $x, 'Other'), 'k'); 1 }, 'a foreign object croaks');
like($@, qr/not an Mcpool object/, '... with a message');
done_testing;
