# Mcpool::last_error_outcome_unknown and Mcpool::last_item_outcome_unknown (the C ABI's
# mcpool_last_error_outcome_unknown, mcpool_last_item_outcome_unknown): true when the last
# error (item) is of a write that was sent and whose reply never came, so whether it was
# applied is unknown; false for a read, a refused connect, a message of the binding's own.
# Kept through what the binding puts back: the method's error after an on_operation
# callback's failing call, a method that cannot fail croaking.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;
use IO::Socket::INET;

my $real = start_memcached();
# a deliberately silent server: the kernel accepts, the request is read into its buffer,
# nothing ever replies
my $silent = IO::Socket::INET->new(Listen => 64, LocalAddr => '127.0.0.1', LocalPort => 0,
                                   Proto => 'tcp') or die "listen: $!";
my $silent_addr = '127.0.0.1:' . $silent->sockport;
# a refused connect: a port nothing listens on
my $closed = IO::Socket::INET->new(Listen => 1, LocalAddr => '127.0.0.1', LocalPort => 0,
                                   Proto => 'tcp') or die "listen: $!";
my $refused_addr = '127.0.0.1:' . $closed->sockport;
close $closed;

my %o = (io_timeout => 0.3, connect_timeout => 0.5, max_failures => 0);
my $m = Mcpool->new({ servers => [$silent_addr], %o });
my $p = unique('ou');

# ----- a set sent, its reply never came -----
ok(!defined $m->set("${p}k", 'v'), 'set on the silent server fails');
like(Mcpool::last_error(), qr/whether it was applied is unknown/, '... last_error says so');
ok(Mcpool::last_error_outcome_unknown(), '... last_error_outcome_unknown true');
ok($m->last_error_outcome_unknown, '... also as a method');
# methods that cannot fail leave it as it is, croaking too
$m->server_for("${p}k");
Mcpool::option_doc('no_such_option');
ok(!eval { Mcpool::expiry_from_now('abc'); 1 }, 'expiry_from_now croaks');
ok(Mcpool::last_error_outcome_unknown(), '... still true after server_for, option_doc, expiry_from_now');
like(Mcpool::last_error(), qr/whether it was applied is unknown/, '... last_error as it was');

# ----- a read: nothing changes -----
ok(!defined $m->get("${p}k"), 'get on the silent server fails');
isnt(Mcpool::last_error(), '', '... with last_error');
ok(!Mcpool::last_error_outcome_unknown(), '... last_error_outcome_unknown false');

# ----- the next call's: a binding's own refusal, a success -----
$m->set("${p}k", 'v');
ok(Mcpool::last_error_outcome_unknown(), 'set again: true');
ok(!defined $m->set('a b', 'v'), 'a bad key fails');
ok(!Mcpool::last_error_outcome_unknown(), '... false');
$m->set("${p}k", 'v');
my $ok = Mcpool->new({ servers => [$real] });
ok($ok->set("${p}k", 'v'), 'a set that succeeds');
is(Mcpool::last_error(), '', '... last_error empty');
ok(!Mcpool::last_error_outcome_unknown(), '... false');

# ----- a refused connect: nothing sent -----
my $r = Mcpool->new({ servers => [$refused_addr], %o });
ok(!defined $r->set("${p}k", 'v'), 'set on a refused connect fails');
isnt(Mcpool::last_error(), '', '... with last_error');
ok(!Mcpool::last_error_outcome_unknown(), '... false');

# ----- set_multi: per item -----
my $two = Mcpool->new({ servers => [$silent_addr, $refused_addr], %o });
my @keys = map { "$p$_" } 1 .. 12;
my @on_silent = map { $two->server_for($_) eq $silent_addr } @keys;
ok((grep { $_ } @on_silent) && (grep { !$_ } @on_silent), 'keys on both servers');
my @res = $two->set_multi(map { [$_, 'v'] } @keys);
for my $i (0 .. $#keys) {
    ok(!defined $res[$i], "set_multi item $i fails");
    is(!!Mcpool::last_item_outcome_unknown($i), !!$on_silent[$i],
       '... last_item_outcome_unknown ' . ($on_silent[$i] ? 'true (silent server)' : 'false (refused)'));
}
ok(!Mcpool::last_item_outcome_unknown(scalar @keys), 'past the items: false');
$two->get_multi(@keys);
ok(!Mcpool::last_item_outcome_unknown($_), "get_multi item $_: false") for 0 .. $#keys;

# ----- an on_operation callback whose own call fails otherwise: the method's is put back -----
my @seen;
my $hooked = Mcpool->new({ servers => [$silent_addr], %o, on_operation => sub {
    my ($op) = @_;
    push @seen, $op->{op};
    $r->get("${p}cb");    # fails: refused connect, not of unknown outcome
    push @seen, Mcpool::last_error_outcome_unknown() ? 'unknown' : 'known';
} });
ok(!defined $hooked->set("${p}k", 'v'), 'set with on_operation fails');
is_deeply(\@seen, [ 'set', 'known' ], '... the callback ran and its get failed otherwise')
    or diag explain \@seen;
like(Mcpool::last_error(), qr/^set "\Q${p}k\E".*whether it was applied is unknown/, "... last_error the set's");
ok(Mcpool::last_error_outcome_unknown(), '... last_error_outcome_unknown still true');
ok($hooked->last_error_outcome_unknown, '... also as the hooked object\'s method');

# ----- the POD: both documented, among the methods that leave last_error as it is -----
{
    my $pm = do { local (@ARGV, $/) = $INC{'Mcpool.pm'}; <> };
    ok($pm =~ /^=item last_error_outcome_unknown\n/m, 'POD: last_error_outcome_unknown');
    ok($pm =~ /^=item last_item_outcome_unknown \(\$index\)\n/m, 'POD: last_item_outcome_unknown');
    my ($quiet) = $pm =~ /The\s+methods that cannot fail leave it as it is, so(.*?)\.\s/s;
    like($quiet // '', qr/C<last_error_outcome_unknown>/, '... listed as leaving last_error as it is');
    like($quiet // '', qr/C<last_item_outcome_unknown>/, '... both');
}

# ----- a client without servers: the method works -----
my $none = Mcpool->new;
$none->get('k');
ok(!$none->last_error_outcome_unknown, 'a client without servers: false');

done_testing();
