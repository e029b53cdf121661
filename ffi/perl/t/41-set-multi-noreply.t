# set_multi_noreply (the core's mcpool_client_set_multi_noreply): the items are stored and
# readable, as set stores them, on every protocol; a refused key fails alone; an empty list is
# true; what it cannot store as set would (a reference, text, a second expiration time)
# croaks with nothing sent.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;
use IO::Socket::INET;

my $srv  = start_memcached();
my $srv2 = start_memcached();
my $p    = unique('nr');

my $latin = "caf\x{e9}";
utf8::upgrade($latin);
my @values = ([ s => 'hello' ], [ i => 42 ], [ f => 0.1 + 0.2 ], [ u => undef ],
    [ l => $latin ], [ b => "\xff\x00" ], [ z => 'abcdefgh' x 4000 ]);

my $n = 0;
for my $protocol (qw(text meta binary)) {
    $n++;
    my $m = Mcpool->new({ servers => [$srv], protocol => $protocol });
    my ($b, $s) = ("${p}$n-b-", "${p}$n-s-");
    is($m->set_multi_noreply(map { [ $b . $_->[0], $_->[1] ] } @values), 1,
        "$protocol: set_multi_noreply is true");
    is(Mcpool::last_error(), '', "$protocol: ... last_error empty");
    ok($m->set($s . $_->[0], $_->[1]), "$protocol: set $_->[0]") for @values;
    my $raw = raw_get_multi($srv, map { ($b . $_->[0], $s . $_->[0]) } @values);
    for (@values) {
        my $k = $_->[0];
        ok($raw->{ $b . $k }, "$protocol: $k stored");
        is_deeply($raw->{ $b . $k }, $raw->{ $s . $k }, "$protocol: $k: the flags and bytes set stores");
    }
    my $got = $m->get_multi(map { $b . $_->[0] } @values);
    is($got->{"${b}s"}, 'hello', "$protocol: readable");
    is($got->{"${b}i"}, 42, "$protocol: the integer reads back");
    is(scalar keys %$got, scalar @values, "$protocol: every item readable");

    # a refused key (too long on every protocol; meta carries a space in base64) fails alone:
    # the call is false, last_error names it, the others stored
    my @r = $m->set_multi_noreply([ "${b}ok1", 'a' ], [ "${b}" . ('x' x 251), 'b' ],
        [ "${b}ok2", 'c' ]);
    is_deeply(\@r, [], "$protocol: a refused key: nothing (false)");
    like(Mcpool::last_error(), qr/^set_multi_noreply: invalid key "<\d+ bytes>" \(key number 1\): key is longer than 250 bytes/,
        "$protocol: ... last_error names it");
    is_deeply($m->get_multi("${b}ok1", "${b}ok2"), { "${b}ok1" => 'a', "${b}ok2" => 'c' },
        "$protocol: ... the others are stored");

    if ($protocol eq 'text') {    # a key text cannot carry
        @r = $m->set_multi_noreply([ "${b}ok3", 'a' ], [ "${b}bad key", 'b' ], [ "${b}ok4", 'c' ]);
        is_deeply(\@r, [], "$protocol: a key with a space: nothing (false)");
        like(Mcpool::last_error(), qr/set_multi_noreply: invalid key "\Q${b}\Ebad key"/,
            "$protocol: ... last_error names it");
        is_deeply($m->get_multi("${b}ok3", "${b}ok4"), { "${b}ok3" => 'a', "${b}ok4" => 'c' },
            "$protocol: ... the others are stored");
    }

    # one expiration time for the batch: given by the items, negative expires at once
    ok($m->set_multi_noreply([ "${b}t1", 'x', 300 ], [ "${b}t2", 'y', 300 ]),
        "$protocol: with an expiration time");
    is_deeply($m->get_multi("${b}t1", "${b}t2"), { "${b}t1" => 'x', "${b}t2" => 'y' },
        "$protocol: ... stored");
    ok($m->set_multi_noreply([ "${b}t1", 'x', -1 ], [ "${b}t2", 'y', -1 ]),
        "$protocol: a negative time");
    is_deeply($m->get_multi("${b}t1", "${b}t2"), {}, "$protocol: ... expired at once");

    ok($m->set_multi_noreply, "$protocol: an empty list is true");
}

# Keys on two servers: every server's keys stored.
{
    my $m = Mcpool->new({ servers => [ $srv, $srv2 ] });
    my @keys = map { "${p}two-$_" } 1 .. 40;
    ok($m->set_multi_noreply(map { [ $_, "v$_" ] } @keys), 'two servers: true');
    is_deeply($m->get_multi(@keys), { map { ($_ => "v$_") } @keys }, 'two servers: all stored');
    my %on = map { ($m->server_for($_) => 1) } @keys;
    is(scalar keys %on, 2, 'two servers: the keys were on both');
}

# A server that is down: its keys fail, the live server's are stored.
{
    my $down = start_memcached();
    stop_memcached($down);
    my $m = Mcpool->new({ servers => [ $srv, $down ] });
    my @keys = map { "${p}down-$_" } 1 .. 40;
    my @live = grep { $m->server_for($_) eq $srv } @keys;
    ok(@live && @live < @keys, 'a dead server: keys on both');
    my @r = $m->set_multi_noreply(map { [ $_, "v$_" ] } @keys);
    is_deeply(\@r, [], 'a dead server: nothing (false)');
    like(Mcpool::last_error(), qr/\Q$down\E/, '... last_error names it');
    is_deeply(Mcpool->new({ servers => [$srv] })->get_multi(@live), { map { ($_ => "v$_") } @live },
        "... the live server's keys are stored");
}

# With fail_open (tester finding perl2 1): the core answers an outage as no failure, on
# purpose, so the call returns 1 and last_error stays empty although the dead server's items
# were not stored; they are counted in its fail_open_not_stored, and set_multi says '' for
# each. Other failures (a refused key) still return nothing. The POD says what 1 means with
# and without fail_open.
{
    my $down = start_memcached();
    stop_memcached($down);
    for my $protocol (qw(text meta binary)) {
        my $m = Mcpool->new({ servers => [ $srv, $down ], fail_open => 1, protocol => $protocol });
        my @keys = map { "${p}fo-$protocol-$_" } 1 .. 40;
        my @live = grep { $m->server_for($_) eq $srv } @keys;
        my @dead = grep { $m->server_for($_) eq $down } @keys;
        ok(@live && @dead, "fail_open $protocol: keys on both servers");
        my $before = $m->metrics->{$down}{fail_open_not_stored} // 0;
        my @r = $m->set_multi_noreply(map { [ $_, "v$_" ] } @keys);
        is_deeply(\@r, [1], "fail_open $protocol: 1 although the dead server's items were lost");
        is(Mcpool::last_error(), '', "fail_open $protocol: ... last_error empty");
        is($m->metrics->{$down}{fail_open_not_stored} - $before, scalar @dead,
            "fail_open $protocol: ... each lost item counted in fail_open_not_stored");
        is_deeply(Mcpool->new({ servers => [$srv] })->get_multi(@keys),
            { map { ($_ => "v$_") } @live }, "fail_open $protocol: ... only the live server's stored");
        is_deeply([ $m->set_multi(map { [ $_, 'w' ] } @dead) ], [ ('') x @dead ],
            "fail_open $protocol: set_multi says not stored ('') for each");
        @r = $m->set_multi_noreply([ $live[0], 'a' ], [ 'x' x 300, 'b' ]);
        is_deeply(\@r, [], "fail_open $protocol: a refused key still returns nothing");
        like(Mcpool::last_error(), qr/invalid key/, "fail_open $protocol: ... last_error says why");
    }
    # without fail_open the same outage returns nothing (tested above), and the POD tells the two apart
    my $pm = do { local (@ARGV, $/) = $INC{'Mcpool.pm'}; <> };
    my ($pod) = $pm =~ /^(=item set_multi_noreply \(.*?)^=item get \(\$key\)/ms;
    ok(defined $pod, 'the POD has set_multi_noreply');
    like($pod // '', qr/with C<< fail_open =E<gt> 1 >>/, '... says what it returns with fail_open');
    like($pod // '', qr/B<not stored>/, '... that 1 may mean items were not stored');
    like($pod // '', qr/fail_open_not_stored/, '... and where they are counted');
}

# What it cannot store as set would croaks, nothing sent.
{
    my $m  = Mcpool->new({ servers => [$srv] });
    my $k  = "${p}none";
    my $ok = eval { $m->set_multi_noreply([ $k, 'a' ], [ "${k}2", [ 1, 2 ] ]); 1 };
    ok(!$ok, 'a reference croaks');
    like($@, qr/^Mcpool::set_multi_noreply: the value of "\Q${k}2\E" is a reference \(serialized\).*store it with set_multi/,
        '... saying why');
    is($m->get($k), undef, '... nothing sent');

    my $u = Mcpool->new({ servers => [$srv], utf8 => 1 });
    ok(!eval { $u->set_multi_noreply([ $k, "\x{263a}" ]); 1 }, 'a character string with utf8 => 1 croaks');
    like($@, qr/is a character string \(utf8 => 1: UTF-8 text\)/, '... saying why');

    my $mc = Mcpool->new({ servers => [$srv], value_format => 'mcpool' });
    ok(!eval { $mc->set_multi_noreply([ $k, 'a' ], [ "${k}2", 7 ]); 1 },
        'an integer under the mcpool format croaks');
    like($@, qr/is an integer/, '... saying why');
    ok($mc->set_multi_noreply([ $k, 'a' ], [ "${k}2", 1.5 ]), '... a string and a float are bytes there');
    is_deeply(raw_get_multi($srv, "${k}2")->{"${k}2"}, [ 0, '1.5' ], '... stored under flags 0');

    ok(!eval { $m->set_multi_noreply([ "${k}3", 'a', 60 ], [ "${k}4", 'b' ]); 1 },
        'two expiration times croak');
    like($@, qr/one expiration time for the batch.*item 1 has 0 s, item 0 60 s/, '... saying why');
    is($m->get("${k}3"), undef, '... nothing sent');

    my @r = $m->set_multi_noreply([ "${k}5", 'a', '5m' ]);
    is_deeply(\@r, [], 'a time that is not a number: nothing');
    like(Mcpool::last_error(), qr/set_multi_noreply "\Q${k}5\E": invalid expiration time: "5m"/,
        '... last_error names it');
    @r = $m->set_multi_noreply([ "${k}5", 'a', 2**32 ]);
    is_deeply(\@r, [], 'a time the core refuses: nothing');
    like(Mcpool::last_error(), qr/4294967296/, '... last_error names it as given');
    is($m->get("${k}5"), undef, '... nothing sent');

    ok(!eval { $m->set_multi_noreply('k'); 1 }, 'not an array reference croaks');
    ok(!eval { $m->set_multi_noreply(['k']); 1 }, 'an item without a value croaks');
    like($@, qr/^Usage: \$memd->set_multi_noreply/, '... with the usage');

    # a format whose bytes have flags of their own: stored as set stores them (tester
    # finding bindbatch 2: it croaked, saying noreply stores flags 0)
    for my $fmt (qw(whalin spymemcached)) {
        my $w = Mcpool->new({ servers => [$srv], value_format => $fmt });
        ok($w->set_multi_noreply([ "${k}$fmt", 'ab' ]), "$fmt: stored");
        ok($w->set("${k}${fmt}s", 'ab'), "$fmt: set");
        my $raw = raw_get_multi($srv, "${k}$fmt", "${k}${fmt}s");
        ok($raw->{"${k}$fmt"}[0] != 0, "$fmt: under the format's bytes flags");
        is_deeply($raw->{"${k}$fmt"}, $raw->{"${k}${fmt}s"}, "$fmt: as set stores it");
        is($w->get("${k}$fmt"), 'ab', "$fmt: read back");
    }
}

# A read-only client sends nothing.
{
    my $ro = Mcpool->new({ servers => [$srv], readonly => 1 });
    is($ro->set_multi_noreply([ "${p}ro", 'a' ]), 0, 'readonly: 0');
    like(Mcpool::last_error(), qr/read-only/, 'readonly: last_error says why');
    is(Mcpool->new({ servers => [$srv] })->get("${p}ro"), undef, 'readonly: nothing stored');
}

done_testing();
