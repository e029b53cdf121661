# last_error's rule (POD "last_error"): after a call, it is that call's failure or nothing.
# Steps of the binding's own that may fail (asking the value format which kinds it has, an
# integer stored as text under a format without integers) leave nothing behind; nor do the
# calls an on_operation callback makes after the user's call.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;

my $srv = start_memcached();
my $p = unique('le');

sub lasterr { return Mcpool::last_error() }

my $m = Mcpool->new({ servers => [$srv] });
is(lasterr(), '', 'after new: nothing (not the value format probe)');
Mcpool->new({ servers => [$srv], value_format => 'mcpool' });
is(lasterr(), '', '... nor under the mcpool value format');

ok($m->set("${p}int", 42), 'an integer stored (as text, the default format has no integer)');
is(lasterr(), '', '... leaves nothing behind');
my @r = $m->set_multi([ "${p}i1", 1 ], [ "${p}i2", 2 ]);
is_deeply(\@r, [ 1, 1 ], 'set_multi of integers');
is(lasterr(), '', '... leaves nothing behind');
ok($m->add("${p}int", 43) eq '', 'add of an existing key: not stored (an answer)');
is(lasterr(), '', '... an answer, not an error: nothing');

ok(!defined $m->set("${p}a b", 1), 'a key with a space: nothing returned');
like(lasterr(), qr/a b/, '... last_error names the key');
my $failed = lasterr();
is_deeply([ $m->server_labels ], [$srv], 'server_labels (cannot fail) between the two');
$m->metrics;
$m->server_states;
$m->server_for("${p}x");
is(lasterr(), $failed, '... leave the failure in place');
is($m->get("${p}int"), 42, 'the next call succeeds');
is(lasterr(), '', '... and last_error is empty again');

ok(!defined $m->get("${p}a b"), 'a failed get');
ok(!defined $m->get("${p}missing"), 'then a miss');
is(lasterr(), '', '... a miss is an answer: nothing');

ok(!defined $m->get("${p}a b"), 'a failed get');
$m->namespace("${p}ns:");
is(lasterr(), '', 'namespace($new) clears it');
$m->namespace('');
ok(!defined $m->get("${p}a b"), 'a failed get');
$m->set_servers([$srv]);
is(lasterr(), '', 'set_servers clears it');
ok(!defined $m->get("${p}a b"), 'a failed get');
is(ref $m->flush_all, 'HASH', 'flush_all');
is(lasterr(), '', '... clears it');

{    # per thread, not per object: another client's success clears it too
    my $dead = Mcpool->new({ servers => ['127.0.0.1:1'], connect_timeout => 0.2 });
    ok(!defined $dead->get("${p}k"), 'a get from a server that is not there');
    like(lasterr(), qr/127\.0\.0\.1:1/, '... names the server');
    ok($m->set("${p}k", 'v'), 'a set on another client');
    is(lasterr(), '', '... clears it');
}

{    # the callbacks run after the call; what they do does not change its last_error
    my $cb_calls = 0;
    my $h;
    $h = Mcpool->new({
        servers      => [$srv],
        on_operation => sub {
            $cb_calls++;
            $h->get("${p}cb key") if $h;    # fails (a space), and its own records are dropped
        },
    });
    is(lasterr(), '', 'new with on_operation: nothing');
    ok($h->set("${p}h", 'v'), 'a set whose callback makes a failing call');
    ok($cb_calls, '... the callback ran');
    is(lasterr(), '', '... last_error is the set\'s: nothing');
    ok(!defined $h->get("${p}h x"), 'a failed get whose callback makes another failing call');
    like(lasterr(), qr/h x/, '... last_error is the get\'s own failure');
    undef $h;
}

{    # set_multi: the first failed item's message, and nothing when all are stored
    my @r = $m->set_multi([ "${p}ok", 1 ], [ "${p}bad key", 2 ]);
    ok($r[0] && !defined $r[1], 'set_multi with one bad key');
    like(lasterr(), qr/bad key/, '... names it');
    @r = $m->set_multi([ "${p}ok", 'a' ], [ "${p}ok2", 'b' ]);
    is(lasterr(), '', '... the next set_multi, all stored: nothing');
}

{    # the multi-key and whole-server calls: the first failure, or nothing
    my $two = Mcpool->new({ servers => [ $srv, '127.0.0.1:1' ], connect_timeout => 0.2 });
    my @k = map { "${p}mk$_" } 1 .. 10;
    my $h = $two->get_multi(@k);
    like(lasterr(), qr/127\.0\.0\.1:1/, 'get_multi with a server down: its failure');
    $m->get_multi(@k);
    is(lasterr(), '', '... then a get_multi that reached every server: nothing');
    $two->server_versions;
    like(lasterr(), qr/version: .*127\.0\.0\.1:1/, 'server_versions: the server that did not answer');
    $m->server_versions;
    is(lasterr(), '', '... then one where all answered: nothing');
    $two->incr_multi(@k);
    like(lasterr(), qr/incr_multi .*127\.0\.0\.1:1/, 'incr_multi: the failed item');
    $two->disconnect_all;
    is(lasterr(), '', 'disconnect_all: nothing');
}

{    # the message names the call made (`set "k": ...`), as the POD's own example
    # (`get "user:1": ...`), never the C function under it (store_kind, get_into, ...); a
    # refused key is named once (`set: invalid key "k": ...`, the core's form since 00a7f4d),
    # and a one-key get_multi, read with get, still names get_multi
    my $bad = "${p}n m";
    my @calls = (
        [ set       => sub { $m->set($bad, 1) } ],
        [ add       => sub { $m->add($bad, 1) } ],
        [ replace   => sub { $m->replace($bad, 1) } ],
        [ cas       => sub { $m->cas($bad, 7, 1) } ],
        [ get       => sub { $m->get($bad) } ],
        [ gets      => sub { $m->gets($bad) } ],
        [ get_multi => sub { $m->get_multi($bad) } ],
        [ get_multi => sub { $m->get_multi($bad, "${p}ok") } ],
        [ gets_multi => sub { $m->gets_multi($bad) } ],
    );
    for my $c (@calls) {
        my ($name, $call) = @$c;
        $call->();
        like(lasterr(), qr/^\Q$name: invalid key "$bad": \E/, "$name: last_error names $name: " . lasterr());
        unlike(lasterr(), qr/store_kind|_into/, "... not a C function");
    }
}

done_testing;
