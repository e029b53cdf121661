# set_counter stores memcached's counter (decimal text, raw flags 0, never compressed)
# whatever the value format, so incr/decr work on it and every client reads it alike; a
# value that is not a decimal integer from 0 to 2**64-1 (memcached's counters) croaks rather
# than storing another number.
use strict;
use warnings;
use Test::More;
use IO::Socket::INET;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;

my $srv = start_memcached();

# (flags, body) of $key as memcached holds it, over a plain socket.
sub raw_get {
    my ($key) = @_;
    my $s = IO::Socket::INET->new(PeerAddr => $srv, Timeout => 5) or die "connect: $!";
    print $s "get $key\r\n";
    my $header = <$s>;
    return undef if $header =~ /^END/;
    my (undef, undef, $flags, $len) = split ' ', $header;
    read($s, my $body, $len);
    return [$flags, $body];
}

for my $fmt (qw(mcpool cache-memcached-fast cache-memcached pylibmc whalin spymemcached)) {
    my $m = Mcpool->new({ servers => [$srv], value_format => $fmt, compress_threshold => 1 });
    my $k = unique("ctr-$fmt");
    is($m->set_counter($k, 41), 1, "$fmt: set_counter stores");
    is_deeply(raw_get($k), [0, '41'], "$fmt: ... as decimal text with raw flags 0, uncompressed");
    is($m->incr($k), 42, "$fmt: ... and incr counts on it");
    is($m->set_counter($k, 0, 100), 1, "$fmt: 0, with an expiry");
    is_deeply(raw_get($k), [0, '0'], "$fmt: ... stored as its text");
    # memcached's counters are unsigned 64-bit: 2**64-1 (a UV, or its decimal string) is
    # stored (it croaked as not 64-bit) and incr wraps to 0 as memcached does
    is($m->set_counter($k, 18446744073709551615), 1, "$fmt: the largest, as a UV");
    is_deeply(raw_get($k), [0, '18446744073709551615'], "$fmt: ... stored as its text");
    is($m->incr($k), '0E0', "$fmt: ... and incr wraps to 0 ('0E0', Cache::Memcached::Fast's true zero)");
    is($m->set_counter($k, '18446744073709551615'), 1, "$fmt: the largest, as a string");
    is_deeply(raw_get($k), [0, '18446744073709551615'], "$fmt: ... stored as its text");
}

my $m = Mcpool->new({ servers => [$srv] });
my $k = unique('ctr-bad');
# a negative one (which was stored, a counter no incr takes), and anything not a decimal
# integer from 0 to 2**64-1
for my $bad (-1, '-0', '-9223372036854775808', 1.5, '1e3', ' 7', '', '-', '+1', '18446744073709551616',
    '99999999999999999999', 'x')
{
    ok(!eval { $m->set_counter($k, $bad); 1 }, "set_counter('$bad') croaks");
    like($@, qr/^set_counter "\Q$k\E": the value must be a decimal integer from 0 to 18446744073709551615 .*, not '\Q$bad\E'/,
        "... saying why, naming the key and the value (tester finding retest40 1)");
}
ok(!eval { $m->set_counter($k, undef); 1 }, 'set_counter(undef) croaks');
is(raw_get($k), undef, 'nothing was stored by any of them');

done_testing;
