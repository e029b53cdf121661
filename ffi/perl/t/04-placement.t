# Same server for every key as Cache::Memcached::Fast and Cache::Memcached: 3 servers with
# weights, modulo (ketama_points 0) and Ketama (ketama_points 150; rational weights too), with
# a namespace (not hashed). Where a key went is read from each server directly.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;
use Cache::Memcached::Fast;
use Cache::Memcached;

my @srv = map { start_memcached() } 1 .. 3;
my @servers = map { { address => $srv[$_], weight => $_ + 1 } } 0 .. 2;    # weights 1, 2, 3
my @single = map { Cache::Memcached::Fast->new({ servers => [$_] }) } @srv;
my $p = unique('pl');
my @keys = ((map { "$p$_" } 0 .. 399), (map { "user:$_:profile" } 0 .. 49), "caf\x{e9}", 'x' x 200);
utf8::encode($keys[-2]);

# Which server holds each of @keys under the namespace $ns: { key => server index }.
sub where {
    my $ns = shift;
    my %w;
    for my $i (0 .. 2) {
        my $h = $single[$i]->get_multi(map { "$ns$_" } @keys);
        for my $k (keys %$h) { $w{ substr($k, length $ns) } = $i }
    }
    return \%w;
}

for my $case (['modulo', 0], ['ketama', 150]) {
    my ($name, $points) = @$case;
    my %o = (servers => \@servers, ketama_points => $points);
    my $cmf = Cache::Memcached::Fast->new({ %o, namespace => "$name-cmf:" });
    my $m   = Mcpool->new({ %o, namespace => "$name-mc:" });
    $cmf->set($_, 1) for @keys;
    is(scalar($m->set_multi(map { [$_, 1] } @keys)) && 1, 1, "$name: Mcpool stored every key");
    my $wc = where("$name-cmf:");
    my $wm = where("$name-mc:");
    is(scalar(keys %$wc), scalar(@keys), "$name: CMF stored every key");
    is(scalar(keys %$wm), scalar(@keys), "$name: every Mcpool key is on some server");
    my @diff = grep { $wc->{$_} != $wm->{$_} } @keys;
    is(scalar(@diff), 0, "$name: every key on the same server as Cache::Memcached::Fast")
        or diag("first disagreements: @diff[0 .. ($#diff < 4 ? $#diff : 4)]");
    my @sf = grep { $m->server_for($_) ne $srv[ $wc->{$_} ] } @keys;
    is(scalar(@sf), 0, "$name: server_for agrees too");
    my %count;
    $count{$_}++ for values %$wm;
    ok(($count{2} // 0) > ($count{0} // 0), "$name: weight 3 gets more keys than weight 1 ("
        . join('/', map { $count{$_} // 0 } 0 .. 2) . ')');
    # Mcpool reads what CMF wrote, through its own placement.
    my $mr = Mcpool->new({ %o, namespace => "$name-cmf:" });
    is(scalar(keys %{ $mr->get_multi(@keys) }), scalar(@keys), "$name: Mcpool finds every key CMF wrote");
}

# Ketama with rational weights (Cache::Memcached::Fast's weights are rational: each server
# gets (int)(ketama_points x weight + 0.5) points): key for key on CMF's server, also after
# set_servers, with ketama_points not a multiple of the weights' denominators. Rounding the
# weights (as before) put 3 to 6 % of the keys on another server.
for my $case ([ 150, [ 2.5, 1, 1 ] ], [ 150, [ 1.25, 2.75, 1 ] ], [ 7, [ 1.1, 0.5, 3 ] ]) {
    my ($points, $w) = @$case;
    my $name = "ketama $points, weights @$w";
    my $ns = "kw$points-" . join('-', @$w) . ':';
    my @ws = map { { address => $srv[$_], weight => $w->[$_] } } 0 .. 2;
    my $cmf = Cache::Memcached::Fast->new({ servers => \@ws, ketama_points => $points, namespace => $ns });
    $cmf->set($_, 1) for @keys;
    my $wc = where($ns);
    is(scalar(keys %$wc), scalar(@keys), "$name: CMF stored every key");
    my @warn;
    local $SIG{__WARN__} = sub { push @warn, @_ };
    my $m = Mcpool->new({ servers => \@ws, ketama_points => $points, namespace => $ns });
    my @sf = grep { $m->server_for($_) ne $srv[ $wc->{$_} ] } @keys;
    is(scalar(@sf), 0, "$name: every key on Cache::Memcached::Fast's server");
    is(scalar(keys %{ $m->get_multi(@keys) }), scalar(@keys), "$name: Mcpool finds every key CMF wrote");
    is("@warn", '', "$name: no warning (nothing rounded)");
    my $moved = Mcpool->new({ servers => [ $srv[0] ], ketama_points => $points });
    $moved->set_servers(\@ws);
    @sf = grep { $moved->server_for($_) ne $srv[ $wc->{$_} ] } @keys;
    is(scalar(@sf), 0, "$name: the same after set_servers");
}

# Cache::Memcached (modulo, integer weights) agrees as well.
my $cm = Cache::Memcached->new({ servers => [map { [$srv[$_], $_ + 1] } 0 .. 2], namespace => 'cm:' });
$cm->set($_, 1) for @keys;
my $w = where('cm:');
my $m = Mcpool->new({ servers => \@servers });
my @diff = grep { !defined $w->{$_} || $m->server_for($_) ne $srv[ $w->{$_} ] } @keys;
is(scalar(@diff), 0, 'every key on the same server as Cache::Memcached');

# hash_namespace => 1: the namespace is part of the hashed key, as in CMF.
my $cmf = Cache::Memcached::Fast->new({ servers => \@servers, namespace => 'hn:', hash_namespace => 1 });
my $mh  = Mcpool->new({ servers => \@servers, namespace => 'hn:', hash_namespace => 1 });
$cmf->set($_, 'cmf') for @keys;
is(scalar(keys %{ $mh->get_multi(@keys) }), scalar(@keys), 'hash_namespace: Mcpool finds every key CMF wrote');

# hash_namespace is the core's hash_key_prefix: key for key on CMF's server (modulo and
# Ketama), server_for included, and a placement that differs from the bare key's.
for my $case (['modulo', 0], ['ketama', 150]) {
    my ($name, $points) = @$case;
    my %o = (servers => \@servers, ketama_points => $points, hash_namespace => 1);
    my $c  = Cache::Memcached::Fast->new({ %o, namespace => "hk$name:" });
    my $mk = Mcpool->new({ %o, namespace => "hk$name:" });
    $c->set($_, 1) for @keys;
    my $wc = where("hk$name:");
    is(scalar(keys %$wc), scalar(@keys), "hash_namespace $name: CMF stored every key");
    my @sf = grep { $mk->server_for($_) ne $srv[ $wc->{$_} ] } @keys;
    is(scalar(@sf), 0, "hash_namespace $name: server_for is CMF's server for every key");
    my $plain = Mcpool->new({ %o, hash_namespace => 0, namespace => "hk$name:" });
    my @moved = grep { $plain->server_for($_) ne $mk->server_for($_) } @keys;
    cmp_ok(scalar(@moved), '>', 50, "hash_namespace $name => 0: the bare key's placement differs");
    is_deeply([$mk->delete_multi(@keys)], [(1) x @keys], "hash_namespace $name: Mcpool deletes every key CMF wrote");
}
# A server entry with a fourth field is a configuration error (the core's rule, README
# "Notes"): "host:port:2:3" was taken as name "2" with weight 3, silently changing placement.
for my $entry ("$srv[0]:2:3", "$srv[0]:alpha:3", "$srv[0]:name:extra") {
    my $ok = eval { local $SIG{__WARN__} = sub {}; Mcpool->new({ servers => [$entry, $srv[1]] }); 1 };
    ok(!$ok, "servers => ['$entry']: refused");
    like($@, qr/beyond host:port:name/, "$entry: the message names the extra field");
}
my $three = Mcpool->new({ servers => ["$srv[0]:3", $srv[1]] });
ok($three, "host:port:3 (a weight) is still taken");
done_testing;
