# on_server_event: the callback gets each server event on the Perl thread, after the call
# that saw it (never inside the core's call: the core queues events in C). A real memcached
# killed (down) and started again on its port (up).
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;

my $p = unique('ev');

ok(!eval { Mcpool->new({ servers => ['127.0.0.1:1'], on_server_event => 'notcode' }); 1 },
    'on_server_event must be a code reference');
like($@, qr/on_server_event/, '... the error names it');

{
    my $own = start_memcached();
    my (@seen, $inside);
    my $m;
    $m = Mcpool->new({
        servers         => [$own],
        max_failures    => 1,
        failure_timeout => 1,
        on_server_event => sub {
            my ($ev) = @_;
            push @seen, { %$ev };
            # a call from the callback works and is not re-entered
            $inside = $m->server_states;
        },
    });
    isa_ok($m, 'Mcpool');
    ok($m->set("${p}k", 'v'), 'set before the kill');
    is_deeply(\@seen, [], 'no event while the server answers');
    stop_memcached($own);
    ok(!defined $m->get("${p}k"), 'get after the kill: nothing');
    my @down = grep { $_->{kind} eq 'down' } @seen;
    is(scalar @down, 1, 'the down event reached the callback right after the call')
        or diag explain \@seen;
    is($down[0]{server}, $own, '... naming the server');
    cmp_ok($down[0]{failures}, '>=', 1, '... with its failures');
    is(ref $inside, 'ARRAY', '... and the callback could call the client');
    is_deeply([$m->server_events], [], 'server_events: nothing left, the callback had them');
    restart_memcached($own);
    my $up;
    for (1 .. 100) {    # the retry after failure_timeout (1 s); up to 10 s
        $m->set("${p}k", 'w');
        last if ($up) = grep { $_->{kind} eq 'up' } @seen;
        select undef, undef, undef, 0.1;
    }
    ok($up, 'the up event reached the callback once the server answered again')
        or diag explain \@seen;
    is($up && $up->{server}, $own, '... naming the server');
    is($m->get("${p}k"), 'w', 'and the server is used again');
    my $n = @seen;
    $m->get("${p}k") for 1 .. 5;
    is(scalar @seen, $n, 'no further events while it answers');
}

{
    # A callback that dies is warned about; the method's answer stands.
    my $own = start_memcached();
    my @warn;
    local $SIG{__WARN__} = sub { push @warn, @_ };
    my $m = Mcpool->new({ servers => [$own], max_failures => 1, failure_timeout => 60,
        on_server_event => sub { die "boom\n" } });
    stop_memcached($own);
    my @r = $m->get("${p}x");
    is_deeply(\@r, [], 'the call answers as without a callback');
    ok((grep { /on_server_event died: boom/ } @warn), '... and the death is a warning')
        or diag explain \@warn;
    # one line, as on_operation's: no " at FILE line N." after the die's own newline
    ok(!(grep { /boom\n./s } @warn), '... of one line') or diag explain \@warn;
}

{
    # Without a callback the object is a plain Mcpool: nothing wraps its calls.
    my $m = Mcpool->new({ servers => ['127.0.0.1:1'] });
    is(ref $m, 'Mcpool', 'no callback: a plain Mcpool');
}

done_testing;
