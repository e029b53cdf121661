# Expiration times memcached cannot honour: it reads a text or meta expiry as a signed 32-bit
# number, so one above 2**31-1 would expire the item at once while the store answers true.
# The core refuses it before anything is sent: the call returns nothing (undef), last_error
# says why, and the old value is intact, on every protocol. A negative time still expires
# the key at once, as with Cache::Memcached::Fast.
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
    ok($m->set('k', 'old'), 'the old value');
    # 18446744073709551615 (a UV above IV_MAX) and 1e30 (a float) are too large, not
    # negative: an IV would read them as negative numbers.
    for my $big (2**31, 2**32 - 1, 2**32, 2**40, 18446744073709551615, 1e30, '18446744073709551615') {
        my %calls = (
            set          => sub { $m->set('k', 'new', $big) },
            add          => sub { $m->add('fresh', 'new', $big) },
            replace      => sub { $m->replace('k', 'new', $big) },
            cas          => sub { $m->cas('k', 1, 'new', $big) },
            touch        => sub { $m->touch('k', $big) },
            gat          => sub { $m->gat($big, 'k') },
            'set_multi'  => sub { ($m->set_multi(['k', 'new', $big]))[0] },
            'touch_multi' => sub { ($m->touch_multi(['k', $big]))[0] },
            'gat_multi'  => sub { my $h = $m->gat_multi($big, 'k'); $h && $h->{k} },
        );
        for my $name (sort keys %calls) {
            my $r = $calls{$name}->();
            ok(!defined $r, "$protocol: $name with $big returns nothing");
            like($m->last_error, qr/is above 2147483647/, '... last_error says why')
                unless $name eq 'gat_multi';
            # ... naming the number given, not the 4294967295 it was saturated to before
            # (one a Perl IV holds; a UV above IV_MAX is named as IV_MAX)
            like($m->last_error, qr/invalid ttl: \Q$big\E is above 2147483647/, "... naming $big")
                if $big < 2**63 && $name ne 'gat_multi';
            unlike($m->last_error, qr/4294967295/, '... not 4294967295')
                if $big != 2**32 - 1 && $name ne 'gat_multi';
        }
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
    like($m->last_error, qr/invalid vivify_ttl: 4294967296 is above 2147483647/, 'vivify_ttl 2**32 as given');
    ok(!defined $m->invalidate('l', -1), 'invalidate with stale_ttl -1 returns nothing');
    like($m->last_error, qr/^invalidate "l": invalid stale_ttl: -1 is negative/, '... naming -1');
    @r = $m->get_lease('l', 30, 0);
    is($r[0], 'recompute', 'a lease with good times still works');
}
done_testing;
