# The scratch of the multi-key calls: arrays of calls too large for the C
# stack live in one grow-only area kept in the object. It is reused call after call, given back
# when a call croaks, left alone by a call nested in a callback (thaw, freeze, a tied key's
# FETCH) on the same object, and survives fork; a callback that drops the object's last
# reference cannot free it under the call.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;
use POSIX ();
use Storable ();

my $srv = start_memcached();
my $p   = unique('sc');
my $m   = Mcpool->new({ servers => [$srv] });

sub keys_of { my ($tag, $n) = @_; return map { "${p}$tag$_" } 1 .. $n }
sub want_of { my ($tag, $n) = @_; return { map { ("${p}$tag$_" => "$tag-v$_") } 1 .. $n } }
# The same hash of plain or reference values (a quiet is_deeply, for callbacks).
sub same {
    my ($got, $want) = @_;
    local $Storable::canonical = 1;
    return Storable::freeze($got) eq Storable::freeze($want);
}

# ----- reuse and growth -----
{
    is_deeply([$m->_scratch], [0, 0], 'a new object has no scratch');
    is_deeply([$m->set_multi(map { ["${p}a$_", "a-v$_"] } 1 .. 20)], [(1) x 20], 'set_multi of 20 items');
    is_deeply($m->get_multi(keys_of('a', 20)), want_of('a', 20), 'get_multi of them');
    is_deeply([$m->_scratch], [0, 0], '... on the C stack: no scratch made');
    is_deeply([$m->set_multi(map { ["${p}a$_", "a-v$_"] } 21 .. 1000)], [(1) x 980], 'set_multi of 980 items');
    is_deeply($m->get_multi(keys_of('a', 500), "${p}nope"), want_of('a', 500), '500 keys and a miss');
    my ($busy, $size) = $m->_scratch;
    is($busy, 0, '... the scratch is free after the call');
    cmp_ok($size, '>=', 501 * 40, '... and big enough for 501 keys');
    is_deeply($m->get_multi(keys_of('a', 100)), want_of('a', 100), '100 keys: the same scratch');
    is(($m->_scratch)[1], $size, '... not reallocated');
    my $h = $m->gets_multi(keys_of('a', 1000));
    is_deeply({ map { ($_ => $h->{$_}[1]) } keys %$h }, want_of('a', 1000), 'gets_multi of 1000 keys: grows it');
    cmp_ok(($m->_scratch)[1], '>=', 1000 * 40, '... to 1000 keys');
    is_deeply([$m->delete_multi(map { "${p}a$_" } 901 .. 1000)], [(1) x 100], 'delete_multi of 100 keys');
    is_deeply([$m->set_multi(map { ["${p}a$_", "a-v$_"] } 901 .. 1000)], [(1) x 100], 'set_multi of 100 items');
    is(($m->_scratch)[0], 0, '... the scratch is free after each');
}

# ----- a croak in the middle gives the scratch back -----
{
    my @k = keys_of('a', 100);
    ok(!eval { my $h = $m->get_multi(@k[0 .. 49], undef, @k[50 .. 99]); 1 }, 'get_multi with an undef key croaks');
    is(($m->_scratch)[0], 0, '... and the scratch is free again');
    ok(!eval { $m->set_multi((map { [$_, 1] } @k), 'notaref'); 1 }, 'set_multi croaks on its last argument');
    is(($m->_scratch)[0], 0, '... the scratch is free again');
    ok(!eval { $m->delete_multi(@k, {}); 1 }, 'delete_multi croaks on its last argument');
    is(($m->_scratch)[0], 0, '... the scratch is free again');
    is_deeply($m->get_multi(keys_of('a', 300)), want_of('a', 300), 'the next call works');
}

# ----- the namespace in front of many keys (hash_namespace: the core's prefix) -----
{
    my $ns = Mcpool->new({ servers => [$srv], namespace => "${p}" . ('n' x 40) . ':', hash_namespace => 1 });
    my @items = map { ["k$_", "ns-$_"] } 1 .. 300;
    is_deeply([$ns->set_multi(@items)], [(1) x 300], 'set_multi of 300 items with hash_namespace');
    my $h = $ns->get_multi(map { "k$_" } 1 .. 300);
    is_deeply($h, { map { ("k$_" => "ns-$_") } 1 .. 300 }, 'get_multi of them: filed under the keys given');
    is($m->get("${p}" . ('n' x 40) . ':k77'), 'ns-77', '... the namespace is in front on the server');
    is_deeply([$ns->delete_multi(map { "k$_" } 1 .. 300)], [(1) x 300], 'delete_multi of them');
    is_deeply($ns->get_multi(map { "k$_" } 1 .. 300), {}, '... all gone');
}

# ----- calls nested in callbacks, on the same object -----
{
    # What a callback runs: large calls on the same object, right answers counted; from the
    # first level, also a get_multi of references, whose thaw nests a level deeper.
    our $depth = 2;
    my ($mt, $deep, $calls, $bad) = (undef, 0, 0, 0);
    my $inner = sub {
        return if $depth >= 2;
        local $depth = $depth + 1;
        $calls++;
        my $h = $mt->get_multi(keys_of('a', 200), "${p}nope");
        $bad++ unless same($h, want_of('a', 200));
        my @r = $mt->set_multi(map { ["${p}in$_", "in$_"] } 1 .. 60);
        $bad++ unless "@r" eq join ' ', (1) x 60;
        my @d = $mt->delete_multi(map { "${p}in$_" } 1 .. 60);
        $bad++ unless "@d" eq join ' ', (1) x 60;
        if ($depth == 1 && $deep < 3) {
            $deep++;
            $h = $mt->get_multi(map { "${p}r$_" } 1 .. 40);
            $bad++ unless same($h, { map { ("${p}r$_" => { n => $_ }) } 1 .. 40 });
        }
    };
    $mt = Mcpool->new({ servers => [$srv], serialize_methods => [
        sub { $inner->(); Storable::nfreeze($_[0]) },
        sub { $inner->(); Storable::thaw($_[0]) },
    ] });
    $mt->set_multi(map { ["${p}r$_", { n => $_ }] } 1 .. 100);    # $depth 2: no nesting yet
    $depth = 0;
    my $h = $mt->get_multi(map { "${p}r$_" } 1 .. 100);
    is_deeply($h, { map { ("${p}r$_" => { n => $_ }) } 1 .. 100 },
        'get_multi of 100 references whose thaw calls get_multi, set_multi, delete_multi on the same object');
    is($calls, 100 + 3 * 40, '... nested calls ran (two deep for some)');
    is($bad, 0, '... each got its own right answer');
    is(($mt->_scratch)[0], 0, '... the scratch is free afterwards');

    ($calls, $bad, $deep) = (0, 0, 3);
    my @r = $mt->set_multi(map { ["${p}w$_", [$_]] } 1 .. 50);
    is_deeply(\@r, [(1) x 50], 'set_multi of 50 references whose freeze calls the same object');
    is($calls, 50, '... nested calls ran');
    is($bad, 0, '... right');
    $depth = 2;
    is_deeply($mt->get_multi(map { "${p}w$_" } 1 .. 50), { map { ("${p}w$_" => [$_]) } 1 .. 50 }, '... stored right');
    $depth = 0;

    # A tied key whose FETCH calls get_multi on the same object, among 100 keys.
    package NestedKey;
    sub TIESCALAR { my ($c, $f) = @_; return bless { f => $f } }
    sub FETCH { $_[0]{f}->(); return "${p}a7" }
    package main;
    ($calls, $bad) = (0, 0);
    tie my $t, 'NestedKey', $inner;
    my @k = keys_of('a', 100);
    $h = $m->get_multi(@k[0 .. 49], $t, @k[50 .. 99]);
    is_deeply($h, want_of('a', 100), 'get_multi of 100 keys, one of them tied (its FETCH calls get_multi)');
    $h = $mt->get_multi(@k[0 .. 49], $t, @k[50 .. 99]);
    is_deeply($h, want_of('a', 100), '... the FETCH calling the same object');
    is($calls, 2, '... FETCH ran once per call');
    is($bad, 0, '... the nested calls right');
    my @d = $mt->delete_multi((map { "${p}in$_" } 1 .. 40), $t);
    is($d[-1], 1, 'delete_multi with that tied key');
    $m->set("${p}a7", 'a-v7');
}

# ----- a callback dropping the last reference to the object during the call -----
{
    package Counted;
    our @ISA = ('Mcpool');
    our $destroyed = 0;
    sub DESTROY { $destroyed++; $_[0]->SUPER::DESTROY }
    package main;
    for my $n (20, 100) {
        my ($o, $calls) = (undef, 0);
        $o = Counted->new({ servers => [$srv], serialize_methods => [\&Storable::nfreeze, sub {
            undef $o if ++$calls == 3;
            return Storable::thaw($_[0]);
        }] });
        $o->set_multi(map { ["${p}d$n-$_", [$_]] } 1 .. $n);
        $Counted::destroyed = 0;
        my $h = $o->get_multi(map { "${p}d$n-$_" } 1 .. $n);
        is_deeply($h, { map { ("${p}d$n-$_" => [$_]) } 1 .. $n },
            "get_multi of $n keys whose thaw drops the last reference to the object: every value");
        is($Counted::destroyed, 1, '... and the object was destroyed after the call');
        ok(!defined $o, '... the variable is undef');

        $calls = 0;
        $o = Counted->new({ servers => [$srv], serialize_methods => [sub {
            undef $o if ++$calls == 3;
            return Storable::nfreeze($_[0]);
        }, \&Storable::thaw] });
        $Counted::destroyed = 0;
        my @r = $o->set_multi(map { ["${p}e$n-$_", [$_]] } 1 .. $n);
        is_deeply(\@r, [(1) x $n], "set_multi of $n items whose freeze drops the last reference: stored");
        is($Counted::destroyed, 1, '... and the object was destroyed after the call');
        is_deeply($m->get("${p}e$n-$n"), [$n], '... readable');
    }
}

# ----- fork: the child inherits a scratch (nothing in it is shared) -----
{
    is_deeply($m->get_multi(keys_of('a', 400)), want_of('a', 400), 'parent: a large call before fork');
    my @kids;
    for my $c (1 .. 2) {
        my $pid = fork() // die "fork: $!";
        if (!$pid) {
            my $bad = 0;
            for my $round (1 .. 20) {
                my $n = 100 + 40 * $round;
                my $h = $m->get_multi(keys_of('a', $n));
                $bad++ unless keys(%$h) == $n && !grep { $h->{"${p}a$_"} ne "a-v$_" } 1 .. $n;
                my @r = $m->set_multi(map { ["${p}f$c-$_", "f$c-$round"] } 1 .. 50);
                $bad++ unless @r == 50 && !grep { $_ ne '1' } @r;
                ($m->_scratch)[0] == 0 or $bad++;
            }
            exit($bad ? 1 : 0);    # a normal exit: the child's DESTROY frees its copy
        }
        push @kids, $pid;
    }
    my $bad = 0;
    for my $round (1 .. 20) {
        my $h = $m->get_multi(keys_of('a', 300));
        $bad++ unless keys(%$h) == 300 && !grep { $h->{"${p}a$_"} ne "a-v$_" } 1 .. 300;
    }
    is($bad, 0, 'parent: right answers while the children run');
    for my $pid (@kids) {
        waitpid $pid, 0;
        is($? >> 8, 0, "child $pid: right answers through the inherited scratch");
    }
    is_deeply($m->get_multi(map { "${p}f1-$_" } 1 .. 50), { map { ("${p}f1-$_" => 'f1-20') } 1 .. 50 },
        '... its writes arrived');
}

# ----- no scalar leaked on these paths -----
{
    my $mu = Mcpool->new({ servers => [$srv], utf8 => 1 });
    my @k = keys_of('a', 300);
    my $run = sub {
        my $h = $mu->get_multi(@k, "${p}nope");
        $h = $mu->gets_multi(@k);
        my @r = $mu->set_multi(map { ["${p}l$_", "\x{263a}$_"] } 1 .. 100);
        $h = $mu->get_multi(map { "${p}l$_" } 1 .. 100);
        @r = $mu->delete_multi(map { "${p}l$_" } 1 .. 100);
        eval { $h = $mu->get_multi(@k, undef) };
    };
    $run->() for 1 .. 3;
    my $before = Mcpool::_sv_count();
    $run->() for 1 .. 20;
    is(Mcpool::_sv_count() - $before, 0, 'no scalar leaked by the large calls');
}

done_testing;
