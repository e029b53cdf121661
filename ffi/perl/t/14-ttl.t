# Expiration times memcached cannot honour: it reads a text or meta expiry as a signed 32-bit
# number, so one above 2**31-1 would expire the item at once while the store answers true.
# The core refuses it before the store is sent: the call returns nothing (undef), last_error
# says why, on every protocol. A set so refused (set, set_bytes, set_counter, set_multi,
# set_multi_noreply) deletes the key, as one refused as too large does (the core's rule,
# through mcpool_client_store_expiry_checked or the batch itself), and last_error says so:
# the clients mcpool replaces send such a set and memcached stores it already expired, so no
# older value is left to read (tester finding ttl 1). add, replace, cas, touch and gat leave
# the old value. A negative time still expires the key at once, as with
# Cache::Memcached::Fast.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;

my $srv = start_memcached();
for my $protocol (qw(text meta binary)) {
    my $m = Mcpool->new({ servers => [$srv], protocol => $protocol, namespace => "ttl-$protocol:" });
    ok($m->set('max', 'v', 2**31 - 1), "$protocol: an expiration time of 2**31-1 stores");
    is($m->get('max'), 'v', '... and reads back');
    ok($m->touch('max', 2**31 - 1), '... touch with it too');
    is($m->get('max'), 'v', '... still there');
    # 18446744073709551615 (a UV above IV_MAX) and 1e30 (a float) are too large, not
    # negative: an IV would read them as negative numbers.
    for my $big (2**31, 2**32 - 1, 2**32, 2**40, 18446744073709551615, 1e30, '18446744073709551615') {
        my $cas;
        # the sets, whose refusal deletes the key
        my %sets = map { $_ => 1 } qw(set set_bytes set_counter set_multi set_multi_noreply);
        my %calls = (
            set          => sub { $m->set('k', 'new', $big) },
            set_bytes    => sub { $m->set_bytes('k', 'new', 0, $big) },
            set_counter  => sub { $m->set_counter('k', 7, $big) },
            add          => sub { $m->add('fresh', 'new', $big) },
            replace      => sub { $m->replace('k', 'new', $big) },
            cas          => sub { $m->cas('k', $cas, 'new', $big) },
            cas_result   => sub { $m->cas_result('k', $cas, 'new', $big) },
            touch        => sub { $m->touch('k', $big) },
            gat          => sub { $m->gat($big, 'k') },
            'set_multi'  => sub { ($m->set_multi(['k', 'new', $big]))[0] },
            'add_multi'  => sub { ($m->add_multi(['fresh', 'new', $big]))[0] },
            'replace_multi' => sub { ($m->replace_multi(['k', 'new', $big]))[0] },
            'cas_multi'  => sub { ($m->cas_multi(['k', $cas, 'new', $big]))[0] },
            'set_multi_noreply' => sub { $m->set_multi_noreply(['k', 'new', $big]) },
            'touch_multi' => sub { ($m->touch_multi(['k', $big]))[0] },
            'gat_multi'  => sub { my $h = $m->gat_multi($big, 'k'); $h && $h->{k} },
        );
        for my $name (sort keys %calls) {
            ok($m->set('k', 'old'), "$protocol: the old value ($name, $big)");
            $cas = $m->gets('k')->[0];
            my $r = $calls{$name}->();
            my $err = $m->last_error;
            ok(!defined $r, "$protocol: $name with $big returns nothing");
            like($err, qr/is above 2147483647/, '... last_error says why')
                unless $name eq 'gat_multi';
            # ... naming the number given, not the 4294967295 it was saturated to before
            # (one a Perl IV holds; a UV above IV_MAX is named as IV_MAX)
            like($err, qr/invalid ttl: \Q$big\E is above 2147483647/, "... naming $big")
                if $big < 2**63 && $name ne 'gat_multi';
            unlike($err, qr/4294967295/, '... not 4294967295')
                if $big != 2**32 - 1 && $name ne 'gat_multi';
            if ($sets{$name}) {
                ok(!defined $m->get('k'), "$protocol: $name with $big: the key was deleted (no older value)");
                like($err, qr/; nothing was stored and the key was deleted, as memcached deletes it when it refuses a set$/,
                     '... and last_error says so')
                    or diag $err;
            } else {
                is($m->get('k'), 'old', "$protocol: $name with $big: the old value is intact");
                unlike($err, qr/deleted/, '... and last_error says nothing was deleted')
                    unless $name eq 'gat_multi';
            }
            ok(!defined $m->get('fresh'), '... and nothing was created');
        }
        # set_multi_noreply refused: every item's key deleted, as the core's own refusal
        ok($m->set('k', 'old') && $m->set('k2', 'old2'), "$protocol: two old values");
        ok(!defined $m->set_multi_noreply(['k', 'new', $big], ['k2', 'new', $big]),
           "$protocol: set_multi_noreply of both with $big returns nothing");
        ok(!defined $m->get('k') && !defined $m->get('k2'), '... and deletes both keys');
        ok($m->set('k', 'old'), 'the old value again');
        # refused as a whole, nothing sent, as a delay that is not a number (the core's
        # flush_all_each refuses it before any server: tester finding cteam2 4)
        ok(!eval { $m->flush_all($big); 1 }, "$protocol: flush_all($big) croaks");
        like($@, qr/invalid delay/, '... naming the delay');
        is($m->get('k'), 'old', "$protocol, $big: nothing was sent, the old value is there");
        ok(!defined $m->get('fresh'), '... and nothing was created');
    }
    ok($m->set('neg', 'v'), 'a negative time ...');
    ok($m->set('neg', 'new', -1), '... is stored as Cache::Memcached::Fast does');
    ok(!defined $m->get('neg'), '... and expires at once');
    # A negative flush delay is now, as Cache::Memcached::Fast sends it (memcached flushes)
    ok($m->set('flushed', 'v'), 'a key ...');
    my $now = $m->flush_all(-1);
    ok((grep { $_ } values %$now) == keys %$now && %$now, "$protocol: flush_all(-1) flushes every server")
        or diag(explain($now), $m->last_error);
    ok(!defined $m->get('flushed'), '... now');
}

# A fractional time goes through the core's rule for fractions (mcpool_whole_seconds): a
# positive fraction rounds up, so 0.4 keeps the item 1 s, never 0 (memcached's "never
# expires": the item would live until evicted); a negative one stays negative (expired at
# once). The TTL memcached holds is read back with meta_info (mg's t flag). Before the rule
# set(k, v, 0.4) kept the item forever while expiry_from_now(0.4) expired it at once.
{
    my $m = Mcpool->new({ servers => [$srv], protocol => 'meta', namespace => 'ttl-frac:' });
    my $ttl = sub { my $i = $m->meta_info($_[0]); $i && $i->{ttl} };
    for my $t (0.4, '0.4', 1e-9, 0.999) {
        ok($m->set("f$t", 'v', $t), "set with time $t");
        my $left = $ttl->("f$t");
        ok(defined $left && $left >= 0 && $left <= 1, "... expires within a second, not never")
            or diag(defined $left ? $left : 'no expiry');
        ok($m->set("g$t", 'v'), 'a key ...');
        ok($m->touch("g$t", $t), "... touched with $t");
        $left = $ttl->("g$t");
        ok(defined $left && $left <= 1, '... expires within a second');
        ok(($m->set_multi(["h$t", 'v', $t]))[0], "set_multi with $t");
        $left = $ttl->("h$t");
        ok(defined $left && $left <= 1, '... expires within a second');
    }
    ok($m->set('f1.7', 'v', 1.7), 'set with 1.7 ...');
    my $left = $ttl->('f1.7');
    ok(defined $left && $left >= 1 && $left <= 2, "... rounds up to 2 s ($left)");
    ok($m->set('whole', 'v', 5.0), 'set with 5.0 ...');
    $left = $ttl->('whole');
    ok(defined $left && $left >= 4 && $left <= 5, "... 5 s ($left)");
    for my $t (-0.3, '-0.3', -1.5) {
        ok($m->set("n$t", 'old'), 'a key ...');
        ok($m->set("n$t", 'v', $t), "... set with $t");
        ok(!defined $m->get("n$t"), '... expired at once');
    }
    ok($m->set('zero', 'v', 0.0), 'set with 0.0 ...');
    ok(!defined $ttl->('zero') && $m->get('zero') eq 'v', '... never expires, as 0');
    is(Mcpool::expiry_from_now(0.4), 1, 'expiry_from_now(0.4): 1 s, not expired at once');
    is(Mcpool::expiry_from_now(1.7), 2, 'expiry_from_now(1.7): 2 s');
    is(Mcpool::expiry_from_now(-0.3), Mcpool::expiry_from_now(-1), 'expiry_from_now(-0.3): past');
    is(Mcpool::expiry_from_now(0.0), Mcpool::expiry_from_now(0), 'expiry_from_now(0.0) as 0');
    # a moment after 2106 is the moment asked, and the set refusing it names it, never the
    # 32-bit 4294967295 (tester finding retest37 6)
    my $century = 100 * 365 * 86400;
    my $before = time;
    my $at = Mcpool::expiry_from_now($century);
    ok($at >= $before + $century && $at <= time + $century + 1, "a century from now: $at");
    ok(!$m->set('far', 'v', $at), '... refused by set');
    like($m->last_error, qr/invalid ttl: \Q$at\E is above 2147483647/, '... naming the moment');
}
# A fraction just above 30 days is 30 days, never rounded up across the line to 2592001,
# a unix time in 1970 (tester finding arith 1: stored, answered 1, and gone at once).
for my $protocol (qw(text meta binary)) {
    my $m = Mcpool->new({ servers => [$srv], protocol => $protocol, namespace => "ttl30-$protocol:" });
    for my $t (2592000.2, '2592000.5', 2592000.999) {
        ok($m->set('k', 'v', $t), "$protocol: set with $t stores");
        is($m->get('k'), 'v', '... and the item is there');
        ok($m->touch('k', $t), "$protocol: touch with $t");
        is($m->get('k'), 'v', '... still there');
    }
}
{   # a lease's times are durations: a negative one is refused as given (it was cast to
    # 4294967295 and reported as that, "which memcached would read as -1")
    my $m = Mcpool->new({ servers => [$srv], protocol => 'meta', namespace => 'ttl-lease:' });
    my @r = $m->get_lease('l', 30, -1);
    is(scalar @r, 0, 'get_lease with recache_below -1 returns nothing');
    like($m->last_error, qr/^get_lease "l": invalid recache_below: -1 is negative/, '... naming -1')
        or diag $m->last_error;
    @r = $m->get_lease('l', -5, 0);
    like($m->last_error, qr/^get_lease "l": invalid vivify_ttl: -5 is negative/, 'vivify_ttl -5 too');
    @r = $m->get_lease('l', 2**32, 0);
    like($m->last_error, qr/invalid vivify_ttl: 4294967296 is above 2592000 \(30 days\): a vivify_ttl is a duration/,
         'vivify_ttl 2**32 as given, a duration of 30 days at most');
    # a lease's times are durations of 30 days (2592000 s) at most (the core's rule: a longer
    # one, read by memcached as a unix time long past, silently turned the lease off)
    for my $case ([ vivify_ttl => sub { $m->get_lease('l2', $_[0], 0) } ],
                  [ recache_below => sub { $m->get_lease('l2', 30, $_[0]) } ],
                  [ stale_ttl => sub { $m->invalidate('l2', $_[0]) } ]) {
        my ($what, $call) = @$case;
        for my $t (2592001, 2592000.5 + 1, 2**31 - 1, 1e30) {
            my @r = $call->($t);
            is(scalar @r, 0, "$what $t: refused");
            like($m->last_error, qr/invalid $what: \Q$t\E is above 2592000 \(30 days\): a $what is a duration/,
                 '... a duration of 30 days at most, named as given')
                or diag $m->last_error;
        }
        my @r = $call->(2592000);
        ok(!($m->last_error =~ /invalid $what/), "$what 2592000: taken") or diag $m->last_error;
    }
    ok(!defined $m->invalidate('l', -1), 'invalidate with stale_ttl -1 returns nothing');
    like($m->last_error, qr/^invalidate "l": invalid stale_ttl: -1 is negative/, '... naming -1');
    @r = $m->get_lease('l', 30, 0);
    is($r[0], 'recompute', 'a lease with good times still works');
}
# A refused time is named as the caller wrote it, a fraction or a string too, not as the
# whole seconds it rounds up to (tester finding ttl 5: 2147483647.5 was named 2147483648).
{
    my $m = Mcpool->new({ servers => [$srv], protocol => 'meta', namespace => 'ttl-named:' });
    for my $t (2147483647.5, '2147483647.5', '3e9', ' 3000000000', 2**32 + 0.25, '4294967296.0') {
        my %calls = (
            set       => [ sub { $m->set('k', 'new', $t) }, 'set', 'ttl', 1 ],
            add       => [ sub { $m->add('k', 'new', $t) }, 'add', 'ttl' ],
            set_multi => [ sub { ($m->set_multi(['k', 'new', $t]))[0] }, 'set_multi', 'ttl', 1 ],
            set_multi_noreply => [ sub { $m->set_multi_noreply(['k', 'new', $t]) }, 'set_multi_noreply', 'ttl', 1 ],
            touch     => [ sub { $m->touch('k', $t) }, 'touch', 'ttl' ],
            touch_multi => [ sub { ($m->touch_multi(['k', $t]))[0] }, 'touch_multi', 'ttl' ],
            gat       => [ sub { $m->gat($t, 'k') }, 'gat', 'ttl' ],
            get_lease => [ sub { ($m->get_lease('k', $t, 0))[0] }, 'get_lease', 'vivify_ttl' ],
            invalidate => [ sub { $m->invalidate('k', $t) }, 'invalidate', 'stale_ttl' ],
        );
        for my $name (sort keys %calls) {
            my ($run, $op, $what, $deletes) = @{ $calls{$name} };
            ok($m->set('k', 'old'), "the old value ($name, '$t')");
            ok(!defined $run->(), "$name with the time '$t': refused");
            my $err = $m->last_error;
            like($err, qr/^$op "k": invalid $what: \Q$t\E is above (?:2147483647|2592000)/,
                 "... named as given ($err)");
            unlike($err, qr/: (?:2147483648|3000000000|4294967297|4294967296) is above/,
                   '... not as the whole seconds it rounds to')
                unless $t eq '4294967296.0';
            if ($deletes) {
                like($err, qr/the key was deleted/, '... a set: the key was deleted');
                ok(!defined $m->get('k'), '... and it is gone');
            } else {
                is($m->get('k'), 'old', '... the old value is intact');
            }
        }
    }
}
done_testing;
