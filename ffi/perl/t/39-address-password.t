# A server address with a user:password@ before the host is refused by the core, which shows
# it as <userinfo hidden>@host; new and set_servers quoted the address as given in their own
# messages ("Mcpool->new: server bob:Sekr1t@127.0.0.1:1: MCPOOL_CONFIG: ...", the weight
# warning "Mcpool: server bob:Sekr1t@...: weight 2.5 is not an integer", the weight croaks):
# tester finding retest15 3. No croak, warning or last_error of either quotes a password,
# whatever it holds and whatever else is wrong with the entry.
use strict;
use warnings;
use Test::More;
use Mcpool;

my $port = 1;    # nothing is sent: every address below is refused before any I/O
my @passwords = ('Sekr1t', 'Sek r1t', 'Sek=r1t', 'Sek"r1t', 'S@kr1t', 'Sek://r1t', 'Sek:r1t',
                 "Sek\tr1t", '"Sekr1t"');
my @forms = (
    sub { "bob:$_[0]\@127.0.0.1:$port" },
    sub { "$_[0]\@127.0.0.1:$port" },
    sub { "memcache://bob:$_[0]\@127.0.0.1:$port" },
    sub { "bob:$_[0]\@[::1]:$port" },
    sub { "bob:$_[0]\@::1:$port" },    # Cache::Memcached::Fast's IPv6 spelling
    sub { "bob:$_[0]\@localhost" },
    sub { "bob:$_[0]\@127.0.0.1:$port:0" },
);
# each entry form: the address alone, [addr, weight] with good and bad weights, a hash
my @entries = (
    [ plain => sub { $_[0] } ],
    map({ my $w = $_; [ "[addr, ${\ (ref $w ? 'a reference' : $w)}]" => sub { [ $_[0], $w ] } ] }
        1, 3, 2.5, 0.001, 0, -1, 'abc', 'nan', [1], 2**33, 1e9),
    [ '{ address, weight => 2.5 }' => sub { { address => $_[0], weight => 2.5 } } ],
);

# What a call leaves: its croak, its warnings, last_error (empty when it croaked before any
# core call, as Perl's own checks do)
sub outcome {
    my $code = shift;
    my @w;
    local $SIG{__WARN__} = sub { push @w, $_[0] };
    my $ok = eval { $code->(); 1 };
    return ($ok ? '' : "$@", \@w, Mcpool::last_error());
}

my $good = "127.0.0.1:$port";
my $client = Mcpool->new({ servers => [$good] });
for my $pw (@passwords) {
    my $secret = $pw =~ s/"//gr;    # what must never be shown, its quotes aside
    for my $form (@forms) {
        my $addr = $form->($pw);
        for my $entry (@entries) {
            my ($how, $make) = @$entry;
            for my $ketama (0, 150) {
                my $what = "'$addr' as $how" . ($ketama ? ", ketama_points $ketama" : '');
                my @calls = (
                    [ new => sub {
                        Mcpool->new({ servers => [ $good, $make->($addr) ],
                                      ($ketama ? (ketama_points => $ketama) : ()) })
                    } ],
                );
                push @calls, [ set_servers => sub { $client->set_servers([ $good, $make->($addr) ]) } ]
                    unless $ketama;
                for my $call (@calls) {
                    my ($name, $code) = @$call;
                    my ($err, $w, $last) = outcome($code);
                    ok(length $err, "$name($what) croaks");
                    unlike($err, qr/\Q$secret\E/, "$name($what): the croak shows no password")
                        or diag $err;
                    like($err, qr/<userinfo hidden>\@/, "$name($what): ... the address as the core shows it")
                        or diag $err;
                    unlike("@$w", qr/\Q$secret\E/, "$name($what): no warning shows it") or diag "@$w";
                    unlike($last, qr/\Q$secret\E/, "$name($what): last_error does not show it")
                        or diag $last;
                }
            }
        }
    }
}
is_deeply([ $client->server_labels ], [$good], 'set_servers refused every list: the old one stays');

# A socket path may hold an '@' in a name: it is no userinfo, shown as written (as the core
# shows it) in the weight warning
{
    my ($err, $w) = outcome(sub { Mcpool->new({ servers => [ [ '/tmp/mc@p.sock', 2.5 ] ] }) });
    is($err, '', 'a socket path with an @ and a weight of 2.5: made');
    like("@$w", qr{^Mcpool: server /tmp/mc\@p\.sock: weight 2\.5 is not an integer},
        '... the warning names the path as written');
}

# A good address is still named as given in Perl's own messages
{
    my ($err) = outcome(sub { Mcpool->new({ servers => [ [ $good, 'abc' ] ] }) });
    like($err, qr/^Mcpool->new: server \Q$good\E: the weight must be a number \(got 'abc'\)/,
        'a bad weight beside a good address names the address');
    ($err) = outcome(sub { Mcpool->new({ servers => ["$good:0"] }) });
    like($err, qr/^Mcpool->new: MCPOOL_CONFIG: .*\Q$good\E:0: weight must be at least 1/,
        "an address the core refuses: the core's message names it");
}

done_testing;
