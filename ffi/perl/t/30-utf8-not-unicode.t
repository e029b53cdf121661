# utf8 => 1 and strings that are not Unicode text (tester finding perlcompat 4): a surrogate
# or a code point above U+10FFFF is refused (an error, nothing sent), where
# Cache::Memcached::Fast stores Perl's extended encoding; reading that copy here is an error
# with a warning, never a wrong string. The POD lists it among the differences.
use strict;
use warnings;
no warnings 'utf8';
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;

my $srv = start_memcached();
my $p = unique('u8');
my $m = Mcpool->new({ servers => [$srv], utf8 => 1 });
my $cmf = eval { require Cache::Memcached::Fast; Cache::Memcached::Fast->new({ servers => [$srv], utf8 => 1 }) };

for my $v ("a\x{d800}b", "\x{110000}") {
    my $name = sprintf 'U+%X', ord($v =~ s/^a//r);
    is($m->set("${p}m", $v), undef, "$name: set refused");
    like(Mcpool::last_error(), qr/not a valid text \(UTF-8\)/, "$name: ... last_error says why");
    is($m->get("${p}m"), undef, "$name: ... nothing stored");
  SKIP: {
        skip 'Cache::Memcached::Fast is not installed', 3 unless $cmf;
        ok($cmf->set("${p}c", $v), "$name: Cache::Memcached::Fast stores it");
        my @w;
        local $SIG{__WARN__} = sub { push @w, @_ };
        is($m->get("${p}c"), undef, "$name: its copy is not returned here");
        like("@w", qr/the body is not UTF-8: not returned/, "$name: ... with a warning");
    }
}

done_testing();
