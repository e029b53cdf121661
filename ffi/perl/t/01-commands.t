# Every method against a private memcached, with Cache::Memcached::Fast's return conventions.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;

my $srv = start_memcached();
my $m = Mcpool->new({ servers => [$srv], namespace => unique('ns') });
my $p = unique('c');

# set / get / add / replace / append / prepend
is($m->set("${p}a", 'value'), 1, 'set returns 1');
is($m->get("${p}a"), 'value', 'get returns the value');
is_deeply([$m->get("${p}missing")], [], 'get of a miss returns nothing');
is($m->add("${p}a", 'x'), '', 'add of an existing key is false ("")');
is($m->add("${p}b", 'bee'), 1, 'add of a new key');
is($m->replace("${p}b", 'B'), 1, 'replace of an existing key');
is($m->replace("${p}nope", 'B'), '', 'replace of a missing key is false');
is($m->append("${p}b", '>'), 1, 'append');
is($m->prepend("${p}b", '<'), 1, 'prepend');
is($m->get("${p}b"), '<B>', 'append and prepend took effect');
is($m->append("${p}nope", 'x'), '', 'append to a missing key is false');
is($m->set("${p}empty", ''), 1, 'empty value');
is($m->get("${p}empty"), '', '... reads back empty (defined)');
my $bin = join '', map { chr } 0 .. 255;
$m->set("${p}bin", $bin);
is($m->get("${p}bin"), $bin, 'binary value round trip');

# expiration
is($m->set("${p}exp", 'gone', -1), 1, 'negative expiration stores...');
is_deeply([$m->get("${p}exp")], [], '... an item that has already expired');

# references (Storable)
my $data = { list => [1, 2, 3], name => 'x' };
$m->set("${p}ref", $data);
is_deeply($m->get("${p}ref"), $data, 'a reference is serialized and thawed');

# gets / cas
my $cv = $m->gets("${p}a");
is(ref $cv, 'ARRAY', 'gets returns [cas, value]');
is($cv->[1], 'value', '... with the value');
ok($cv->[0] > 0, '... and a CAS unique');
is($m->cas("${p}a", $cv->[0], 'new'), 1, 'cas with the current unique stores');
is($m->cas("${p}a", $cv->[0], 'newer'), '', 'cas with a stale unique is false');
is($m->get("${p}a"), 'new', '... and did not store');
is($m->cas("${p}nope", 1, 'v'), '', 'cas of a missing key is false');
# CAS 0 is no CAS unique (binary would store unconditionally): the core refuses it, unsent.
is($m->cas("${p}a", 0, 'zero'), undef, 'cas with CAS 0 is an error (undef)');
like($m->last_error, qr/cas/i, '... and last_error names it: ' . $m->last_error);
is($m->get("${p}a"), 'new', '... and nothing was stored');
is_deeply([$m->cas_multi(["${p}nope0", 0, 'v'])], [undef], 'cas_multi: an item with CAS 0 fails alone');
is($m->get("${p}nope0"), undef, '... and was not created');

# get_multi / gets_multi
$m->set("${p}m$_", "v$_") for 1 .. 20;
my $h = $m->get_multi(map { "${p}m$_" } 1 .. 25);
is(scalar(keys %$h), 20, 'get_multi returns the hits only');
is($h->{"${p}m7"}, 'v7', '... keyed by the caller\'s key (no namespace)');
$h = $m->get_multi("${p}m1", "${p}m1", "${p}ref");
is_deeply($h, { "${p}m1" => 'v1', "${p}ref" => $data }, 'get_multi: duplicate key and a reference');
is_deeply($m->get_multi(), {}, 'get_multi of no keys');
$h = $m->gets_multi("${p}m1", "${p}m2", "${p}zz");
is(scalar(keys %$h), 2, 'gets_multi');
is($h->{"${p}m2"}[1], 'v2', '... [cas, value]');
ok($h->{"${p}m2"}[0] > 0, '... with a CAS unique');

# _multi stores
my @r = $m->set_multi(["${p}s1", 1], ["${p}s2", 2, 100], ["${p}s3", [3]]);
is_deeply(\@r, [1, 1, 1], 'set_multi in list context');
my $rh = $m->add_multi(["${p}s1", 9], ["${p}s4", 4]);
is_deeply($rh, { "${p}s1" => '', "${p}s4" => 1 }, 'add_multi in scalar context');
is_deeply([$m->replace_multi(["${p}s1", 'r'], ["${p}nope", 'r'])], [1, ''], 'replace_multi');
is_deeply([$m->append_multi(["${p}s1", 'a'])], [1], 'append_multi');
is_deeply([$m->prepend_multi(["${p}s1", 'p'])], [1], 'prepend_multi');
is($m->get("${p}s1"), 'pra', '... took effect');
$cv = $m->gets("${p}s2");
is_deeply([$m->cas_multi(["${p}s2", $cv->[0], 'c'], ["${p}s4", 1, 'c'])], [1, ''], 'cas_multi');

# incr / decr
$m->set("${p}n", 10);
is($m->incr("${p}n"), 11, 'incr by 1');
is($m->incr("${p}n", 5), 16, 'incr by 5');
is($m->decr("${p}n", 6), 10, 'decr');
is($m->decr("${p}n", 100), '0E0', 'decr stops at 0, returned as 0E0 (true)');
is($m->incr("${p}nope"), '', 'incr of a missing key is false');
$m->set("${p}txt", 'abc');
is_deeply([$m->incr("${p}txt")], [], 'incr of a non-number returns nothing (an error)');
like($m->last_error, qr/incr|CLIENT_ERROR|number/i, '... and last_error says why: ' . $m->last_error);
$m->set("${p}n2", 1);
is_deeply([$m->incr_multi("${p}n", ["${p}n2", 4], "${p}nope")], [1, 5, ''], 'incr_multi');
is_deeply(scalar $m->decr_multi(["${p}n2", 2]), { "${p}n2" => 3 }, 'decr_multi in scalar context');

# delete / touch / gat
is($m->delete("${p}s3"), 1, 'delete of an existing key');
is($m->delete("${p}s3"), '', 'delete of a missing key is false');
is($m->remove("${p}s4"), 1, 'remove (alias)');
is_deeply([$m->delete_multi("${p}m1", "${p}nope")], [1, ''], 'delete_multi');
is($m->touch("${p}m2", 100), 1, 'touch');
is($m->touch("${p}nope", 100), '', 'touch of a missing key is false');
is_deeply([$m->touch_multi(["${p}m2", 10], ["${p}nope"])], [1, ''], 'touch_multi');
is($m->gat(100, "${p}m3"), 'v3', 'gat');
is_deeply([$m->gat(100, "${p}nope")], [], 'gat of a miss');
$cv = $m->gats(100, "${p}m3");
is($cv->[1], 'v3', 'gats');
is_deeply($m->gat_multi(100, "${p}m3", "${p}m4", "${p}nope"), { "${p}m3" => 'v3', "${p}m4" => 'v4' }, 'gat_multi');
is($m->gats_multi(100, "${p}m5")->{"${p}m5"}[1], 'v5', 'gats_multi');

# compression (gzip, flag 2) and max_size
my $big = 'abcdefghij' x 10_000;
my $mc = Mcpool->new({ servers => [$srv], compress_threshold => 1000 });
is($mc->set("${p}big", $big), 1, 'compressed set');
is($mc->get("${p}big"), $big, 'compressed get');
is($m->get(substr($m->namespace, 0, 0) . "${p}big"), undef, 'namespaced client does not see it');
my $ms = Mcpool->new({ servers => [$srv], max_size => 1000 });
is_deeply([$ms->set("${p}toolarge", 'x' x 2000)], [], 'a value over max_size returns nothing');
is($mc->set("${p}small", 'x' x 2000), 1, '... but compressed under max_size it is fine');
$mc->enable_compress(0);
is($mc->set("${p}big2", $big), 1, 'enable_compress(0) then set');
is($mc->get("${p}big2"), $big, '... and get');

# utf8
my $mu = Mcpool->new({ servers => [$srv], utf8 => 1 });
my $chars = "caf\x{e9} \x{263a} \x{1F600}";
is($mu->set("${p}u", $chars), 1, 'utf8 set of a character string');
my $got = $mu->get("${p}u");
is($got, $chars, 'utf8 get returns the characters');
ok(utf8::is_utf8($got), '... as a character string');
ok(!eval { $m->set("${p}w", "\x{263a}"); 1 }, 'without utf8, a wide character croaks');
like($@, qr/Wide character/, '... "Wide character" as Cache::Memcached::Fast');

# namespace
my $ns = Mcpool->new({ servers => [$srv] });
is($ns->namespace, '', 'namespace defaults to ""');
is($ns->namespace('x:'), '', 'namespace(new) returns the old one');
is($ns->namespace, 'x:', '... and sets it');
$ns->set("${p}k", 'in x');
$ns->namespace('');
is($ns->get("x:${p}k"), 'in x', 'the namespace is a key prefix');
my $hn = Mcpool->new({ servers => [$srv], namespace => 'h:', hash_namespace => 1 });
$hn->set("${p}k", 'hashed');
is($ns->get("h:${p}k"), 'hashed', 'hash_namespace: prefixed the same way');
is_deeply($hn->get_multi("${p}k"), { "${p}k" => 'hashed' }, 'hash_namespace get_multi');

# server_versions, server_for, flush_all, disconnect_all
my $v = $m->server_versions;
like($v->{$srv}, qr/^\d+\.\d+/, "server_versions: $v->{$srv}");
is($m->server_for('anything'), $srv, 'server_for');
is_deeply([$m->server_labels], [$srv], 'server_labels');
$m->disconnect_all;
is($m->get("${p}m3"), 'v3', 'works after disconnect_all');
is_deeply($m->flush_all, { $srv => 1 }, 'flush_all');
is_deeply([$m->get("${p}m3")], [], '... flushed');

# a server that is down: nothing (undef) and last_error, as for any error
my $down = Mcpool->new({ servers => ['127.0.0.1:1'], connect_timeout => 0.2 });
is_deeply([$down->set('k', 'v')], [], 'set to a down server returns nothing');
like($down->last_error, qr/127\.0\.0\.1:1/, '... last_error names the server');
is_deeply([$down->get('k')], [], 'get from a down server returns nothing');
is_deeply($down->get_multi('k', 'l'), {}, 'get_multi from a down server: {}');
is_deeply($down->server_versions, {}, 'server_versions of a down server: {}');
is_deeply($down->flush_all, { '127.0.0.1:1' => undef }, 'flush_all of a down server: undef');

done_testing;
