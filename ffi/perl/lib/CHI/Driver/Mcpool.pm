package CHI::Driver::Mcpool;

use strict;
use warnings;

use Carp ();
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
    # The CHI namespace is the core's key prefix ("Default:" unless given).
    $p{namespace} //= $self->namespace . ':';
    # Any CHI key is a valid memcached key: the core URL-encodes what the text protocol
    # cannot carry (spaces, control bytes), as Whalin's clients do.
    $p{sanitize_keys} //= 1;
    $self->{memd} = Mcpool->new(\%p);
    # memcached's 250 bytes less the namespace, for a key each of whose bytes may be
    # URL-encoded (3 bytes); CHI digests longer keys (MD5, 32 hex digits).
    $self->{max_key_length} = int((250 - length($p{namespace})) / 3)
        if !defined $params->{max_key_length};
    return;
}

sub fetch {
    my ($self, $key) = @_;
    return scalar $self->{memd}->get($key);
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

# Seconds from now (CHI's expires_on_backend) to memcached's: none (0) when not given, and
# a time already past (-1: expired at once) when it is not in the future.
sub _ttl {
    my $s = shift;
    return 0 unless defined $s;
    my $t = int($s + 0.999999);
    return $t > 0 ? $t : -1;
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

=item Keys

Any CHI key works: the core URL-encodes the bytes memcached's text protocol cannot carry
(C<sanitize_keys>, on by default here; pass C<< sanitize_keys => 0 >> to send keys as
they are). Keys longer than C<max_key_length> are digested by CHI (MD5, 32 hex digits); its
default here is a third of what memcached's 250 bytes leave after the namespace (each byte of
a key may take three once encoded), 80 bytes with the default namespace.

=item Multiple keys

C<get_multi_*> is one round trip per server, C<set_multi> one pipelined call (each item
with its own expiration time), C<remove_multi> one pipelined delete.

=item Errors

A store that fails (a down server, a value over C<max_size>) dies with the core's message,
so CHI's C<on_set_error> sees it. A read that fails is a miss, as with
CHI::Driver::Memcached.

=item Unsupported

memcached cannot list or drop the keys of a namespace: C<clear>, C<get_keys>,
C<get_namespaces>, C<is_empty>, C<purge> and C<dump_as_hash> croak ("not supported").
Expiration is CHI's (stored in the value); with C<expires_on_backend> memcached expires the
item too.

=back

=head1 TESTS

F<t/10-chi.t> runs CHI's own driver test suite (CHI::t::Driver, from Debian's libchi-perl)
against a private memcached, as CHI::Driver::Memcached's tests do.

=head1 SEE ALSO

L<CHI>, L<Mcpool>.

=cut
