# io_timeout and select_timeout given together (tester findings perlcompat 1, migrate 2):
# Cache::Memcached::Fast sets io_timeout, then select_timeout over it (its Fast.xs), so
# select_timeout wins whatever the values; Mcpool used io_timeout. Against a fake server that
# accepts and never answers, a get waits about the winning timeout, in both clients. Bounds
# are generous: each case's two timeouts are 0.2 s and 1.2 s apart by a second.
use strict;
use warnings;
use Test::More;
use Mcpool;
use IO::Socket::INET;
use Time::HiRes qw(time);

my $silent = IO::Socket::INET->new(Listen => 64, LocalAddr => '127.0.0.1', LocalPort => 0,
    Proto => 'tcp') or die "listen: $!";
my $srv = '127.0.0.1:' . $silent->sockport;
my $have_cmf = eval { require Cache::Memcached::Fast; 1 };

sub waited {
    my ($class, $args) = @_;
    my @w;
    local $SIG{__WARN__} = sub { push @w, @_ };
    my $c = $class->new({ servers => [$srv], max_failures => 0, %$args });
    my $t = time;
    my $v = $c->get('k');
    my $took = time - $t;
    is($v, undef, "$class: nothing from the silent server");
    is("@w", '', "$class: no warning");
    return $took;
}

for my $case (
    [ { io_timeout => 0.2, select_timeout => 1.2 }, 'long' ],
    [ { io_timeout => 1.2, select_timeout => 0.2 }, 'short' ],
    [ { select_timeout => 0.2 }, 'short' ],
    [ { select_timeout => 1.2 }, 'long' ],
    [ { io_timeout => 0.2 }, 'short' ],
) {
    my ($args, $want) = @$case;
    my $desc = join ', ', map {"$_ => $args->{$_}"} sort keys %$args;
    for my $class ('Mcpool', ($have_cmf ? 'Cache::Memcached::Fast' : ())) {
        my $took = waited($class, $args);
        if ($want eq 'short') {
            cmp_ok($took, '<', 0.8, "$class { $desc }: waited ${took}s, the 0.2 s");
        } else {
            cmp_ok($took, '>=', 0.9, "$class { $desc }: waited ${took}s, the 1.2 s");
            cmp_ok($took, '<', 4, "$class { $desc }: ... and not much longer");
        }
    }
}

done_testing();
