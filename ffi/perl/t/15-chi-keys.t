# CHI::Driver::Mcpool's long keys, with real CHI against real memcached: a key that does not
# fit what memcached's 250 bytes leave after the namespace (counted in bytes, once escaped:
# an escaped byte takes 3) is digested (MD5, 32 hex digits); digests fit while the namespace
# leaves 32 bytes; past that (a 230-byte namespace) the sets and gets of such keys fail
# through CHI's on_set_error / on_get_error, naming the reason, and nothing is stored under
# another key or read as a wrong value.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";

BEGIN { require McpoolTest; McpoolTest::needs('libchi-perl', qw(CHI)) }

use McpoolTest;
use IO::Socket::INET;

# memcached's own count of items, to see that nothing was stored under another key.
sub curr_items {
    my $addr = shift;
    my $s = IO::Socket::INET->new(PeerAddr => $addr, Timeout => 2) or die "connect $addr: $!";
    print $s "stats\r\n";
    my $n;
    while (my $l = <$s>) {
        $n = $1 if $l =~ /^STAT curr_items (\d+)/;
        last if $l =~ /^END/;
    }
    return $n;
}

my $srv = start_memcached();
my $p = unique('chik');

sub cache {
    my %o = @_;
    my @w;
    my $c = do {
        local $SIG{__WARN__} = sub { push @w, @_ };
        CHI->new(driver => 'Mcpool', servers => [$srv], on_set_error => 'die',
            on_get_error => 'die', %o);
    };
    return ($c, "@w");
}

{    # a namespace that leaves room for a digest: every key round-trips
    my ($c, $w) = cache(namespace => 'n' x 200);    # key prefix 201 bytes: 49 left
    is($w, '', 'a 200-byte namespace: no warning');
    for my $k ('short', 'k' x 49, 'k' x 50, 'x' x 300, 'a b:c/' x 10, ' ' x 16, ' ' x 17) {
        ok($c->set($k, "v $k"), 'set of a ' . length($k) . '-byte key');
        is($c->get($k), "v $k", '... read back');
    }
}

{    # the namespace is counted in bytes, not characters
    my $ns = "\x{e9}" x 100;    # 100 characters, 200 bytes of UTF-8
    utf8::upgrade($ns);
    my ($c) = cache(namespace => $ns);
    my $k = ' ' x 40;           # 120 bytes once escaped: no room for it whole
    ok($c->set($k, 'spaces'), 'a 40-byte key that would not fit escaped: set (digested)');
    is($c->get($k), 'spaces', '... read back');
    my $fits = 'k' x 49;
    ok($c->set($fits, 'fits'), 'a namespace of 100 two-byte characters counts 200 bytes: '
        . 'a 49-byte key fits');
    ok(defined $c->memd->get($fits), '... stored under its own name, not digested');
}

{    # a key of characters that take two bytes each: digested when its bytes do not fit
    my ($c) = cache(namespace => "${p}u");
    my $max = 250 - length("${p}u:");
    my $k = "\x{e9}" x $max;    # characters that fit, twice as many bytes
    utf8::upgrade($k);
    ok($c->set($k, 'accents'), "a key of $max characters, each two bytes: set");
    is($c->get($k), 'accents', '... read back');
}

{    # a namespace memcached cannot carry as it is (a space, a control byte, "%"): encoded
    # %XX, so every key round-trips and no two namespaces meet
    my %seen;
    for my $ns ("user sessions", "tab\tns", "user%20sessions", "pct%") {
        my ($c) = cache(namespace => $ns);
        ok($c->set('k', "v $ns"), "namespace '$ns': set");
        is($c->get('k'), "v $ns", '... read back');
        $seen{ $c->memd->get('k') // '' }++;
    }
    my ($plain) = cache(namespace => 'plain');
    ok($plain->set('k', 'v plain'), 'a namespace memcached can carry ...');
    my $raw = IO::Socket::INET->new(PeerAddr => $srv, Timeout => 2) or die $!;
    my $head = sub {    # the first line of memcached's answer to a get, read through END
        print $raw "get $_[0]\r\n";
        my @l;
        while (defined(my $l = <$raw>)) { push @l, $l; last if $l =~ /^END/ || @l > 3 }
        return $l[0];
    };
    like($head->('plain:k'), qr/^VALUE plain:k /, '... is sent as it is, as CHI::Driver::Memcached');
    like($head->('user%20sessions:k'), qr/^VALUE user%20sessions:k /,
        "'user sessions' is the prefix user%20sessions:");
    my ($other) = cache(namespace => "user%20sessions");
    is($other->get('k'), 'v user%20sessions', "... and the namespace 'user%20sessions' is another");
}

{    # a 230-byte namespace: not even a digest fits
    my ($c, $w) = cache(namespace => 'n' x 230);    # key prefix 231 bytes: 19 left
    like($w, qr/leaves 19 bytes .* too few for a digested key/,
        'a 230-byte namespace warns when the cache is made');
    my $before = curr_items($srv);
    ok($c->set('abc', 'short'), 'a key CHI leaves whole (3 bytes) is stored');
    is($c->get('abc'), 'short', '... and read');
    my $long = 'k' x 40;
    eval { $c->set($long, 'v') };
    like($@, qr/set .* failed: .*longer than 250 bytes/, 'set of a key CHI digests: on_set_error, naming why');
    eval { $c->get($long) };
    like($@, qr/get .* failed: .*longer than 250 bytes/, 'get of it: on_get_error, naming why');
    is(curr_items($srv), $before + 1, 'only the short key was stored, nothing under another key');

    my ($quiet) = cache(namespace => 'n' x 230, on_get_error => 'ignore', on_set_error => 'ignore');
    $quiet->set($long, 'v');
    ok(!defined $quiet->get($long), 'with the errors ignored, the get is a miss, never a value');
}

done_testing;
