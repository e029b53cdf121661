# Mcpool::last_item_error and Mcpool::last_item_outcome_unknown after a method whose
# on_operation or on_server_event sub makes batch calls of its own (tester finding retest46
# 1): the core keeps one per-item list per thread, which the sub's set_multi replaced, so
# after the outer set_multi the items answered for the sub's batch (an item whose outcome is
# unknown read 0, "safe to repeat"; item messages named other keys), while last_error and
# last_error_outcome_unknown were put back. Now the per-item answers are put back too: after
# any method returns they are that method's own, whatever the subs did.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;
use IO::Socket::INET;

my $real = start_memcached();
# a silent server: the kernel accepts, the request is read into its buffer, nothing replies
# (a write to it times out after it was sent: outcome unknown)
my $silent = IO::Socket::INET->new(Listen => 64, LocalAddr => '127.0.0.1', LocalPort => 0,
                                   Proto => 'tcp') or die "listen: $!";
my $silent_addr = '127.0.0.1:' . $silent->sockport;
# a refused connect: a port nothing listens on (nothing sent: outcome known)
my $closed = IO::Socket::INET->new(Listen => 1, LocalAddr => '127.0.0.1', LocalPort => 0,
                                   Proto => 'tcp') or die "listen: $!";
my $refused_addr = '127.0.0.1:' . $closed->sockport;
close $closed;

my %o = (io_timeout => 0.3, connect_timeout => 0.5, max_failures => 0);
my $p = unique('li');
my @servers = ($real, $silent_addr, $refused_addr);

# the sub's clients: one whose batches succeed, one whose batches fail
my $good = Mcpool->new({ servers => [$real], %o });
my $bad  = Mcpool->new({ servers => [$refused_addr], %o });

# keys on each of the three servers
my $probe = Mcpool->new({ servers => \@servers, %o });
my (@keys, %on);
for my $i (0 .. 999) {
    my $k = "$p$i";
    next if $on{ $probe->server_for($k) }++ >= 3;
    push @keys, $k;
    last if @keys == 9;
}
is(scalar(keys %on), 3, 'keys on each server') or BAIL_OUT('placement');
my @where = map { $probe->server_for($_) } @keys;

# What the outer call answers per item: [outcome unknown, message] each, with last_error.
sub answers {
    my $n = shift;
    return {
        last_error => Mcpool::last_error(),
        last_ou    => Mcpool::last_error_outcome_unknown() ? 1 : 0,
        items      => [ map { [ Mcpool::last_item_outcome_unknown($_) ? 1 : 0,
                                Mcpool::last_item_error($_) ] } 0 .. $n ],
    };
}

# The answers without callbacks, checked: an item on the silent server is outcome unknown, on
# the refused port it failed with its outcome known, on memcached it did not fail.
my %baseline;
for my $opts ([%o], [%o, max_failures => 1]) {
    my $plain = Mcpool->new({ servers => \@servers, @$opts });
    my @res = $plain->set_multi(map { [$_, 'v'] } @keys);
    my $got = answers(scalar @keys);
    my $tag = "@$opts";
    $baseline{$tag} = $got;
    for my $i (0 .. $#keys) {
        my ($ou, $err) = @{ $got->{items}[$i] };
        if ($where[$i] eq $real) {
            ok($res[$i] && !$ou && !defined $err, "baseline ($tag): item $i on memcached stored, no error");
        } else {
            ok(!$res[$i] && defined $err && $err =~ /"\Q$keys[$i]\E"/,
                "baseline ($tag): item $i failed, its message naming its key");
            is($ou, $where[$i] eq $silent_addr ? 1 : 0,
                "baseline ($tag): item $i outcome unknown " . ($where[$i] eq $silent_addr ? '1 (silent)' : '0 (refused)'));
        }
    }
    ok(!$got->{items}[@keys][0] && !defined $got->{items}[@keys][1], "baseline ($tag): past the items, nothing");
    isnt($got->{last_error}, '', "baseline ($tag): last_error set");
}

# the sub's batch calls, each checked inside the sub: they do replace the list there
my @inner_seen;
my %inner = (
    'a good set_multi' => sub {
        $good->set_multi(["${p}i1", 'v'], ["${p}i2", 'v']);
        push @inner_seen, !defined Mcpool::last_item_error(0) ? 'ok' : 'unexpected';
    },
    'a failing set_multi' => sub {
        $bad->set_multi(["${p}i1", 'v'], ["${p}i2", 'v']);
        push @inner_seen, (Mcpool::last_item_error(1) // '') =~ /"\Q${p}i2\E"/ ? 'ok' : 'unexpected';
    },
    'a good and a failing set_multi, and a delete_multi' => sub {
        $bad->set_multi(["${p}i1", 'v']);
        $good->set_multi(["${p}i1", 'v'], ["${p}i2", 'v'], ["${p}i3", 'v']);
        $bad->delete_multi("${p}i1", "${p}i2");
        push @inner_seen, defined Mcpool::last_item_error(1) ? 'ok' : 'unexpected';
    },
    'a failing set_multi on a client with a sub of its own that makes one' => do {
        my $nested = Mcpool->new({ servers => [$refused_addr], %o,
            on_operation => sub { $good->set_multi(["${p}n1", 'v']) } });
        sub {
            $nested->set_multi(["${p}i1", 'v'], ["${p}i2", 'v']);
            # the nested client's wrapper put its own items back: its set_multi's
            push @inner_seen, (Mcpool::last_item_error(1) // '') =~ /"\Q${p}i2\E"/ ? 'ok' : 'unexpected';
        };
    },
);

sub same_answers {
    my ($got, $want, $what) = @_;
    is($got->{last_error}, $want->{last_error}, "$what: last_error the outer call's");
    is($got->{last_ou}, $want->{last_ou}, "$what: last_error_outcome_unknown the outer call's");
    for my $i (0 .. $#keys) {
        is($got->{items}[$i][0], $want->{items}[$i][0],
            "$what: last_item_outcome_unknown($i) the outer call's ($want->{items}[$i][0], $where[$i])");
        is($got->{items}[$i][1], $want->{items}[$i][1],
            "$what: last_item_error($i) the outer call's");
    }
    ok(!$got->{items}[@keys][0] && !defined $got->{items}[@keys][1], "$what: past the items, nothing");
}

for my $name (sort keys %inner) {
    my $calls = 0;
    my $sub = $inner{$name};
    my $outer = Mcpool->new({ servers => \@servers, %o, on_operation => sub { $calls++; $sub->() } });
    @inner_seen = ();
    $outer->set_multi(map { [$_, 'v'] } @keys);
    my $got = answers(scalar @keys);
    is($calls, 3, "on_operation doing $name: called once per server");
    is_deeply(\@inner_seen, [('ok') x 3], "... the sub's own batch answered inside it");
    same_answers($got, $baseline{"@{[%o]}"}, "on_operation doing $name");
}

# on_server_event: a server marked down (max_failures => 1), the sub's batch calls
{
    my $events = 0;
    my @opts = (%o, max_failures => 1);
    my $outer = Mcpool->new({ servers => \@servers, @opts, on_server_event => sub {
        $events++;
        $bad->set_multi(["${p}e1", 'v'], ["${p}e2", 'v']);
        $good->set_multi(["${p}e1", 'v']);
    } });
    $outer->set_multi(map { [$_, 'v'] } @keys);
    my $got = answers(scalar @keys);
    cmp_ok($events, '>=', 1, 'on_server_event called (servers marked down)');
    same_answers($got, $baseline{"@opts"}, 'on_server_event doing batch calls');
}

# Kept as the core keeps them: a later method that is no batch call leaves them (also one
# whose sub makes a batch call), the next batch call replaces them.
{
    my $outer = Mcpool->new({ servers => \@servers, %o,
        on_operation => sub { $bad->set_multi(["${p}x1", 'v'], ["${p}x2", 'v']) } });
    $outer->set_multi(map { [$_, 'v'] } @keys);
    my $want = answers(scalar @keys);
    my ($on_real) = grep { $where[$_] eq $real } 0 .. $#keys;
    ok(defined $outer->get($keys[$on_real]), 'then a get (its sub makes a failing set_multi)');
    my $got = answers(scalar @keys);
    is_deeply($got->{items}, $want->{items}, '... the items still the set_multi\'s');
    $good->get("${p}none");
    is_deeply(answers(scalar @keys)->{items}, $want->{items}, '... and after a get on another client');
    ok($good->set_multi(["${p}y1", 'v'], ["${p}y2", 'v']), 'a batch call that succeeds');
    ok(!grep({ $_->[0] || defined $_->[1] } @{ answers(scalar @keys)->{items} }),
        '... replaces them: no item failed');
    my @r = $bad->set_multi(["${p}z1", 'v'], ["${p}z2", 'v']);
    like(Mcpool::last_item_error(1) // '', qr/"\Q${p}z2\E"/, 'a failing one: its own items');
    ok(!defined Mcpool::last_item_error(2), '... and nothing past them');
}

done_testing();
