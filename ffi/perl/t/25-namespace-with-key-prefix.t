# namespace (Cache::Memcached::Fast's word) is the core's key_prefix: both given was built
# without a word and key_prefix silently dropped (the item stored as ns1:k). Now the core's
# rule for one option set by two arguments refuses it, naming both, as Python's prefix and
# key_prefix.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;

my $srv = start_memcached();
my $p = unique('nk');

for my $kp ('key_prefix', 'key-prefix', 'KEY_PREFIX') {
    my $mc = eval { Mcpool->new({ servers => [$srv], namespace => "${p}ns1:", $kp => "${p}kp2:" }) };
    my $err = $@;
    ok(!$mc, "namespace with $kp: refused") or next;
    like($err, qr/option key_prefix given twice \(as namespace and key_prefix\)/, '... naming both')
        or diag $err;
    unlike($err, qr/ at \S+Mcpool\.pm line/, "... at the caller's line");
}
# whatever the values: the same prefix twice, or an empty one
for my $v ([ "${p}x:", "${p}x:" ], [ '', "${p}x:" ], [ "${p}x:", '' ]) {
    ok(!eval { Mcpool->new({ servers => [$srv], namespace => $v->[0], key_prefix => $v->[1] }) },
       "namespace '$v->[0]' with key_prefix '$v->[1]': refused");
}

# Each alone is the prefix of every key.
my $raw = Mcpool->new({ servers => [$srv] });
my $ns = Mcpool->new({ servers => [$srv], namespace => "${p}ns:" });
ok($ns->set('k', 'v1'), 'namespace alone: stored');
is($raw->get("${p}ns:k"), 'v1', '... under the namespace');
my $kp = Mcpool->new({ servers => [$srv], key_prefix => "${p}kp:" });
ok($kp->set('k', 'v2'), 'key_prefix alone: stored');
is($raw->get("${p}kp:k"), 'v2', '... under the key_prefix');
# a Latin-1 namespace is still its bytes (the XS sets it, not the text of the core option)
my $l1 = Mcpool->new({ servers => [$srv], namespace => "${p}\xe9:" });
ok($l1->set('k', 'v3'), 'Latin-1 namespace: stored');
is($raw->get("${p}\xe9:k"), 'v3', '... under its Latin-1 bytes');

done_testing();
