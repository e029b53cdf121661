#!/usr/bin/perl
# Value-matrix driver for Perl clients (run by ffi/matrix/run.py).
#
#   pl_driver.pl CLIENT MODE FORMAT SERVER FIXDIR < plan
#
# CLIENT: mcpool (Mcpool with value_format => FORMAT), cache-memcached-fast,
# cache-memcached (the real peers, compression on). Plan lines "KEY KIND"; output lines
# "KEY OK", "KEY ERR <message>", "KEY DIFF <what came back>" or "KEY MISS".
use strict;
use warnings;
use Scalar::Util qw(looks_like_number);

my ($name, $mode, $fmt, $server, $fixdir) = @ARGV;
my $THRESHOLD = 1024;

sub native {
    my ($kind) = @_;
    my $raw = $kind =~ /b$/ && $kind ne 'empty';
    my $base = $kind;
    $base =~ s/b$// if $raw;
    open my $fh, '<:raw', "$fixdir/$base.bin" or die "$fixdir/$base.bin: $!";
    local $/;
    my $data = <$fh> // '';
    close $fh;
    return $data if $raw || $base eq 'ascii' || $base eq 'bin1m' || $base eq 'empty';
    return 0 + $data if $base eq 'int';    # a number (IV), never used as a string
    utf8::decode($data);
    utf8::upgrade($data);                   # a character string (UTF8 flag on, even if ASCII)
    return $data;
}

my $c;
my $serialize = $ENV{MATRIX_SERIALIZE} // 0;
my @warnings;
$SIG{__WARN__} = sub { push @warnings, $_[0] };
if ($name eq 'mcpool') {
    require Mcpool;
    $c = Mcpool->new({ servers => [$server], value_format => $fmt, utf8 => 1, serialize => $serialize,
                       compress_threshold => $THRESHOLD, max_size => 2 * 1024 * 1024 });
} elsif ($name eq 'cache-memcached-fast') {
    require Cache::Memcached::Fast;
    $c = Cache::Memcached::Fast->new({ servers => [$server], utf8 => 1,
                                       compress_threshold => $THRESHOLD,
                                       max_size => 2 * 1024 * 1024 });
} elsif ($name eq 'cache-memcached') {
    require Cache::Memcached;
    $c = Cache::Memcached->new({ servers => [$server], compress_threshold => $THRESHOLD });
} else {
    die "unknown client $name\n";
}

my @out;
while (my $line = <STDIN>) {
    next unless $line =~ /\S/;
    my ($key, $kind) = split ' ', $line;
    my $want = native($kind);
    @warnings = ();
    if ($mode eq 'write') {
        my $r = eval { $c->set($key, $want) };
        push @out, $@ ? "$key ERR $@" : $r ? "$key OK" : "$key ERR not stored @warnings";
        next;
    }
    my $got = eval { $c->get($key) };
    if ($@) {
        push @out, "$key ERR $@";
    } elsif (!defined $got) {
        push @out, @warnings ? "$key ERR @warnings" : "$key MISS";
    } elsif ($kind eq 'int') {
        push @out, looks_like_number($got) && $got == $want ? "$key OK" : "$key DIFF '" . substr($got, 0, 24) . "'";
    } elsif ($got eq $want) {
        push @out, "$key OK";
    } else {
        my $u = utf8::is_utf8($got) ? 'characters' : 'bytes';
        push @out, "$key DIFF $u of " . length($got);
    }
}
s/\s+/ /g for @out;
print "$_\n" for @out;
