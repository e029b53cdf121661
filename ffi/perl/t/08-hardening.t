# Issue 15, Perl parts, against real memcached:
#   item 2: forged or thawed Mcpool objects cannot crash the process (each case runs in a
#           child process, so that a crash fails its test instead of ending the suite), and
#           the deserialize => 0 switch;
#   item 5: max_size => -1 (a huge value once cast) is refused at construction;
#   item 11: numeric options given non-numbers or negative numbers, a reference as namespace:
#           a croak at construction naming the option; a value that thaws to undef is a miss.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;
use Config;
use IO::Socket::INET;
use POSIX ();
use Storable ();

my $srv = start_memcached();
my $m = Mcpool->new({ servers => [$srv] });
my $p = unique('hard');

# Stores raw bytes with the given flags, as any writer of the cache could.
sub raw_set {
    my ($key, $flags, $bytes) = @_;
    my $s = IO::Socket::INET->new(PeerAddr => $srv, Timeout => 5) or die "connect: $!";
    print $s "set $key $flags 0 " . length($bytes) . " noreply\r\n$bytes\r\n";
    print $s "mn\r\n";
    my $line = <$s>;    # "MN": every earlier command was processed
    die "raw_set: unexpected answer " . ($line // 'EOF') unless ($line // '') =~ /^MN/;
}

# Runs $code in a child process: passes when the child exits 0 (its checks die with a message
# on failure); a crash (a signal) or a non-zero exit fails the test, which names the status.
sub in_child {
    my ($name, $code) = @_;
    my $pid = fork() // die "fork: $!";
    if (!$pid) {
        my $ok = eval { $code->(); 1 };
        print STDERR "# child: $@" unless $ok;
        POSIX::_exit($ok ? 0 : 1);
    }
    my ($r, $deadline) = (0, time + 60);
    while (time < $deadline) {
        $r = waitpid($pid, POSIX::WNOHANG());
        last if $r == $pid;
        select undef, undef, undef, 0.02;
    }
    if ($r != $pid) {
        kill 'KILL', $pid;
        waitpid $pid, 0;
        return fail("$name (the child did not finish in 60 s)");
    }
    my $st = $?;
    ok($st == 0, $name) or diag(($st & 127) ? "child killed by signal " . ($st & 127)
                                            : "child exit status " . ($st >> 8));
}

sub croaks_like {
    my ($code, $re, $what) = @_;
    my $ok = eval { $code->(); 1 };
    die "$what: did not croak\n" if $ok;
    die "$what: croaked '$@', expected $re\n" unless $@ =~ $re;
}

# ----- item 2: forged handles -----

my $forged = Storable::nfreeze(bless(\(my $x = 4242), 'Mcpool'));
raw_set("${p}forged", 1, $forged);
raw_set("${p}forged-big", 1, Storable::nfreeze(bless(\(my $y = 2**47 + 12345), 'Mcpool')));
$m->set("${p}plain", 'plain value');

in_child('item 2: a cached Storable of bless(\4242, "Mcpool") read by get: no crash, refused as a handle', sub {
    my $v = $m->get("${p}forged");
    die "get did not thaw it: " . (ref $v || 'not a reference') . "\n" unless ref $v eq 'Mcpool';
    croaks_like(sub { $v->get('a') }, qr/not an Mcpool object/, 'get on the thawed object');
    croaks_like(sub { $v->set('a', 1) }, qr/not an Mcpool object/, 'set on the thawed object');
    croaks_like(sub { $v->get_multi('a', 'b') }, qr/not an Mcpool object/, 'get_multi on it');
    croaks_like(sub { $v->namespace('x') }, qr/not an Mcpool object/, 'namespace on it');
    $v->DESTROY;    # called by hand: harmless too
    undef $v;       # DESTROY of the thawed object
    my $h = $m->get_multi("${p}forged", "${p}forged-big", "${p}plain");
    die "get_multi: the values\n" unless ref $h->{"${p}forged"} eq 'Mcpool' && $h->{"${p}plain"} eq 'plain value';
    undef $h;    # DESTROY of two thawed objects
    my $g = $m->gets("${p}forged-big");
    undef $g;
    my $t = $m->gat(0, "${p}forged");
    undef $t;
    die "the real client stopped working\n" unless $m->get("${p}plain") eq 'plain value';
});

in_child('item 2: pure Perl Mcpool::get(bless(\12345, "Mcpool"), "a") croaks, its DESTROY is harmless', sub {
    croaks_like(sub { Mcpool::get(bless(\(my $n = 12345), 'Mcpool'), 'a') }, qr/not an Mcpool object/,
        'Mcpool::get with a forged object');
    croaks_like(sub { Mcpool::set(bless(\(my $n = 12345), 'Mcpool'), 'a', 1) }, qr/not an Mcpool object/,
        'Mcpool::set with a forged object');
    { my $f = bless \(my $n = 12345), 'Mcpool'; }    # DESTROY at the end of the scope
    Mcpool::DESTROY(bless \(my $n = 99), 'Mcpool');
    Mcpool::DESTROY(bless [], 'Mcpool');
    Mcpool::DESTROY('not even a reference');
    { my $f = bless {}, 'Mcpool'; }
    die "the real client stopped working\n" unless $m->get("${p}plain") eq 'plain value';
});

in_child('item 2: a copy of a real handle (its inner scalar, a dclone) is no handle; the original keeps working', sub {
    ok_die(!defined $$m, 'the inner scalar holds no address');
    my $copy = bless \(my $c = $$m), 'Mcpool';
    croaks_like(sub { $copy->get('a') }, qr/not an Mcpool object/, 'a copy of the inner scalar');
    undef $copy;
    my $clone = Storable::dclone($m);
    croaks_like(sub { $clone->get('a') }, qr/not an Mcpool object/, 'a dclone');
    undef $clone;
    croaks_like(sub { ${$m} = 5 }, qr/read-only/, 'the inner scalar is read-only');
    die "the real client stopped working\n" unless $m->get("${p}plain") eq 'plain value';
});

sub ok_die { die "$_[1]\n" unless $_[0] }

SKIP: {
    skip 'perl without ithreads', 1 unless $Config{useithreads} && eval { require threads; 1 };
    in_child('item 2: ithreads: the handle is not cloned into a thread; no double free at join', sub {
        my $t = Mcpool->new({ servers => [$srv] });
        $t->set("${p}thr", 'before');
        my $in = threads->create(sub {
            return 'an Mcpool object' if ref $t eq 'Mcpool';
            return 'usable' if eval { Mcpool::get($t, "${p}thr"); 1 };
            return $@ =~ /not an Mcpool object/ ? 'refused' : "croaked: $@";
        })->join;
        die "in the thread the object is $in\n" unless $in eq 'refused';
        die "the parent's client stopped working\n" unless $t->get("${p}thr") eq 'before';
        undef $t;
    });
}
SKIP: {
    skip 'perl without ithreads', 1 unless $Config{useithreads} && eval { require threads; 1 };
    {
        package Mcpool::Cloned;    # asks to be cloned into threads, against Mcpool's CLONE_SKIP
        our @ISA = ('Mcpool');
        sub CLONE_SKIP { 0 }
    }
    in_child('item 2: ithreads: a cloned handle holds no client in the thread; no double free at join', sub {
        my $t = Mcpool::Cloned->new({ servers => [$srv] });
        $t->set("${p}thr2", 'before');
        my $in = threads->create(sub {
            return 'not cloned' unless ref $t eq 'Mcpool::Cloned';
            return 'usable (shares the parent\'s client)' if eval { $t->get("${p}thr2"); 1 };
            return $@ =~ /this client has been destroyed/ ? 'refused' : "croaked: $@";
        })->join;
        die "in the thread the object is $in\n" unless $in eq 'refused';
        die "the parent's client stopped working\n" unless $t->get("${p}thr2") eq 'before';
        undef $t;
    });
}

# ----- item 2: the deserialize switch -----
{
    my $nd = Mcpool->new({ servers => [$srv], deserialize => 0 });
    my $ref = { a => [1, 2] };
    ok($m->set("${p}ref", $ref), 'a reference stored (Storable, flag 1)');
    is_deeply($m->get("${p}ref"), $ref, 'default (no deserialize option): thawed, as Cache::Memcached::Fast');
    is_deeply(Mcpool->new({ servers => [$srv], deserialize => 1 })->get("${p}ref"), $ref, 'deserialize => 1: thawed');

    my @w;
    local $SIG{__WARN__} = sub { push @w, @_ };
    is_deeply([$nd->get("${p}ref")], [], 'item 2: deserialize => 0: get of a Storable-flagged value returns nothing');
    like("@w", qr/^Mcpool::get: MCPOOL_VALUE_FORMAT: key "\Q${p}ref\E" with flags 1 \(0x1\): the value is flagged Storable \(serialized\) and deserialize is off/,
        '... with a warning naming the key');
    like(Mcpool::last_error(), qr/^key "\Q${p}ref\E" with flags 1 \(0x1\): the value is flagged Storable/,
        '... and last_error (an error, never a miss: t/49-deserialize-off-last-error.t)');
    @w = ();
    is_deeply([$nd->gets("${p}ref")], [], 'deserialize => 0: gets returns nothing');
    is_deeply([$nd->gat(0, "${p}ref")], [], 'deserialize => 0: gat returns nothing');
    is(scalar(@w), 2, '... each with a warning');
    @w = ();
    is_deeply($nd->get_multi("${p}ref", "${p}plain"), { "${p}plain" => 'plain value' },
        'deserialize => 0: get_multi leaves the Storable-flagged value out');
    like("@w", qr/^Mcpool::get_multi: MCPOOL_VALUE_FORMAT: key "\Q${p}ref\E" with flags 1 \(0x1\): the value is flagged Storable/, '... with a warning');
    @w = ();
    is_deeply($nd->get_multi("${p}ref", "${p}plain", "${p}forged", "${p}forged-big"), { "${p}plain" => 'plain value' },
        'deserialize => 0: get_multi of several refused values (no object is made)');
    is(scalar(@w), 3, '... one warning for each');
    @w = ();
    is_deeply($nd->gets_multi("${p}ref"), {}, 'deserialize => 0: gets_multi of one key');
    is_deeply([$nd->get("${p}forged")], [], 'deserialize => 0: the forged handle is never made');
    is($nd->get("${p}plain"), 'plain value', 'deserialize => 0: plain values are returned');
    my $frozen = Storable::nfreeze($ref);
    ok($m->set("${p}frozen-plain", $frozen), 'Storable bytes stored as a plain string');
    is($nd->get("${p}frozen-plain"), $frozen, '... are returned as they are (not flagged)');
    @w = ();
    ok($nd->set("${p}ref2", $ref), 'deserialize => 0 still stores references (serialized, flag 1)');
    is_deeply($m->get("${p}ref2"), $ref, '... which a reader that thaws reads');
    is("@w", '', 'no warning for anything else');

    # A __WARN__ handler that dies: the call dies after its result was made; nothing leaks.
    local $SIG{__WARN__} = sub { die "warned: $_[0]" };
    my $before = Mcpool::_sv_count();
    for (1 .. 20) {
        eval { my $h = $nd->get_multi("${p}ref", "${p}plain", "${p}forged"); };
        eval { my @r = $nd->get("${p}ref"); };
    }
    like($@, qr/^warned: Mcpool::get:/, 'deserialize => 0 and a dying __WARN__ handler: the call dies');
    cmp_ok(Mcpool::_sv_count() - $before, '<', 20, '... and leaks nothing');
}

# ----- item 11 (and item 5): options refused at construction -----
my %numeric = (
    io_timeout => 1, select_timeout => 1, connect_timeout => 1, failure_timeout => 1,
    max_failures => 1, ketama_points => 1, max_size => 1, pool_size => 1,
    compress_threshold => 0, compress_ratio => 0,
);
for my $opt (sort keys %numeric) {
    for my $bad ('abc', '', '1abc', [1], 9**9**9, -9**9**9, 'nan') {
        my $shown = ref $bad ? 'a reference' : "'$bad'";
        my $ok = eval { local $SIG{__WARN__} = sub {}; Mcpool->new({ servers => [$srv], $opt => $bad }); 1 };
        ok(!$ok, "item 11: $opt => $shown croaks at construction");
        # a number and a word ('1abc') is the core's to read, as a duration with a unit
        like($@, qr/^Mcpool->new: $opt(?: must be |: option \w+: bad value "1abc": not a duration)/,
             '... naming the option: ' . ($@ =~ s/ at .*//sr));
    }
    next unless $numeric{$opt};    # a negative number has a meaning (off) for the other two
    ok(!eval { Mcpool->new({ servers => [$srv], $opt => -1 }); 1 }, "item 11: $opt => -1 croaks");
    # (pool_size's range is the core's: tester finding retest49 2)
    like($@, qr/^Mcpool->new: $opt(?: must be |: option max_size: bad value "-1": out of range 1 to 65536)/,
        '... naming the option: ' . ($@ =~ s/ at .*//sr));
}
ok(!eval { Mcpool->new({ servers => [$srv], max_size => -1 }); 1 }, 'item 5: max_size => -1 croaks at construction');
like($@, qr/max_size must be a number between 1 and 1073741824/, '... with the range');
ok(!eval { Mcpool->new({ servers => [$srv], max_size => 2**30 + 1 }); 1 }, 'item 5: max_size over 1 GiB croaks');
ok(!eval { Mcpool->new({ servers => [$srv], max_size => 0 }); 1 }, 'max_size => 0 croaks');
ok(!eval { Mcpool->new({ servers => [$srv], pool_size => 0 }); 1 }, 'pool_size => 0 croaks');
ok(!eval { Mcpool->new({ servers => [$srv], io_timeout => 2e9 }); 1 }, 'io_timeout of 2e9 s croaks');
ok(!eval { Mcpool->new({ servers => [$srv], max_failures => 2**32 }); 1 }, 'max_failures of 2**32 croaks');
for my $w ('abc', 2**32, 9**9**9, 'nan', [1]) {
    my $shown = ref $w ? 'a reference' : "'$w'";
    ok(!eval { local $SIG{__WARN__} = sub {}; Mcpool->new({ servers => [[$srv, $w]] }); 1 },
        "item 11: server weight $shown croaks");
    like($@, qr/weight/, '... naming the weight');
}
{
    my $ok = Mcpool->new({
        servers => [[$srv, 3]], io_timeout => 0, connect_timeout => '0.5', select_timeout => 2,
        failure_timeout => 0, max_failures => 0, ketama_points => 0, max_size => 2**30,
        pool_size => 1, compress_threshold => -1, compress_ratio => 1,
    });
    ok($ok->set("${p}edge", 'v'), 'the edges of every range are accepted (and the client works)');
    ok(Mcpool->new({ servers => [$srv], io_timeout => ' 1.5 ' }), 'a number in a string with spaces is fine');
}
# The core's duration forms under the Cache::Memcached::Fast names, in any case and with white
# space, as every core option reads them (tester finding options 3: '1.5S' and ' 2s' were
# refused there, accepted under operation_timeout). '300MS' against a silent listener ends the
# read after about 0.3 s (a bare 300 would be seconds).
for my $name (qw(io_timeout connect_timeout select_timeout failure_timeout)) {
    for my $v ('250MS', '1.5S', ' 2s', '.5s', '2 s', '500 us') {
        ok(Mcpool->new({ servers => [$srv], $name => $v }), "$name '$v' is a duration");
    }
    ok(!eval { Mcpool->new({ servers => [$srv], $name => '5 parsecs' }); 1 }, "$name '5 parsecs' croaks");
    like($@, qr/\Q$name\E/, '... naming it');
}
{
    my $silent = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => 0, Listen => 5)
        or die "listen: $!";
    my $m = Mcpool->new({ servers => ['127.0.0.1:' . $silent->sockport], io_timeout => '300MS' });
    my $t0 = time;
    ok(!defined $m->get('k'), 'a silent server: no value');
    cmp_ok(time - $t0, '<', 20, "io_timeout '300MS' is 0.3 s, not 300 s");
}

for my $ns ([], {}, \'x', sub { 1 }) {
    ok(!eval { Mcpool->new({ servers => [$srv], namespace => $ns }); 1 },
        'item 11: a reference (' . ref($ns) . ') as namespace croaks at construction');
    like($@, qr/^Mcpool->new: namespace must be a string, not a reference/, '... naming the option');
}
ok(!eval { $m->namespace([]); 1 }, 'item 11: namespace([]) (the setter) croaks');
like($@, qr/^Mcpool::namespace: the namespace must be a string, not a reference/, '... with a message');
is($m->namespace, '', '... and the namespace is unchanged');
{
    package NsObj;
    use overload '""' => sub { 'ov:' }, fallback => 1;
    package main;
    my $o = Mcpool->new({ servers => [$srv], namespace => bless({}, 'NsObj') });
    ok($o->set("${p}ov", 'v'), 'an object with overloaded "" as namespace is its string');
    is($m->get("ov:${p}ov"), 'v', '... stored under that prefix');
}
ok(!eval { Mcpool->new({ servers => [$srv], distribution => [] }); 1 }, 'a reference as distribution croaks');
{
    my $long = 'n' x 251;
    ok(!eval { Mcpool->new({ servers => [$srv], namespace => $long }); 1 }, 'a namespace over 250 bytes croaks');
    like($@, qr/^Mcpool->new: namespace: .*251 bytes is longer than the limit of 250/, '... with the core\'s message, naming it');
    my $before = Mcpool::_sv_count();
    eval { Mcpool->new({ servers => [$srv], namespace => $long }) } for 1 .. 50;
    cmp_ok(Mcpool::_sv_count() - $before, '<', 50, '... and a croak in the middle of construction frees what it made');
}
ok(!eval { Mcpool->new({ servers => [{ address => [$srv] }] }); 1 }, 'a reference as a server address croaks');

# ----- item 11: a value that thaws to undef is a miss -----
{
    my $u = Mcpool->new({ servers => [$srv], serialize_methods => [\&Storable::nfreeze, sub { undef }] });
    ok($u->set("${p}u1", [1]), 'a value whose thaw returns undef');
    ok($u->set("${p}u2", [2]), '... and another');
    is_deeply([$u->get("${p}u1")], [], 'item 11: a value that thaws to undef: get returns nothing (a miss)');
    is_deeply([$u->gets("${p}u1")], [], '... gets too');
    is_deeply([$u->gat(0, "${p}u1")], [], '... gat too');
    is_deeply($u->get_multi("${p}u1"), {}, '... get_multi of one key leaves it out');
    is_deeply($u->get_multi("${p}u1", "${p}u2", "${p}plain"), { "${p}plain" => 'plain value' },
        '... get_multi of several keys leaves them out');
    is_deeply($u->gets_multi("${p}u1", "${p}u2"), {}, '... gets_multi too');
}

done_testing;
