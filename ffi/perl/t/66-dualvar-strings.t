# A dualvar whose string is not a number is stored as its string, as Cache::Memcached::Fast
# stores it: `set('err', $!)` keeps the message, not errno (tester finding perlteam2 1: it
# stored 2). A float Perl has printed is still stored as the text that reads back as the
# same number (tester finding interop 2), and a numeric string as its bytes.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;
use Cache::Memcached::Fast;
use Scalar::Util qw(dualvar);

my $srv = start_memcached();
my $m   = Mcpool->new({ servers => [$srv] });
my $cmf = Cache::Memcached::Fast->new({ servers => [$srv] });
my $p   = unique('dual');

my $errno;
{
    local $! = 2;    # ENOENT
    $errno = $!;     # a copy keeps both forms
    ok($m->set("$p:errno", $!), 'set $! itself');
}
is($m->get("$p:errno"), "$errno", '$! is stored as its message');

my %cases = (
    dual_float_text => sub { dualvar(5.5, 'x') },
    dual_int_text   => sub { dualvar(5, 'five') },
    dual_zero_pad   => sub { dualvar(5, '07') },
    numeric_string  => sub { my $s = '19.90'; my $n = $s + 0; $s },
    printed_float   => sub { my $x = 0.1 + 0.2; my $s = "$x"; $x },
);
for my $name (sort keys %cases) {
    ok($m->set("$p:m:$name", $cases{$name}->()), "Mcpool stores $name");
    ok($cmf->set("$p:c:$name", $cases{$name}->()), "Cache::Memcached::Fast stores $name");
}
for my $name (qw(dual_float_text dual_int_text dual_zero_pad numeric_string)) {
    is($m->get("$p:m:$name"), $cmf->get("$p:c:$name"), "$name: the same text as Cache::Memcached::Fast");
}
is($m->get("$p:m:dual_float_text"), 'x', 'dualvar(5.5, "x") is "x"');
# a float Perl printed as "0.3" stays the number it is (documented: longer float text)
is($m->get("$p:m:printed_float"), '0.30000000000000004', 'a printed float reads back as itself');

done_testing;
