# noop (a no-op round trip to every server: { 'host:port' => 1 or undef }, as flush_all) and
# delete/incr/decr with an explicit CAS version (meta E, memcached 1.6.27+): refused by the
# installed memcached (older) and on text/binary, answered by a deliberately fake meta server
# that reports 1.6.27, and a server that is down.
use strict;
use warnings;
use Test::More;
use IO::Socket::INET;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;

my @srv = (start_memcached(), start_memcached());

for my $protocol (qw(text meta binary)) {
    my $m = Mcpool->new({ servers => [@srv], protocol => $protocol });
    is_deeply($m->noop, { map { $_ => 1 } @srv }, "$protocol: noop: every server answered");
    is(Mcpool::last_error(), '', "$protocol: ... and no failure");

    my $k = unique("v$protocol");
    ok($m->set($k, 5), "$protocol: set a counter");
    my @r = $m->delete_with_version($k, 5);
    is_deeply(\@r, [], "$protocol: delete_with_version refused: nothing");
    like(Mcpool::last_error(), $protocol eq 'meta' ? qr/1\.6\.27/ : qr/meta/,
        "$protocol: ... last_error says why");
    @r = $m->incr_with_version($k, 1, 5);
    is_deeply(\@r, [], "$protocol: incr_with_version refused: nothing");
    @r = $m->decr_with_version($k, 1, 5);
    is_deeply(\@r, [], "$protocol: decr_with_version refused: nothing");
    is($m->get($k), 5, "$protocol: ... the counter unchanged");
    # a bad delta is refused as incr refuses it (undef, last_error naming it, nothing sent)
    ok(!defined $m->incr_with_version($k, -1, 5), "$protocol: a negative delta is refused");
    like($m->last_error, qr/incr_with_version "\Q$k\E": the delta must be a decimal integer/,
         '... last_error naming the call, the key and the delta');
    ok(!eval { $m->delete_with_version($k, 1.5); 1 }, "$protocol: a fractional version croaks");
    ok(!eval { $m->delete_with_version($k, undef); 1 }, "$protocol: an undef version croaks");
}

{
    my $m = Mcpool->new({ servers => [ $srv[0], '127.0.0.1:1' ], connect_timeout => 0.2,
        protocol => 'meta' });
    my $r = $m->noop;
    ok(exists $r->{'127.0.0.1:1'} && !defined $r->{'127.0.0.1:1'}, 'noop: a server down: undef');
    is($r->{ $srv[0] }, 1, '... the other answers');
    like(Mcpool::last_error(), qr/127\.0\.0\.1:1/, '... and last_error names the failure');

    my $down = Mcpool->new({ servers => ['127.0.0.1:1'], connect_timeout => 0.2,
        protocol => 'meta' });
    my @r = $down->delete_with_version('k', 5);
    is_deeply(\@r, [], 'delete_with_version, server down: nothing');
    like(Mcpool::last_error(), qr/127\.0\.0\.1:1/, '... last_error names the server');
    @r = $down->incr_with_version('k', 1, 5);
    is_deeply(\@r, [], 'incr_with_version, server down: nothing');
}

# A deliberately fake meta server reporting memcached 1.6.27, in a child process: md/ma on a
# key holding "absent" answer NF, else HD and VA 1 with 7; the request's opaque is echoed.
{
    my $l = IO::Socket::INET->new(Listen => 4, LocalAddr => '127.0.0.1', LocalPort => 0,
        Proto => 'tcp', ReuseAddr => 1) or die "listen: $!";
    my $addr = '127.0.0.1:' . $l->sockport;
    my $pid = fork // die "fork: $!";
    if (!$pid) {
        my $c = $l->accept or exit 0;
        for (1 .. 100) {    # bounded
            defined(my $line = <$c>) or last;
            my @w = split ' ', $line;
            my ($o) = grep { /^O/ } @w;
            $o //= '';
            my $absent = $line =~ /absent/;
            my $reply = $w[0] eq 'version' ? "VERSION 1.6.27\r\n"
                : $w[0] eq 'md' ? ($absent ? "NF $o\r\n" : "HD $o\r\n")
                : $w[0] eq 'ma' ? ($absent ? "NF $o\r\n" : "VA 1 $o\r\n7\r\n")
                :                 "CLIENT_ERROR fake\r\n";
            print $c $reply;
        }
        exit 0;
    }
    close $l;
    my $m = Mcpool->new({ servers => [$addr], protocol => 'meta', max_size => 1 });
    is($m->delete_with_version('k', 777), 1, 'fake 1.6.27: delete_with_version: existed');
    ok(defined($m->delete_with_version('absent', 777)) && !$m->delete_with_version('absent', 777),
        '... missing: false');
    is($m->incr_with_version('n', 1, 99), 7, '... incr_with_version: the new value');
    is($m->decr_with_version('n', 1, 99), 7, '... decr_with_version: the new value');
    my @r = $m->incr_with_version('absent', 1, 99);
    ok(@r == 1 && !$r[0], '... missing counter: false');
    is(Mcpool::last_error(), '', '... an answer, not a failure');
    undef $m;
    kill 'TERM', $pid;
    waitpid $pid, 0;
}

done_testing;
