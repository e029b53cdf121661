package CHI::Driver::Mcpool;

use strict;
use warnings;

use Carp ();
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

sub BUILD {
    my ($self, $params) = @_;
    my %p = %{ $self->{memd_params} // $self->non_common_constructor_params($params) };
    delete @p{qw(memd_params driver)};
    # Any CHI key is a valid memcached key: the core URL-encodes what the text protocol
    # cannot carry (spaces, control bytes), as Whalin's clients do.
    $p{sanitize_keys} //= 1;
    # The CHI namespace is the core's key prefix ("Default:" unless given), which the core
    # sends as it is: with sanitize_keys on, the bytes memcached cannot carry in a key
    # (space, control bytes, DEL) and "%" (so that no two namespaces meet) are %XX-encoded
    # here, so that any CHI namespace works too.
    $p{namespace} //= _namespace_prefix($self->namespace, _true($p{sanitize_keys}));
    $self->{memd} = Mcpool->new(\%p);
    # What memcached's 250 bytes leave after the namespace (the core's key prefix, sent as
    # Perl holds it: its bytes, not its characters), for a key each of whose bytes may be
    # URL-encoded into 3 (sanitize_keys); CHI digests longer keys (MD5, 32 hex digits, never
    # encoded). A key CHI leaves whole therefore always fits.
    my $room = 250 - bytes::length("$p{namespace}");
    my $per_byte = _true($p{sanitize_keys}) ? 3 : 1;
    $self->{max_key_length} = $room > 0 ? int($room / $per_byte) : 0
        if !defined $params->{max_key_length};
    # With a key prefix over 218 bytes not even a digest fits: the keys CHI digests fail, each
    # through on_set_error / on_get_error with the core's "key is longer than 250 bytes".
    Carp::carp("CHI::Driver::Mcpool: the namespace '$p{namespace}' leaves $room bytes of "
            . "memcached's 250 for keys, too few for a digested key (32 bytes): keys longer "
            . "than $self->{max_key_length} bytes will fail")
        if $room < 32;
    return;
}

# "$namespace:" as the key prefix (Mcpool->new takes its bytes as it takes a namespace's),
# with the characters memcached's text protocol cannot carry and "%" as %XX when sanitizing.
sub _namespace_prefix {
    my ($ns, $sanitize) = @_;
    my $prefix = "$ns:";
    $prefix =~ s/([\x00-\x20\x7f%])/sprintf('%%%02X', ord $1)/ge if $sanitize;
    return $prefix;
}

sub _true {
    my $v = shift;
    return defined $v && $v ne '' && $v ne '0' && lc $v ne 'false';
}

# CHI digests a key of more than max_key_length characters; memcached counts bytes. A key
# CHI leaves whole that is longer in bytes (a character string: Latin-1 characters take two)
# is digested as well, rather than refused for its length.
around 'transform_key' => sub {
    my ($orig, $self, $key) = @_;
    $key = $self->$orig($key);
    my $max = $self->{max_key_length};
    $key = $self->digest_key($key) if length($key) <= $max && bytes::length($key) > $max;
    return $key;
};

# A miss is undef; a failed read (a key refused, a server down or timing out, a value that
# does not decode) dies with the core's message, which CHI hands to on_get_error (by default
# logged, and the get returns undef). Told apart by last_error: after a call it is that
# call's failure or nothing.
sub fetch {
    my ($self, $key) = @_;
    my $v = $self->{memd}->get($key);
    return $v if defined $v;
    my $err = Mcpool::last_error();
    Carp::croak("Mcpool: get $key failed: $err") if length $err;
    return undef;
}

# CHI catches what store dies with and applies on_set_error: a failed store (server down,
# value too large) dies with the core's message instead of passing unnoticed.
sub store {
    my ($self, $key, $data, $expires_in) = @_;
    my $ttl = _ttl($expires_in);
    defined $self->{memd}->set($key, $data, $ttl)
        or Carp::croak('Mcpool: set ' . $key . ' failed: ' . Mcpool::last_error());
    return;
}

# Seconds from now (CHI's expires_on_backend) to memcached's: none (0) when not given, else
# the core's rule for a duration (Mcpool::expiry_from_now): as they are up to 30 days, the
# unix time they end at above (memcached reads the seconds themselves as a moment in 1970
# and drops the item at once), expired at once when not in the future.
sub _ttl {
    my $s = shift;
    return 0 unless defined $s;
    return Mcpool::expiry_from_now(int($s + 0.999999));
}

sub remove {
    my ($self, $key) = @_;
    $self->{memd}->delete($key);
    return;
}

# One round trip per server.
sub fetch_multi_hashref {
    my ($self, $keys) = @_;
    Carp::croak('must specify keys') unless defined $keys;
    return $self->{memd}->get_multi(@$keys);
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
    my @r = $self->{memd}->set_multi(map { [ $_->[0], $_->[1], $_->[2] ] } @queue);
    for my $i (0 .. $#queue) {
        next if $r[$i];
        $self->{ns_stats}->{set_errors}++ if defined $self->{ns_stats};
        $self->_handle_set_error('Mcpool: set ' . $queue[$i][0] . ' failed: ' . Mcpool::last_error(),
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
    my @k = map { $self->transform_key($_) } @$keys;
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

=item Namespaces

CHI's namespace becomes the core's key prefix, C<< "$namespace:" >>.
Any namespace works: with C<sanitize_keys> (the default here) the bytes memcached cannot
carry in a key (space, control bytes, DEL) and C<%> are written C<%XX>, so C<"user
sessions"> is the prefix C<user%20sessions:>; other namespaces go as they are, as
CHI::Driver::Memcached sends them.

=item Keys

Any CHI key works: the core URL-encodes the bytes memcached's text protocol cannot carry
(C<sanitize_keys>, on by default here; pass C<< sanitize_keys => 0 >> to send keys as
they are). Keys longer than C<max_key_length> are digested by CHI (MD5, 32 hex digits); its
default here is a third of what memcached's 250 bytes leave after the key prefix
C<"$namespace:">, counted in bytes (each byte of a key may take three once encoded; all of it
with C<< sanitize_keys => 0 >>): 80 with the default namespace. So a key CHI leaves whole
always fits, and a key of characters that take more bytes than C<max_key_length> (CHI counts
characters) is digested too.

A namespace of more than 217 bytes leaves under 32 bytes, too few for a digest: the driver
warns when the cache is made (C<... leaves 19 bytes of memcached's 250 for keys, too few for
a digested key>), short keys still work, and every C<set> or C<get> of a key CHI digests fails
through C<on_set_error> / C<on_get_error> with the core's C<key is longer than 250 bytes>; it
is never stored under another key.

=item Multiple keys

C<get_multi_*> is one round trip per server, C<set_multi> one pipelined call (each item
with its own expiration time), C<remove_multi> one pipelined delete.

=item Errors

A store that fails (a down server, a value over C<max_size>, a key too long) dies with the
core's message, so CHI's C<on_set_error> sees it. A read that fails (the same causes, or a
value that does not decode) dies with it too, so C<on_get_error> sees it (by default CHI logs
it and the get returns undef, as for a miss); a miss is undef. C<get_multi_*> leaves failed
keys out, as misses.

=item Unsupported

memcached cannot list or drop the keys of a namespace: C<clear>, C<get_keys>,
C<get_namespaces>, C<is_empty>, C<purge> and C<dump_as_hash> croak ("not supported").
Expiration is CHI's (stored in the value); with C<expires_on_backend> memcached expires the
item too, at the same moment (times C<expires_on_backend>): a duration above 30 days goes to
memcached as the unix time it ends at (C<Mcpool::expiry_from_now>), since memcached reads
one above 30 days as a unix time (CHI's own Memcached drivers send the seconds, and such an
item is gone at once). A moment after 2038 fails the set (C<on_set_error>).

=back

=head1 TESTS

F<t/10-chi.t> runs CHI's own driver test suite (CHI::t::Driver, from Debian's libchi-perl)
against a private memcached, as CHI::Driver::Memcached's tests do.

=head1 SEE ALSO

L<CHI>, L<Mcpool>.

=cut
