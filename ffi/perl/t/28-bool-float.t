# Perl 5.36+ booleans are stored as the format's boolean, and a floating-point number as the
# text that reads back as the same number (tester findings interop 1 and 2: a boolean read
# from Python's True and stored back became the bytes "1"; 0.1 + 0.2 was stored as "0.3").
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;
use IO::Socket::INET;

my $srv = start_memcached();
my $p   = unique('bf');
my $BOOL = (1 << 24) | 3 << 16;

sub raw_get {    # (flags, bytes) as stored
    my ($k) = @_;
    my $s = IO::Socket::INET->new(PeerAddr => $srv, Timeout => 5) or die "connect: $!";
    binmode $s;
    print $s "get $k\r\n";
    my $buf = '';
    for (1 .. 1000) {
        last if $buf =~ /END\r\n\z/;
        my $n = sysread $s, $buf, 1 << 16, length $buf;
        last unless $n;
    }
    return unless $buf =~ /\AVALUE \S+ (\d+) (\d+)\r\n/;
    return ($1, substr($buf, length($&), $2));
}

my $mc = Mcpool->new({ servers => [$srv], value_format => 'mcpool' });

SKIP: {
    skip 'booleans need Perl 5.36', 6 if $] < 5.036;
    my ($t, $f) = (!!1, !!0);
    ok $mc->set("${p}t", $t), 'a true boolean';
    ok $mc->set("${p}f", $f), 'a false boolean';
    is_deeply [raw_get("${p}t")], [$BOOL, '1'], 'stored as the boolean kind, 1';
    is_deeply [raw_get("${p}f")], [$BOOL, '0'], 'stored as the boolean kind, 0';
    # read back and stored again: still a boolean, as Python's True stays True
    my $back = $mc->get("${p}t");
    ok $mc->set("${p}t2", $back), 'a boolean read back, stored again';
    is_deeply [raw_get("${p}t2")], [$BOOL, '1'], 'it stays the boolean kind';

    # a format without booleans: the bytes Perl prints, as before
    my $cmf = Mcpool->new({ servers => [$srv] });
    ok $cmf->set("${p}c", $f), 'a boolean under cache-memcached-fast';
    is_deeply [raw_get("${p}c")], [0, ''], 'stored as Perl prints it';
}

my %floats = (sum => 0.1 + 0.2, third => 1 / 3, big => 2**64, tenth => 0.1, half => 1.5,
              tiny => 5e-324);
for my $name (sort keys %floats) {
    my $v = $floats{$name};
    ok $mc->set("${p}n$name", $v), "float $name stored";
    my (undef, $text) = raw_get("${p}n$name");
    ok $text == $v, "float $name: the stored text '$text' reads back as the same number";
    my $got = $mc->get("${p}n$name");
    ok $got == $v, "float $name read back equal";
}
is((raw_get("${p}ntenth"))[1], '0.1', "Perl's own text where it reads back exactly");
is((raw_get("${p}nsum"))[1], '0.30000000000000004', '0.1 + 0.2 keeps its 17 digits');

# a number that was printed (its cached text is Perl's 15 digits) is still stored exactly
my $printed = 0.1 + 0.2;
my $s = "$printed";
ok $mc->set("${p}np", $printed), 'a printed float stored';
is((raw_get("${p}np"))[1], '0.30000000000000004', 'its exact text, not the printed one');
# a string that is a number stays the string given
my $str = '0.30';
{ no warnings; my $x = $str + 0; }
ok $mc->set("${p}ns", $str), 'a numeric string';
is((raw_get("${p}ns"))[1], '0.30', 'stored as given');

done_testing;
