#!/usr/bin/perl
# mcpool bench peer for the Perl clients (protocol: ../PROTOCOL.md).
# usage: driver.pl Cache::Memcached::Fast|Cache::Memcached|Mcpool HOST:PORT
# (Mcpool is the repository's own Perl binding, ffi/perl: run with -I to its blib.)
# Neither client can be shared between threads (and Perl ithreads copy the interpreter), so
# `mix` runs one forked process per thread, each with its own client and connection; the clock
# starts when every process is connected and ready, and stops at the last process's last
# operation. Compression (off by default in both: compress_threshold -1 in
# Cache::Memcached::Fast, none in Cache::Memcached): where the scenario asks for it, each
# client's documented switch, compress_threshold 30 KiB, and its own gzip (Compress::Zlib's
# memGzip at zlib's default level, flag 2), with its default ratio check
# (Cache::Memcached::Fast's compress_ratio 0.8, Cache::Memcached's 20 % savings).
use strict;
use warnings;
use Time::HiRes qw(clock_gettime CLOCK_MONOTONIC);
use POSIX ();
use File::Temp qw(tempdir);

my ($kind, $server) = @ARGV;
eval "require $kind; 1" or die "cannot load $kind: $@";
$| = 1;

sub now_ns { int(clock_gettime(CLOCK_MONOTONIC) * 1e9) }
sub value {
    my ($n, $kind) = @_;
    $kind //= 'letters';
    return join '', map { chr(97 + ($_ * 7 + int($_ / 13)) % 26) } 0 .. $n - 1 if $kind eq 'letters';
    return substr(join(' ', 0 .. $n), 0, $n) if $kind eq 'digits';    # "0 1 2 3 ..."
    die "unknown value kind $kind\n";
}

sub client {
    my $compress = shift;
    if ($kind eq 'Mcpool') {    # configured exactly as Cache::Memcached::Fast below
        return Mcpool->new({
            servers => [$server], utf8 => 0,
            compress_threshold => $compress ? 30 * 1024 : -1,
        });
    }
    if ($kind eq 'Cache::Memcached::Fast') {
        return Cache::Memcached::Fast->new({
            servers => [$server], nowait => 0, utf8 => 0,
            compress_threshold => $compress ? 30 * 1024 : -1,
        });
    }
    my $c = Cache::Memcached->new({ servers => [$server], compress_threshold => 30 * 1024 });
    $c->enable_compress($compress ? 1 : 0);
    return $c;
}

sub rng_below {
    my ($s, $n) = @_;    # a simple LCG per process; only the distribution matters
    $$s = ($$s * 6364136223846793005 + 1442695040888963407) % 18446744073709551616;
    return int(($$s / 4294967296)) % $n;
}

my $c = client(0);
print "ready $kind ", $kind->VERSION, "\n";

while (my $line = <STDIN>) {
    my @w = split ' ', $line;
    next unless @w;
    last if $w[0] eq 'quit';
    my $out;
    if ($w[0] eq 'seq') {
        my ($op, $n, $size, $prefix, $slice) = @w[1 .. 5];
        my $v = value($size);
        my @keys = map { "$prefix$_" } 0 .. $n - 1;
        my ($errors, @slices) = (0);
        my $t0 = now_ns();
        my $mark = $t0;
        for my $i (0 .. $n - 1) {
            my $k = $keys[$i];
            my $ok;
            if ($op eq 'set') { $ok = $c->set($k, $v) }
            elsif ($op eq 'add') { $ok = $c->add($k, $v) }
            elsif ($op eq 'replace') { $ok = $c->replace($k, $v) }
            elsif ($op eq 'get') { $ok = defined $c->get($k) }
            else { $ok = $c->delete($k) }
            $errors++ unless $ok;
            if ($slice && ($i + 1) % $slice == 0) {
                my $t = now_ns();
                push @slices, $t - $mark;
                $mark = $t;
            }
        }
        $out = sprintf "ok ns=%d errors=%d", now_ns() - $t0, $errors;
        $out .= " slices=" . join(',', @slices) if @slices;
    } elsif ($w[0] eq 'mget') {
        my ($k, $calls, $prefix) = @w[1 .. 3];
        my @keys = map { "$prefix$_" } 0 .. $k - 1;
        my $errors = 0;
        my $t0 = now_ns();
        for (1 .. $calls) {
            my $h = $c->get_multi(@keys);
            $errors++ unless scalar(keys %$h) == $k;
        }
        $out = sprintf "ok ns=%d errors=%d", now_ns() - $t0, $errors;
    } elsif ($w[0] eq 'fill') {
        my ($ks, $size, $comp, $prefix, $vkind) = @w[1 .. 5];
        my $v = eval { value($size, $vkind) };
        unless (defined $v) { chomp(my $e = $@); print "err $e\n"; next }
        my $fc = client($comp);
        my $errors = 0;
        my $t0 = now_ns();
        for my $i (0 .. $ks - 1) { $errors++ unless $fc->set("$prefix$i", $v) }
        $out = sprintf "ok ns=%d errors=%d", now_ns() - $t0, $errors;
    } elsif ($w[0] eq 'mix') {
        $out = mix(@w[1 .. 10]);
    } else {
        $out = "err unknown command $w[0]";
    }
    print "$out\n";
}

sub mix {
    my ($threads, $ops, $size, $keyspace, $getpct, $mget, $pool, $comp, $prefix, $vkind) = @_;
    my $v = eval { value($size, $vkind) };
    unless (defined $v) { chomp(my $e = $@); return "err $e" }
    my $dir = tempdir(CLEANUP => 1);
    pipe(my $ready_r, my $ready_w) or return "err pipe: $!";
    pipe(my $go_r, my $go_w) or return "err pipe: $!";
    my @pids;
    for my $t (0 .. $threads - 1) {
        my $pid = fork();
        return "err fork: $!" unless defined $pid;
        if ($pid == 0) {
            close $ready_r; close $go_w;
            # Cache::Memcached keeps its sockets in a process-wide cache that a forked child
            # inherits: drop the parent's, or children share one socket (its docs: after fork,
            # call disconnect_all).
            Cache::Memcached->disconnect_all if $kind eq 'Cache::Memcached';
            my $mc = client($comp);
            $mc->get("warm");    # connect before the clock starts
            syswrite $ready_w, "r";
            sysread $go_r, my $b, 1;
            my $s = $t + 1;
            my @lat;
            my ($gns, $gs, $sns, $ss, $errs) = (0, 0, 0, 0, 0);
            for (1 .. $ops) {
                my $get = rng_below(\$s, 100) < $getpct;
                my $first = rng_below(\$s, $keyspace);
                my $t0 = now_ns();
                my $ok;
                if ($get && $mget > 1) {
                    my $h = $mc->get_multi(map { $prefix . (($first + $_) % $keyspace) } 0 .. $mget - 1);
                    $ok = scalar(keys %$h) == $mget;
                } elsif ($get) {
                    $ok = defined $mc->get("$prefix$first");
                } else {
                    $ok = $mc->set("$prefix$first", $v);
                }
                my $d = now_ns() - $t0;
                push @lat, $d;
                if ($get) { $gns += $d; $gs++ } else { $sns += $d; $ss++ }
                $errs++ unless $ok;
            }
            my $end = now_ns();
            open my $f, '>', "$dir/$t" or POSIX::_exit(1);
            print $f "$gns $gs $sns $ss $errs $end\n", join(',', @lat), "\n";
            close $f;
            POSIX::_exit(0);
        }
        push @pids, $pid;
    }
    close $ready_w; close $go_r;
    for (1 .. $threads) { sysread $ready_r, my $b, 1 }
    my $t0 = now_ns();
    syswrite $go_w, "g" x $threads;
    close $go_w;
    waitpid $_, 0 for @pids;
    my @lat;
    my ($gns, $gs, $sns, $ss, $errs, $last) = (0, 0, 0, 0, 0, $t0);
    for my $t (0 .. $threads - 1) {
        open my $f, '<', "$dir/$t" or return "err no result from process $t";
        my ($a, $b, $cc, $d, $e, $end) = split ' ', scalar <$f>;
        $last = $end if $end > $last;
        my $l = <$f>;
        chomp $l;
        push @lat, split /,/, $l;
        $gns += $a; $gs += $b; $sns += $cc; $ss += $d; $errs += $e;
    }
    @lat = sort { $a <=> $b } @lat;
    my $pct = sub {
        my $q = shift;
        return 0 unless @lat;
        my $i = POSIX::ceil($q / 100 * @lat - 1e-9) - 1;
        $i = 0 if $i < 0;
        return $lat[$i] / 1000;
    };
    # The clock stops when the last process has done its last operation (CLOCK_MONOTONIC is
    # the same in every process): reaping hundreds of processes is not the client's work.
    my $ns = $last - $t0;
    my $out = sprintf "ok ns=%d errors=%d lat=%.1f,%.1f,%.1f", $ns, $errs, $pct->(50), $pct->(99), $pct->(99.9);
    $out .= sprintf " get_us=%.2f", $gns / 1000 / $gs if $gs;
    $out .= sprintf " set_us=%.2f", $sns / 1000 / $ss if $ss;
    return $out;
}
