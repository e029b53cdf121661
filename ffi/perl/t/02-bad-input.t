# Bad input: what croaks (with which message) and what returns nothing, as documented in the
# POD's BAD INPUT section. Cache::Memcached::Fast returns nothing for the same refused keys.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;
use Cache::Memcached::Fast;

my $srv = start_memcached();
my $m = Mcpool->new({ servers => [$srv] });
my $cmf = Cache::Memcached::Fast->new({ servers => [$srv] });

for my $meth (qw(get gets set add replace append prepend delete touch incr decr)) {
    my @args = $meth =~ /^(set|add|replace|append|prepend)$/ ? ('v') : ();
    ok(!eval { $m->$meth(undef, @args); 1 }, "$meth(undef) croaks");
    like($@, qr/^Mcpool::$meth: the key is undef at \Q$0\E/, "... naming the method and the caller");
    ok(!eval { $m->$meth([1], @args); 1 }, "$meth([1]) croaks");
    like($@, qr/^Mcpool::$meth: the key must be a string, not a reference \(ARRAY\)/, '... with a clear message');
}
ok(!eval { $m->cas(undef, 1, 'v'); 1 }, 'cas(undef) croaks');
ok(!eval { $m->gat(10, {}); 1 }, 'gat with a hash reference key croaks');
like($@, qr/not a reference \(HASH\)/, '... with a clear message');
ok(!eval { $m->get_multi('a', undef); 1 }, 'get_multi with an undef key croaks');
like($@, qr/^Mcpool::get_multi: the key is undef/, '... with a clear message');
ok(!eval { $m->get_multi('a', \'b'); 1 }, 'get_multi with a reference key croaks');
ok(!eval { my @r = $m->set_multi('notaref'); 1 }, 'set_multi with a non-array argument croaks');
like($@, qr/Not an array reference/, '... as Cache::Memcached::Fast words it');
ok(!eval { $m->set('k'); 1 }, 'set without a value croaks');
like($@, qr/Usage: \$memd->set\(\$key, \$value/, '... with the usage');
ok(!eval { $m->cas('k', 'v'); 1 }, 'cas without a value croaks');

# Keys the server would refuse: nothing is sent; the result is what CMF returns (nothing).
my %bad = (
    'too long (251 bytes)' => 'k' x 251,
    'empty'                => '',
    'with a space'         => 'a b',
    'with a newline'       => "a\nb",
    'with a control byte'  => "a\x01b",
);
for my $what (sort keys %bad) {
    my $k = $bad{$what};
    is_deeply([$m->set($k, 'v')], [], "set of a key $what returns nothing");
    like($m->last_error, qr/key/i, '... last_error: ' . ($m->last_error =~ s/\n.*//sr));
    is_deeply([$m->get($k)], [], "get of a key $what returns nothing");
}
is_deeply([$cmf->set('k' x 251, 'v')], [], 'Cache::Memcached::Fast also returns nothing for a 251-byte key');
is_deeply([$cmf->get('k' x 251)], [], '... and for its get');
is($m->set('k' x 250, 'v'), 1, 'a 250-byte key is fine');
my $ns = Mcpool->new({ servers => [$srv], namespace => 'ns:' });
is_deeply([$ns->set('k' x 248, 'v')], [], 'namespace + key over 250 bytes returns nothing');
my $hn = Mcpool->new({ servers => [$srv], namespace => 'ns:', hash_namespace => 1 });
is_deeply([$hn->set('k' x 248, 'v')], [], '... with hash_namespace too');
is_deeply([$hn->set('k' x 600, 'v')], [], '... and a 600-byte key with hash_namespace');
is_deeply($m->get_multi('ok', 'k' x 251), {}, 'get_multi with one refused key: {} (no croak)');

# Values
{
    my @w;
    local $SIG{__WARN__} = sub { push @w, @_ };
    is($m->set('undefval', undef), 1, 'an undef value is stored as ""');
    is($m->get('undefval'), '', '... and reads back ""');
}
ok(!eval { Mcpool->new({ servers => ['127.0.0.1:1'], compress_ratio => 2 }); 1 }, 'compress_ratio 2 croaks');
like($@, qr/compress_ratio/, '... naming the option');
my $thawbad = Mcpool->new({ servers => [$srv], serialize_methods => [sub { 'x' }, sub { die "no\n" }] });
$thawbad->set('th', [1]);
is_deeply([$thawbad->get('th')], [], 'a value that does not thaw is a miss (as CMF)');
is_deeply($thawbad->get_multi('th'), {}, '... in get_multi too');
done_testing;
