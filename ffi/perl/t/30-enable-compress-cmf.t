# enable_compress as Cache::Memcached::Fast's (tester finding perlcompat 3): its Fast.xs flips
# the sign of compress_threshold, so enable_compress(1) without a positive threshold
# compresses from 1 byte (the default -1) or from N bytes (-N), and 0 never compresses;
# Mcpool warned and stored plain. Each sequence (store, disable, store, enable, store) is run
# by both clients and the flags memcached holds are compared.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;
use IO::Socket::INET;

my $srv = start_memcached();
my $p = unique('ec');
my $raw = IO::Socket::INET->new(PeerAddr => $srv) or die "connect: $!";
my $have_cmf = eval { require Cache::Memcached::Fast; 1 };

# whether memcached holds the key compressed (flag 2), by a raw get
sub compressed {
    my $key = shift;
    print $raw "get $key\r\n";
    my $head = <$raw>;
    return 'miss' if $head =~ /^END/;
    my ($flags, $len) = $head =~ /^VALUE \S+ (\d+) (\d+)/ or die "bad reply $head";
    read($raw, my $body, $len + 2);
    <$raw>;    # END
    return $flags & 2 ? 'gzip' : 'plain';
}

my $long = 'a' x 1000;
my $short = 'b' x 300;

sub run {
    my ($class, $args, $tag) = @_;
    my @w;
    local $SIG{__WARN__} = sub { push @w, @_ };
    my $c = $class->new({ servers => [$srv], %$args });
    my @out;
    my $step = sub {
        my $name = shift;
        for my $v ([long => $long], [short => $short]) {
            my $key = "$p$tag-$v->[0]";
            $c->set($key, $v->[1]) or die "$class: set failed: " . (Mcpool::last_error() // '');
            push @out, "$name $v->[0]: " . compressed($key);
            my $back = $c->get($key);
            push @out, "$name $v->[0]: read back wrong" unless defined $back && $back eq $v->[1];
        }
    };
    $step->('initial');
    $c->enable_compress(0);
    $step->('off');
    $c->enable_compress(1);
    $step->('on');
    $c->enable_compress(1);
    $step->('on again');
    $c->enable_compress(0);
    $step->('off again');
    return (\@out, "@w");
}

my %want = (    # what Cache::Memcached::Fast 0.28 does (checked below when it is installed)
    'unset' => [ 'plain', 'plain', 'plain', 'plain', 'gzip', 'gzip', 'gzip', 'gzip', 'plain', 'plain' ],
    -1      => [ 'plain', 'plain', 'plain', 'plain', 'gzip', 'gzip', 'gzip', 'gzip', 'plain', 'plain' ],
    -500    => [ 'plain', 'plain', 'plain', 'plain', 'gzip', 'plain', 'gzip', 'plain', 'plain', 'plain' ],
    0       => [ ('plain') x 10 ],
    0.5     => [ ('plain') x 10 ],
    100     => [ 'gzip', 'gzip', 'plain', 'plain', 'gzip', 'gzip', 'gzip', 'gzip', 'plain', 'plain' ],
    500     => [ 'gzip', 'plain', 'plain', 'plain', 'gzip', 'plain', 'gzip', 'plain', 'plain', 'plain' ],
);
for my $t (sort keys %want) {
    my $args = $t eq 'unset' ? {} : { compress_threshold => $t };
    my ($out, $warn) = run('Mcpool', $args, "m$t");
    my @got = map { /: (\w+)$/ ? $1 : $_ } @$out;
    is_deeply(\@got, $want{$t}, "compress_threshold $t: Mcpool") or diag explain $out;
    is($warn, '', "compress_threshold $t: no warning");
    if ($have_cmf) {
        my ($cout) = run('Cache::Memcached::Fast', $args, "c$t");
        is_deeply($out, $cout, "compress_threshold $t: as Cache::Memcached::Fast");
    }
}

# The cache-memcached preset without compress_threshold: Cache::Memcached's undef threshold,
# never compressed, enable_compress or not.
my ($out) = run('Mcpool', { preset => 'cache-memcached' }, 'cm');
is_deeply([ map { /: (\w+)$/ ? $1 : $_ } @$out ], [ ('plain') x 10 ],
    'preset cache-memcached without compress_threshold: never compressed');

# The core's own options: enable_compress switches the core's compression, at its threshold.
($out) = run('Mcpool', { compression => 1, compression_threshold => 500 }, 'core');
is_deeply([ map { /: (\w+)$/ ? $1 : $_ } @$out ], $want{500},
    'compression and compression_threshold by name: enable_compress switches them');
($out) = run('Mcpool', { compression_threshold => 500 }, 'core2');
is_deeply([ map { /: (\w+)$/ ? $1 : $_ } @$out ], $want{-500},
    'compression_threshold by name, compression off: enable_compress turns it on at 500');

# enable_compress switches in place: a server marked dead stays so, the counters go on
# (tester finding perl 2: the client was rebuilt, the dead server tried at once, the counters
# restarted from 0).
{
    my $closed = IO::Socket::INET->new(Listen => 1, LocalAddr => '127.0.0.1', LocalPort => 0)
        or die "listen: $!";
    my $dead = '127.0.0.1:' . $closed->sockport;
    close $closed;
    my $live = start_memcached();
    my $m = Mcpool->new({ servers => [$live, $dead], failure_limit => 1, failure_timeout => 60 });
    $m->set("${p}k$_", 'v') for 1 .. 20;
    my ($down) = grep { $_->{server} eq $dead } @{ $m->server_states };
    is($down->{alive}, 0, 'the closed port is marked dead');
    my $ops = $m->metrics->{$live}{operations};
    ok($ops > 0, 'the live server counted its operations');
    $m->enable_compress(1);
    ($down) = grep { $_->{server} eq $dead } @{ $m->server_states };
    is($down->{alive}, 0, 'enable_compress: the dead server stays dead');
    is($m->metrics->{$live}{operations}, $ops, 'enable_compress: the counters go on');
    $m->enable_compress(0);
    is($m->metrics->{$live}{operations}, $ops, 'enable_compress(0): the counters go on');
}

done_testing();
