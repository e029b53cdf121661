# A SASL user name or password with characters 128-255 is the same text whatever Perl's
# internal form of it: a `use utf8` literal (Latin-1 inside), the same string
# utf8::upgrade'd, and its UTF-8 bytes all authenticate against memcached -S (the first was
# refused "option value is not UTF-8": the XS passed Perl's internal bytes).
use strict;
use warnings;
use utf8;
use Test::More;
use File::Temp qw(tempdir);
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;

my $saslpasswd = (grep { -x "$_/saslpasswd2" } split(/:/, $ENV{PATH}), '/usr/sbin')[0];
plan skip_all => 'saslpasswd2 not installed (Debian: sasl2-bin)' unless $saslpasswd;

my $password = "p:ss w\x{f6}rd";    # ö: Latin-1 inside
my $dir = tempdir(CLEANUP => 1);
{
    my $bytes = $password;
    utf8::encode($bytes);
    open my $p, '|-', "$saslpasswd/saslpasswd2", '-p', '-a', 'memcached', '-c', '-f',
        "$dir/sasldb", 'bob' or die "saslpasswd2: $!";
    print $p $bytes;
    close $p or die "saslpasswd2 failed";
}
open my $conf, '>', "$dir/memcached.conf" or die $!;
print $conf "mech_list: plain\nsasldb_path: $dir/sasldb\n";
close $conf;
# memcached run as root drops to nobody (McpoolTest), who must read these.
chmod 0755, $dir;
chmod 0644, "$dir/sasldb", "$dir/memcached.conf";
local $ENV{SASL_CONF_PATH} = $dir;
my $srv = start_memcached('-S');

my $upgraded = $password;
utf8::upgrade($upgraded);
my $encoded = $password;
utf8::encode($encoded);
ok(!utf8::is_utf8($password), 'the literal is held in Latin-1');
for my $case (['use-utf8 literal', $password], ['upgraded', $upgraded], ['UTF-8 bytes', $encoded])
{
    my ($name, $pw) = @$case;
    my $m = eval {
        Mcpool->new({ servers => [$srv], protocol => 'binary', sasl_username => 'bob',
            sasl_password => $pw });
    };
    ok($m, "$name: built") or diag $@;
    next unless $m;
    my $k = unique('sasl');
    ok($m->set($k, 'v'), "$name: authenticated and stored") or diag Mcpool::last_error();
    is($m->get($k), 'v', "$name: read back");
}
my $wrong = Mcpool->new({ servers => [$srv], protocol => 'binary', sasl_username => 'bob',
    sasl_password => 'p:ss word' });
ok(!$wrong->set(unique('sasl'), 'v'), 'a wrong password is refused');
done_testing;
