# failure_timeout => 0, side by side with Cache::Memcached::Fast: its server comes back at
# once (CMF rests it for the rest of the current whole second at most: its clock is time()).
# It used to go through the timeouts' "0 means no limit" and mark the server dead for a day
# (86400 s: "server ... is marked dead; retry later" on every call after a restart).
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Time::HiRes ();
use Cache::Memcached::Fast;
use Mcpool;

my $srv = start_memcached();
my $p = unique('ft0');
my %o = (servers => [$srv], max_failures => 1, failure_timeout => 0, connect_timeout => 0.5,
         io_timeout => 0.5);
my $cmf = Cache::Memcached::Fast->new({%o});
my $mc = Mcpool->new({%o});
ok($cmf->set("${p}a", 'v') && $mc->set("${p}a", 'v'), 'both store while the server is up');

stop_memcached($srv);
ok(!$cmf->set("${p}b", 'v'), 'server down: CMF fails');
ok(!$mc->set("${p}b", 'v'), 'server down: Mcpool fails');
restart_memcached($srv);

# Mcpool: at once, no rest at all.
ok($mc->set("${p}c", 'v'), 'back: Mcpool stores on the first try') or diag Mcpool::last_error();
is($mc->get("${p}c"), 'v', '... and reads it back');
my ($state) = @{ $mc->server_states };
ok($state->{alive}, '... the server is alive');

# Cache::Memcached::Fast: within its whole second (bounded: 3 s).
my $deadline = Time::HiRes::time() + 3;
my $back = 0;
until ($back = $cmf->set("${p}c", 'v')) {
    last if Time::HiRes::time() > $deadline;
    Time::HiRes::sleep(0.05);
}
ok($back, 'back: CMF stores within its second too');

# The failure still counts: a server that fails again is failed, not hung on.
stop_memcached($srv);
ok(!$mc->set("${p}d", 'v'), 'down again: Mcpool fails');
restart_memcached($srv);
ok($mc->set("${p}e", 'v'), 'back again: stored at once');

# The other timeouts keep Cache::Memcached::Fast's "0: no limit".
ok(Mcpool->new({ servers => [$srv], connect_timeout => 0, io_timeout => 0 })->set("${p}f", 'v'),
   'connect_timeout and io_timeout 0: no limit, as before');

done_testing();
