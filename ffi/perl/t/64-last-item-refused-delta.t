# Mcpool::last_item_error / last_item_outcome_unknown of incr_multi and decr_multi after an
# item whose delta this binding refused (left out of the core's call): the core numbers only
# the items it was given, so item i's answer was the next item's (a delta refused at 1 made
# last_item_error(1) the message of the item after it, and that item's undef). Now every
# item's answer is its own, in the order given.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;

my $server = start_memcached();
my $mc = Mcpool->new({ servers => [$server] });
my $p = unique('rd');
$mc->set("${p}n", 5) or die;
$mc->set("${p}m", 7) or die;
$mc->set("${p}txt", 'abc') or die;

for my $call (qw(incr_multi decr_multi)) {
    my @res = $mc->$call(["${p}n", 1], ["${p}bad", -1], ["${p}txt", 1], ["${p}m", 'x'],
                         ["${p}gone", 1]);
    is(scalar @res, 5, "$call: one answer per item");
    ok(defined $res[0] && $res[0] =~ /^\d+$/, "$call: item 0 counted");
    ok(!defined Mcpool::last_item_error(0), "$call: item 0 has no error");
    like(Mcpool::last_item_error(1), qr/\Q${p}bad\E.*delta/, "$call: item 1's own refusal");
    like(Mcpool::last_item_error(2), qr/\Q${p}txt\E/, "$call: item 2's own error (not a number)");
    like(Mcpool::last_item_error(3), qr/\Q${p}m\E.*delta/, "$call: item 3's own refusal");
    ok(!defined Mcpool::last_item_error(4), "$call: item 4 (a miss) has no error");
    ok(!Mcpool::last_item_outcome_unknown($_), "$call: item $_ outcome known") for 0 .. 4;
}
# the next batch call's answers replace them
$mc->delete_multi("${p}n", "${p}gone");
ok(!defined Mcpool::last_item_error(1), 'the next batch call answers for itself');
ok(!defined Mcpool::last_item_error(2), 'the next batch call answers for itself (2)');

done_testing;
