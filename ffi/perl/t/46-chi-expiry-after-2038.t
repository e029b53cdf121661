# CHI::Driver::Mcpool with expires_on_backend: an expiry after 2038 (expires_in 2**31, an
# expires_at past 2038) is more than memcached can hold, and the core refused the set. CHI's
# default on_set_error logs (silently, with Log::Any's default), so the set looked done and
# the OLD value stayed readable, with its own still valid CHI expiry (tester finding expiry 1).
# The driver now gives memcached the last moment it can hold (2147483647, 2038-01-19, as the
# Django adapter's MAX_TTL): the new value is stored, CHI still expires it at its own time
# (kept in the value), and memcached keeps it as long as it can keep anything.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";

BEGIN { require McpoolTest; McpoolTest::needs('libchi-perl', qw(CHI)) }

use McpoolTest;
use Mcpool;

my $srv = start_memcached();
my $ns  = unique('chi-2038');
my $max = 2147483647;

# memcached's TTL of the item (seconds left; undef: never expires; 'miss' when it is gone).
my $meta = Mcpool->new({ servers => [$srv], protocol => 'meta' });
sub backend_ttl {
    my $i = $meta->meta_info("$ns:" . shift);
    return $i ? $i->{ttl} : 'miss';
}

# Kept until 2038-01-19 by memcached: its TTL is what is left until then (memcached's clock
# may run up to a minute off the unix time just after it starts: two minutes either way).
sub until_2038 {
    my $ttl = shift;
    return defined $ttl && $ttl ne 'miss' && abs($ttl - ($max - time)) <= 120;
}

# CHI's default on_set_error (log): the failure the finding was about passes unnoticed.
for my $on_set_error ('log', 'die') {
    my $chi = CHI->new(driver => 'Mcpool', servers => [$srv], namespace => $ns,
                       expires_on_backend => 1, on_set_error => $on_set_error);
    my $k = "in-$on_set_error";
    $chi->set($k, 'OLD', '1 hour');
    is($chi->get($k), 'OLD', "on_set_error $on_set_error: the old value");
    ok(eval { $chi->set($k, 'NEW', 2**31); 1 }, '... set with expires_in 2**31 does not fail') or diag $@;
    is($chi->get($k), 'NEW', '... and get returns the new value, never the old one');
    ok(until_2038(backend_ttl($k)), '... kept by memcached until 2038')
        or diag 'ttl: ' . (backend_ttl($k) // 'undef (never expires)');
    my $obj = $chi->get_object($k);
    ok($obj && $obj->expires_at > $max, "... CHI's own expiry is the one asked for (after 2038)");

    $k = "at-$on_set_error";
    $chi->set($k, 'OLD', '1 hour');
    ok(eval { $chi->set($k, 'NEW', { expires_at => $max + 100 }); 1 }, '... expires_at after 2038: set') or diag $@;
    is($chi->get($k), 'NEW', '... get returns the new value');
    ok(until_2038(backend_ttl($k)), '... kept by memcached until 2038');

    # set_multi: one pipelined call, the same rule for each item
    $chi->set_multi({ "m1-$on_set_error" => 'OLD', "m2-$on_set_error" => 'OLD' }, '1 hour');
    $chi->set_multi({ "m1-$on_set_error" => 'NEW', "m2-$on_set_error" => 'NEW' }, 2**31 + 12345);
    is_deeply($chi->get_multi_hashref([ "m1-$on_set_error", "m2-$on_set_error" ]),
              { "m1-$on_set_error" => 'NEW', "m2-$on_set_error" => 'NEW' },
              '... set_multi with expires_in 2**31 + 12345: the new values');
    ok(until_2038(backend_ttl("m1-$on_set_error")), '... kept by memcached until 2038');
}

# expires_on_backend multiplies: within 2038 for CHI, beyond it on the backend, still stored
my $twice = CHI->new(driver => 'Mcpool', servers => [$srv], namespace => $ns,
                     expires_on_backend => 2, on_set_error => 'die');
my $half = int(($max - time) / 2) + 86400;
$twice->set('x2', 'OLD', '1 hour');
ok(eval { $twice->set('x2', 'NEW', $half); 1 }, 'expires_on_backend 2, twice past 2038: set') or diag $@;
is($twice->get('x2'), 'NEW', '... the new value');

# Below the limit nothing changes: the duration asked for.
my $chi = CHI->new(driver => 'Mcpool', servers => [$srv], namespace => $ns,
                   expires_on_backend => 1, on_set_error => 'die');
$chi->set('hour', 'v', '1 hour');
my $ttl = backend_ttl('hour');
ok(defined $ttl && $ttl ne 'miss' && abs($ttl - 3600) <= 5, 'an hour stays an hour') or diag "ttl: " . ($ttl // 'undef');

done_testing;
