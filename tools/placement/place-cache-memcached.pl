#!/usr/bin/perl
# Places keys with the real Perl Cache::Memcached (or Cache::Memcached::Fast with --fast)
# and prints KEY<TAB>HOST:PORT per key, in input order.
#
# The servers must be running, empty memcached instances: every key is stored through the
# library, then each server is asked (over a plain socket) which keys it holds.
#
#   cache-memcached.pl --servers H:P|/SOCKET/PATH,... [--weights 1,2] [--fast] [--ketama-points N]
#                      [--namespace NS] [--keys FILE] [--dead I]
#
# --dead I: server I (0-based) is not running; Cache::Memcached's own rehash is turned on
# and that server is neither flushed nor probed.
use strict;
use warnings;
use Getopt::Long;
use IO::Socket::INET;
use IO::Socket::UNIX;

my ($servers, $weights, $fast, $points, $ns, $keyfile, $dead) = ('', '', 0, 0, '', '-', -1);
GetOptions('servers=s' => \$servers, 'weights=s' => \$weights, 'fast' => \$fast,
           'ketama-points=i' => \$points, 'namespace=s' => \$ns, 'keys=s' => \$keyfile,
           'dead=i' => \$dead)
    or die "bad options\n";
my @servers = split /,/, $servers;
my @weights = $weights ne '' ? split(/,/, $weights) : map { 1 } @servers;
die "weights do not match servers\n" unless @weights == @servers;

open(my $fh, '<', $keyfile eq '-' ? '/dev/stdin' : $keyfile) or die "$keyfile: $!\n";
binmode $fh;
my @keys = map { chomp; $_ } <$fh>;

my @live = map { $servers[$_] } grep { $_ != $dead } 0 .. $#servers;
flush($_) for @live;
my $memd;
if ($fast) {
    require Cache::Memcached::Fast;
    $memd = Cache::Memcached::Fast->new({
        servers => [map { { address => $servers[$_], weight => $weights[$_] } } 0 .. $#servers],
        ketama_points => $points, namespace => $ns, close_on_error => 1,
    });
} else {
    require Cache::Memcached;
    $memd = Cache::Memcached->new({
        # A plain string when the weight is 1: Cache::Memcached's one-server shortcut
        # (_single_sock) only understands strings.
        servers => [map { $weights[$_] == 1 ? $servers[$_] : [$servers[$_], $weights[$_]] }
                    0 .. $#servers],
        namespace => $ns, no_rehash => ($dead < 0 ? 1 : 0),
    });
}
for my $k (@keys) {
    $memd->set($k, 1) or die "set failed for $k\n";
}
my %where;
for my $s (@live) {
    for my $k (probe($s, map { "$ns$_" } @keys)) {
        die "key on two servers: $k\n" if exists $where{$k};
        $where{$k} = $s;
    }
}
for my $k (@keys) {
    my $s = $where{"$ns$k"} // die "key on no server: $k\n";
    print "$k\t$s\n";
}

sub conn {
    my ($s) = @_;
    return IO::Socket::UNIX->new(Peer => $s, Timeout => 5) || die "connect $s: $!\n"
        if $s =~ m{^/};
    return IO::Socket::INET->new(PeerAddr => $s, Proto => 'tcp', Timeout => 5)
        || die "connect $s: $!\n";
}

sub flush {
    my $c = conn($_[0]);
    print $c "flush_all\r\n";
    my $r = <$c>;
    die "flush_all on $_[0]: $r" unless $r eq "OK\r\n";
}

# Which of @keys the server holds (batched `get`).
sub probe {
    my ($s, @ks) = @_;
    my $c = conn($s);
    my @found;
    while (my @batch = splice(@ks, 0, 100)) {
        print $c "get @batch\r\n";
        while (my $line = <$c>) {
            last if $line eq "END\r\n";
            die "unexpected reply from $s: $line" unless $line =~ /^VALUE (\S+) \d+ (\d+)/;
            push @found, $1;
            read($c, my $buf, $2 + 2);
        }
    }
    return @found;
}
