package CHI::Driver::Mcpool;

use strict;
use warnings;

use Carp ();
use Scalar::Util ();
use bytes ();
use Moo;
use Mcpool;

extends 'CHI::Driver';

our $VERSION = '0.1.0';

# The client, made in BUILD from the constructor's non-CHI options (or memd_params).
has 'memd'        => (is => 'ro', init_arg => undef);
has 'memd_params' => (is => 'ro');

# memcached cannot list or drop one namespace's keys.
__PACKAGE__->declare_unsupported_methods(
    qw(dump_as_hash get_keys get_namespaces is_empty clear purge));

# Every driver of this thread, weakly: ithreads clone this hash into a new thread with
# references to the new thread's copies, which CLONE gives clients of their own.
my %LIVE;

sub DEMOLISH {
    my $self = shift;
    delete $LIVE{ Scalar::Util::refaddr($self) };
    return;
}

# Perl ithreads: an Mcpool object is not cloned into a new thread (it arrives there as an
# unblessed reference), so each driver of the new thread gets a client of its own, made from
# its constructor's arguments, as CHI::Driver::Memcached::Fast's Cache::Memcached::Fast
# does. A driver made before the threads started used to miss every read and drop every
# write in them, silently under CHI's default on_get_error (tester finding perlweb 2).
sub CLONE {
    my @live = grep { defined } values %LIVE;
    %LIVE = ();
    for my $d (@live) {
        $d->{memd} = Mcpool->new({ %{ $d->{memd_args} } });
        Scalar::Util::weaken($LIVE{ Scalar::Util::refaddr($d) } = $d);
    }
    return;
}

sub BUILD {
    my ($self, $params) = @_;
    my %p = %{ $self->{memd_params} // $self->non_common_constructor_params($params) };
    delete @p{qw(memd_params driver)};
    # sanitize_keys is this driver's (default on), not the core's (Whalin's URL-encoding of
    # every key, which would put ordinary keys such as "user:1" under other names than
    # CHI::Driver::Memcached's): the bytes memcached's text protocol cannot carry in a key
    # (space, control bytes, DEL) and "%" are written %XX, in the namespace and in keys
    # (transform_key); every other key goes as it is, as CHI::Driver::Memcached sends it.
    my $escape = exists $p{sanitize_keys} ? _true(delete $p{sanitize_keys}) : 1;
    $self->{escape_keys} = $escape;
    # The CHI namespace is the core's key prefix ("Default:" unless given), which the core
    # sends as it is.
    $p{namespace} //= _namespace_prefix($self->namespace, $escape);
    $self->{memd_args} = { %p };    # for a new thread's client (CLONE)
    $self->{memd} = Mcpool->new(\%p);
    Scalar::Util::weaken($LIVE{ Scalar::Util::refaddr($self) } = $self);
    # What memcached's 250 bytes leave after the namespace (the core's key prefix, sent as
    # Perl holds it: its bytes, not its characters); a key that does not fit once escaped is
    # digested (transform_key).
    my $room = 250 - bytes::length("$p{namespace}");
    $self->{key_room} = $room;
    # max_key_length is CHI's (by default no limit, as with CHI::Driver::Memcached, whose
    # own 248-less-the-namespace default never applies: CHI's attribute default comes
    # first), so both drivers send every key that fits as it is.
    # With a key prefix over 218 bytes not even a digest fits: the keys CHI digests fail, each
    # through on_set_error / on_get_error with the core's "key is longer than 250 bytes".
    Carp::carp("CHI::Driver::Mcpool: the namespace '$p{namespace}' leaves $room bytes of "
            . "memcached's 250 for keys, too few for a digested key (32 bytes): longer keys "
            . "will fail")
        if $room < 32;
    return;
}

# "$namespace:" as the key prefix (Mcpool->new takes its bytes as it takes a namespace's),
# escaped as keys are (_escape) when escaping.
sub _namespace_prefix {
    my ($ns, $escape) = @_;
    my $prefix = "$ns:";
    return $escape ? _escape($prefix) : $prefix;
}

# The bytes memcached's text protocol cannot carry in a key (space, control bytes, DEL), and
# "%" so that no two keys meet ("a b" is a%20b, "a%20b" is a%2520b), as %XX.
sub _escape {
    my $s = shift;
    $s =~ s/([\x00-\x20\x7f%])/sprintf('%%%02X', ord $1)/ge;
    return $s;
}

sub _true {
    my $v = shift;
    return defined $v && $v ne '' && $v ne '0' && lc $v ne 'false';
}

# CHI's key (a reference serialized, wide characters as UTF-8, digested past max_key_length);
# one whose bytes do not fit memcached's 250 after the namespace once escaped (an escaped
# byte takes three, a Latin-1 character of a character string two) is digested, rather than
# refused for its length. Idempotent, as CHI requires: the escaping is escape_key's, applied
# where the key goes to memcached (fetch, store, remove and their _multi forms), as CHI's
# File driver escapes for file names.
around 'transform_key' => sub {
    my ($orig, $self, $key) = @_;
    $key = $self->$orig($key);
    $key = $self->digest_key($key) if bytes::length($self->escape_key($key)) > $self->{key_room};
    return $key;
};

# The key memcached is given (sanitize_keys, see POD "Namespaces and keys"), and back.
sub escape_key {
    my ($self, $key) = @_;
    return $self->{escape_keys} ? _escape($key) : $key;
}

sub unescape_key {
    my ($self, $key) = @_;
    $key =~ s/%([0-9A-F]{2})/chr hex $1/ge if $self->{escape_keys};
    return $key;
}

# A miss is undef. A failed read (a key refused, a server down or timing out, a value that
# does not decode) is told apart by last_error (after a call it is that call's failure or
# nothing) and goes to on_get_error once, whichever CHI method read:
#  - get()'s own read (marked _fetch_dies by the two wrappers below) dies with the core's
#    message, which get() catches and hands to on_get_error (counted in CHI's stats as a get
#    error; the get returns undef), as before;
#  - every other read (get_object, get_expires_at, is_valid, exists_and_is_expired, expire,
#    add, replace, append, fetch itself) is a bare $self->fetch in CHI::Driver, with no eval
#    around it: fetch hands the error to on_get_error itself (CHI's _handle_get_error, as
#    get() does; CHI's stats count get()'s errors only) and answers a miss. It used to die
#    out of those methods, even with on_get_error => 'ignore', where
#    CHI::Driver::Memcached::Fast answers a miss (tester finding frameworks 2).
# A die that is not the core's failure (a signal handler's, a callback's) is not caught here:
# it leaves every method but get() as it did.
sub fetch {
    my ($self, $key) = @_;
    my $dies = delete $self->{_fetch_dies};    # one read only: get()'s own
    my $v = $self->{memd}->get($self->escape_key($key));
    return $v if defined $v;
    my $err = Mcpool::last_error();
    return undef unless length $err;
    my $error = "Mcpool: get $key failed: $err";
    Carp::croak($error) if $dies;
    $self->_handle_get_error(Carp::shortmess($error), $key);
    return undef;
}

# get() reads through get_object inside its eval, unless it is given the object (get_multi_*
# passes obj => ...): get marks that one read as get()'s (_get_reads), and get_object passes
# the mark on to its fetch, for that call only (_fetch_dies), so that a read made while get()
# runs but not by it (an expire_if callback, IsSizeAware's get_object before a busy_lock's
# set_object, an on_get_error handler) is reported by fetch as every other read is. Dynamic
# scope, no caller() inspection (tester finding frameworks 2).
around 'get' => sub {
    my ($orig, $self, @args) = @_;
    my $reads = do { no warnings 'misc'; my (undef, %p) = @args; !$p{obj} };
    local $self->{_get_reads} = $reads;
    return $self->$orig(@args);
};

around 'get_object' => sub {
    my ($orig, $self, @args) = @_;
    local $self->{_fetch_dies} = delete $self->{_get_reads};
    return $self->$orig(@args);
};

# CHI's append (CHI::Driver::Role::Universal transforms the key first), with the failure of its
# store reported to on_set_error as set()'s is (CHI calls store bare there, so a failed store
# died out of append: tester finding frameworks 2); true when the key was found, as there
# (CHI::Driver::Memcached::Fast's append also answers 1 when its store fails).
sub append {
    my ($self, $key, $new) = @_;
    my $current = $self->fetch($key) or return undef;
    my $data = $current . $new;
    return 1 if eval { $self->store($key, $data); 1 };
    my $error = $@;
    # the object the store would have held, for on_set_error's message (its size, expiry)
    my $obj = $self->unpack_from_data($key, $data);
    $obj = $self->cache_object_class->new($key, $data, time, CHI::Constants::CHI_Max_Time(),
        CHI::Constants::CHI_Max_Time(), $self->serializer)
        unless ref $obj && defined $obj->expires_at;
    $self->_handle_set_error($error, $obj);
    return 1;
}

# CHI catches what store dies with and applies on_set_error: a failed store (server down,
# value too large) dies with the core's message instead of passing unnoticed.
sub store {
    my ($self, $key, $data, $expires_in) = @_;
    my $ttl = _ttl($expires_in);
    defined $self->{memd}->set($self->escape_key($key), $data, $ttl)
        or Carp::croak('Mcpool: set ' . $key . ' failed: ' . Mcpool::last_error());
    return;
}

# The last moment memcached can hold (2038-01-19; the core's MCPOOL_MAX_TTL, the Django
# adapter's MAX_TTL): it reads a larger exptime as negative.
my $MAX_TTL = 2147483647;

# Seconds from now (CHI's expires_on_backend) to memcached's: none (0) when not given, else
# the core's rule for a duration (Mcpool::expiry_from_now): as they are up to 30 days, the
# unix time they end at above (memcached reads the seconds themselves as a moment in 1970
# and drops the item at once), expired at once when not in the future. A moment after 2038
# is the last one memcached can hold: the core refused it, CHI's default on_set_error only
# logs, and the OLD value stayed readable with its own, still valid CHI expiry (tester
# finding expiry 1); CHI still expires the new one at its own time (kept in the value).
sub _ttl {
    my $s = shift;
    return 0 unless defined $s;
    my $t = Mcpool::expiry_from_now(int($s + 0.999999));
    return $t > $MAX_TTL ? $MAX_TTL : $t;
}

sub remove {
    my ($self, $key) = @_;
    $self->{memd}->delete($self->escape_key($key));
    return;
}

# One round trip per server.
sub fetch_multi_hashref {
    my ($self, $keys) = @_;
    Carp::croak('must specify keys') unless defined $keys;
    return {} unless @$keys;
    my @wire = map { $self->escape_key($_) } @$keys;
    my $found = $self->{memd}->get_multi(@wire);
    return { map { defined $found->{ $wire[$_] } ? ($keys->[$_] => $found->{ $wire[$_] }) : () }
            0 .. $#$keys };
}

# CHI's set_multi calls set for each key (each building its cache object, stats and logs);
# here those sets queue their stores, and the queue goes out as one pipelined set_multi.
sub store_multi {
    my ($self, $key_values, $set_options) = @_;
    Carp::croak('must specify key_values') unless defined $key_values;
    my @queue;
    {
        local $self->{_queue} = \@queue;
        $self->SUPER::store_multi($key_values, $set_options);
    }
    return unless @queue;
    my @r = $self->{memd}->set_multi(map { [ $self->escape_key($_->[0]), $_->[1], $_->[2] ] } @queue);
    for my $i (0 .. $#queue) {
        next if $r[$i];
        $self->{ns_stats}->{set_errors}++ if defined $self->{ns_stats};
        # the item's own message (its key, server and cause), not the first failure's
        my $why = Mcpool::last_item_error($i) // Mcpool::last_error();
        $self->_handle_set_error('Mcpool: set ' . $queue[$i][0] . ' failed: ' . $why,
            $queue[$i][3]);
    }
    return;
}

# Inside store_multi, a store is queued (with its cache object, for on_set_error).
around 'set_object' => sub {
    my ($orig, $self, $key, $obj) = @_;
    my $queue = $self->{_queue} or return $self->$orig($key, $obj);
    my $exp = $self->expires_on_backend;
    my @ttl = $exp && $obj->expires_at < CHI::Constants::CHI_Max_Time()
        ? (($obj->expires_at - time) * $exp) : ();
    push @$queue, [ $key, $obj->pack_to_data, _ttl($ttl[0]), $obj ];
    return 1;
};

sub remove_multi {
    my ($self, $keys) = @_;
    Carp::croak('must specify keys') unless defined $keys;
    my @k = map { $self->escape_key($self->transform_key($_)) } @$keys;
    $self->{memd}->delete_multi(@k) if @k;
    return;
}

1;

__END__

=encoding UTF-8

=head1 NAME

CHI::Driver::Mcpool - CHI driver for memcached over mcpool's C core

=head1 SYNOPSIS

    use CHI;

    my $cache = CHI->new(
        driver    => 'Mcpool',
        servers   => [ '10.0.0.1:11211', '10.0.0.2:11211' ],
        namespace => 'users',
        expires_in => '1 hour',
        # any Mcpool option (Cache::Memcached::Fast's, and the core's own by name):
        io_timeout => 0.5,
        operation_timeout => '2s',
    );
    $cache->set('user:1', { name => 'Ada' });
    my $user = $cache->get('user:1');

=head1 DESCRIPTION

A L<CHI> driver over L<Mcpool> (mcpool's Perl binding, a drop-in for
Cache::Memcached::Fast), in the manner of CHI::Driver::Memcached: every constructor option
that is not CHI's own goes to C<< Mcpool->new >> (or give them all as C<memd_params>), and
C<< $cache->memd >> is the L<Mcpool> client.

=over

=item Namespaces and keys

Keys and namespaces go to memcached as CHI::Driver::Memcached and
CHI::Driver::Memcached::Fast send them, so those drivers and this one share a cache: CHI's
namespace becomes the key prefix C<< "$namespace:" >>, and a key (C<user:1>, C<a/b>,
C<x=y&z>, a UTF-8 one) is sent as it is. Only the bytes memcached's text protocol cannot
carry in a key (space, control bytes, DEL) are written C<%XX>, and with them C<%> (so that
no two keys or namespaces meet: C<"a b"> is C<a%20b>, C<"a%20b"> is C<a%2520b>). So a key
or namespace with a space, a control byte or DEL works here (those drivers cannot store it),
and of the keys both can store, one with C<%> is the only kind the two drivers send
differently. This is the driver's option C<sanitize_keys> (on by default; not the core's
C<sanitize_keys>, Whalin's URL-encoding of every key, which this driver does not use);
C<< sanitize_keys => 0 >> sends every key and namespace as it is, so a key with a space
fails (C<on_set_error>, C<on_get_error>), as with CHI::Driver::Memcached.

B<Warning, while both drivers run (a rollout):> two kinds of keys are sent differently, so
one site reads a stale value after the other updates or removes it: a key or namespace with
C<%> (URL-encoded keys such as C<page?q=a%20b> are common), which this driver sends as
C<%25>, and a key longer than 250 bytes once prefixed, which this driver stores under its
digest and CHI::Driver::Memcached::Fast fails to store or remove. Until every site runs
this driver, give it C<< sanitize_keys => 0 >>, and give both drivers
C<< max_key_length => 250 - length("$namespace:") >> (in bytes), so that CHI digests those
keys alike on both sides.

A key too long for memcached's 250 bytes once prefixed and escaped (counted in bytes: an
escaped byte takes three, a Latin-1 character of a character string two) is digested (MD5, 32
hex digits, CHI's C<digest_key>), rather than refused: CHI::Driver::Memcached fails such a key
(C<max_key_length> is CHI's, by default no limit, as there; a smaller one makes CHI digest
keys longer than it, in characters, as usual).

A namespace of more than 217 bytes leaves under 32 bytes, too few for a digest: the driver
warns when the cache is made (C<... leaves 19 bytes of memcached's 250 for keys, too few for
a digested key>), short keys still work, and every C<set> or C<get> of a key that has to be
digested fails through C<on_set_error> / C<on_get_error> with the core's C<key is longer than
250 bytes>; it is never stored under another key.

=item Multiple keys

C<get_multi_*> is one round trip per server, C<set_multi> one pipelined call (each item
with its own expiration time), C<remove_multi> one pipelined delete.

=item Errors

A server down or timing out, a key refused, a value over C<max_size> or that does not decode:
with a server down every CHI method answers as with CHI::Driver::Memcached::Fast (a miss,
undef, false; never an uncaught die), and each failure also reaches CHI's C<on_get_error> or
C<on_set_error> (by default logged, as an C<error> of L<Log::Any>), which that driver, not
seeing failures, never calls.

A read that fails (C<undef> from the core with C<last_error> set) goes to C<on_get_error> once,
with the message C<error during cache get for namespace='NS', key='KEY', cache='Mcpool':
Mcpool: get KEY failed: I<the core's message> at FILE line N.>, and the method then answers
as for a miss:

=over

=item *

C<get>, C<get_object> and C<fetch> return undef; C<get_expires_at>, C<is_valid> and
C<exists_and_is_expired> return nothing (false); C<expire>, C<replace> and C<append> return
false and store nothing.

=item *

C<add> and C<compute> go on as for a miss: they store (a store that fails goes to
C<on_set_error>) and return the value (C<compute>, the code's).

=back

For C<get> it is CHI's own handling, as for every driver (C<get> catches the read's die; the
key is the one given; CHI's stats count it in C<get_errors>). The other methods call the
driver's read with nothing around it (CHI::Driver), so the driver reports the failure itself,
through the same C<on_get_error> (the key as CHI transformed it: a reference serialized, a
long key digested; not counted in C<get_errors>, which counts C<get>'s only). Each failure is
reported once: a read of C<get>'s is never reported again by the driver, and a read made
while C<get> runs but not by it (an C<expire_if> callback, an C<on_get_error> handler that
reads) is reported as any other. With C<< on_get_error => 'die' >> every such read dies with
that message (the stock driver answers a miss); with C<'ignore'> nothing dies and nothing is
said.

A store that fails dies with the core's message (C<Mcpool: set KEY failed: ...>) inside
CHI's C<set>, so C<on_set_error> sees it and C<set> returns the value; so for C<set>,
C<compute>, C<add>, C<replace>, C<expire> and each failed item of C<set_multi>. C<append>'s
store (which CHI calls with nothing around it) is reported to C<on_set_error> by the driver,
and C<append> returns true, as the stock driver's does when its store fails.

C<get_multi_hashref>, C<get_multi_arrayref>, C<get_multi_hashref_objects> and
C<fetch_multi_hashref> leave a key that failed out, as a miss, and C<remove> and
C<remove_multi> of a key whose server is down do nothing, all without C<on_get_error> or
C<on_set_error> and as the stock driver does. C<clear>, C<get_keys> and the others memcached
cannot do croak whatever the servers' state, as there (L</Unsupported>).

A die that is not a failure the core reports (a C<$SIG{ALRM}> handler's, say) is not caught
by the driver: it leaves every method as before (C<get>'s own C<eval> hands one to
C<on_get_error>).

=item Unsupported

memcached cannot list or drop the keys of a namespace: C<clear>, C<get_keys>,
C<get_namespaces>, C<is_empty>, C<purge> and C<dump_as_hash> croak ("not supported").
Expiration is CHI's (stored in the value); with C<expires_on_backend> memcached expires the
item too, at the same moment (times C<expires_on_backend>): a duration above 30 days goes to
memcached as the unix time it ends at (C<Mcpool::expiry_from_now>), since memcached reads
one above 30 days as a unix time (CHI's own Memcached drivers send the seconds, and such an
item is gone at once). A moment after 2038 (C<expires_in =E<gt> 2**31>, an C<expires_at>
past 2038-01-19) is more than memcached can hold: memcached is given the last moment it can
(2147483647, 2038-01-19 03:14:07 UTC, as mcpool's Django adapter does), so the new value is
stored and kept as long as memcached can keep an item, and CHI still expires it at its own
time (kept in the value). The core refuses such a time, so the set used to fail, which CHI's
default C<on_set_error> (C<log>) passes over silently, and C<get> went on returning the old
value.

=back

=head1 TESTS

F<t/10-chi.t> runs CHI's own driver test suite (CHI::t::Driver, from Debian's libchi-perl)
against a private memcached, as CHI::Driver::Memcached's tests do. F<t/53-chi-server-down.t>
runs every CHI method with a server down (the only server a closed port, and a live memcached
plus a closed port) beside CHI::Driver::Memcached::Fast and compares their answers.

=head1 SEE ALSO

L<CHI>, L<Mcpool>.

=cut
