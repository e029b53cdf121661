package McpoolTest;
# Test helpers: private memcached processes on free 127.0.0.1 ports, stopped at the end (by the
# process that started them, never by a forked child), and unique key prefixes.
use strict;
use warnings;
use Exporter ();
use IO::Socket::INET;
use POSIX ();

our @EXPORT = qw(start_memcached stop_memcached restart_memcached unique raw_get_multi raw_set);
our @ISA = ('Exporter');

# The memcached the tests start: $MEMCACHED, else `memcached` on PATH.
sub memcached_bin { return $ENV{MEMCACHED} // 'memcached' }

sub _found {
    my $bin = shift;
    return -f $bin && -x _ if $bin =~ m{/};
    return grep { -f "$_/$bin" && -x _ } split /:/, $ENV{PATH} // '';
}

# A test file that uses these helpers needs memcached: without one it is skipped, saying what
# to install (a CPAN install with no memcached at hand), or, with MCPOOL_REQUIRE_MEMCACHED set
# (this repository's make test), it fails. A MEMCACHED that is set but names no program (a
# typo, or empty) stops the run, naming it: given by hand, it was meant to test (tester finding
# packaging 10: every test skipped, and make test passed).
sub import {
    my $bin = memcached_bin();
    if (defined $ENV{MEMCACHED} && !_found($bin)) {
        require Test::More;
        Test::More::BAIL_OUT(($bin eq '' ? 'MEMCACHED is set but empty'
                : "MEMCACHED=$bin names no executable program" . ($bin =~ m{/} ? '' : ' on PATH'))
            . ": set it to memcached's path (MEMCACHED=/usr/bin/memcached), or unset it to use"
            . " memcached on PATH (without one the tests are skipped)");
    }
    if (!_found($bin)) {
        my $why = "no memcached to test against ($bin is not an executable"
            . ($bin =~ m{/} ? '' : ' on PATH')
            . "): install memcached (Debian: apt-get install memcached) or set MEMCACHED=/path/to/memcached";
        die "$why\n" if $ENV{MCPOOL_REQUIRE_MEMCACHED};
        require Test::More;
        Test::More::plan(skip_all => $why);
    }
    __PACKAGE__->export_to_level(1, @_);
}

my %pid_of;    # "127.0.0.1:port" => pid
my $owner = $$;
my $n = 0;

sub unique { return sprintf 't%d-%d-%s-', $$, $n++, shift // 'k' }

# { key => [flags, bytes] } as the memcached at $server holds @keys, read over a socket of its
# own, past any client's decoding.
sub raw_get_multi {
    my ($server, @keys) = @_;
    my $s = IO::Socket::INET->new(PeerAddr => $server, Timeout => 5) or die "connect: $!";
    binmode $s;
    print $s "get @keys\r\n";
    my %got;
    for (0 .. @keys) {    # one VALUE per key at most, then END
        my $line = <$s> // die 'the connection closed';
        last if $line eq "END\r\n";
        my ($k, $flags, $len) = $line =~ /^VALUE (\S+) (\d+) (\d+)\r\n\z/ or die "reply: $line";
        my $data = '';
        while (length $data < $len + 2) {
            my $r = read($s, $data, $len + 2 - length $data, length $data);
            die "read: $!" unless $r;
        }
        $got{$k} = [ $flags, substr($data, 0, $len) ];
    }
    return \%got;
}

# Stores $data under $flags at $key on the memcached at $server, over a socket of its own,
# past any client's encoding (as another writer stores it); dies unless it is STORED.
sub raw_set {
    my ($server, $key, $flags, $data) = @_;
    my $s = IO::Socket::INET->new(PeerAddr => $server, Timeout => 5) or die "connect: $!";
    binmode $s;
    print $s "set $key $flags 0 " . length($data) . "\r\n$data\r\n";
    my $reply = <$s> // '';
    die "set $key: $reply" unless $reply eq "STORED\r\n";
}

# A test that needs other modules, in a BEGIN block: fails (one test, not ok) naming the
# missing ones and the Debian packages that bring them, rather than skipping quietly.
#   BEGIN { require McpoolTest; McpoolTest::needs('libchi-perl', qw(CHI)) }
sub needs {
    my ($packages, @modules) = @_;
    my @missing = grep { !eval "require $_; 1" } @modules;
    return unless @missing;
    print "1..1\nnot ok 1 - missing @missing: apt-get install $packages (ffi/perl/packages.txt)\n";
    exit 1;
}

sub _free_port {
    my $s = IO::Socket::INET->new(Listen => 1, LocalAddr => '127.0.0.1', LocalPort => 0,
        Proto => 'tcp', ReuseAddr => 1) or die "no free port: $!";
    my $p = $s->sockport;
    close $s;
    return $p;
}

# Starts memcached again on the address a stopped one had (stop_memcached), once it accepts
# connections there.
sub restart_memcached {
    my $addr = shift;
    my ($port) = $addr =~ /:(\d+)$/ or die "not host:port: $addr";
    return _start([], $port);
}

# Starts memcached and returns its "127.0.0.1:PORT" once it accepts connections.
sub start_memcached { return _start([@_]) }

sub _start {
    my ($extra, $fixed) = @_;
    my @extra = @$extra;
    my $bin = memcached_bin();
    for my $try (1 .. 5) {
        my $port = $fixed // _free_port();
        my @cmd = ($bin, '-l', '127.0.0.1', '-p', $port, '-U', '0', '-t', '1', '-m', '64',
            ($> == 0 ? ('-u', 'nobody') : ()), @extra);
        my $pid = fork() // die "fork: $!";
        if (!$pid) {
            # neither stream is the test's: a test that dies by a signal (no END block to
            # stop this server) would leave prove waiting for the pipe's end for good
            open STDOUT, '>', '/dev/null';
            open STDERR, '>', '/dev/null';
            exec @cmd or POSIX::_exit(127);
        }
        for (1 .. 200) {    # up to 5 s
            if (IO::Socket::INET->new(PeerAddr => "127.0.0.1:$port", Timeout => 1)) {
                $pid_of{"127.0.0.1:$port"} = $pid;
                return "127.0.0.1:$port";
            }
            last if waitpid($pid, POSIX::WNOHANG()) == $pid;    # died: port taken?
            select undef, undef, undef, 0.025;
        }
        kill 'KILL', $pid;
        waitpid $pid, 0;
    }
    die "could not start $bin";
}

sub stop_memcached {
    my $addr = shift;
    my $pid = delete $pid_of{$addr} or return;
    kill 'TERM', $pid;
    waitpid $pid, 0;
}

END {
    my $status = $?;
    if ($$ == $owner) { stop_memcached($_) for keys %pid_of }
    $? = $status;
}

1;
