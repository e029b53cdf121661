# An expiration time given as a string that is not a number ("5m", "1 hour", "", "0x3c"):
# Perl would read "5m" as 5 seconds and "" as 0 (never expires), Cache::Memcached::Fast with
# only a warning, a silently different expiry. Mcpool refuses it: the call returns nothing
# (an empty list; undef in scalar context), last_error names the time as given. A set so
# refused (set, set_bytes, set_counter, set_multi, set_multi_noreply, set_with_version)
# deletes the key, as the core's rule for a set refused for its time
# (mcpool_client_store_expiry_checked): Cache::Memcached::Fast stores it for the leading
# number ('1 hour' is 1 s), so no older value is left to read there either (tester finding
# ttl 1); last_error says the key was deleted. add, replace, cas, touch and gat leave the old
# value intact; flush_all croaks and flushes nothing. Numbers written as strings ("60", " 7",
# "1e3", "0.4") are numbers. (Tester finding perl 3.)
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;

my $srv = start_memcached();
my $m = Mcpool->new({ servers => [$srv], namespace => "tnan:" });
my %deletes = map { $_ => 1 } qw(set set_bytes set_counter set_multi set_multi_noreply);
for my $bad ('5m', '1 hour', '', '0x3c', 'never') {
    my $cas;
    my %calls = (
        set         => sub { $m->set('k', 'new', $bad) },
        set_bytes   => sub { $m->set_bytes('k', 'new', 0, $bad) },
        set_counter => sub { $m->set_counter('k', 5, $bad) },
        add         => sub { $m->add('fresh', 'new', $bad) },
        replace     => sub { $m->replace('k', 'new', $bad) },
        cas         => sub { $m->cas('k', $cas, 'new', $bad) },
        touch       => sub { $m->touch('k', $bad) },
        gat         => sub { $m->gat($bad, 'k') },
        set_multi   => sub { ($m->set_multi(['k', 'new', $bad]))[0] },
        add_multi   => sub { ($m->add_multi(['fresh', 'new', $bad]))[0] },
        replace_multi => sub { ($m->replace_multi(['k', 'new', $bad]))[0] },
        set_multi_noreply => sub { $m->set_multi_noreply(['k', 'new', $bad]) },
        touch_multi => sub { ($m->touch_multi(['k', $bad]))[0] },
    );
    for my $name (sort keys %calls) {
        ok($m->set('k', 'old'), "the old value ($name, '$bad')");
        $cas = $m->gets('k')->[0];
        my $r = do { no warnings 'numeric'; $calls{$name}->() };
        my $err = $m->last_error;
        ok(!defined $r, "$name with '$bad' returns nothing");
        my $op = $name eq 'set_bytes' ? 'set' : $name;    # set_bytes names the command sent
        like($err, qr/^$op "(?:k|fresh)": invalid expiration time: "\Q$bad\E" is not a number of seconds/,
             '... last_error names it')
            or diag $err;
        if ($deletes{$name}) {
            ok(!defined $m->get('k'), '... a set: the key was deleted, no older value to read');
            like($err, qr/; nothing was stored and the key was deleted, as memcached deletes it when it refuses a set$/,
                 '... and last_error says so');
        } else {
            is($m->get('k'), 'old', '... the old value is intact');
            unlike($err, qr/deleted/, '... and last_error says nothing was deleted');
        }
        ok(!defined $m->get('fresh'), '... nothing added');
    }
    ok($m->set('k', 'old'), "the old value (flush_all, '$bad')");
    eval { $m->flush_all($bad) };
    like($@, qr/flush_all: invalid expiration time: "\Q$bad\E"/, "flush_all('$bad') croaks");
    is($m->get('k'), 'old', '... nothing flushed');
}
for my $good ('60', ' 7', '1e3', '0.4', 60) {
    ok($m->set('g', 'v', $good), "'$good' is a number of seconds");
    is($m->get('g'), 'v', '... stored');
}

# A refused time returns nothing as every other failure does (a bad key, a bad CAS, a server
# down) and as Cache::Memcached::Fast: an empty list in list context, undef in scalar
# context; it was (undef) in list context (tester finding perl2 4). Every method that takes a
# time, on the helper they share.
{
    my $meta = Mcpool->new({ servers => [$srv], namespace => "tnan:", protocol => 'meta' });
    ok($m->set('k', 'old'), 'the old value (list context)');
    my @bad_key = $m->set('a b', 1);
    is_deeply(\@bad_key, [], 'a bad key: an empty list (what a bad time must match)');
    for my $bad ('5m', 'nan', 2**31, 2**64) {
        my %calls = (
            set              => sub { $m->set('k', 'new', $bad) },
            add              => sub { $m->add('fresh', 'new', $bad) },
            replace          => sub { $m->replace('k', 'new', $bad) },
            cas              => sub { $m->cas('k', 12345, 'new', $bad) },
            cas_result       => sub { $m->cas_result('k', 12345, 'new', $bad) },
            touch            => sub { $m->touch('k', $bad) },
            gat              => sub { $m->gat($bad, 'k') },
            gats             => sub { $m->gats($bad, 'k') },
            set_counter      => sub { $m->set_counter('n', 5, $bad) },
            incr_or_init     => sub { $m->incr_or_init('n', 1, 0, $bad) },
            decr_or_init     => sub { $m->decr_or_init('n', 1, 0, $bad) },
            set_multi_noreply => sub { $m->set_multi_noreply(['k', 'new', $bad]) },
            set_with_version => sub { $meta->set_with_version('k', 'new', 5, $bad) },
            invalidate       => sub { $meta->invalidate('k', $bad) },
            get_lease        => sub { $meta->get_lease('k', $bad, 0) },
        );
        for my $name (sort keys %calls) {
            ok($m->set('k', 'old'), "the old value ($name, '$bad')");
            my @r = do { no warnings 'numeric'; $calls{$name}->() };
            my $err = $m->last_error;
            is_deeply(\@r, [], "$name with the time '$bad': an empty list in list context");
            like($err, qr/invalid .*\Q$bad\E/i, '... last_error names the time')
                or diag $err;
            # the sets of 'k' (set_with_version is one) delete it; the others leave it
            if ($name =~ /^set(?:_multi_noreply|_with_version)?$/) {
                like($err, qr/the key was deleted/, '... a set: last_error says the key was deleted');
                ok(!defined $m->get('k'), "... ('$bad') the key was deleted");
            } elsif ($name eq 'set_counter') {    # a set of 'n'
                like($err, qr/^set_counter "n": .*the key was deleted/, '... a set: last_error says the key was deleted');
                is($m->get('k'), 'old', "... ('$bad') the old value of another key is intact");
            } else {
                unlike($err, qr/deleted/, '... nothing deleted');
                is($m->get('k'), 'old', "... ('$bad') the old value is intact");
            }
            my $r = do { no warnings 'numeric'; $calls{$name}->() };
            ok(!defined $r, '... undef in scalar context');
        }
        ok(!defined $m->get('fresh') && !defined $m->get('n'), '... nothing added');
    }
}

# A tied time is fetched once per call, as any other argument (the check that it is a number
# and its reading were two fetches: a tie returning a different value each time could be
# checked as one time and read as another).
{
    package CountingTime;
    sub TIESCALAR { my ($c, $v) = @_; my $n = 0; bless { v => $v, n => \$n }, $c }
    sub FETCH { my $s = shift; ${ $s->{n} }++; $s->{v} }
}
for my $t (60, '60', 0.4, undef) {
    my $obj = tie my $tied, 'CountingTime', $t;
    my %calls = (
        set       => sub { $m->set('t', 'v', $tied) },
        touch     => sub { $m->touch('t', $tied) },
        set_multi => sub { $m->set_multi(['t', 'v', $tied]) },
        # (undef is refused: no duration; fetched once all the same)
        expiry    => sub { eval { Mcpool::expiry_from_now($tied) } },
    );
    for my $name (sort keys %calls) {
        ${ $obj->{n} } = 0;
        $calls{$name}->();
        is(${ $obj->{n} }, 1, "$name fetches a tied time once (" . ($t // 'undef') . ")");
    }
}
# ... a refused one too (its message named it by a second FETCH)
for my $t ('5m', 9**9**9, 2**32, 2147483647.5) {
    my $obj = tie my $tied, 'CountingTime', $t;
    my %calls = (
        set     => sub { $m->set('t', 'v', $tied) },
        replace => sub { $m->replace('t', 'v', $tied) },
        touch   => sub { $m->touch('t', $tied) },
    );
    for my $name (sort keys %calls) {
        ${ $obj->{n} } = 0;
        ok(!defined $calls{$name}->(), "$name with a tied time '$t': refused");
        like($m->last_error, qr/\Q$t\E/, '... named as given');
        is(${ $obj->{n} }, 1, '... fetched once');
    }
}
done_testing();
