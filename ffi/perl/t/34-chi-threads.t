# A CHI cache made before Perl threads start (mod_perl's worker MPM, a threaded job runner):
# Mcpool objects are not cloned into a new thread, so each driver there gets a client of its
# own from its constructor's arguments, as CHI::Driver::Memcached::Fast's client does. Before,
# the driver's client arrived in the thread as an unblessed reference: every get missed and
# every set was dropped, silently under CHI's default on_get_error/on_set_error (tester
# finding perlweb 2).
use strict;
use warnings;
use Config;
use FindBin;
use lib "$FindBin::Bin/lib";

BEGIN {
    unless ($Config{useithreads}) {
        print "1..0 # SKIP this perl has no ithreads\n";
        exit 0;
    }
    require McpoolTest;
    McpoolTest::needs('libchi-perl', qw(CHI));
}
use threads;
use Test::More;
use McpoolTest;

my $SRV = start_memcached();
my @errors;
my $cache = CHI->new(driver => 'Mcpool', servers => [$SRV], namespace => 'thr',
    on_get_error => sub { push @errors, "get: $_[0]" },
    on_set_error => sub { push @errors, "set: $_[0]" });
$cache->set(k1 => { a => 1 });

my @got = threads->create({ context => 'list' }, sub {
    my $in = $cache->get('k1');
    $cache->set(k2 => 'from-thread');
    my $again = $cache->get('k2');
    return ($in && $in->{a}) // 'undef', $again // 'undef', scalar @errors;
})->join;
is($got[0], 1, 'the thread reads what the parent wrote');
is($got[1], 'from-thread', 'the thread reads its own write');
is($got[2], 0, 'no get or set error in the thread');
is($cache->get('k2'), 'from-thread', "the parent reads the thread's write");
is_deeply(\@errors, [], 'no error in the parent');
done_testing;
