# Each failed item of a batch has its own message (Mcpool::last_item_error), and CHI's
# set_multi reports each failed key with its own: it gave every one the first failure's
# key, server and cause, from last_error (tester finding partial 2).
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;

my $srv = start_memcached();
my $ns  = unique('lie');
my $m = Mcpool->new({ servers => [$srv], namespace => "$ns:", max_value_size => 100 });
my @r = $m->set_multi([ 'a b', 'v' ], [ 'good', 'v' ], [ 'big', 'x' x 200 ]);
ok(!$r[0] && $r[1] && !$r[2], 'the bad key and the large value fail, the other is stored');
like(Mcpool::last_item_error(0), qr/invalid key "\Q$ns\E:a b"/, 'item 0: its own message');
is(Mcpool::last_item_error(1), undef, 'item 1: none');
like(Mcpool::last_item_error(2), qr/"big".*value of 200 bytes/, 'item 2: its own message');
like(Mcpool::last_error(), qr/a b/, 'last_error: the first failure');

SKIP: {
    skip 'CHI is not installed', 2 unless eval { require CHI; 1 };
    my @said;
    my $chi = CHI->new(driver => 'Mcpool', servers => [$srv], namespace => $ns,
                       max_value_size => 100, on_set_error => sub { push @said, $_[0] });
    $chi->set_multi({ first => 'x' x 200, second => 'y' x 300 });
    is(scalar @said, 2, 'CHI: both failed stores reported');
    my %by = map { /set (\w+) failed/ ? ($1 => $_) : () } @said;
    ok($by{first} && $by{first} !~ /second/ && $by{second} && $by{second} !~ /first/,
       'CHI: each failed key with its own message') or diag explain \@said;
}

done_testing;
