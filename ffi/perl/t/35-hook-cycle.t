# The documented ways to refer to the object from its own on_operation / on_server_event
# callback: the second argument, or a weakened copy. Each object made that way is freed when dropped (its connection
# closed), and the callback sees the object while it lives (tester finding soak 3: a closure
# over the object itself is a reference cycle Perl never frees; the POD says so).
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Scalar::Util qw(weaken);
use Test::More;
use McpoolTest;
use Mcpool;

my $SRV = start_memcached();

sub fds { opendir my $d, '/proc/self/fd' or return -1; my @f = grep { /^\d+$/ } readdir $d; return scalar @f }

SKIP: {
    skip 'no /proc/self/fd', 4 if fds() < 0;
    my $before = fds();
    my ($seen, $alive, $given) = (0, 0, 0);
    for my $i (1 .. 40) {
        my $weak;
        my $memd = Mcpool->new({ servers => [$SRV],
            on_operation => sub {
                $seen++;
                $alive++ if $weak && $weak->isa('Mcpool');
                $given++ if $weak && $_[1] && $_[1] == $weak;
            },
            on_server_event => sub { my $x = $weak } });
        weaken($weak = $memd);
        $memd->set(unique('c') . $i, 'v');
    }
    is($seen, 40, 'each object called its callback once');
    is($alive, 40, 'the callback saw its object alive');
    is($given, 40, 'the callback got its object as its second argument');
    # every object above is out of scope: each connection is closed (a cycle would keep 40)
    cmp_ok(fds(), '<=', $before + 2, 'the objects were freed with their connections');
}
done_testing;
