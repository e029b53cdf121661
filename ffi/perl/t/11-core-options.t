# What the core offers beyond Cache::Memcached::Fast, reached by name: the core's options
# forwarded as they are (every name of its table accepted, bad values refused naming the
# option), operation_timeout and protocol, set_multi with per-item expiry in one call,
# metrics, server states and events (a closed port, a killed memcached), leases on meta.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;
use IO::Socket::INET;

my $srv = start_memcached();
my $p = unique('co');

sub closed_port {
    my $s = IO::Socket::INET->new(Listen => 1, LocalAddr => '127.0.0.1', LocalPort => 0) or die $!;
    my $port = $s->sockport;
    close $s;
    return "127.0.0.1:$port";
}

# ----- the core's option table, by name -----
my @names = Mcpool::option_names();
ok(scalar(grep { $_ eq 'operation_timeout' } @names), 'option_names lists operation_timeout');
ok(scalar(grep { $_ eq 'tls_ca_file' } @names), '... and the TLS options');
like(Mcpool::option_doc('operation_timeout'), qr/\S/, 'option_doc describes it');
# Perl reads a duration's bare number as seconds: its doc says so (docwalk 1: it said ms).
like(Mcpool::option_doc('io_timeout'), qr/^duration, seconds for a number;/,
    'option_doc: a duration number is seconds, as Perl reads it');
unlike(Mcpool::option_doc('io_timeout'), qr/\bms\b/, 'option_doc: no ms unit');
# Whether the core speaks TLS, asked without trying an option (tester finding secure 3).
{
    my $tls = Mcpool::tls_supported();
    ok(defined $tls && ($tls eq '1' || $tls eq ''), 'tls_supported is a boolean');
    my $m = eval { Mcpool->new({ servers => ['127.0.0.1:1'], tls_insecure_skip_verify => 1 }) };
    if ($tls) { ok($m, '... and a TLS option is taken') or diag $@ }
    else      { like($@, qr/unsupported: TLS/, '... and without TLS, a TLS option is refused') }
}
ok(!defined Mcpool::option_doc('no_such_option'), 'option_doc of an unknown name: undef');
{
    # Every name of the core's table is an accepted argument (no "Unknown arguments"): a new
    # row of the table reaches Perl without a change here.
    my @w;
    local $SIG{__WARN__} = sub { push @w, @_ };
    my %skip = map { $_ => 1 } qw(servers preset);
    for my $name (grep { !$skip{$_} } @names) {
        eval { Mcpool->new({ servers => [$srv], $name => undef }) };
    }
    is_deeply(\@w, [], 'no name of the core table is an unknown argument') or diag explain \@w;
    @w = ();
    Mcpool->new({ servers => [$srv], io_timout => 1 });
    like("@w", qr/Unknown arguments: io_timout/, 'a misspelled name warns, as in Cache::Memcached::Fast');
}
{
    # A core option's name in another spelling is that option, as in Python and the C ABI
    # (the core's rule): not dropped with a warning.
    my @w;
    local $SIG{__WARN__} = sub { push @w, @_ };
    my $m = Mcpool->new({ servers => [$srv], 'Key-Prefix' => 'sp:', 'IO-TIMEOUT' => 2 });
    is_deeply(\@w, [], 'other spellings of core options are no unknown arguments') or diag explain \@w;
    ok($m->set("$p:spell", 'v'), '... and the client works');
    my $plain = Mcpool->new({ servers => [$srv] });
    is($plain->get("sp:$p:spell"), 'v', "... with 'Key-Prefix' the key prefix");
    ok(!eval { Mcpool->new({ servers => [$srv], 'key-prefix' => 'a', key_prefix => 'b' }); 1 },
        'two spellings of one option croak');
    like($@, qr/same option \(key_prefix\)/, '... naming it');
    my %conf = (servers => [$srv], 'Key-Prefix' => 'x');
    Mcpool->new(\%conf);
    ok(exists $conf{'Key-Prefix'}, "the caller's hash is left as given");
    # 'IO-TIMEOUT' is io_timeout with Cache::Memcached::Fast's meaning (seconds): a bad one
    # croaks as io_timeout does
    ok(!eval { Mcpool->new({ servers => [$srv], 'IO-TIMEOUT' => 'abc' }); 1 }, 'a bad IO-TIMEOUT croaks');
    like($@, qr/io_timeout must be a number/, '... as io_timeout');
}
ok(!eval { Mcpool->new({ servers => [$srv], protocol => 'smoke' }); 1 }, 'a bad value croaks');
like($@, qr/^Mcpool->new: protocol: .*protocol.*smoke/, '... naming the option and the value');
ok(!eval { Mcpool->new({ servers => [$srv], operation_timeout => 'soon' }); 1 }, 'a bad duration croaks');
like($@, qr/operation_timeout.*soon.*250ms/, '... with the accepted form');
ok(!eval { Mcpool->new({ servers => [$srv], preset => 'memcachedb' }); 1 }, 'an unknown preset croaks');
like($@, qr/^Mcpool->new: preset: /, '... naming it');
ok(!eval { Mcpool->new({ servers => [$srv], failover => [1] }); 1 }, 'a reference as a core option croaks');

# operation_timeout and protocol by name: the client works with them.
for my $proto (qw(text meta binary)) {
    my $m = Mcpool->new({ servers => [$srv], protocol => $proto, operation_timeout => '2s',
        io_timeout => '500ms', failover => 'fail-fast' });
    ok($m->set("${p}proto-$proto", $proto), "protocol $proto: set");
    is($m->get("${p}proto-$proto"), $proto, "protocol $proto: get");
}

# ----- set_multi: one call, each item its own expiry -----
{
    my $m = Mcpool->new({ servers => [$srv] });
    my @r = $m->set_multi(["${p}t0", 'never'], ["${p}t1", 'soon', 1], ["${p}t2", 'later', 100],
        ["${p}t3", 'gone', -1]);
    is_deeply(\@r, [1, 1, 1, 1], 'set_multi with four expiry times: all stored');
    ok(!defined $m->get("${p}t3"), 'a negative expiry: expired at once');
    my $gone = 0;
    for (1 .. 80) {    # up to 4 s
        last if $gone = !defined $m->get("${p}t1");
        select undef, undef, undef, 0.05;
    }
    ok($gone, 'the 1 s item expired');
    is($m->get("${p}t0"), 'never', '... the others did not');
    is($m->get("${p}t2"), 'later', '...');
}

# ----- metrics, server states, events: a closed port -----
{
    my $dead = closed_port();
    my $m = Mcpool->new({ servers => [$srv, $dead], connect_timeout => 0.5, max_failures => 1,
        failure_timeout => 60 });
    my $key;
    for my $i (0 .. 200) {
        next unless $m->server_for("${p}ev$i") eq $dead;
        $key = "${p}ev$i";
        last;
    }
    ok(defined $key, 'a key on the closed port');
    my $st = $m->server_states;
    is(scalar @$st, 2, 'server_states: one per server');
    is($st->[1]{server}, $dead, '... in configuration order');
    ok($st->[1]{alive}, '... alive before any call');
    ok(!defined $m->get($key), 'a read on the closed port: nothing');
    $st = $m->server_states;
    ok(!$st->[1]{alive}, 'marked dead after max_failures');
    cmp_ok($st->[1]{retry_in_ms}, '>', 0, '... with a retry delay');
    cmp_ok($st->[1]{retry_in_ms}, '<=', 60_000, '... of at most failure_timeout');
    ok($st->[0]{alive}, 'the live server stays alive');
    my @ev = $m->server_events;
    is(scalar @ev, 1, 'server_events: one event') or diag explain \@ev;
    is($ev[0]{kind}, 'down', '... down');
    is($ev[0]{server}, $dead, '... naming the server');
    cmp_ok($ev[0]{failures}, '>=', 1, '... with its failures');
    is_deeply([$m->server_events], [], 'the queue is emptied');
    my $mx = $m->metrics;
    is_deeply([sort keys %$mx], [sort $srv, $dead], 'metrics: one entry per server');
    cmp_ok($mx->{$dead}{connect_errors}, '>=', 1, '... connect errors counted');
    cmp_ok($mx->{$dead}{ejections}, '>=', 1, '... the ejection counted');
    my ($live) = grep { $m->server_for($_) eq $srv } map { "${p}live$_" } 0 .. 200;
    ok(defined $live, 'a key on the live server');
    ok($m->set($live, 1) && $m->get($live), 'the live server still works');
    $mx = $m->metrics;
    cmp_ok($mx->{$srv}{operations}, '>=', 2, '... its operations counted');
    cmp_ok($mx->{$srv}{hits}, '>=', 1, '... and its hits');
    # The same in the Prometheus text format (tester finding observe 5: C and the CLI only).
    my $text = $m->metrics_prometheus;
    like($text, qr/^# TYPE mcpool_hits_total counter$/m, 'metrics_prometheus: typed series');
    like($text, qr/^mcpool_hits_total\{server="\Q$srv\E"\} \d+$/m, '... one per server');
}

# ----- a killed memcached: errors, then the event -----
{
    my $own = start_memcached();
    my $m = Mcpool->new({ servers => [$own], max_failures => 1, failure_timeout => 60 });
    ok($m->set("${p}k", 'v'), 'set before the kill');
    stop_memcached($own);
    ok(!defined $m->get("${p}k"), 'get after the kill: nothing');
    ok(!defined $m->set("${p}k", 'w'), 'set after the kill: undef (an error, not false)');
    like($m->last_error, qr/\S/, '... last_error says why');
    my @ev = grep { $_->{kind} eq 'down' } $m->server_events;
    is(scalar @ev, 1, 'one down event');
}

# ----- leases (meta protocol) -----
{
    my $m = Mcpool->new({ servers => [$srv], protocol => 'meta' });
    my ($state, $value) = $m->get_lease("${p}lease", 30, 0);
    is($state, 'recompute', 'a missing key: this caller recomputes');
    ok(!defined $value, '... no value yet');
    ($state) = $m->get_lease("${p}lease", 30, 0);
    is($state, 'wait', 'the next caller waits');
    ok($m->set("${p}lease", 'fresh'), 'the value is stored');
    ($state, $value) = $m->get_lease("${p}lease", 30, 0);
    is_deeply([$state, $value], ['hit', 'fresh'], 'then a hit');
    ok($m->invalidate("${p}lease", 30), 'invalidate');
    ($state, $value) = $m->get_lease("${p}lease", 30, 0);
    is_deeply([$state, $value], ['recompute', 'fresh'], 'a stale value: recompute, with the stale value');
    # An empty value is a value: stale after invalidate, and the current one when a lease
    # with recache_below wins its recompute (an empty character string: flags of its own).
    ok($m->set("${p}empty", ''), 'an empty value');
    ok($m->invalidate("${p}empty", 30), '... invalidated');
    ($state, $value) = $m->get_lease("${p}empty", 30, 0);
    is_deeply([$state, $value], ['recompute', ''], '... its stale value is empty, not undef');
    my $u = Mcpool->new({ servers => [$srv], protocol => 'meta', utf8 => 1 });
    my $s = '';
    utf8::upgrade($s);
    ok($u->set("${p}empty-text", $s, 100), 'an empty character string, expiring in 100 s');
    ($state, $value) = $u->get_lease("${p}empty-text", 30, 200);
    is_deeply([$state, $value], ['recompute', ''], '... a lease with recache_below 200: its current value');
    is($u->get("${p}empty-text"), '', '... still a value for get');
    ok(!$m->invalidate("${p}nokey", 30) && defined $m->invalidate("${p}nokey", 30),
        'invalidate of a missing key: false, not an error');
    # The times may be omitted: the core's defaults, 30 s and 0 (tester finding retest33 9).
    is(($m->get_lease("${p}lease-default"))[0], 'recompute', 'get_lease with the key alone');
    is(($m->get_lease("${p}lease-default", undef, undef))[0], 'wait',
        '... the next caller waits (undef times: the defaults)');
    ok($m->set("${p}lease-default", 'v', 1000), '... stored, for 1000 s');
    ok($m->invalidate("${p}lease-default", undef), 'invalidate with the key alone (undef time)');
    my $ttl = ($m->meta_info("${p}lease-default") // {})->{ttl};
    ok(defined $ttl && $ttl > 0 && $ttl <= 30, "... stale for the default 30 s (" . ($ttl // 'undef') . ")");
    my $text = Mcpool->new({ servers => [$srv] });
    is_deeply([$text->get_lease("${p}lease", 30, 0)], [], 'leases need the meta protocol: nothing');
    like($text->last_error, qr/meta|unsupported/i, '... and last_error says so');
    my $r = $text->get_lease("${p}lease", 30, 0);
    ok(!defined $r, '... undef in scalar context');

    # The CAS: undef when no item is returned (a miss: never 0, which no item has; tester
    # finding perl2 5); the item's own on a hit, as gets gives it.
    my @l = $m->get_lease("${p}cas", 30, 0);
    is_deeply(\@l, [ 'recompute', undef, undef ], 'a miss: (recompute, undef, undef): no CAS');
    @l = $m->get_lease("${p}cas", 30, 0);
    is_deeply([ @l[0, 1] ], [ 'wait', undef ], 'then wait, no value');
    ok(!defined $l[2], '... and no CAS');
    ok($m->set("${p}cas", 'v1'), 'stored');
    my $g = $m->gets("${p}cas");
    @l = $m->get_lease("${p}cas", 30, 0);
    is_deeply(\@l, [ 'hit', 'v1', $g->[0] ], "a hit: the item's CAS, as gets gives it");
    ok($l[2] > 0, '... a CAS of its own');
    is($m->cas("${p}cas", $l[2], 'v2'), 1, '... which cas takes');

    # Scalar context: the same three as an array reference, as gets answers [cas, value]
    # (it was the list's last element, the CAS: tester finding perl2 2); with the callbacks'
    # wrapper too.
    my $hooked = Mcpool->new({ servers => [$srv], protocol => 'meta', on_operation => sub { } });
    for my $c ([ plain => $m ], [ hooked => $hooked ]) {
        my ($name, $mc) = @$c;
        my $one = $mc->get_lease("${p}cas", 30, 0);
        is(ref $one, 'ARRAY', "$name: scalar context: an array reference");
        is_deeply($one, [ 'hit', 'v2', $mc->gets("${p}cas")->[0] ], "$name: ... of (state, value, cas)");
        $one = $mc->get_lease("${p}cas-$name", 30, 0);
        is_deeply($one, [ 'recompute', undef, undef ], "$name: ... a miss: [recompute, undef, undef]");
        my @two = $mc->get_lease("${p}cas", 30, 0);
        is(scalar @two, 3, "$name: list context: still the list");
        my $none = $mc->get_lease("${p}cas", 'soon', 0);
        ok(!defined $none, "$name: an error: undef in scalar context");
    }
}

# ----- issue 21 item 3: long_keys => 'hash' stores a 400-byte key under Dalli's name -----
{
    use Digest::MD5 qw(md5_hex);
    # Dalli's KeyManager#truncated_key, recomputed: the first 249 - 37 (250 - 37 with a
    # namespace) characters, ':md5:', the hex MD5 of the whole (namespaced) key.
    my $dalli = sub {
        my ($key, $namespaced) = @_;
        my $d = md5_hex($key);
        return substr($key, 0, ($namespaced ? 250 : 249) - 37) . ":md5:$d";
    };
    my $raw_get = sub {
        my ($key) = @_;
        my $s = IO::Socket::INET->new(PeerAddr => $srv, Proto => 'tcp') or die $!;
        print $s "get $key\r\n";
        my $head = <$s>;
        return undef if $head eq "END\r\n";
        my ($len) = $head =~ /(\d+)\r\n\z/ or die "reply $head";
        read($s, my $v, $len) == $len or die 'short read';
        return $v;
    };
    my $key = $p . ('k' x (400 - length $p));
    for my $protocol (qw(text meta binary)) {
        my $m = Mcpool->new({ servers => [$srv], long_keys => 'hash', protocol => $protocol });
        ok($m->set($key, "long $protocol"), "long_keys hash: a 400-byte key is stored ($protocol)");
        is($m->get($key), "long $protocol", '... and read back');
        is($raw_get->($dalli->($key, 0)), "long $protocol", "... under Dalli's truncated name");
        my $ns = Mcpool->new({ servers => [$srv], long_keys => 'hash', namespace => 'ns:',
            protocol => $protocol });
        ok($ns->set($key, 'namespaced'), '... with a namespace too');
        is($raw_get->($dalli->("ns:$key", 1)), 'namespaced',
            "... under Dalli's name of the namespaced key (250 bytes)");
    }
    my $refuse = Mcpool->new({ servers => [$srv] });
    ok(!$refuse->set($key, 'v'), 'refusal stays the default');
}

# ----- issue 21 item 6: meta_info and set_with_version (meta protocol) -----
{
    my $m = Mcpool->new({ servers => [$srv], protocol => 'meta' });
    my $k = "${p}info";
    ok($m->set($k, 'twelve bytes', 100), 'set for meta_info');
    my $i = $m->meta_info($k);
    is(ref $i, 'HASH', 'meta_info: a hash reference');
    is($i->{hit_before}, 0, '... never read yet');
    is($i->{size}, 12, '... the stored size');
    ok($i->{ttl} > 90 && $i->{ttl} <= 100, "... the TTL left ($i->{ttl})");
    ok($i->{cas} > 0, '... a CAS');
    is($m->get($k), 'twelve bytes', 'read it');
    is($m->meta_info($k)->{hit_before}, 1, '... now hit before');
    $m->set("${p}forever", 'v');
    ok(!defined $m->meta_info("${p}forever")->{ttl}, 'no expiry: ttl undef');
    ok(!defined $m->meta_info("${p}absent"), 'a miss: undef');
    my @r = $m->set_with_version("${p}e", 'v', 12345);
    is_deeply(\@r, [], 'set_with_version on memcached < 1.6.27: nothing');
    like($m->last_error, qr/1\.6\.27.*reports version \d/, '... last_error names the versions');
    ok(!defined $m->get("${p}e"), '... and nothing was stored');
    my $text = Mcpool->new({ servers => [$srv] });
    is_deeply([$text->meta_info($k)], [], 'meta_info needs the meta protocol');
    # issue 21 item 4: the stale-after-return options by name
    for my $policy (qw(keep flush delete-written)) {
        my $f = Mcpool->new({ servers => [$srv], failover => 'eject', on_server_return => $policy,
            written_while_away_max => 50 });
        ok($f->set("${p}ret", 'v') && $f->get("${p}ret") eq 'v', "on_server_return => '$policy'");
    }
}

# libmemcached_config (a libmemcached memcached("...") string) by name: it names the servers,
# so servers may be left out (no server-less client then).
{
    my $s2 = start_memcached();
    my $ns = unique('lmcfg');
    my $m = Mcpool->new({ libmemcached_config => "--SERVER=$s2 --NAMESPACE=$ns" });
    ok($m->set('x', 'v'), 'libmemcached_config alone: a client of its servers');
    is(Mcpool->new({ servers => [$s2] })->get("${ns}x"), 'v', '... its namespace the key prefix');
    ok(!eval { Mcpool->new({ libmemcached_config => "--SERVER=$s2 --USE-UDP" }); 1 },
       'a refused word croaks');
    like($@, qr/USE-UDP/, '... naming it');
    # the string applies the libmemcached preset itself: no default preset is sent beside it,
    # and one given is refused by the core, naming both
    ok(!eval { Mcpool->new({ libmemcached_config => "--SERVER=$s2", preset => 'cache-memcached' }); 1 },
       'libmemcached_config with a preset given croaks');
    like($@, qr/preset "cache-memcached" and libmemcached_config .*give one/, '... naming both');
    # an empty or blank string is none, as the core reads it: the default preset stays
    # (tester finding retest37b 1: it was dropped, and a hashref went out in mcpool's format
    # where Cache::Memcached::Fast reads it)
    for my $blank ('', ' ') {
        my $m = Mcpool->new({ servers => [$s2], libmemcached_config => $blank });
        is($m->value_format, 'cache-memcached-fast', "libmemcached_config '$blank': the default preset");
    }
}

done_testing;
