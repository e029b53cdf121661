# serialize_methods' freeze returning a character string: stored as its characters when each
# is Latin-1 (downgraded, so thaw gets back what freeze returned), refused when it has wider
# characters (its UTF-8 bytes would thaw into another value), with or without compression.
use strict;
use warnings;
use utf8;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;

my $srv = start_memcached();
my $p = unique('freeze');
# freeze: the value's characters joined, as a character string (JSON without ->utf8 would be)
my $sm = [ sub { join "\x{1}", @{ $_[0] } }, sub { [ split /\x{1}/, $_[0] ] } ];

for my $threshold (-1, 10) {
    my $m = Mcpool->new({ servers => [$srv], serialize_methods => $sm,
                          compress_threshold => $threshold });
    my $k = "$p$threshold";
    my $latin = [ "caf\x{e9}" x 5, 'x' ];
    utf8::upgrade($_) for @$latin;
    ok($m->set("${k}l", $latin), "threshold $threshold: Latin-1 characters from freeze: stored");
    is_deeply($m->get("${k}l"), [ "caf\x{e9}" x 5, 'x' ], '... read back as the same characters');
    $m->set("${k}w", 'before');
    my $ok = eval { $m->set("${k}w", [ 'ключ' x 5, 'y' ]); 1 };
    ok(!$ok, '... wide characters from freeze: set croaks');
    like($@, qr/serialize method returned a character string with wide characters; it must return bytes/,
        '... saying freeze must return bytes');
    is($m->get("${k}w"), 'before', '... nothing stored');
    my $h = eval { $m->set_multi([ "${k}m", [ 'ключ', 'z' ] ]) };
    ok(!defined $h || !$h->{"${k}m"}, '... set_multi does not store it either');
    ok(!defined $m->get("${k}m"), '... (nothing under that key)');
}
done_testing;
