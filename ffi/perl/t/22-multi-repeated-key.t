# The _multi commands with a key given more than once, side by side with
# Cache::Memcached::Fast on one server. List context: the same answer for every occurrence.
# Scalar context (a hash, one entry per key): Cache::Memcached::Fast keeps the last defined
# occurrence's answer; Mcpool keeps 1 (the counter's latest value) when any occurrence was
# done, "" only when none was (docs/errors.md "A key given more than once"), its one
# documented difference (POD "A key given more than once"). With distinct keys, or when the
# last occurrence is the one done, both hashes are the same.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;
use Cache::Memcached::Fast;

my $srv = start_memcached();
my %client = (
    cmf    => Cache::Memcached::Fast->new({ servers => [$srv] }),
    mcpool => Mcpool->new({ servers => [$srv] }),
);

# Each case: a name, a setup (on the key) and a call (client, key) => (list, hash), run
# twice from the same state per client.
my @cases = (
    [ 'delete_multi(k, k), k present', sub { $_[0]->set($_[1], 'v') },
        sub { my ($c, $k) = @_; $c->delete_multi($k, $k) } ],
    [ 'delete_multi(k, k), k missing', sub { $_[0]->delete($_[1]) },
        sub { my ($c, $k) = @_; $c->delete_multi($k, [$k]) } ],
    [ 'add_multi(k, k), k missing', sub { $_[0]->delete($_[1]) },
        sub { my ($c, $k) = @_; $c->add_multi([$k, 'x'], [$k, 'y']) } ],
    [ 'add_multi(k, k), k present', sub { $_[0]->set($_[1], 'v') },
        sub { my ($c, $k) = @_; $c->add_multi([$k, 'x'], [$k, 'y']) } ],
    [ 'set_multi(k, k)', sub { $_[0]->delete($_[1]) },
        sub { my ($c, $k) = @_; $c->set_multi([$k, 'x'], [$k, 'y']) } ],
    [ 'replace_multi(k, k), k missing', sub { $_[0]->delete($_[1]) },
        sub { my ($c, $k) = @_; $c->replace_multi([$k, 'x'], [$k, 'y']) } ],
    [ 'append_multi(k, k)', sub { $_[0]->set($_[1], 'v') },
        sub { my ($c, $k) = @_; $c->append_multi([$k, 'x'], [$k, 'y']) } ],
    [ 'prepend_multi(k, k), k missing', sub { $_[0]->delete($_[1]) },
        sub { my ($c, $k) = @_; $c->prepend_multi([$k, 'x'], [$k, 'y']) } ],
    [ 'cas_multi(k, k), the same CAS', sub { $_[0]->set($_[1], 'v') },
        sub {
            my ($c, $k) = @_;
            my $cas = $c->gets($k)->[0];
            $c->cas_multi([$k, $cas, 'x'], [$k, $cas, 'y']);
        } ],
    [ 'incr_multi(k, k)', sub { $_[0]->set($_[1], 5) },
        sub { my ($c, $k) = @_; $c->incr_multi($k, [$k, 2]) } ],
    [ 'incr_multi(k, k), k missing', sub { $_[0]->delete($_[1]) },
        sub { my ($c, $k) = @_; $c->incr_multi($k, $k) } ],
    [ 'decr_multi(k, k)', sub { $_[0]->set($_[1], 5) },
        sub { my ($c, $k) = @_; $c->decr_multi([$k, 2], $k) } ],
    [ 'touch_multi(k, k)', sub { $_[0]->set($_[1], 'v') },
        sub { my ($c, $k) = @_; $c->touch_multi([$k, 100], [$k, 200]) } ],
    # A key deleted by the first occurrence, then added back by a second call: distinct
    # calls, the same answers.
    [ 'delete_multi(k, j), distinct keys', sub { $_[0]->set($_[1], 'v'); $_[0]->delete("$_[1]j") },
        sub { my ($c, $k) = @_; $c->delete_multi($k, "${k}j") } ],
);

# Cache::Memcached::Fast's hash: each occurrence's defined answer in turn, the last one kept.
sub last_defined {
    my ($keys, $list) = @_;
    my %h;
    for my $i (0 .. $#$list) { $h{ $keys->[$i] } = $list->[$i] if defined $list->[$i] }
    return \%h;
}

# Mcpool's: the last answer that was done, else "".
sub any_done {
    my ($keys, $list) = @_;
    my %h;
    for my $i (0 .. $#$list) {
        next unless defined $list->[$i];
        next if !$list->[$i] && exists $h{ $keys->[$i] };
        $h{ $keys->[$i] } = $list->[$i];
    }
    return \%h;
}

my $n = 0;
my $differ = 0;
for my $case (@cases) {
    my ($name, $setup, $call) = @$case;
    my (%list, %hash, %keys);
    for my $who (sort keys %client) {
        my $c = $client{$who};
        my $k = unique("rk$n");    # the same key name shape for both clients
        $setup->($c, $k);
        my @l = $call->($c, $k);
        $setup->($c, $k);
        my $h = $call->($c, $k);
        # Keys of the occurrences, in order, without the per-client prefix.
        (my $bare = $k) =~ s/^.*-rk/rk/;
        $list{$who} = [@l];
        $hash{$who} = { map { (my $x = $_) =~ s/^.*-rk/rk/; ($x => $h->{$_}) } keys %$h };
        my @occ = map { ref eq 'ARRAY' ? $_->[0] : $_ } ($name =~ /distinct/ ? ($k, "${k}j") : ($k, $k));
        s/^.*-rk/rk/ for @occ;
        $keys{$who} = \@occ;
    }
    $n++;
    is_deeply($list{mcpool}, $list{cmf}, "$name, list context: each occurrence's answer, as Cache::Memcached::Fast")
        or diag explain \%list;
    is_deeply($hash{cmf}, last_defined($keys{cmf}, $list{cmf}),
        "$name: Cache::Memcached::Fast's hash is the last defined answer");
    is_deeply($hash{mcpool}, any_done($keys{mcpool}, $list{mcpool}),
        "$name: Mcpool's hash is 1 when any occurrence was done")
        or diag explain \%hash;
    my $same = last_defined($keys{cmf}, $list{cmf});
    if (!eq_hash($hash{mcpool}, $same)) {
        $differ++;
        # The one difference: an earlier occurrence done, a later one a no.
        my @l = @{ $list{cmf} };
        ok($l[0] && defined $l[-1] && !$l[-1], "$name: differs only where a later occurrence said no after one was done")
            or diag explain [\%hash, \@l];
    }
}
# The cases the POD names: delete_multi, add_multi and cas_multi of a key given twice.
ok($differ >= 2, "the documented difference is seen ($differ cases)");

# The POD says so, and not under "As Cache::Memcached::Fast" (it described Mcpool's rule
# there, with this very example, as Cache::Memcached::Fast's behaviour).
my $pm = $INC{'Mcpool.pm'};
open my $fh, '<', $pm or die "$pm: $!";
my $pod = do { local $/; <$fh> };
my ($as_cmf) = $pod =~ /^As Cache::Memcached::Fast:(.*?)^=/ms;
ok(defined $as_cmf, 'the POD has its "As Cache::Memcached::Fast" return values');
unlike($as_cmf // '', qr/more than once|k =E<gt> 1/, '... which no longer claims the repeated-key rule as Cache::Memcached::Fast\'s');
like($pod, qr/^=item A key given more than once \(differs from Cache::Memcached::Fast\)$/m, 'the difference has its own item');
like($pod, qr/C<< \{ k =E<gt> '' \} >> from Cache::Memcached::Fast/, '... naming Cache::Memcached::Fast\'s answer');
done_testing;
