# A value just under 1 MiB passes the client's own size check, but key and item header push
# the item over memcached's limit: it answers "SERVER_ERROR object too large for cache"
# (binary: status 0x0003). That reply is the core's "value too large" (the same error as the
# client's own refusal): a single set returns nothing with last_error saying so, and in
# set_multi only that item fails (undef), the others get their own replies (as
# python-memcached reports them).
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;

my $srv = start_memcached();
my $big = join '', map { chr(int rand 256) } 1 .. 1048540;

for my $proto (qw(text meta binary)) {
    my $m = Mcpool->new({ servers => [$srv], protocol => $proto });
    my $p = unique("big-$proto");
    $m->set("${p}k", 'old');
    my @r = $m->set_multi(["${p}a", '1'], ["${p}k", $big], ["${p}j", 'ok'], ["${p}z", 'zz']);
    is_deeply(\@r, [1, undef, 1, 1], "$proto: set_multi: only the value the server refused fails");
    like($m->last_error, qr/\Q${p}k\E.*too large/s, "$proto: ... last_error names it and says too large");
    is_deeply($m->get_multi(map { "$p$_" } qw(a k j z)),
        { "${p}a" => '1', "${p}j" => 'ok', "${p}z" => 'zz' },
        "$proto: ... the others stored; the old value of k removed (memcached unlinks it)");
    ok(!defined $m->set("${p}s", $big), "$proto: a single set of it returns nothing");
    like($m->last_error, qr/object too large for cache/, "$proto: ... last_error keeps the server's message");
    is($m->set("${p}s", 'small'), 1, "$proto: ... and the client goes on");
}

# Cache::Memcached::Fast is no reference here: its set_multi of these four items returns one
# result (for the first) and nothing for the others, which the server did store.

done_testing;
