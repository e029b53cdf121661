# compress_ratio, side by side with Cache::Memcached::Fast: its POD's range is "between 0 and
# 1", and 0 is in it (no compressed form is ever short enough: every value stored plain).
# compress_ratio => 0 used to croak with the core's "not in (0, 1]" while this module's own
# refusal of 1.5 said "between 0 and 1": two ranges. Now 0 to 1 is accepted and what is
# outside is refused with one message.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use IO::Socket::INET;
use Cache::Memcached::Fast;
use Mcpool;

my $srv = start_memcached();
my $p = unique('cr');

# The flags memcached holds for a key (the raw item, nothing decoded), and whether its
# length is the plain text's (the compressed bytes themselves differ by the codec's level).
sub raw_meta {
    my $key = shift;
    my $s = IO::Socket::INET->new(PeerAddr => $srv, Timeout => 2) or die "connect: $!";
    print $s "get $key\r\n";
    my $line = <$s>;
    return $line =~ /^VALUE \S+ (\d+) (\d+)/ ? "flags $1, " . ($2 == 800 ? 'plain' : 'compressed')
        : 'miss';
}

my $text = 'abcd' x 200;    # compresses well
for my $ratio (0, 0.5, 1) {
    my %o = (servers => [$srv], compress_threshold => 10, compress_ratio => $ratio);
    my $cmf = Cache::Memcached::Fast->new({%o});
    my $mc = Mcpool->new({%o});
    ok($cmf->set("${p}cmf$ratio", $text), "compress_ratio $ratio: CMF stores");
    ok($mc->set("${p}mc$ratio", $text), "compress_ratio $ratio: Mcpool stores");
    is(raw_meta("${p}mc$ratio"), raw_meta("${p}cmf$ratio"), '... the same flags, both compressed or both plain');
    is($mc->get("${p}cmf$ratio"), $text, '... each reads the other');
    is($cmf->get("${p}mc$ratio"), $text, '...');
}
is(raw_meta("${p}mc0"), 'flags 0, plain', 'compress_ratio 0: stored plain');
is(raw_meta("${p}mc0.5"), 'flags 2, compressed', 'compress_ratio 0.5: compressed');

# Outside 0 to 1: one message, the range CMF's POD gives.
for my $bad (-0.1, 1.5, 'half') {
    ok(!eval { Mcpool->new({ servers => [$srv], compress_ratio => $bad }) },
       "compress_ratio $bad: refused");
    like($@, qr/^Mcpool->new: compress_ratio must be a number between 0 and 1 \(got '\Q$bad\E'\)/,
         '... saying the range');
}
# The core's own name, from its table: the same range.
ok(Mcpool->new({ servers => [$srv], compression_ratio => 0 }), 'compression_ratio 0: accepted');
ok(!eval { Mcpool->new({ servers => [$srv], compression_ratio => 1.5 }) },
   'compression_ratio 1.5: refused');
like($@, qr/option compression_ratio: .*not in \[0, 1\]/, '... the same range') or diag $@;

done_testing();
