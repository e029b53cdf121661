# A misspelled TLS or SASL option croaks, in the core's words (with its suggestion of the
# right name), where an unknown name only warns: tls_cafile was warned about and the client
# talked plain text; username/password (pylibmc's names) built a client without SASL
# (tester finding secure 2). Other unknown names still warn, as in Cache::Memcached::Fast.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;

my $srv = start_memcached();

my %suggests = (
    tls_cafile      => 'tls_ca_file',
    'TLS-CAFile'    => 'tls_ca_file',
    tls_ca          => 'tls_ca_file',
    tls_verify      => 'tls',
    sasl_passwd     => 'sasl_password',
    sasl_usernme    => 'sasl_username',
    ' Sasl-User'    => 'sasl_username',
    username        => 'sasl_username',
    PASSWORD        => 'sasl_password',
    "\x{a0}sasl_pw" => undef,
    ssl_ca          => undef,
    sslcert         => undef,
);
for my $name (sort keys %suggests) {
    for my $skip (0, 1) {
        my @w;
        local $SIG{__WARN__} = sub { push @w, @_ };
        my $shown = $name =~ s/([^[:print:]])/sprintf '\\x{%x}', ord $1/ger;
        my $what  = "'$shown'" . ($skip ? ' (check_args => skip)' : '');
        my $m = eval {
            Mcpool->new({ servers => [$srv], $name => 'Secret-1', ($skip ? (check_args => 'skip') : ()) });
        };
        ok(!$m, "$what: new croaks");
        my $named = $name =~ s/\x{a0}/\\u{a0}/r;    # the core shows it escaped
        like($@, qr/^Mcpool->new: unknown option "\Q$named\E" \(/, "... naming it: " . ($@ =~ s/\n.*//sr));
        like($@, qr/did you mean [^)]*\b\Q$suggests{$name}\E\b/, "... suggesting $suggests{$name}")
            if defined $suggests{$name};
        unlike($@, qr/Secret-1/, '... never showing the value');
        like($@, qr/ at \Q$0\E line \d+\.$/, "... at the caller's line");
        is(Mcpool::last_error(), $@ =~ s/ at \S+ line \d+\.\n\z//r, '... last_error the same');
        is_deeply(\@w, [], '... no warning');
    }
}

# without servers too (a client whose commands all fail)
ok(!eval { Mcpool->new({ tls_cafile => 'x' }) }, 'without servers: croaks as well');
like($@, qr/unknown option "tls_cafile" \(did you mean tls_ca_file/, '... in the same words');

# other unknown names warn, as before, and the client is made
{
    my @w;
    local $SIG{__WARN__} = sub { push @w, @_ };
    my $m = Mcpool->new({ servers => [$srv], bogus => 1, pass_word => 'x' });
    ok($m, 'other unknown names: the client is made');
    is(scalar @w, 1, '... one warning');
    like("@w", qr/^Unknown arguments: bogus, pass_word at /, '... Unknown arguments');
    is(Mcpool::last_error(), '', '... last_error empty');
}

# which names those are is the core's rule (mcpool_option_means_security), asked for the name
# as Perl holds its characters: a byte string and its utf8::upgrade'd copy alike
{
    my %means = (
        tls_cafile => 1, 'SSL-CA' => 1, sasl_user => 1, password => 1, ' Username ' => 1,
        TLS => 1, "\x{a0}sasl_pw" => 1, "sasl_\x{e9}" => 1, "\x{3000}tls_x" => 1,
        tsl_ca_file => 1, xtls => 1,
        bogus => 0, pass_word => 0, user_name => 0, '' => 0, 'pass word' => 0,
    );
    for my $name (sort keys %means) {
        my $shown = $name =~ s/([^[:print:]]|[^\x00-\x7f])/sprintf '\\x{%x}', ord $1/ger;
        my $up = $name;
        utf8::upgrade($up);
        is(Mcpool::_option_means_security($name) ? 1 : 0, $means{$name}, "'$shown': the core's answer $means{$name}");
        is(Mcpool::_option_means_security($up) ? 1 : 0, $means{$name}, "... upgraded, the same");
    }
    ok(!eval { Mcpool->new({ servers => [$srv], "\x{3000}tls_x" => 1 }) }, 'a name after an ideographic space: croaks');
    like($@, qr/^Mcpool->new: unknown option /, '... as an unknown security option');
}

# other clients' words for TLS and SASL croak too (tester finding retest48 3: they warned and
# the client talked plain text), each naming the option it means
for ([use_tls => 'tls'], ['Enable-TLS' => 'tls'], [use_ssl => 'tls'], [passwd => 'sasl_password'],
     [ca_file => 'tls_ca_file'], [ssl_certfile => 'tls_client_cert'],
     [tls_skip_verify => 'tls_insecure_skip_verify']) {
    my ($name, $meant) = @$_;
    ok(!eval { Mcpool->new({ servers => [$srv], $name => 1 }) }, "$name croaks");
    like($@, qr/did you mean \Q$meant\E\b/, "... suggesting $meant");
}

# an unknown name that is not a security one warns with the core's suggestion, as every
# other surface gives it (tester finding retest48 3)
{
    my @w;
    local $SIG{__WARN__} = sub { push @w, @_ };
    ok(Mcpool->new({ servers => [$srv], io_timout => 1 }), 'io_timout: built');
    like("@w", qr/^Unknown arguments: io_timout \(did you mean io_timeout\b[^)]*\?\) at /,
        '... warning with the suggestion');
}

# the POD says so, next to the unknown-arguments rule
{
    my $pm = do { local (@ARGV, $/) = $INC{'Mcpool.pm'}; <> };
    ok($pm =~ /unknown name warns \(C<Unknown arguments: \.\.\.>\), as in Cache::Memcached::Fast,.*?except an\s+unknown name that begins with C<tls>, C<ssl> or C<sasl>/s,
        'POD: the exception to the unknown-arguments rule');
}

# the right names are taken
ok(Mcpool->new({ servers => [$srv], sasl_username => '', sasl_password => '' }),
    'sasl_username and sasl_password (empty: no SASL) are taken');

done_testing();
