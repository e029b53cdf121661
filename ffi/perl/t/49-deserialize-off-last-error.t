# With deserialize => 0 a value flagged Storable (flags 1: a reference another client froze,
# or any body a writer flagged 1) is an error, never a miss: the reads return nothing (the
# multi-gets leave its key out) with a warning labelled MCPOOL_VALUE_FORMAT naming the key and
# the flags, and last_error says why, as for the other values that cannot be read (a thaw that
# dies, bytes after an image). Before (tester finding hostile3 4) last_error stayed empty, so
# the value read as a miss, and the warning had no MCPOOL_VALUE_FORMAT label; get_lease
# answered ('hit', undef, cas) without a word.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;

my $srv = start_memcached();
my $p = unique('deser-off');


my $writer = Mcpool->new({ servers => [$srv] });
ok($writer->set("${p}ref", { a => [ 1, 2 ] }), 'a reference stored (Storable, flags 1)');
raw_set($srv, "${p}raw", 1, 'not an image');
ok($writer->set("${p}plain", 'plain value'), 'a plain value stored');

for my $protocol (qw(text meta)) {
    my $nd = Mcpool->new({ servers => [$srv], deserialize => 0, protocol => $protocol });
    for my $k ("${p}ref", "${p}raw") {
        my $why = qr/^key "\Q$k\E" with flags 1 \(0x1\): the value is flagged Storable \(serialized\) and deserialize is off\z/;
        my @reads = (
            [ get => sub { [ $nd->get($k) ] }, [] ],
            [ gets => sub { [ $nd->gets($k) ] }, [] ],
            [ gat => sub { [ $nd->gat(0, $k) ] }, [] ],
            [ gats => sub { [ $nd->gats(0, $k) ] }, [] ],
            [ get_multi => sub { $nd->get_multi($k, "${p}plain") }, { "${p}plain" => 'plain value' } ],
            [ gets_multi => sub { my $h = $nd->gets_multi($k); [ keys %$h ] }, [] ],
            [ gat_multi => sub { $nd->gat_multi(0, "${p}plain", $k) }, { "${p}plain" => 'plain value' } ],
        );
        for my $read (@reads) {
            my ($fn, $call, $expected) = @$read;
            my $what = "$protocol: $fn of $k";
            $nd->get("${p}plain");    # a call that succeeds first: last_error empty
            my @w;
            my $got = do { local $SIG{__WARN__} = sub { push @w, @_ }; $call->() };
            is_deeply($got, $expected, "$what: not returned");
            like(Mcpool::last_error(), $why, "$what: last_error says why (never a miss)")
                or diag Mcpool::last_error();
            is(scalar @w, 1, "$what: one warning");
            like($w[0] // '', qr/^Mcpool::\Q$fn\E: MCPOOL_VALUE_FORMAT: key "\Q$k\E" with flags 1 \(0x1\): the value is flagged Storable \(serialized\) and deserialize is off: not returned at /,
                "$what: the warning is labelled MCPOOL_VALUE_FORMAT, names the key and the flags");
        }
        if ($protocol eq 'meta') {    # get_lease: nothing and last_error, as for its other refusals
            my @w;
            my @r = do { local $SIG{__WARN__} = sub { push @w, @_ }; $nd->get_lease($k, 10, 0) };
            is_deeply(\@r, [], "get_lease of $k: nothing (not a hit without a value)");
            like(Mcpool::last_error(), $why, "get_lease of $k: last_error says why");
        }
    }
    # the others of a multi-get are returned; a miss is still a miss (last_error empty)
    my @w;
    my $h = do { local $SIG{__WARN__} = sub { push @w, @_ }; $nd->get_multi("${p}raw", "${p}plain", "${p}ref") };
    is_deeply($h, { "${p}plain" => 'plain value' }, "$protocol: get_multi of both: the other value returned");
    like(Mcpool::last_error(), qr/^key "\Q${p}raw\E" with flags 1/, "$protocol: ... last_error is the first failure's");
    is(scalar @w, 2, "$protocol: ... a warning for each, in key order")
        and like($w[1], qr/^Mcpool::get_multi: MCPOOL_VALUE_FORMAT: key "\Q${p}ref\E"/, "$protocol: ... the second names its key");
    is_deeply([ $nd->get("${p}none") ], [], "$protocol: a miss");
    is(Mcpool::last_error(), '', "$protocol: ... last_error empty: a miss is told from a refused value");
}

is_deeply($writer->get("${p}ref"), { a => [ 1, 2 ] }, 'deserialize on (the default): the same value thawed');

stop_memcached($srv);
done_testing;
