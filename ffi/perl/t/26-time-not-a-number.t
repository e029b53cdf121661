# An expiration time given as a string that is not a number ("5m", "1 hour", "", "0x3c"):
# Perl would read "5m" as 5 seconds and "" as 0 (never expires), Cache::Memcached::Fast with
# only a warning, a silently different expiry. Mcpool refuses it: the call returns nothing
# (an empty list; undef in scalar context), last_error names the time as given, and the old value is intact. Numbers written
# as strings ("60", " 7", "1e3", "0.4") are numbers. (Tester finding perl 3.)
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;

my $srv = start_memcached();
my $m = Mcpool->new({ servers => [$srv], namespace => "tnan:" });
for my $bad ('5m', '1 hour', '', '0x3c', 'never') {
    ok($m->set('k', 'old'), "the old value ($bad)");
    my %calls = (
        set         => sub { $m->set('k', 'new', $bad) },
        add         => sub { $m->add('fresh', 'new', $bad) },
        replace     => sub { $m->replace('k', 'new', $bad) },
        touch       => sub { $m->touch('k', $bad) },
        gat         => sub { $m->gat($bad, 'k') },
        set_multi   => sub { ($m->set_multi(['k', 'new', $bad]))[0] },
        touch_multi => sub { ($m->touch_multi(['k', $bad]))[0] },
    );
    for my $name (sort keys %calls) {
        my $r = do { no warnings 'numeric'; $calls{$name}->() };
        ok(!defined $r, "$name with '$bad' returns nothing");
        like($m->last_error, qr/invalid expiration time: "\Q$bad\E" is not a number of seconds/,
             '... last_error names it')
            unless $name eq 'touch_multi' || $name eq 'set_multi';
        is($m->get('k'), 'old', '... the old value is intact');
        ok(!defined $m->get('fresh'), '... nothing added');
    }
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
            my @r = do { no warnings 'numeric'; $calls{$name}->() };
            is_deeply(\@r, [], "$name with the time '$bad': an empty list in list context");
            like($m->last_error, qr/invalid .*\Q$bad\E/i, '... last_error names the time')
                or diag $m->last_error;
            my $r = do { no warnings 'numeric'; $calls{$name}->() };
            ok(!defined $r, '... undef in scalar context');
        }
        is($m->get('k'), 'old', "... ('$bad') the old value is intact");
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
        expiry    => sub { Mcpool::expiry_from_now($tied) },
    );
    for my $name (sort keys %calls) {
        ${ $obj->{n} } = 0;
        $calls{$name}->();
        is(${ $obj->{n} }, 1, "$name fetches a tied time once (" . ($t // 'undef') . ")");
    }
}
done_testing();
