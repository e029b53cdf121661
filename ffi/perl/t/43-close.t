# close (the core's mcpool_client_close): every later command fails as on any failure (undef,
# last_error says the client is closed), nothing is sent (another client still reads the old
# value), on every protocol; close is idempotent, also on a client made without servers.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;

my $srv = start_memcached();
my $p   = unique('close');

for my $protocol (qw(text meta binary)) {
    my $k = "$p$protocol";
    my $m = Mcpool->new({ servers => [$srv], protocol => $protocol });
    ok($m->set($k, 'v'), "$protocol: set before close");
    $m->close;
    $m->close;
    is($m->get($k), undef, "$protocol: get after close is undef");
    like(Mcpool::last_error(), qr/the client is closed/, "$protocol: ... last_error says why");
    is($m->set($k, 'w'), undef, "$protocol: set after close fails");
    like(Mcpool::last_error(), qr/^set "\Q$k\E": the client is closed/, "$protocol: ... naming the key");
    my $h = $m->get_multi($k, "${k}x");
    is_deeply($h, {}, "$protocol: get_multi after close finds nothing");
    like(Mcpool::last_error(), qr/the client is closed/, "$protocol: ... last_error says why");
    my $other = Mcpool->new({ servers => [$srv], protocol => $protocol });
    is($other->get($k), 'v', "$protocol: the refused set sent nothing");
}

my $none = Mcpool->new({ servers => [] });
is(eval { $none->close; 1 }, 1, 'close on a client without servers');

done_testing;
