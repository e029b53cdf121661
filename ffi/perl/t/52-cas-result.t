# cas_result (an mcpool extension): cas's arguments, checks and command, answering 'stored',
# 'exists' (changed since gets: re-read and retry) or 'not_found' (gone: add it), where cas
# answers '' for both "no"s (Cache::Memcached::Fast's answers, kept) and a retry loop could
# not tell them apart (tester finding cas2 3). Java's casResult, C's MCPOOL_EXISTS /
# MCPOOL_NOT_FOUND and Python's True/False/None tell them apart already. Errors: undef,
# last_error set, as cas; and cas (so cas_result) is an error under fail_open too, never a
# "not stored" (a cas whose reply was lost may have been applied).
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;
use IO::Socket::INET;

my $srv = start_memcached();

sub closed_port {
    my $s = IO::Socket::INET->new(Listen => 1, LocalAddr => '127.0.0.1', LocalPort => 0) or die $!;
    my $port = $s->sockport;
    close $s;
    return "127.0.0.1:$port";
}

# memcached's TTL of the item (seconds left; undef: never expires; 'miss' when it is gone)
my $meta = Mcpool->new({ servers => [$srv], protocol => 'meta' });
sub backend_ttl {
    my $i = $meta->meta_info(shift);
    return $i ? $i->{ttl} : 'miss';
}

for my $proto (qw(text binary meta)) {
    my $m = Mcpool->new({ servers => [$srv], protocol => $proto });
    my $other = Mcpool->new({ servers => [$srv], protocol => $proto });
    my $k = unique("casr-$proto");
    ok($m->can('cas_result'), "$proto: cas_result exists");

    # stored
    ok($m->set($k, 'v1'), "$proto: set");
    my $cv = $m->gets($k);
    my @r = $m->cas_result($k, $cv->[0], 'v2');
    is_deeply(\@r, ['stored'], "$proto: cas_result with the current token: 'stored' (one value)");
    is($m->get($k), 'v2', '... the new value');
    is(Mcpool::last_error(), '', '... no error');

    # exists: another client changed it since gets
    $cv = $m->gets($k);
    ok($other->set($k, 'changed'), "$proto: another client changes the item");
    is($m->cas_result($k, $cv->[0], 'mine'), 'exists', "$proto: changed since gets: 'exists'");
    is($m->get($k), 'changed', '... not stored');
    is(Mcpool::last_error(), '', '... no error (an answer)');
    is($m->cas($k, $cv->[0], 'mine'), '', "$proto: cas answers '' there, as Cache::Memcached::Fast");
    is($m->get($k), 'changed', '... not stored either');

    # not_found: gone since gets
    $cv = $m->gets($k);
    ok($other->delete($k), "$proto: another client deletes the item");
    is($m->cas_result($k, $cv->[0], 'mine'), 'not_found', "$proto: gone since gets: 'not_found'");
    ok(!defined $m->get($k), '... nothing stored');
    is(Mcpool::last_error(), '', '... no error (an answer)');
    is($m->cas($k, $cv->[0], 'mine'), '', "$proto: cas answers '' there too");
    ok(!defined $m->get($k), '... nothing stored either');

    # the value serialized and the time given as cas's
    ok($m->set($k, 'plain'), "$proto: the old value");
    $cv = $m->gets($k);
    is($m->cas_result($k, $cv->[0], { a => [1, 2] }, 100), 'stored', "$proto: a reference, with a time");
    is_deeply($m->get($k), { a => [1, 2] }, '... reads back as the structure (serialized as cas does)');
    my $ttl = backend_ttl($k);
    ok(defined $ttl && $ttl ne 'miss' && $ttl > 90 && $ttl <= 100, '... with its expiration time')
        or diag 'ttl: ' . ($ttl // 'undef (never expires)');
    $cv = $m->gets($k);
    is($m->cas_result($k, "$cv->[0]", 'by string'), 'stored', "$proto: the token as a string");
    is($m->get($k), 'by string', '... stored');

    # errors: undef, last_error set, the item untouched
    ok($m->set($k, 'orig'), "$proto: the old value");
    $cv = $m->gets($k);
    ok(!defined $m->cas_result($k, 0, 'new'), "$proto: cas_result with 0: undef");
    like(Mcpool::last_error(), qr/^cas "\Q$k\E": invalid cas: 0/, '... last_error names cas and the key');
    is($m->get($k), 'orig', '... nothing stored');
    ok(!defined $m->cas_result($k, "$cv->[0]abc", 'new'), "$proto: a token cas refuses: undef");
    like(Mcpool::last_error(),
         qr/^cas "\Q$k\E": the CAS unique must be a decimal integer from 1 to 18446744073709551615/,
         '... last_error names the call, the key and why');
    is($m->gets($k)->[0], $cv->[0], '... the item untouched');
    ok(!defined $m->cas_result($k, $cv->[0], 'new', 2**31), "$proto: a time above 2**31-1: undef");
    like(Mcpool::last_error(), qr/^cas "\Q$k\E": invalid ttl: 2147483648/, '... last_error names the time');
    is($m->get($k), 'orig', '... nothing stored');
    ok(!eval { $m->cas_result($k, $cv->[0]); 1 }, "$proto: without a value: croaks");
    like($@, qr/^Usage: \$memd->cas_result\(\$key, \$cas, \$value\[, \$expiration_time\]\)/, '... with the usage');
    ok(!eval { $m->cas_result(undef, $cv->[0], 'x'); 1 }, "$proto: an undef key croaks");
    like($@, qr/^Mcpool::cas_result: the key is undef/, '... naming cas_result');
    is($m->cas_result($k, $cv->[0], 'new'), 'stored', "$proto: after them, the token still stores");
}

# an unreachable server: undef and last_error, with fail_open too (cas is never failed open)
{
    my $down = closed_port();
    my $k = unique('casr-down');
    my $strict = Mcpool->new({ servers => [$down] });
    ok(!defined $strict->cas_result($k, 12345, 'v'), 'unreachable: cas_result is undef');
    like(Mcpool::last_error(), qr/^cas "\Q$k\E": .*\Q$down\E/, '... last_error names the server');

    my $open = Mcpool->new({ servers => [$down], fail_open => 1 });
    ok(!defined $open->cas($k, 12345, 'v'), 'fail_open: cas on an unreachable server is undef, not false');
    like(Mcpool::last_error(), qr/^cas "\Q$k\E": .*\Q$down\E/, '... last_error set, naming the server');
    ok(!defined $open->cas_result($k, 12345, 'v'), 'fail_open: cas_result is undef too');
    like(Mcpool::last_error(), qr/^cas "\Q$k\E": .*\Q$down\E/, '... last_error set');
    is($open->metrics->{$down}{fail_open_not_stored}, 0, '... neither was failed open');
    my $s = $open->set($k, 'v');
    ok(defined $s && !$s, 'fail_open is on: set there is not stored (false), not undef');
    is($open->metrics->{$down}{fail_open_not_stored}, 1, '... and counted as failed open');
}

# the other kinds of client: with callbacks, read-only, without servers
{
    my $k = unique('casr-kinds');
    my @ops;
    my $hooked = Mcpool->new({ servers => [$srv], on_operation => sub { push @ops, $_[0] } });
    ok($hooked->set($k, 'a'), 'hooked: set');
    my $cv = $hooked->gets($k);
    ok($hooked->set($k, 'b'), 'hooked: changed');
    @ops = ();
    is($hooked->cas_result($k, $cv->[0], 'c'), 'exists', "with on_operation: 'exists'");
    is(scalar @ops, 1, '... one record delivered');

    my $ro = Mcpool->new({ servers => [$srv], readonly => 1 });
    $cv = $hooked->gets($k);
    ok(!defined $ro->cas_result($k, $cv->[0], 'ro'), 'readonly: cas_result is undef');
    like(Mcpool::last_error(), qr/^cas_result "\Q$k\E": this client is read-only/, '... last_error says why');
    is($hooked->get($k), 'b', '... nothing sent');
    is($hooked->cas_result($k, $cv->[0], 'rw'), 'stored', '... the token still stores elsewhere');

    my $none = do { local $SIG{__WARN__} = sub { }; Mcpool->new() };
    ok(!defined $none->cas_result($k, 1, 'x'), 'no servers: cas_result is undef');
    like(Mcpool::last_error(), qr/^cas_result: no servers/, '... last_error says why');
}

stop_memcached($srv);
done_testing;
