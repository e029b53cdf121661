# last_error after a croak (POD "last_error": after a call it is that call's failure or the
# empty string; "or it croaked"). A croak of the binding's own checks left last_error empty
# (or, for a check made before the call emptied it, the previous call's failure): only the
# croaks worded by the core's status set it. Now every croak of a method that can fail (the
# XS's, through mcp_croak, xsubpp's argument count and the object's check included;
# lib/Mcpool.pm's, through Mcpool::_croak) leaves its message in last_error, as $@ has it
# without the " at FILE line N." Perl appends, and the croak's text is as it was (but for a
# core's refusal new or set_servers re-croaks after a handle was read: its $@ kept the XS's
# place before Carp's). The methods that cannot fail (server_for, expiry_from_now,
# server_labels, metrics_prometheus) leave last_error as it is when they croak, as when they
# answer.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;

my $srv = start_memcached();
my $p   = unique('croak-le');

my $m = Mcpool->new({ servers => [$srv] });

# $@ without the place Perl or Carp appends (", <$fh> line N" when a handle was read too)
sub bare { my $e = shift; $e =~ s/ at \S+ line \d+(?:, <[^>]*> (?:line|chunk) \d+)?\.\n\z//; $e }

my $STALE = 'a previous call failed';
my $ok_n  = 0;

# The call croaks; last_error is the croak's message without the place; a successful call
# after it empties it again. $want: the croak's message (exact string, or a regex).
sub croaks_into_last_error {
    my ($name, $call, $want) = @_;
    Mcpool::_restore_last_error($STALE);
    my $lived = eval { $call->(); 1 };
    my $err = $@;
    ok(!$lived, "$name: croaks") or return;
    my $msg = bare($err);
    isnt($msg, $err, "$name: \$@ has Perl's place (at ... line N.)");
    if (ref $want) { like($msg, $want, "$name: the croak's text") }
    else           { is($msg, $want, "$name: the croak's text") }
    is(Mcpool::last_error(), $msg, "$name: last_error is the croak's message, without the place");
    unlike(Mcpool::last_error(), qr/ line \d+\.?\z|\.t\b|Mcpool\.pm/, "$name: ... no Perl file or line");
    $ok_n++;
    ok($m->set("${p}ok$ok_n", $ok_n), "$name: then a set that succeeds");
    is(Mcpool::last_error(), '', "$name: ... empties it again");
}

# The call croaks and leaves last_error as it was (a method that cannot fail).
sub croaks_keeping_last_error {
    my ($name, $call, $want) = @_;
    Mcpool::_restore_last_error($STALE);
    my $lived = eval { $call->(); 1 };
    ok(!$lived, "$name: croaks") or return;
    like(bare($@), $want, "$name: the croak's text");
    is(Mcpool::last_error(), $STALE, "$name: cannot fail: last_error left as it was");
}

# ----- the XS's own checks (Mcpool.xs, mcp_croak) -----
croaks_into_last_error('set_counter -1', sub { $m->set_counter("${p}c", -1) },
    qq{set_counter "${p}c": the value must be a decimal integer from 0 to 18446744073709551615 }
        . q{(memcached's counters are unsigned 64-bit), not '-1'});
croaks_into_last_error('set_counter undef', sub { $m->set_counter("${p}c", undef) },
    qr/^set_counter "\Q${p}c\E": the value is undef, not an integer/);
croaks_into_last_error('set_bytes flags -1', sub { $m->set_bytes("${p}b", 'v', -1) },
    qq{set_bytes "${p}b": flags must be an integer from 0 to 4294967295 (2**32-1), not '-1'});
croaks_into_last_error('set_bytes flags "4abc"', sub { $m->set_bytes("${p}b", 'v', '4abc') },
    qq{set_bytes "${p}b": flags must be an integer from 0 to 4294967295 (2**32-1), not '4abc'});
croaks_into_last_error('set_bytes undef value', sub { $m->set_bytes("${p}b", undef, 0) },
    qq{Mcpool::set_bytes: the value of "${p}b" is undef, not bytes (a string)});
croaks_into_last_error('set_bytes wide character', sub { $m->set_bytes("${p}b", "\x{263a}", 0) },
    qr/^Mcpool::set_bytes: Wide character in the value of "\Q${p}b\E"/);
croaks_into_last_error('set_bytes usage', sub { $m->set_bytes("${p}b", 'v') },
    'Usage: $memd->set_bytes($key, $value, $flags[, $expiration_time])');
croaks_into_last_error('set_with_version -1', sub { $m->set_with_version("${p}v", 'x', -1) },
    qq{set_with_version "${p}v": the version must be an integer from 0 to 2**64-1, not '-1'});
croaks_into_last_error('delete_with_version 2.5', sub { $m->delete_with_version("${p}v", 2.5) },
    qq{delete_with_version "${p}v": the version must be an integer from 0 to 2**64-1, not '2.5'});
croaks_into_last_error('incr_with_version "abc"', sub { $m->incr_with_version("${p}v", 1, 'abc') },
    qq{incr_with_version "${p}v": the version must be an integer from 0 to 2**64-1, not 'abc'});
croaks_into_last_error('get(undef)', sub { $m->get(undef) }, 'Mcpool::get: the key is undef');
croaks_into_last_error('gets(undef)', sub { $m->gets(undef) }, 'Mcpool::gets: the key is undef');
croaks_into_last_error('incr(undef)', sub { $m->incr(undef) }, 'Mcpool::incr: the key is undef');
croaks_into_last_error('a reference as a key', sub { $m->set({}, 1) },
    'Mcpool::set: the key must be a string, not a reference (HASH)');
croaks_into_last_error('[$hash, $key]', sub { $m->delete([ 7, "${p}k" ]) },
    qr/^Mcpool::delete: the key is an array reference of two elements, Cache::Memcached's/);
croaks_into_last_error('get_multi with an undef key', sub { $m->get_multi("${p}a", undef) },
    'Mcpool::get_multi: the key is undef');
croaks_into_last_error('set_multi not an array', sub { $m->set_multi("${p}a") },
    'Mcpool::set_multi: Not an array reference');
croaks_into_last_error('delete_multi not an array', sub { $m->delete_multi({}) },
    'Mcpool::delete_multi: Not an array reference');
croaks_into_last_error('touch_multi not an array', sub { $m->touch_multi({}) },
    'Mcpool::touch_multi: Not an array reference');
croaks_into_last_error('stats with a reference', sub { $m->stats([]) },
    'Mcpool::stats: the group must be a string, not a reference (ARRAY)');
croaks_into_last_error('flush_all(Inf)', sub { $m->flush_all(9**9**9) },
    'flush_all: invalid delay: Inf is not a finite number of seconds');
croaks_into_last_error('flush_all("abc")', sub { $m->flush_all('abc') },
    'flush_all: invalid expiration time: "abc" is not a number of seconds');
croaks_into_last_error("xsubpp's usage check", sub { $m->get() }, 'Usage: Mcpool::get(m, key)');
croaks_into_last_error("xsubpp's usage check (an alias)", sub { $m->gats(1) },
    'Usage: Mcpool::gats(m, exptime, key)');
croaks_into_last_error("xsubpp's usage check (disconnect_all)", sub { $m->disconnect_all(1) },
    'Usage: Mcpool::disconnect_all(m)');
{
    my $raw = Mcpool->new({ servers => [$srv], serialize => 0 });
    croaks_into_last_error('a reference with serialize => 0', sub { $raw->set("${p}r", [1]) },
        qr/^Mcpool: cannot store a reference: serialize is off/);
    my $wide = Mcpool->new({ servers => [$srv], serialize_methods => [ sub { "\x{263a}" }, sub { $_[0] } ] });
    croaks_into_last_error('a serializer that returns wide characters', sub { $wide->set("${p}r", [1]) },
        qr/^Mcpool: the serialize method returned a character string with wide characters; .*: not stored\z/);
}
{    # the object's check: a method that can fail empties last_error first, so its croak is
     # the call's failure too
    my $gone = Mcpool->new({ servers => [$srv] });
    $gone->DESTROY;
    croaks_into_last_error('get on a destroyed client', sub { $gone->get("${p}k") },
        'Mcpool: this client has been destroyed');
    croaks_into_last_error('enable_compress on a destroyed client', sub { $gone->enable_compress(1) },
        'Mcpool: this client has been destroyed');
    croaks_into_last_error('namespace($new) on a destroyed client', sub { $gone->namespace('x:') },
        'Mcpool: this client has been destroyed');
    croaks_into_last_error('set_servers on a destroyed client', sub { $gone->set_servers([$srv]) },
        'Mcpool: this client has been destroyed');
    my $fake = bless \(my $s = 1), 'Mcpool';
    croaks_into_last_error('set on something that is not a client', sub { $fake->set("${p}k", 1) },
        qr/^Mcpool: not an Mcpool object: one made by Mcpool->new in this thread is/);
    croaks_keeping_last_error('server_labels on a destroyed client', sub { $gone->server_labels },
        qr/^Mcpool: this client has been destroyed\z/);
}

# ----- lib/Mcpool.pm's (Mcpool::_croak), and the core's refusals it re-croaks -----
croaks_into_last_error('new with a bad pool_size', sub { Mcpool->new({ servers => [$srv], pool_size => 0 }) },
    q{Mcpool->new: pool_size: option max_size: bad value 0: out of range 1 to 65536; accepted: a decimal integer (1 to 65536)});
croaks_into_last_error('new with a bad option the core refuses',
    sub { Mcpool->new({ servers => [$srv], protocol => 'bogus' }) },
    qr/^Mcpool->new: protocol: option protocol: bad value "bogus": unknown protocol "bogus"/);
croaks_into_last_error('new with an option given twice',
    sub { Mcpool->new({ servers => [$srv], io_timeout => 1, 'IO-Timeout' => 2 }) },
    q{Mcpool->new: 'IO-Timeout' and 'io_timeout' are the same option (io_timeout)});
croaks_into_last_error('new without a hash', sub { Mcpool->new([$srv]) },
    'Mcpool->new: expects a hash reference of options');
croaks_into_last_error('new with a bad weight', sub { Mcpool->new({ servers => [ [ $srv, -1 ] ] }) },
    "Server weight should be positive (Mcpool->new: server $srv, weight -1)");
croaks_into_last_error('new with a password in an address',
    sub { Mcpool->new({ servers => ["u:pw\@$srv"] }) },
    qr/^Mcpool->new: MCPOOL_CONFIG: configuration error: bad server address "<userinfo hidden>\@/);
croaks_into_last_error('new with a bad on_operation',
    sub { Mcpool->new({ servers => [$srv], on_operation => 1 }) },
    'Mcpool->new: on_operation must be a code reference');
croaks_into_last_error('new with a resolver', sub { Mcpool->new({ servers => [$srv], resolver => sub { } }) },
    qr/^Mcpool->new: resolver is not available in Perl/);
croaks_into_last_error('set_servers with an empty list', sub { $m->set_servers([]) },
    'Mcpool->set_servers: the server list is empty');
croaks_into_last_error('set_servers with an undef address', sub { $m->set_servers([undef]) },
    'Mcpool->set_servers: a server address is undef');
croaks_into_last_error('set_servers with a port the core refuses', sub { $m->set_servers(['127.0.0.1:0']) },
    qr/^Mcpool->set_servers: MCPOOL_CONFIG: .*port 0/);
is_deeply([ $m->server_labels ], [$srv], '... the old list stays');
croaks_into_last_error('namespace with a reference', sub { $m->namespace([]) },
    'Mcpool::namespace: the namespace must be a string, not a reference');
is($m->namespace, '', '... the namespace stays');
{
    my $none = Mcpool->new({});
    croaks_into_last_error('namespace with a reference (no servers)', sub { $none->namespace({}) },
        'Mcpool::namespace: the namespace must be a string, not a reference');
    croaks_into_last_error('set_servers (no servers)', sub { $none->set_servers([$srv]) },
        'Mcpool->set_servers: this client was made without servers; make one with them (Mcpool->new)');
}
{    # a handle read: Perl appends ", <$fh> line N" to an XS croak's $@; last_error has no place
    # either way, and a core's refusal re-croaked at the caller's (_at_caller) has one place
    # only (it kept the XS's place before Carp's: "... at .../Mcpool.pm line 361, <$fh> line
    # 1.\n at t/... line N.")
    open my $fh, '<', __FILE__ or die $!;
    my $line = <$fh>;
    croaks_into_last_error('new, a handle read', sub { Mcpool->new({ servers => [$srv], protocol => 'bogus' }) },
        qr/^Mcpool->new: protocol: option protocol: bad value "bogus": [^\n]*\(text \(ascii\), meta, binary\)\z/);
    croaks_into_last_error('set_servers, a handle read', sub { $m->set_servers(['127.0.0.1:0']) },
        qr/^Mcpool->set_servers: MCPOOL_CONFIG: [^\n]*port 0 \(no server listens there\)\z/);
    croaks_into_last_error('get(undef), a handle read', sub { $m->get(undef) }, 'Mcpool::get: the key is undef');
    close $fh;
}
{    # with callbacks (Mcpool::Hooked): the croak's message stays after they ran
    my $calls = 0;
    my $h;
    $h = Mcpool->new({ servers => [$srv], on_operation => sub { $calls++; $h->get("${p}cb") if $h } });
    ok($h->set("${p}h", 1), 'a client with on_operation');
    croaks_into_last_error('get(undef) with on_operation', sub { $h->get(undef) }, 'Mcpool::get: the key is undef');
    ok($calls, '... the callback ran');
    undef $h;
}

# ----- croaks of methods in lib/Mcpool.pm that call the XS: the caller's place, the method named
# (tester finding retest41b 4: flush_all('abc') and namespace("a b") named Mcpool.pm's line, and
# namespace's said "building the client failed") -----
{
    my $ns = Mcpool->new({ servers => [$srv], namespace => "${p}ns:" });
    croaks_into_last_error('namespace("a b")', sub { $ns->namespace('a b') },
        qr/^Mcpool::namespace: configuration error: key_prefix "a b": key contains a space/);
    is($ns->namespace, "${p}ns:", 'namespace("a b") refused: the old namespace kept');
    ok($ns->set('kept', 'v'), '... and the client works with it');
    is($m->get("${p}ns:kept"), 'v', '... writing under the old namespace');
    is($ns->namespace('ok:'), "${p}ns:", 'a later namespace($good) is taken');
    for my $call ([namespace => __LINE__, sub { $ns->namespace('a b') }],
                  [flush_all => __LINE__, sub { $m->flush_all('abc') }]) {
        my ($name, $line, $code) = @$call;
        ok(!eval { $code->(); 1 }, "$name: croaks");
        like($@, qr/ at \Q${\__FILE__}\E line $line\.\n\z/, "$name: at the caller's line, not Mcpool.pm's");
    }
    ok(ref $m->flush_all(0, 'more'), 'flush_all ignores arguments after the delay, as Cache::Memcached::Fast');
    croaks_into_last_error("flush_all('abc')", sub { $m->flush_all('abc') },
        'flush_all: invalid expiration time: "abc" is not a number of seconds');
}

# ----- the methods that cannot fail: their croaks leave last_error as it is -----
croaks_keeping_last_error('server_for(undef)', sub { $m->server_for(undef) },
    qr/^Mcpool::server_for: the key is undef\z/);
croaks_keeping_last_error('server_for with a reference', sub { $m->server_for([]) },
    qr/^Mcpool::server_for: the key must be a string, not a reference \(ARRAY\)\z/);
croaks_keeping_last_error("server_for's usage", sub { $m->server_for() },
    qr/^Usage: Mcpool::server_for\(m, key\)\z/);
croaks_keeping_last_error("metrics_prometheus' usage", sub { $m->metrics_prometheus(1) },
    qr/^Usage: Mcpool::metrics_prometheus\(m\)\z/);
croaks_keeping_last_error('expiry_from_now("abc")', sub { Mcpool::expiry_from_now('abc') },
    qr/^expiry_from_now: invalid duration: "abc" is not a number of seconds\z/);
croaks_keeping_last_error('expiry_from_now(Inf)', sub { Mcpool::expiry_from_now(9**9**9) },
    qr/^expiry_from_now: invalid duration: Inf is not a finite number of seconds\z/);
croaks_keeping_last_error('expiry_from_now(1e30)', sub { Mcpool::expiry_from_now(1e30) },
    qr/^expiry_from_now: invalid duration: 1e\+30 is too long: from now it ends after 9223372036854775807, the latest unix time an expiry can name\z/);
{
    Mcpool::_restore_last_error('');
    ok(!eval { Mcpool::expiry_from_now('abc'); 1 }, 'expiry_from_now("abc") after a success: croaks');
    is(Mcpool::last_error(), '', '... and last_error stays empty');
    Mcpool::_restore_last_error($STALE);
    is(Mcpool::expiry_from_now(60), 60, 'expiry_from_now(60) answers');
    is(Mcpool::last_error(), $STALE, '... leaving last_error as it was');
}

# ----- not croaks: a refusal that returns nothing still leaves its own message -----
Mcpool::_restore_last_error($STALE);
ok(!defined $m->incr("${p}n", 'abc'), 'incr with a delta that is no number: nothing (no croak)');
like(Mcpool::last_error(), qr/^incr "\Q${p}n\E": the delta must be/, '... last_error names it');

done_testing;
