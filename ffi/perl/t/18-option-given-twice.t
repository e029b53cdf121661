# One core option set from two arguments (a Cache::Memcached::Fast name and the core's own, or
# two of them) is an error naming both: the core's rule (mcpool_config_set_as), the same as
# Python's timeout + io_timeout and min_compress_len + compression. compress_threshold sets
# the core's compression and compression_threshold: with compression => 0 it used to compress
# anyway (or the core's name won silently), never telling which one counted.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;

my $srv = start_memcached();
my $p = unique('gt');

for my $case (
    [ { compress_threshold => 10, compression => 0 }, 'compression', 'compress_threshold' ],
    [ { compress_threshold => 10, compression_threshold => 100 }, 'compression_threshold',
      'compress_threshold' ],
    [ { compress_threshold => -1, compression => 1 }, 'compression', 'compress_threshold' ],
    [ { failure_timeout => 2, retry_timeout => '5s' }, 'retry_timeout', 'failure_timeout' ],
    [ { max_size => 1000, max_value_size => 2000 }, 'max_value_size', 'max_size' ],
    [ { serialize => 0, serialized_perl => 1 }, 'serialized_perl', 'serialize' ],
) {
    my ($args, $option, $alias) = @$case;
    my $mc = eval { Mcpool->new({ servers => [$srv], %$args }) };
    my $err = $@;
    ok(!$mc, "$alias with $option: refused") or next;
    like($err, qr/option \Q$option\E given twice \(as (\Q$alias\E and \w+|\w+ and \Q$alias\E)\)/,
         '... naming both') or diag $err;
}

# Each alone means what it says; the module's own defaults are no argument.
my $big = 'x' x 50;
my $mc = Mcpool->new({ servers => [$srv], compress_threshold => 10 });
ok($mc->set("${p}a", $big), 'compress_threshold alone: stored');
$mc = Mcpool->new({ servers => [$srv], compression => 0, compression_threshold => 10 });
ok($mc->set("${p}b", $big), 'the core names alone: stored');
is($mc->get("${p}b"), $big, '... and read back');
$mc = Mcpool->new({ servers => [$srv], serialized_perl => 0 });
ok($mc, 'serialized_perl alone (serialize not given): accepted');
$mc = Mcpool->new({ servers => [$srv], preset => 'cache-memcached-fast', value_format => 'mcpool' });
ok($mc, 'preset and an option it sets: the option overrides the preset');

done_testing();
