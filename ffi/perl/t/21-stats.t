# stats([$group]): every server's statistics, { 'host:port' => { name => value } }, as the
# other surfaces' stats(group); a server that failed maps to undef and last_error names it.
# Checked against what memcached itself answers over a plain socket, on every protocol.
use strict;
use warnings;
use Test::More;
use IO::Socket::INET;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;

my @srv = (start_memcached(), start_memcached());

# { name => value } of "stats $group" from $addr over a plain socket.
sub raw_stats {
    my ($addr, $group) = @_;
    my $s = IO::Socket::INET->new(PeerAddr => $addr, Timeout => 5) or die "connect: $!";
    print $s 'stats' . (defined $group ? " $group" : '') . "\r\n";
    my %h;
    while (defined(my $line = <$s>)) {
        last if $line =~ /^END\r\n/;
        my (undef, $n, $v) = $line =~ /^(STAT) (\S+) (.*)\r\n$/ or die "unexpected: $line";
        $h{$n} = $v;
    }
    return \%h;
}

for my $protocol (qw(text meta binary)) {
    my $m = Mcpool->new({ servers => [@srv], protocol => $protocol });
    my $st = $m->stats;
    is_deeply([ sort keys %$st ], [ sort @srv ], "$protocol: one entry per server");
    is(Mcpool::last_error(), '', "$protocol: ... and no failure");
    for my $addr (@srv) {
        my $raw = raw_stats($addr);
        is_deeply([ sort keys %{ $st->{$addr} } ], [ sort keys %$raw ],
            "$protocol: $addr: the names memcached answers");
        is($st->{$addr}{pid}, $raw->{pid}, "$protocol: $addr: its pid");
        is($st->{$addr}{version}, $raw->{version}, "$protocol: $addr: its version");
    }
    my $settings = $m->stats('settings');
    is_deeply($settings->{ $srv[0] }, raw_stats($srv[0], 'settings'),
        "$protocol: a group: stats('settings'), as memcached answers it");
    is_deeply([ sort keys %{ $m->stats(undef) } ], [ sort @srv ], "$protocol: undef: the general ones");
}

{
    my $m = Mcpool->new({ servers => [ $srv[0], '127.0.0.1:1' ], connect_timeout => 0.2 });
    my $st = $m->stats;
    ok(exists $st->{'127.0.0.1:1'} && !defined $st->{'127.0.0.1:1'}, 'a server down: undef');
    ok(ref $st->{ $srv[0] } eq 'HASH' && defined $st->{ $srv[0] }{pid}, '... the other answers');
    like(Mcpool::last_error(), qr/stats.*127\.0\.0\.1:1/, '... and last_error names the failure');
    Mcpool->new({ servers => [ $srv[0] ] })->stats;
    is(Mcpool::last_error(), '', '... a stats where every server answered: nothing');
}

{
    my $m = Mcpool->new({ servers => [ $srv[0] ] });
    ok(!eval { $m->stats("items\r\nflush_all"); 1 }, 'a group with CR LF croaks');
    like($@, qr/stats/, '... naming the call');
    ok(!eval { $m->stats(''); 1 }, 'an empty group croaks');
    ok(!eval { $m->stats([]); 1 }, 'a reference croaks');
    like($@, qr/group must be a string/, '... saying so');
    my $k = unique('st');
    ok($m->set($k, 'v'), 'the CR LF was never sent: the server still holds what is set');
    is($m->get($k), 'v', '... and reads it back');
}

done_testing;
