# A NaN or infinite time was refused as "invalid ttl: 9223372036854775807 is above ...", a
# number the caller never wrote (the core's rule for fractions reads NaN and infinity as
# INT64_MAX). It is now named as given, by every call that takes a time: `set "k": invalid
# ttl: NaN is not a finite number of seconds` (lease and stale times by their own names,
# flush_all's delay croaks as for any time it refuses); nothing is stored (tester finding
# expiry 4). -Inf too, as Python refuses it. A finite number past 64 bits (1e30, 2**64) was
# named 9223372036854775807 the same way: now as given. A set so refused (set, set_multi,
# set_multi_noreply, set_with_version) deletes the key, the core's rule for a set refused for
# its time (tester finding ttl 1), and its message says so; add, replace, cas, touch, gat and
# the counters leave the old value intact.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;

my $srv = start_memcached();
my $m = Mcpool->new({ servers => [$srv], namespace => unique('nonfinite') });
my $meta = Mcpool->new({ servers => [$srv], namespace => unique('nonfinite-meta'), protocol => 'meta' });
my $inf = 9**9**9;
my $nan = $inf / $inf;

# (the time, how it is named in the message)
my @times = (
    [ $nan,   qr/-?NaN/i ],
    [ 'nan',  qr/nan/ ],
    [ $inf,   qr/Inf/i ],
    [ '-inf', qr/-inf/ ],
    [ -$inf,  qr/-Inf/i ],
    [ 'Infinity', qr/Infinity/ ],
);

for my $case (@times) {
    my ($t, $shown) = @$case;
    my $name = "$t";
    $m->set('k', 'old');
    $m->set('c', 5);
    my $cas = $m->gets('k')->[0];
    # each call: its result, and the name its message gives the time
    my %calls = (
        set               => [ sub { $m->set('k', 'new', $t) }, 'ttl' ],
        add               => [ sub { $m->add('fresh', 'new', $t) }, 'ttl' ],
        replace           => [ sub { $m->replace('k', 'new', $t) }, 'ttl' ],
        cas               => [ sub { $m->cas('k', $cas, 'new', $t) }, 'ttl' ],
        touch             => [ sub { $m->touch('k', $t) }, 'ttl' ],
        gat               => [ sub { $m->gat($t, 'k') }, 'ttl' ],
        gats              => [ sub { $m->gats($t, 'k') }, 'ttl' ],
        set_counter       => [ sub { $m->set_counter('c', 9, $t) }, 'ttl' ],
        incr_or_init      => [ sub { $m->incr_or_init('fresh', 1, 1, $t) }, 'ttl' ],
        set_multi         => [ sub { ($m->set_multi(['k', 'new', $t]))[0] }, 'ttl' ],
        cas_multi         => [ sub { ($m->cas_multi(['k', $cas, 'new', $t]))[0] }, 'ttl' ],
        touch_multi       => [ sub { ($m->touch_multi(['k', $t]))[0] }, 'ttl' ],
        set_multi_noreply => [ sub { $m->set_multi_noreply(['k', 'new', $t]) }, 'ttl' ],
        get_lease_vivify  => [ sub { ($meta->get_lease('k', $t, 5))[0] }, 'vivify_ttl', 'get_lease' ],
        get_lease_recache => [ sub { ($meta->get_lease('k', 5, $t))[0] }, 'recache_below', 'get_lease' ],
        invalidate        => [ sub { $meta->invalidate('k', $t) }, 'stale_ttl' ],
        set_with_version  => [ sub { $meta->set_with_version('k', 'new', 7, $t) }, 'ttl' ],
    );
    # the sets, whose refusal deletes their key: [the client, the key]
    my %sets = (
        set               => [ $m, 'k' ],
        set_multi         => [ $m, 'k' ],
        set_multi_noreply => [ $m, 'k' ],
        set_counter       => [ $m, 'c' ],
        set_with_version  => [ $meta, 'k' ],
    );
    for my $call (sort keys %calls) {
        my ($run, $what, $op) = @{ $calls{$call} };
        $op //= $call;
        $m->set('k', 'old');
        $m->set('c', 5);
        $meta->set('k', 'old');
        $cas = $m->gets('k')->[0];
        my @w;
        my $r = do { local $SIG{__WARN__} = sub { push @w, @_ }; $run->() };
        ok(!$r, "$call with the time $name: refused");
        my $err = Mcpool::last_error();
        like($err, qr/^$op "(?:k|fresh|c)": invalid $what: $shown is not a finite number of seconds/,
             "... last_error names the time as given ($err)");
        unlike($err, qr/9223372036854775807/, '... never INT64_MAX');
        is("@w", '', '... no Perl warning');
        if (my $set = $sets{$call}) {
            my ($client, $key) = @$set;
            like($err, qr/; nothing was stored and the key was deleted, as memcached deletes it when it refuses a set$/,
                 '... a set: the key was deleted');
            ok(!defined $client->get($key), "$name: $call deleted the key, no older value to read");
            is($m->get('c'), 5, "$name: the counter intact") unless $key eq 'c';
        } else {
            unlike($err, qr/deleted/, '... nothing deleted');
            is($m->get('k'), 'old', "$name: $call left the old value intact");
            is($meta->get('k'), 'old', '... and the other client\'s') if $op =~ /lease|invalidate/;
            is($m->get('c'), 5, "$name: the counter intact");
        }
    }
    $m->set('k', 'old');
    ok(!defined $m->get('fresh'), "$name: nothing added");

    my $gm = $m->gat_multi($t, 'k');
    is_deeply($gm, {}, "gat_multi with the time $name: nothing read");
    like(Mcpool::last_error(), qr/^gat_multi: invalid ttl: $shown is not a finite number of seconds/,
         '... last_error names it');

    ok(!eval { $m->flush_all($t); 1 }, "flush_all with the delay $name croaks");
    like($@, qr/^flush_all: invalid delay: $shown is not a finite number of seconds/, '... naming it');
    is($m->get('k'), 'old', '... nothing flushed');

    ok(!eval { Mcpool::expiry_from_now($t); 1 }, "expiry_from_now($name) croaks");
    like($@, qr/^expiry_from_now: invalid duration: $shown is not a finite number of seconds/, '... naming it');
}

# A finite number past 64 bits: named as given, never as 9223372036854775807.
for my $t (1e30, 2**64, 2**63, 18446744073709551615, '99999999999999999999') {
    $m->set('k', 'old');
    ok(!defined $m->set('k', 'new', $t), "set with the time $t: refused");
    like(Mcpool::last_error(), qr/^set "k": invalid ttl: \Q$t\E is above 2147483647, the largest expiry memcached can honour; nothing was stored and the key was deleted/,
         '... named as given; the key was deleted');
    ok(!defined $m->get('k'), '... and it is gone');
    $m->set('k', 'old');
    ok(!defined $m->replace('k', 'new', $t), "replace with the time $t: refused");
    like(Mcpool::last_error(), qr/^replace "k": invalid ttl: \Q$t\E is above 2147483647, the largest expiry memcached can honour$/,
         '... named as given');
    is($m->get('k'), 'old', '... the old value intact');
    # a lease's times are durations of 30 days at most (the core's rule)
    ok(!defined(($meta->get_lease('k', $t, 5))[0]), "get_lease with the vivify_ttl $t: refused");
    like(Mcpool::last_error(), qr/^get_lease "k": invalid vivify_ttl: \Q$t\E is above 2592000 \(30 days\): a vivify_ttl is a duration/,
         '... named as given');
    my @r = $m->set_multi(['k', 'new', $t]);
    ok(!defined $r[0], "set_multi with the time $t: refused");
    like(Mcpool::last_error(), qr/^set_multi "k": invalid ttl: \Q$t\E is above 2147483647.*the key was deleted/,
         '... named as given; the key was deleted');
    ok(!defined $m->get('k'), '... and it is gone');
}

# The POD's example (BAD INPUT) is the message printed: Perl prints 1e30 as 1e+30, its own
# text for the number, and that text is what the message names (tester finding ttl 5: the
# example did not match).
{
    my $pod = do {
        open my $fh, '<', "$FindBin::Bin/../lib/Mcpool.pm" or die $!;
        local $/;
        <$fh>;
    };
    my ($example) = $pod =~ /C<< \$memd->set\('k', 'v', 1e30\) >>\s+\(C<1e30>,\s+which\s+Perl\s+prints\s+as\s+C<1e\+30>,\s+the\s+text\s+named\)\s+leaves\s+in\s+C<last_error>\s+exactly\s+C<(.*?)>\./s;
    ok(defined $example, "the POD's example for 1e30 is found");
    $example =~ s/\s+/ /g if defined $example;
    $m->set('k', 'old');
    $m->set('k', 'new', 1e30);
    is(Mcpool::last_error(), $example, "... and it is the message printed");
}

# Finite times are unchanged: a fraction rounds up, a negative one expires at once.
ok($m->set('k', 'v', 0.4), '0.4: stored');
is($m->get('k'), 'v', '... readable (1 s, not 0)');
ok($m->set('k', 'v', -1), '-1: stored');
ok(!defined $m->get('k'), '... expired at once');

done_testing;
