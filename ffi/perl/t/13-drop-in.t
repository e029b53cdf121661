# Cache::Memcached::Fast drop-in behaviour an independent tester found missing (2026-12-02),
# against real memcached:
#   a server that failed is used again at once (max_failures' default 0: never marked dead);
#   a value that compresses below max_size is stored (max_size counts the bytes sent);
#   an append to a compressed value reads as an error (a warning, no value), never as the
#   value without what was appended;
#   an empty key under a namespace is the namespace itself (CHI's drivers always have one);
#   an on_operation callback that uses the client is not re-entered by its own calls;
#   an integer above 2**63-1 is stored as its text under the default format;
#   get_multi warns once for each key it leaves out (an unreadable value), naming it;
#   a subclass of Mcpool gets its callbacks called, and keeps its own methods;
#   a Latin-1 namespace is its bytes, as Cache::Memcached::Fast sends it (was: new croaked);
#   flush_all says which servers were flushed (was: every one undef when one failed);
#   set_multi of integers is one pipelined call (was: one exchange per integer).
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;
use IO::Socket::INET;
use Cache::Memcached::Fast;

my $srv = start_memcached();
my $p = unique('dropin');

{    # max_failures 0 (the default): a restarted server serves the very next call
    my $own = start_memcached();
    my $m = Mcpool->new({ servers => [$own], connect_timeout => 0.2, io_timeout => 0.5 });
    ok($m->set("${p}a", 1), 'set before the stop');
    stop_memcached($own);
    my @w;
    {
        local $SIG{__WARN__} = sub { push @w, @_ };
        ok(!$m->set("${p}a", 2), "... a set fails while it is down ($_)") for 1 .. 3;
    }
    restart_memcached($own);
    ok($m->set("${p}a", 3), 'the first set after the restart is stored (never marked dead)');
    is($m->get("${p}a"), 3, '... and read');
    my $limited = Mcpool->new({ servers => [$own], max_failures => 1, failure_timeout => 60 });
    stop_memcached($own);
    {
        local $SIG{__WARN__} = sub { };
        $limited->set("${p}a", 4) for 1 .. 2;
    }
    restart_memcached($own);
    ok(!$limited->set("${p}a", 5), 'max_failures 1 still marks it dead for failure_timeout');
    stop_memcached($own);
}

{    # max_size counts the bytes sent, after compression
    my $m = Mcpool->new({ servers => [$srv], compress_threshold => 1000 });
    my $big = 'x' x 2_000_000;
    ok($m->set("${p}big", $big), 'a 2 MB value that compresses to a few KB is stored');
    is(length($m->get("${p}big") // ''), 2_000_000, '... and read whole');
    my $noise = join '', map { chr(int(rand(256))) } 1 .. 1_100_000;
    ok(!$m->set("${p}noise", $noise), 'one that does not compress below max_size is refused');
}

{    # append or prepend to a compressed value
    my $m = Mcpool->new({ servers => [$srv], compress_threshold => 100 });
    for my $op (qw(append prepend)) {
        my $k = "${p}c$op";
        ok($m->set($k, 'y' x 200), "$op: set a compressed value");
        ok($m->$op($k, 'more'), "... $op");
        my @w;
        my $got = do { local $SIG{__WARN__} = sub { push @w, @_ }; $m->get($k) };
        ok(!defined $got, '... get returns no value, not the old one without the addition');
        like("@w", qr/more bytes|cannot decompress/, '... and warns why');
    }
}

{    # an empty key under a namespace
    my $ns = unique('ns');
    my $m = Mcpool->new({ servers => [$srv], namespace => $ns });
    ok($m->set('', 'empty'), 'set of an empty key under a namespace');
    is($m->get(''), 'empty', '... read back');
    is(Mcpool->new({ servers => [$srv] })->get($ns), 'empty', '... stored under the namespace');
    my @w;
    my $plain = Mcpool->new({ servers => [$srv] });
    local $SIG{__WARN__} = sub { push @w, @_ };
    ok(!$plain->set('', 'x'), 'without a namespace an empty key is still refused');
}

{    # an on_operation callback that uses the client
    my ($calls, $depth, $max) = (0, 0, 0);
    my $m;
    $m = Mcpool->new({ servers => [$srv], on_operation => sub {
        $calls++;
        $depth++;
        $max = $depth if $depth > $max;
        $m->incr("${p}ops") if $depth < 50;    # bounded, should the guard fail
        $depth--;
    } });
    $m->set("${p}ops", 0);
    $calls = 0;
    ok($m->set("${p}k", 'v'), 'a call with a callback that uses the client');
    is($max, 1, '... the callback is not re-entered');
    is($calls, 1, '... and sees this call, not its own');
    is($m->get("${p}ops"), 2, "... whose own calls were made (the set's, and the get's)") ;
}

{    # get_multi warns once per key it leaves out, naming each
    my $m = Mcpool->new({ servers => [$srv] });
    my $s = IO::Socket::INET->new(PeerAddr => $srv, Timeout => 5) or die "connect: $!";
    for my $k ("${p}bad1", "${p}bad2") {    # flag 2 (gzip) on bytes that are not gzip
        print $s "set $k 2 0 7\r\ngarbage\r\n";
        my $line = <$s>;
    }
    ok($m->set("${p}good", 'fine'), 'a readable value beside them');
    my @w;
    my $h = do {
        local $SIG{__WARN__} = sub { push @w, @_ };
        $m->get_multi("${p}bad1", "${p}good", "${p}bad2");
    };
    is_deeply($h, { "${p}good" => 'fine' }, 'get_multi leaves both unreadable keys out');
    is(scalar(@w), 2, '... with one warning each');
    like($w[0], qr/\Q${p}bad1\E.*MCPOOL_DECOMPRESS/, '... the first naming its key');
    like($w[1], qr/\Q${p}bad2\E.*MCPOOL_DECOMPRESS/, '... the second naming its key');
}

{    # integers above 2**63-1 under the default format: stored as their text, as CMF does
    my $m = Mcpool->new({ servers => [$srv] });
    for my $n (18446744073709551615, 9223372036854775808, -9223372036854775808, 42) {
        ok($m->set("${p}uv", $n), "set of $n");
        is($m->get("${p}uv"), "$n", '... read back as its text');
    }
    # under mcpool a UV above 2**63-1 is the core's int (memcached's counter range, as
    # digits): a counter incr counts on
    my $typed = Mcpool->new({ servers => [$srv], value_format => 'mcpool' });
    ok($typed->set("${p}uv2", 9223372036854775808), 'under mcpool a UV above 2**63-1 is stored');
    is($typed->incr("${p}uv2", 1), '9223372036854775809', '... as a counter incr counts on');
}

{    # a subclass with callbacks
    package My::Cache;
    our @ISA = ('Mcpool');
    sub greeting { 'hello' }
    sub get { my $self = shift; my $v = $self->SUPER::get(@_); defined $v ? "got:$v" : undef }
    package main;
    my @seen;
    my $m = My::Cache->new({ servers => [$srv], on_operation => sub { push @seen, $_[0]{op} } });
    isa_ok($m, 'My::Cache');
    is($m->greeting, 'hello', "the subclass's own method");
    ok($m->set("${p}sub", 'v'), 'set');
    is($m->get("${p}sub"), 'got:v', "its override of get");
    ok(scalar(@seen) >= 1, "on_operation is called for a subclass's calls (@seen)");
}

{    # set_multi of integers under the default format (no int kind: stored as their text)
    my $ops = 0;
    my $m = Mcpool->new({ servers => [$srv], on_operation => sub { $ops++ } });
    my @r = $m->set_multi(map { [ "${p}int$_", $_ ] } 1 .. 50);
    is(scalar(grep { $_ } @r), 50, 'set_multi of 50 integers: all stored');
    cmp_ok($ops, '<=', 2, "... in at most 2 exchanges (was one per integer: $ops)");
    $ops = 0;
    $m->set_multi(map { [ "${p}int$_", $_ * 2 ] } 1 .. 50);
    is($ops, 1, '... and the next set_multi of integers in one');
    my $cmf = Cache::Memcached::Fast->new({ servers => [$srv] });
    is_deeply([ map { $cmf->get("${p}int$_") } 1, 25, 50 ], [ 2, 50, 100 ],
        '... as their text, read by Cache::Memcached::Fast');
}

{    # a server given with Cache::Memcached::Fast's noreply flag: void-context commands complete
    my @w;
    local $SIG{__WARN__} = sub { push @w, @_ };
    my $m = Mcpool->new({ servers => [ { address => $srv, noreply => 1 } ] });
    $m->set("${p}nr", 'v');
    $m->incr("${p}nr");
    $m->delete("${p}nr2");
    is($m->get("${p}nr"), 'v', 'noreply server: a void set is there at once');
    is("@w", '', '... without a warning');
}

{    # flush_all with a server down: the live one was flushed and says so
    my $live = start_memcached();
    my $m = Mcpool->new({ servers => [ $live, '127.0.0.1:1' ], connect_timeout => 0.2 });
    my $direct = Mcpool->new({ servers => [$live] });
    ok($direct->set("${p}fl", 'v'), 'a value on the live server');
    my $r = $m->flush_all;
    is_deeply($r, { $live => 1, '127.0.0.1:1' => undef },
        'flush_all: 1 for the server flushed, undef for the one down (was undef for both)');
    like(Mcpool::last_error(), qr/127\.0\.0\.1:1/, '... last_error names the one that failed');
    ok(!defined $direct->get("${p}fl"), '... and the live server was flushed');
    stop_memcached($live);
}

{    # a namespace of Latin-1 bytes (a source without `use utf8`): its bytes, as CMF sends them
    my $ns = "caf\x{e9}-${p}:";
    my $m = Mcpool->new({ servers => [$srv], namespace => $ns });
    ok($m->set('l1', 'latin'), 'a Latin-1 namespace: new and set work');
    my $cmf = Cache::Memcached::Fast->new({ servers => [$srv], namespace => $ns });
    is($cmf->get('l1'), 'latin', '... under the same key as Cache::Memcached::Fast');
    ok($cmf->set('l2', 'from cmf'), '... and the other way');
    is($m->get('l2'), 'from cmf', '... read');
    my $other = "\x{e9}t\x{e9}-${p}:";
    $m->namespace($other);
    ok($m->set('l3', 'switched'), 'namespace($latin1) at run time');
    is(Cache::Memcached::Fast->new({ servers => [$srv], namespace => $other })->get('l3'),
        'switched', '... the same key as Cache::Memcached::Fast');
    my $kp = Mcpool->new({ servers => [$srv], key_prefix => "kp-${p}:" });
    ok($kp->set('z', 1), "the core's key_prefix by name still applies without a namespace");
    is(Mcpool->new({ servers => [$srv] })->get("kp-${p}:z"), 1, '... under it');
}

done_testing;
