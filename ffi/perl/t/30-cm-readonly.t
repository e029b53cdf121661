# Cache::Memcached's readonly (tester findings perlcompat 2, migrate 3): it got an "Unknown
# arguments" warning and then the client wrote. With readonly => 1 every command that writes
# sends nothing and answers as Cache::Memcached's refused commands (0 for the stores and
# delete, undef for incr and decr; the others by their kind), last_error saying why; reads
# work. Compared with Cache::Memcached itself where it has the command.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;

my $srv = start_memcached();
my $p = unique('ro');
my $rw = Mcpool->new({ servers => [$srv] });
my ($k, $n) = ("${p}k", "${p}n");
ok($rw->set($k, 'orig'), 'writer: set');
ok($rw->set($n, 5), 'writer: counter');

my @w;
my $ro = do {
    local $SIG{__WARN__} = sub { push @w, @_ };
    Mcpool->new({ servers => [$srv], readonly => 1 });
};
is("@w", '', 'readonly is known: no warning');
isa_ok($ro, 'Mcpool');

sub refused {
    my ($what, $got, $want) = @_;
    is($got, $want, "$what: " . ($want // 'undef'));
    like(Mcpool::last_error(), qr/read-only \(readonly => 1\): nothing sent/,
        "$what: last_error says read-only");
}

refused('set', $ro->set($k, 'new'), 0);
refused('add', $ro->add("${p}new", 'x'), 0);
refused('replace', $ro->replace($k, 'x'), 0);
refused('append', $ro->append($k, 'x'), 0);
refused('prepend', $ro->prepend($k, 'x'), 0);
refused('delete', $ro->delete($k), 0);
refused('remove', $ro->remove($k), 0);
refused('touch', $ro->touch($k, 100), 0);
refused('set_counter', $ro->set_counter($n, 9), 0);
my $cas = $rw->gets($k);
refused('cas', $ro->cas($k, $cas->[0], 'x'), 0);
refused('incr', $ro->incr($n), undef);
refused('decr', $ro->decr($n, 2), undef);
refused('gat', scalar $ro->gat(100, $k), undef);
refused('gats', scalar $ro->gats(100, $k), undef);
is_deeply([ $ro->set_multi([$k, 'a'], ["${p}x", 'b']) ], [0, 0], 'set_multi: 0 per item');
is_deeply(scalar $ro->set_multi([$k, 'a'], ["${p}x", 'b']), { $k => 0, "${p}x" => 0 },
    'set_multi (scalar): 0 per key');
is_deeply([ $ro->delete_multi($k, [$n, 0]) ], [0, 0], 'delete_multi: 0 per item');
is_deeply([ $ro->incr_multi($n, [$n, 3]) ], [undef, undef], 'incr_multi: undef per item');
is_deeply(scalar $ro->incr_multi($n), {}, 'incr_multi (scalar): no defined result');
is_deeply($ro->gat_multi(100, $k), {}, 'gat_multi: nothing');
refused('flush_all', scalar(keys %{ $ro->flush_all }), 0);

# nothing reached the server; reads work
is($rw->get($k), 'orig', 'the value is untouched');
is($rw->get($n), 5, 'the counter is untouched');
is($rw->get("${p}new"), undef, 'nothing added');
is($rw->get("${p}x"), undef, 'nothing from set_multi');
is($ro->get($k), 'orig', 'readonly: get works');
is(Mcpool::last_error(), '', '... last_error empty');
is_deeply($ro->get_multi($k, $n), { $k => 'orig', $n => 5 }, 'readonly: get_multi works');
is($ro->gets($k)->[1], 'orig', 'readonly: gets works');

# with a callback (Mcpool::Hooked) and in a subclass: still read-only
{
    package My::Client;
    our @ISA = ('Mcpool');
    sub mine { 'mine' }
}
my @ops;
for my $c (
    Mcpool->new({ servers => [$srv], readonly => 1, on_operation => sub { push @ops, @_ } }),
    My::Client->new({ servers => [$srv], readonly => 1 }),
    My::Client->new({ servers => [$srv], readonly => 1, on_server_event => sub { } }),
) {
    my $cls = ref $c;
    refused("$cls set", $c->set($k, 'hooked'), 0);
    is($c->get($k), 'orig', "$cls: get works");
    isa_ok($c, 'Mcpool');
}
is(My::Client->new({ servers => [$srv], readonly => 1 })->mine, 'mine', 'subclass keeps its methods');
is($rw->get($k), 'orig', 'still untouched');

# readonly => 0 writes
my $w0 = Mcpool->new({ servers => [$srv], readonly => 0 });
ok($w0->set($k, 'written'), 'readonly => 0: set stores');
is($rw->get($k), 'written', '... the value');

SKIP: {
    skip 'Cache::Memcached is not installed', 4 unless eval { require Cache::Memcached; 1 };
    my $cm = Cache::Memcached->new({ servers => [$srv], readonly => 1 });
    is($ro->set($k, 'x'), $cm->set($k, 'x'), 'set answers as Cache::Memcached\'s');
    is($ro->delete($k), $cm->delete($k), 'delete answers as Cache::Memcached\'s');
    is($ro->incr($n), $cm->incr($n), 'incr answers as Cache::Memcached\'s');
    is($rw->get($k), 'written', 'neither wrote');
}

done_testing();
