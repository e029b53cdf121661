# An option name is read by the core's one rule (mcpool_option_find: space around it trimmed,
# case ignored, - as _), on its characters whatever Perl's storage. option_doc knew only the
# exact name while new took any spelling (tester finding retest42 2), and new took
# "\x{a0}io_timeout" only after utf8::upgrade: in Latin-1 it was an unknown argument, warned
# about and not applied (tester finding retest42 3). Cache::Memcached::Fast's own arguments
# are unchanged, and an unknown name still warns.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;

my $srv = start_memcached();
my $p   = unique('spell');

# The string as given and its utf8::upgrade'd copy (eq to it), each named.
sub both {
    my $s = shift;
    my $u = $s;
    utf8::upgrade($u);
    return ([ $s, utf8::is_utf8($s) ? 'UTF-8' : 'Latin-1' ], [ $u, 'upgraded' ]);
}

sub shown { join '', map { $_ =~ /[[:print:]]/a ? $_ : sprintf '\\x{%x}', ord } split //, shift }

# ----- option_doc: any spelling new takes, as Java's optionDoc -----
my $doc = Mcpool::option_doc('io_timeout');
like($doc, qr/^duration, seconds for a number;/, 'option_doc of the exact name');
for my $name ('IO-Timeout', 'IO_TIMEOUT', ' io_timeout', 'io_timeout ', "Io-timeout\t",
              "\x{a0}io_timeout")
{
    for (both($name)) {
        my ($n, $form) = @$_;
        is(Mcpool::option_doc($n), $doc, "option_doc('${\ shown($n)}') ($form): io_timeout's");
    }
}
for my $name ('io timeout', 'io__timeout', 'ioTimeout', "\x{2010}io_timeout", "\x{130}o_timeout",
              "\xc2\xa0io_timeout", 'no_such_option')
{
    for (both($name)) {
        my ($n, $form) = @$_;
        ok(!defined Mcpool::option_doc($n), "option_doc('${\ shown($n)}') ($form): undef");
    }
}
is(Mcpool::option_doc('Key-Prefix'), Mcpool::option_doc('key_prefix'), "option_doc('Key-Prefix')");
# a method that cannot fail: last_error as it was, a name found or not (POD "last_error")
Mcpool::_restore_last_error('a previous call failed');
Mcpool::option_doc($_) for 'nope', 'IO-Timeout';
is(Mcpool->last_error, 'a previous call failed', 'option_doc leaves last_error as it is');

# ----- new: "\x{a0}NAME" is NAME in Latin-1 as after utf8::upgrade -----
for (both("\x{a0}key_prefix")) {
    my ($n, $form) = @$_;
    my @w;
    local $SIG{__WARN__} = sub { push @w, @_ };
    my $m = Mcpool->new({ servers => [$srv], $n => "$p$form:" });
    is_deeply(\@w, [], "'${\ shown($n)}' ($form): no unknown argument") or diag explain \@w;
    ok($m->set('k', 'v'), '... the client works');
    is(Mcpool->new({ servers => [$srv] })->get("$p$form:k"), 'v', '... with it as key_prefix');
}
for (both("\x{a0}io_timeout")) {
    my ($n, $form) = @$_;
    # io_timeout in Cache::Memcached::Fast's meaning: a bad one croaks as io_timeout does
    ok(!eval { Mcpool->new({ servers => [$srv], $n => 'abc' }); 1 }, "'${\ shown($n)}' ($form) => 'abc' croaks");
    like($@, qr/io_timeout must be a number/, '... as io_timeout');
    ok(!eval { Mcpool->new({ servers => [$srv], $n => 1, io_timeout => 2 }); 1 },
        "'${\ shown($n)}' ($form) with io_timeout croaks");
    like($@, qr/same option \(io_timeout\)/, '... as two spellings of one option');
    ok(Mcpool->new({ servers => [$srv], $n => 0.5 }), '... and a good one is taken');
}

# ----- unknown names still warn, in both forms -----
for my $name ("\x{e9}io_timeout", 'io_timout', "\x{a0}namespace", "\x{a0}bogus") {
    for (both($name)) {
        my ($n, $form) = @$_;
        my @w;
        local $SIG{__WARN__} = sub { push @w, @_ };
        Mcpool->new({ servers => [$srv], $n => 1 });
        is(scalar @w, 1, "'${\ shown($n)}' ($form): one warning");
        like("@w", qr/^Unknown arguments: \Q$n\E(?: \(did you mean [^)]*\))? at /,
            '... an unknown argument');
    }
}

# ----- Cache::Memcached::Fast's arguments, as before -----
{
    my @w;
    local $SIG{__WARN__} = sub { push @w, @_ };
    my $m = Mcpool->new({ servers => [$srv], namespace => "${p}ns:", connect_timeout => 0.5,
                          io_timeout => 0.5, select_timeout => 0.5, max_failures => 3,
                          failure_timeout => 2, compress_threshold => 10_000, max_size => 1 << 20,
                          nowait => 1, utf8 => 1, close_on_error => 1, hash_namespace => 1,
                          check_args => 'strict' });
    is_deeply(\@w, [], "Cache::Memcached::Fast's arguments: no warning") or diag explain \@w;
    ok($m->set('cmf', 'v'), '... the client works');
    is(Mcpool->new({ servers => [$srv] })->get("${p}ns:cmf"), 'v', '... with namespace as the prefix');
    @w = ();
    Mcpool->new({ servers => [$srv], bogus => 1 });
    like("@w", qr/^Unknown arguments: bogus at /, 'bogus still warns');
    @w = ();
    Mcpool->new({ servers => [$srv], bogus => 1, check_args => 'skip' });
    is("@w", '', '... not with check_args => skip');
}

done_testing();
