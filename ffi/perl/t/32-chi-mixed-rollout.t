# CHI::Driver::Mcpool and CHI::Driver::Memcached::Fast on one memcached while both run (a
# rollout): with the defaults a key with "%" and a key over 250 bytes once prefixed are sent
# differently, so this driver reads a stale value after the other updates or removes it; with
# what the POD's warning says to set (sanitize_keys => 0 here, the same max_key_length on
# both), each sees the other's update and removal. And the POD says so where it says the
# drivers share a cache (tester finding frameworks2 3).
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";

BEGIN {
    require McpoolTest;
    McpoolTest::needs('libchi-perl libchi-driver-memcached-perl libcache-memcached-fast-perl',
        qw(CHI Cache::Memcached::Fast CHI::Driver::Memcached::Fast));
}

use McpoolTest;

# The POD's "Namespaces and keys" item warns about a rollout and names both settings
{
    my $pm = "$FindBin::Bin/../lib/CHI/Driver/Mcpool.pm";
    open my $fh, '<', $pm or die "$pm: $!";
    my $pod = do { local $/; <$fh> };
    my ($item) = $pod =~ /^=item Namespaces and keys\n(.*?)^=item /ms;
    ok(defined $item, 'the POD has its "Namespaces and keys" item');
    $item //= '';
    like($item, qr/share a cache/, '... where it says the drivers share a cache');
    like($item, qr/Warning, while both drivers run/, '... a warning for a rollout');
    like($item, qr/stale value/, '... saying a site reads stale values');
    like($item, qr/C<< sanitize_keys => 0 >>, and give both drivers\s+C<< max_key_length => 250 - length\("\$namespace:"\) >>/,
        '... and what to set: sanitize_keys => 0, the same max_key_length on both');
}

my $srv = start_memcached();
my $room;

# $k written by this driver, then updated and removed by the CMF driver: what this driver
# reads after each ("new", "undef": shared; "old": stale)
sub after_cmf {
    my ($mcp, $cmf, $k) = @_;
    $mcp->set($k, 'old');
    $cmf->set($k, 'new');
    my $updated = $mcp->get($k) // 'undef';
    $cmf->remove($k);
    my $removed = $mcp->get($k) // 'undef';
    return "$updated/$removed";
}

for my $case ([pct => 'page?q=a%20b'], [long => 'k' x 260]) {
    my ($what, $key) = @$case;
    my $ns = unique("roll-$what");
    $ns =~ s/-$//;
    my %o = (servers => [$srv], namespace => $ns, on_set_error => 'ignore',
        on_get_error => 'ignore');
    my $cmf = CHI->new(driver => 'Memcached::Fast', %o);
    is(after_cmf(CHI->new(driver => 'Mcpool', %o), $cmf, $key), 'old/old',
        "$what: with the defaults this driver reads a stale value after the CMF driver's update and remove");
    $room = 250 - length("$ns:");
    my %set = (%o, max_key_length => $room);
    $cmf = CHI->new(driver => 'Memcached::Fast', %set);
    my $mcp = CHI->new(driver => 'Mcpool', %set, sanitize_keys => 0);
    is(after_cmf($mcp, $cmf, $key), 'new/undef',
        "$what: with sanitize_keys => 0 and max_key_length => $room on both, it reads the update and the removal");
    $cmf->set($key, 'by-cmf');
    $mcp->set($key, 'by-mcp');
    is($cmf->get($key), 'by-mcp', "$what: ... and the CMF driver reads this driver's update");
}

stop_memcached($srv);
done_testing;
