package Mcpool;

use strict;
use warnings;

use Carp ();
use Socket ();
use Scalar::Util ();
use Storable ();
use overload ();

our $VERSION = '0.1.0';

require XSLoader;
XSLoader::load('Mcpool', $VERSION);

# Cache::Memcached::Fast's arguments that Perl handles itself or that mean nothing here.
my %perl_args = map { $_ => 1 } qw(
    check_args close_on_error compress_algo compress_methods hash_namespace nowait
    serialize_methods servers utf8 deserialize serialize on_operation on_server_event
    readonly
);

# Cache::Memcached::Fast's arguments (and the two mcpool extensions of old) that name a core
# option differently or in other units: their translation, and nothing else, lives here.
# Each gives the core's option name(s) and value text; defaults are the core's
# `cache-memcached-fast` preset, never Perl's.
my %cmf_args = map { $_ => 1 } qw(
    connect_timeout io_timeout select_timeout failure_timeout max_failures compress_threshold
    compress_ratio max_size namespace ketama_points pool_size no_rehash
);

# The core's options, by name (mcpool_option_name), forwarded as they are: its text forms
# (durations '250ms', '2s', or a bare number of seconds, Perl's convention; booleans; names).
my %core_option = map { $_ => 1 } option_names();

# Carp::croak, leaving the message first in last_error as it is given (without the place
# Carp adds to $@): a croak of a method that can fail is its failure (POD "last_error"), as
# the XS's croaks are (Mcpool.xs, mcp_croak). Every croak of this module's methods comes
# here; goto, so that Carp sees the frames it would have seen.
sub _croak {
    _restore_last_error(join '', @_);
    goto &Carp::croak;
}

# A string given as an option: a plain scalar, or an object that overloads "".
sub _is_string {
    my $v = shift;
    return !ref $v || (Scalar::Util::blessed($v) && overload::Method($v, '""'));
}

# A numeric option, checked: a finite number in [min, max] (undef when not given). Errors at
# construction name the option, rather than a non-number silently becoming 0 or a negative
# number a huge unsigned one.
my $INF = 9**9**9;

sub _num {
    my ($conf, $name, $min, $max, $unit) = @_;
    my $v = $conf->{$name};
    return undef unless defined $v;
    my $range = $min == -$INF ? 'a finite number'
        : "a number between $min and $max" . ($unit ? " $unit" : '');
    _croak("Mcpool->new: $name must be $range, not a reference") if ref $v;
    _croak("Mcpool->new: $name must be $range (got '$v')")
        unless Scalar::Util::looks_like_number($v)
        && $v == $v && $v != $INF && $v != -$INF    # not NaN nor an infinity
        && $v >= $min && $v <= $max;
    return $v + 0;
}

# A number of seconds (finite, 0 to 10^9: _num checked it) as the core's duration text: the
# one conversion of every duration given as a number. Whole nanoseconds (the core's
# resolution), written as microseconds with the nanoseconds' digits ('2500000us' for 2.5,
# '0.4us' for 4e-7). A positive number is never 0: one below half a nanosecond is 1 ns, the
# least the core takes, so the core accepts or refuses it by its own rule (before, seconds
# under 0.5 µs became '0us', which these options read as none or the system's: tester
# finding retest29 4).
sub _duration_text {
    my $s = shift;
    return '0us' if $s <= 0;
    my $ns = sprintf '%.0f', $s * 1e9;    # the digits of a whole number up to 10^18
    $ns = '1' if $ns eq '0';
    $ns = ('0' x (4 - length $ns)) . $ns if length $ns < 4;
    my ($us, $frac) = (substr($ns, 0, -3), substr($ns, -3));
    $frac =~ s/0+\z//;
    return $us . (length $frac ? ".$frac" : '') . 'us';
}

# Cache::Memcached::Fast's timeouts are seconds, rational, at most 10^9 (31 years, so the
# nanoseconds stay exact); the core's text for them. 0 is $zero, the word's own meaning
# there: for connect_timeout and io_timeout no limit (a day here), for failure_timeout no
# rest at all (0, Cache::Memcached::Fast's server is tried again at once).
my $MAX_SECONDS = 1e9;
my $U32 = 4_294_967_295;

sub _seconds {
    my ($conf, $name, $zero) = @_;
    my $v = $conf->{$name};
    return undef unless defined $v;
    # The core's own text form (a number and a unit: '250ms', '1.5S', ' 2 s', '.5s') is the
    # core's to read, in any case and with white space, as for every core option.
    return "$v" if !ref $v && $v =~ /^\s*(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*[^\W\d_]+\s*\z/;
    my $s = _num($conf, $name, 0, $MAX_SECONDS, 'seconds');
    return $s <= 0 ? $zero : _duration_text($s);
}

# A core duration option given as a bare number: seconds (0 to 10^9, as the timeouts above)
# in the core's text form (_duration_text). 0 stays 0 (the core's "none" where it has one),
# not Cache::Memcached::Fast's "no limit" of _seconds.
sub _core_seconds {
    my ($conf, $name) = @_;
    return _duration_text(_num($conf, $name, 0, $MAX_SECONDS, 'seconds'));
}

# Cache::Memcached::Fast's compress_threshold as its Fast.xs holds it: a whole number (SvIV),
# compression on while it is positive; enable_compress flips its sign, so its default -1
# compresses every value (of 1 byte or more) once enabled, and 0 never. Not given: -1 under
# Cache::Memcached::Fast's defaults, 0 under the cache-memcached preset (Cache::Memcached's
# undef threshold: enable_compress changes nothing), undef where the core's own options
# decide (compression or compression_threshold by name, another preset or
# libmemcached_config): enable_compress then switches the core's compression at the
# threshold they set.
sub _cmf_threshold {
    my $conf = shift;
    my $t = _num($conf, 'compress_threshold', -$INF, $INF);
    return int $t if defined $t;
    return undef if defined $conf->{compression} || defined $conf->{compression_threshold};
    my $p = $conf->{preset};
    # a libmemcached configuration string applies the libmemcached preset
    return _lm_string($conf) ? undef : -1 unless defined $p;
    return undef unless _is_string($p);
    $p = lc "$p";
    $p =~ s/\A\s+|\s+\z//g;
    $p =~ tr/_/-/;
    return -1 if $p eq 'cache-memcached-fast' || $p eq 'cmf' || $p eq 'cache::memcached::fast';
    return 0 if $p eq 'cache-memcached' || $p eq 'cache::memcached';
    return undef;
}

# A compress_threshold's size as the core's compression_threshold: its magnitude, whole bytes
# (at most 2**53: no value is that large).
sub _threshold_text {
    my $n = abs shift;
    return sprintf '%.0f', $n > 2**53 ? 2**53 : $n;
}

# The class of an object that is both a `$class` (Mcpool or a user's subclass of it) and the
# subclass `$mixin` (Mcpool::Hooked, Mcpool::NoServers, Mcpool::ReadOnly): the mixin itself
# for Mcpool, else a class made once that inherits from both (C3 order: the mixin's methods
# over Mcpool's, the user's over both).
sub _mixed_in {
    my ($mixin, $class) = @_;
    return $mixin if $class eq 'Mcpool' || $class->isa($mixin);
    my $name = "${mixin}::For::$class";
    no strict 'refs';
    unless (@{"${name}::ISA"}) {
        require mro;
        @{"${name}::ISA"} = ($class, $mixin);
        mro::set_mro($name, 'c3');
    }
    return $name;
}

# The (Perl name, core name, value) triples for the core, in order: the preset, then the
# translated Cache::Memcached::Fast arguments, then the core's own options by name. The core
# refuses one option set from two arguments (compress_threshold and compression), naming
# both; a fourth element, true, marks this module's default (an argument not given), which
# the core does not count.
# Whether a libmemcached configuration string is given: an empty or blank one is none, as
# the core reads it (tester finding retest37b 1: a blank one dropped the default preset).
sub _lm_string { my $s = $_[0]{libmemcached_config}; defined $s && !ref $s && $s =~ /\S/ }

sub _core_options {
    my ($conf, $ketama) = @_;
    # The default preset only without a libmemcached_config string, which applies the
    # libmemcached preset itself: the core refuses a preset beside one (core 6d0e193). A
    # preset given beside it goes on, for the core to refuse naming both.
    my @o = defined $conf->{preset} || !_lm_string($conf)
        ? ([ preset => preset => $conf->{preset} // 'cache-memcached-fast', !defined $conf->{preset} ])
        : ();
    my $add = sub { push @o, [@_] if defined $_[2] };
    # References are Storable images unless serialize => 0 (the core reads them only then).
    push @o, [ serialize => serialized_perl => ($conf->{serialize} // 1) ? 'true' : 'false',
               !defined $conf->{serialize} ];
    $add->(connect_timeout => connect_timeout => _seconds($conf, 'connect_timeout', '86400s'));
    # Both given: select_timeout wins, as in Cache::Memcached::Fast, which sets io_timeout and
    # then select_timeout over it (its Fast.xs): the drop-in runs its programs unchanged.
    my $io = _seconds($conf, 'io_timeout', '86400s');
    my $sel = _seconds($conf, 'select_timeout', '86400s');
    $add->(defined $sel ? 'select_timeout' : 'io_timeout', io_timeout => $sel // $io);
    # failure_timeout is both the window max_failures are counted in (a success in between
    # does not reset the count) and the rest that follows (the preset's 10 s otherwise).
    if (defined(my $ft = _seconds($conf, 'failure_timeout', '0'))) {
        $add->(failure_timeout => failure_window    => $ft);
        $add->(failure_timeout => retry_timeout     => $ft);
        $add->(failure_timeout => retry_timeout_max => $ft);
    }
    # max_failures 0 (Cache::Memcached::Fast's "never") is the largest limit there is.
    if (defined(my $mf = _num($conf, 'max_failures', 0, $U32))) {
        $add->(max_failures => failure_limit => $mf > 0 ? int($mf) : $U32);
    }
    # compress_threshold 0 or less: no compression (Cache::Memcached::Fast's -1 default). A
    # negative one still gives the core its size, which enable_compress(1) turns on
    # (_cmf_threshold); without compress_threshold, Cache::Memcached::Fast's -1 is 1 byte.
    my $ct = _cmf_threshold($conf);
    if (defined $conf->{compress_threshold}) {
        $add->(compress_threshold => compression => $ct > 0 ? 'true' : 'false');
        $add->(compress_threshold => compression_threshold => _threshold_text($ct)) if $ct;
    } elsif ($ct) {
        $add->(compress_threshold => compression_threshold => _threshold_text($ct), 1);
    }
    $add->(compress_ratio => compression_ratio => _num($conf, 'compress_ratio', 0, 1));
    $add->(max_size => max_value_size => _num($conf, 'max_size', 1, 1 << 30, 'bytes (1 GiB)'));
    # a number; its range is the core's (1 to 65536: tester finding retest49 2, where this
    # said 1 to 4294967295 for 0 and the core 1 to 65536 for 70000)
    $add->(pool_size => max_size => _num($conf, 'pool_size', -$INF, $INF));
    # Cache::Memcached's no_rehash: true, a dead server's keys fail (the core's fail-fast);
    # false (its default), they go to another server (rehash), whatever the preset.
    $add->(no_rehash => failover => $conf->{no_rehash} ? 'fail-fast' : 'rehash')
        if defined $conf->{no_rehash};
    for my $s (qw(namespace distribution)) {
        _croak("Mcpool->new: $s must be a string, not a reference")
            if defined $conf->{$s} && !_is_string($conf->{$s});
    }
    # Cache::Memcached::Fast's Ketama: the weights given to the core are each server's point
    # count already (_core_weights), so one point per unit of weight
    $add->(ketama_points => distribution => 'cmf-ketama:1') if $ketama;
    # The namespace is the core's key prefix, set by the XS as bytes (Perl's, as
    # Cache::Memcached::Fast sends it: a Latin-1 namespace is fine, which the core's text
    # option would not take). It is counted here as the argument that sets key_prefix (the
    # XS sets its bytes after these), so that the core refuses a key_prefix given too, naming
    # both, as any option set by two arguments. hash_namespace is the core's
    # hash_key_prefix (placement hashes the prefix too, as Cache::Memcached::Fast's).
    $add->(namespace => key_prefix => '') if defined $conf->{namespace};
    $add->(hash_namespace => hash_key_prefix => $conf->{hash_namespace} ? 'true' : 'false')
        if defined $conf->{hash_namespace};
    for my $name (sort grep { $core_option{$_} && !$cmf_args{$_} && !$perl_args{$_} && $_ ne 'preset' }
        keys %$conf)
    {
        my $v = $conf->{$name};
        next unless defined $v;
        _croak("Mcpool->new: $name must be a string or a number, not a reference")
            unless _is_string($v);
        # A bare number for a duration is seconds, Perl's convention (connect_timeout's and
        # io_timeout's, Cache::Memcached::Fast's, Python's): { io_timeout => 10,
        # operation_timeout => 2 } is 10 s and 2 s. Which options are durations is the
        # core's answer; its text forms with a unit ('250ms', '2s') go as they are.
        $v = _core_seconds($conf, $name)
            if Scalar::Util::looks_like_number($v) && _option_is_duration($name);
        $add->($name => $name => "$v");
    }
    return \@o;
}

# A server address for a message of this module's ("$who: server ADDR: ..."): as given when the
# core takes it; an address it refuses croaks with the core's refusal instead, which names the
# entry as it may be shown. The core refuses every address with a user:password@ before the
# host, and shows it as <userinfo hidden>@host, so a password given in an address is never
# quoted here (tester finding retest15 3), by the core's one rule (a socket path holding an @
# is shown as written). Asked only when a message is made: the addresses of a good list are
# read once, by new and set_servers themselves.
sub _shown_address {
    my ($who, $a) = @_;
    my $refusal = _address_refusal("$a");
    _croak("$who: $refusal") if defined $refusal;
    return $a;
}

# The server list of new and set_servers: (\@addresses, \@weights as given), croaking for a
# bad entry.
sub _server_list {
    my ($servers, $who) = @_;
    _croak(ref $servers eq 'ARRAY' ? "$who: the server list is empty"
            : "$who: servers must be an array reference of servers")
        unless ref $servers eq 'ARRAY' && @$servers;
    my (@addr, @weight);
    for my $s (@$servers) {
        my ($a, $w);
        if (!ref $s) {
            ($a, $w) = ($s, 1);
        } elsif (ref $s eq 'HASH') {
            _croak('server should have { address => $addr }') unless defined $s->{address};
            ($a, $w) = ($s->{address}, $s->{weight} // 1);
        } elsif (ref $s eq 'ARRAY') {
            _croak('server should be [$addr, $weight]') unless defined $s->[0];
            ($a, $w) = ($s->[0], $s->[1] // 1);
        } else {
            _croak('Not a hash or array reference');
        }
        _croak("$who: a server address is undef") unless defined $a;
        _croak("$who: a server address must be a string, not a reference")
            unless _is_string($a);
        _croak("$who: server ${\ _shown_address($who, $a)}: the weight must be a number, "
                . "not a reference")
            if ref $w;
        _croak("$who: server ${\ _shown_address($who, $a)}: the weight must be a number "
                . "(got '$w')")
            unless Scalar::Util::looks_like_number($w) && $w == $w;
        # Cache::Memcached::Fast's words, with the entry named (a weight field of 0 in the
        # address is the core's configuration error, which names it too)
        _croak("Server weight should be positive ($who: server ${\ _shown_address($who, $a)}, "
                . "weight $w)")
            unless $w > 0;
        _croak("$who: server ${\ _shown_address($who, $a)}: the weight must be at most $U32 "
                . "(got $w)")
            unless $w <= $U32;
        # Cache::Memcached::Fast's IPv6 spelling, host and port split at the last ':'
        # ("::1:11211", "fe80::1:11211"), as the core writes it ("[::1]:11211"): only when
        # the host part is an IPv6 address ("host:port:name" and "host:port:2:3" stay as
        # they are, for the core to read or refuse).
        $a = "[$1]:$2"
            if $a =~ /\A([0-9A-Fa-f.:]+):([0-9]+)\z/ && defined Socket::inet_pton(Socket::AF_INET6(), $1);
        push @addr,   "$a";
        push @weight, $w + 0;
    }
    return (\@addr, \@weight);
}

# Whether compress_methods name gzip's own functions (IO::Compress::Gzip::gzip and a gunzip),
# what the core writes under the cache-memcached-fast format: honoured as they are, no warning.
sub _gzip_methods {
    my $m = shift;
    return 0 unless ref $m eq 'ARRAY' && @$m == 2;
    require B;
    my @name = map {
        my $cv = ref $_ eq 'CODE' ? B::svref_2object($_) : undef;
        $cv && $cv->GV->isa('B::GV') ? $cv->GV->STASH->NAME . '::' . $cv->GV->NAME : '';
    } @$m;
    return $name[0] eq 'IO::Compress::Gzip::gzip'
        && $name[1] =~ /\AIO::Uncompress::(?:Gunzip::gunzip|AnyUncompress::anyuncompress|AnyInflate::anyinflate)\z/;
}

# The core's whole weights for the servers' weights as given. Without Ketama, each rounded
# (with a warning when that changes it; at least 1). With Cache::Memcached::Fast's Ketama
# ($ketama: its ketama_points), each server's point count, which Cache::Memcached::Fast
# computes from rational weights as (int)(ketama_points x weight + 0.5), with the core's
# cmf-ketama:1 (one point per unit): the same continuum for weights such as 2.5 or 1.1,
# which rounding the weights would change (a share of the keys on another server).
sub _core_weights {
    my ($addr, $weight, $ketama, $who) = @_;
    my @int;
    for my $i (0 .. $#$addr) {
        my ($w, $iw) = ($weight->[$i]);
        if ($ketama) {
            $iw = int($ketama * $w + 0.5);
            _croak("$who: server ${\ _shown_address($who, $addr->[$i])}: ketama_points x "
                    . "weight must be at most $U32")
                unless $iw <= $U32;
            Carp::carp("Mcpool: server ${\ _shown_address($who, $addr->[$i])}: weight $w gets no "
                    . "Ketama point with ketama_points $ketama; using 1 point") if $iw < 1;
        } else {
            $iw = int($w + 0.5);
            Carp::carp("Mcpool: server ${\ _shown_address($who, $addr->[$i])}: weight $w is not "
                    . "an integer; using "
                    . ($iw < 1 ? 1 : $iw) . " (without ketama_points, Cache::Memcached::Fast "
                    . "places keys by the weight as given, so most keys are on other servers "
                    . "there (three in four in one test): give integer weights, or the same "
                    . "ketama_points to both)")
                if $iw != $w;
        }
        push @int, $iw < 1 ? 1 : $iw;
    }
    return \@int;
}

# set_servers (Cache::Memcached's): replaces the server list at run time, atomically.
sub set_servers {
    my ($self, $servers) = @_;
    my $st = $self->_call_state;    # last_error emptied
    my ($addr, $raw) = _server_list($servers, 'Mcpool->set_servers');
    my $weight = _core_weights($addr, $raw, $st->{ketama}, 'Mcpool->set_servers');
    _at_caller(sub { $self->_set_servers($addr, $weight) });
    return 1;
}

# Runs an XS call whose croak (an option or address the core refused) would name this
# module's line; re-croaks its message at the caller's (Carp's), as the croaks made here do,
# and leaves it in last_error without either place (a "<$fh> line N" Perl adds included).
sub _at_caller {
    my $code = shift;
    my @r;
    local $@;
    return $r[0] if eval { @r = ($code->()); 1 };
    my $err = $@;
    $err =~ s/ at \S+ line \d+(?:, <[^>]*> (?:line|chunk) \d+)?\.\n\z// if !ref $err;
    _croak($err);
}

# The options with each name the core reads in another spelling ('io-timeout', 'IO_TIMEOUT')
# under its own name (the core's rule, _option_canonical), as Python's keywords are: a copy,
# the caller's hash untouched. Names of Perl's own and unknown names stay as given. A name is
# read as its characters, whatever Perl's storage: "\x{a0}io_timeout" is io_timeout in
# Latin-1 as after utf8::upgrade (tester finding retest42 3: it was an unknown argument).
sub _canonical_names {
    my $conf = shift;
    my (%out, %given);
    for my $name (sort keys %$conf) {
        my $c = ($perl_args{$name} || $cmf_args{$name} || $core_option{$name})
            ? $name : _option_canonical($name) // $name;
        _croak("Mcpool->new: '$given{$c}' and '$name' are the same option ($c)")
            if exists $given{$c};
        $given{$c} = $name;
        $out{$c}   = $conf->{$name};
    }
    return \%out;
}

sub new {
    my ($class, $conf) = @_;
    _clear_last_error();
    # No argument: no options, as Cache::Memcached::Fast->new() (a client without servers).
    $conf = {} if @_ < 2;
    _croak('Mcpool->new: expects a hash reference of options')
        unless ref $conf eq 'HASH';
    $conf = _canonical_names($conf);
    # A resolver hook runs on the core's own threads, which cannot run Perl code: refused, not
    # ignored as an unknown argument would be (tester finding leaks 2: the client was built
    # resolving by the system, without a word but a warning).
    _croak('Mcpool->new: resolver is not available in Perl (the core resolves server '
            . 'names on its own threads, which cannot run Perl code): give the servers by IP '
            . 'address, resolving them before new or set_servers, or by a name the system '
            . 'resolves')
        if exists $conf->{resolver};
    my @unknown = grep { !$perl_args{$_} && !$cmf_args{$_} && !$core_option{$_} } sort keys %$conf;
    # An unknown TLS or SASL name (tls_cafile, sasl_passwd, pylibmc's username and password)
    # croaks, check_args or not, in the core's words (its suggestion of the name): warned
    # about, the client talked plain text or without SASL (tester finding secure 2).
    # Cache::Memcached::Fast has no such names, so no code of its relies on their passing.
    # Which names those are is the core's rule (mcpool_option_means_security), as in every
    # binding: any name beginning with tls, ssl or sasl, and username or password (space
    # around them, case and - for _ aside).
    for my $name (@unknown) {
        next unless _option_means_security($name);
        _croak('Mcpool->new: ' . (_option_refusal($name) // "unknown option \"$name\""));
    }
    unless (lc($conf->{check_args} // '') eq 'skip') {
        Carp::carp('compress_algo was removed in 0.08, use compress_methods')
            if exists $conf->{compress_algo};
        if (@unknown) {
            # each with the core's suggestion, as every other surface gives it (tester
            # finding retest48 3): "io_timout (did you mean io_timeout?)"
            my @shown = map {
                my $why = _option_refusal($_) // '';
                $why =~ /(\(did you mean [^()]*\))\s*\z/ ? "$_ $1" : $_
            } @unknown;
            local $" = ', ';
            Carp::carp("Unknown arguments: @shown");
        }
    }
    Carp::carp('Mcpool: compress_methods is not honoured: the core compresses with gzip (what '
            . 'Cache::Memcached::Fast\'s default methods read) and reads gzip and zlib; a reader '
            . 'whose compress_methods do not read gzip misses the values compressed here')
        if defined $conf->{compress_methods} && !_gzip_methods($conf->{compress_methods});

    # No servers (none given, or an empty list): as Cache::Memcached::Fast, a client whose
    # commands all fail (nothing, last_error "no servers"): a configuration that switches
    # caching off. The options are checked as they would be (Perl's checks; the core's need
    # a server to build a client with).
    my $no_list = !defined $conf->{servers}
        || (ref $conf->{servers} eq 'ARRAY' && !@{ $conf->{servers} });
    # A libmemcached configuration string names its servers itself (--SERVER=...).
    if ($no_list && !_lm_string($conf)) {
        _core_options($conf, 0);
        return Mcpool::NoServers::class_for($class)->_empty($conf);
    }
    my ($addr, $raw) = $no_list ? ([], []) : _server_list($conf->{servers}, 'Mcpool->new');
    # Cache::Memcached::Fast's Ketama (ketama_points above 0; with a distribution by name
    # too, the core refuses the two placements, naming both)
    my $points = int(_num($conf, 'ketama_points', 0, $U32) // 0);
    my $ketama = $points > 0 ? $points : 0;
    my $weight = _core_weights($addr, $raw, $ketama, 'Mcpool->new');

    my $core = _core_options($conf, $ketama);
    my $ser = $conf->{serialize_methods} // [\&Storable::nfreeze, \&Storable::thaw];
    _croak('Mcpool->new: serialize_methods must be [\&freeze, \&thaw]')
        unless ref $ser eq 'ARRAY' && ref $ser->[0] eq 'CODE' && ref $ser->[1] eq 'CODE';

    my %o = (
        serialize   => ($conf->{serialize} // 1) ? 1 : 0,
        # character strings are text where the format has a text kind and is not a Perl
        # client's; as Cache::Memcached::Fast under its own (not given: the XS asks the core
        # which format is in force, whatever spelled it)
        utf8        => defined $conf->{utf8} ? ($conf->{utf8} ? 1 : 0) : undef,
        deserialize => ($conf->{deserialize} // 1) ? 1 : 0,
        freeze      => $ser->[0],
        thaw        => $ser->[1],
        on_operation => defined $conf->{on_operation} ? 1 : 0,
        namespace    => $conf->{namespace},
    );
    my $on_op = $conf->{on_operation};
    _croak('Mcpool->new: on_operation must be a code reference')
        if defined $on_op && ref $on_op ne 'CODE';
    my $cb = $conf->{on_server_event};
    _croak('Mcpool->new: on_server_event must be a code reference')
        if defined $cb && ref $cb ne 'CODE';
    # With on_operation or on_server_event, the methods hand what the core queued (operation
    # records, server events) to the callbacks once they return, on this thread
    # (Mcpool::Hooked, a subclass); the object is otherwise the same.
    my $self = _at_caller(sub {
        # readonly: Cache::Memcached's read-only client (Mcpool::ReadOnly, a subclass)
        my $base = $conf->{readonly} ? Mcpool::ReadOnly::class_for($class) : $class;
        (($on_op || $cb) ? Mcpool::Hooked::class_for($base) : $base)
            ->_new($addr, $weight, $core, \%o);
    });
    my $st = $self->_state;
    $st->{on_operation} = $on_op if $on_op;
    $st->{namespace}          = $conf->{namespace} // '';
    $st->{ketama}             = $ketama;
    $st->{compress_threshold} = _cmf_threshold($conf);
    # The core queues each event in C (from whichever thread saw it, the pool's own
    # included); the object's methods hand them to the callback on this thread, after the
    # call that saw them (Mcpool::Hooked below).
    $st->{on_server_event} = $cb if defined $cb;
    return $self;
}

# The queued server events to the on_server_event callback, oldest first, on the calling
# thread (not inside a core call). A callback that dies is warned about, not propagated: the
# call it follows has its answer already. Not re-entered by calls the callback makes.
sub _dispatch_events {
    my $self = shift;
    my $st   = $self->_state;
    return if $st->{in_event_callback};
    local $st->{in_event_callback} = 1;
    my $cb = $st->{on_server_event} or return;
    for my $ev ($self->server_events) {
        local $@;
        _callback_died('on_server_event') unless eval { $cb->($ev, $self); 1 };
    }
    return;
}

# The copy of the per-item answers (last_item_error, last_item_outcome_unknown) that the
# callbacks' wrapper puts back after them (Mcpool.xs, mcp_items_replaced), and the item count
# of the last batch call: per interpreter, so per thread; a new thread's core list is empty,
# and so is its copy (CLONE runs in the new thread).
our ($_items_saved, $_items_count);
sub CLONE {
    undef $_items_saved;
    $_items_count = 0;
    return;
}

# The warning for a callback that died ($@ says why, with its own "at ... line" or "\n"):
# one line, as the die's message has it, for on_server_event and on_operation alike.
sub _callback_died {
    my $what = shift;
    warn "Mcpool: $what died: $@";
    return;
}

# _state (XS): this object's Perl-side state, a hash kept in its C state (_call_state: the same,
# for a method that can fail: last_error emptied first). DESTROY (XS) frees both; it does
# nothing for a scalar blessed into Mcpool by other code.

sub namespace {
    my $self = shift;
    # namespace($new) can fail (last_error emptied, _call_state); namespace() cannot
    my $st   = @_ ? $self->_call_state : $self->_state;
    my $old  = $st->{namespace};
    if (@_) {
        my $ns = $_[0] // '';
        _croak('Mcpool::namespace: the namespace must be a string, not a reference')
            unless _is_string($ns);
        my $why = $self->_set_namespace($ns, $old);
        _croak("Mcpool::namespace: $why") if defined $why;    # the old one kept
        $st->{namespace} = $ns;
    }
    return $old;
}

sub enable_compress {
    my ($self, $enable) = @_;
    my $st = $self->_call_state;    # last_error emptied
    my $on = $enable ? 1 : 0;
    # Cache::Memcached::Fast's rule (_cmf_threshold): the threshold's sign flips; the core
    # has its size already
    if (defined(my $t = $st->{compress_threshold})) {
        return if $t == 0 || ($t > 0 ? 1 : 0) == $on;
        $self->_set_compression($on);
        $st->{compress_threshold} = -$t;
        return;
    }
    # the core's options decide: its compression switched, at the threshold they set
    return if defined $st->{compress_enabled} && $st->{compress_enabled} == $on;
    $self->_set_compression($on);
    $st->{compress_enabled} = $on;
    return;
}

# flush_all is XS: each server's own outcome (the core's flush_all_each), 1 flushed, undef
# failed.

# set_multi, add_multi, replace_multi, append_multi, prepend_multi, cas_multi and
# delete_multi are XS (one pipelined call: per server every command is written before any
# reply is read); so are get_multi, gets_multi, gat_multi and gats_multi (one read).
# incr_multi, decr_multi and touch_multi: one pipelined call (XS); one result per argument in
# list context, a hash of key => defined result in scalar context, as Cache::Memcached::Fast
# (but a key given twice keeps a done answer: POD "A key given more than once").
for my $cmd (qw(incr decr touch)) {
    no strict 'refs';
    my $xs = \&{"Mcpool::_${cmd}_multi"};
    *{"${cmd}_multi"} = sub {
        my $self = shift;
        my @args = @_;
        my @r = $self->$xs(@args);
        return unless defined wantarray;
        return @r if wantarray;
        my %h;
        for my $i (0 .. $#r) {
            next unless defined $r[$i];
            my $k = ref $args[$i] eq 'ARRAY' ? $args[$i][0] : $args[$i];
            # A key given more than once: the last occurrence done (a counter's latest
            # value); a false answer never replaces one that was done (docs/errors.md).
            next if !$r[$i] && exists $h{$k};
            $h{$k} = $r[$i];
        }
        return \%h;
    };
}

# Cache::Memcached::Fast's nowait mode is not offered: every command waits for its reply.
sub nowait_push { return }

# Hands the records queued by the core's per-operation callback to on_operation, each a hash
# reference (docs/tracing.md). What the callback dies with is warned about, never propagated;
# the count of such failures is in _state->{on_operation_errors}. Not re-entered by calls the
# callback makes, and their own records are dropped: a callback that uses the client (to
# count operations, say) would otherwise feed itself without end.
sub _deliver_ops {
    my ($self) = @_;
    my $st = $self->_state;
    my $cb = $st->{on_operation} or return;
    return if $st->{in_op_callback};
    local $st->{in_op_callback} = 1;
    # (record, the instant its exchange ended) pairs: ended_ago is measured as each record is
    # handed to the sub, so that it holds for "now" in the sub whatever the subs before it
    # took (tester finding observability 1: measured when the method returned, record i was
    # shifted by the run time of the subs for records 0 .. i-1).
    my @recs = $self->_op_records;
    my $any  = @recs;
    while (@recs) {
        my ($rec, $ended) = splice @recs, 0, 2;
        $rec->{ended_ago} = _seconds_since($ended) if defined $ended;
        local $@;
        next if eval { $cb->($rec, $self); 1 };
        $st->{on_operation_errors}++;
        _callback_died('on_operation');
    }
    $self->_op_records if $any;    # what the callback's own calls queued
    return;
}


# An Mcpool with on_operation or on_server_event: every public method, then the records and
# events its call queued go to the callbacks, also when the method dies. Only objects built
# with a callback pay for the wrapper.
package Mcpool::Hooked;
our @ISA = ('Mcpool');

# The class an object of `$class` with callbacks is blessed into: Mcpool::Hooked for Mcpool,
# and for a subclass a class of its own that puts the subclass's methods first, then these
# wrappers (C3 order), so a subclass keeps its methods and its callbacks are called.
sub class_for { Mcpool::_mixed_in(__PACKAGE__, $_[0]) }
{
    no strict 'refs';
    my %skip = map { $_ => 1 } qw(new DESTROY CLONE_SKIP server_events library_version
        tls_supported option_names option_doc expiry_from_now import can isa VERSION);
    for my $name (sort keys %Mcpool::) {
        next if $name =~ /^_/ || $name =~ /[^a-z_]/ || $skip{$name};
        my $code = defined &{"Mcpool::$name"} ? \&{"Mcpool::$name"} : next;
        *{"Mcpool::Hooked::$name"} = sub {
            my $self = $_[0];
            my $want = wantarray;
            my @r;
            my $ok = eval {
                if ($want)            { @r = &$code }
                elsif (defined $want) { $r[0] = &$code }
                else                  { &$code }
                1;
            };
            my $err = $@;
            # The callbacks may use the client: what the method left in last_error is put
            # back after them, with whether its outcome is unknown (the rule: last_error is
            # the user's call's failure or nothing), and so are the per-item answers
            # (last_item_error, last_item_outcome_unknown), which a batch call of the
            # callbacks' replaced (tester finding retest46 1).
            my ($last, $unknown) = (Mcpool::last_error(), Mcpool::last_error_outcome_unknown());
            my $items = Mcpool::_items_save();
            $self->_deliver_ops;
            $self->_dispatch_events;
            Mcpool::_items_put_back($items);
            Mcpool::_restore_last_error($last, $unknown)
                if Mcpool::last_error() ne $last || Mcpool::last_error_outcome_unknown() != $unknown;
            die $err unless $ok;
            return $want ? @r : $r[0];
        };
    }
}


# An Mcpool made without servers (Mcpool->new, "servers"): Cache::Memcached::Fast's client
# whose commands fail softly. Every command returns what a command whose server failed
# returns (nothing; a _multi command one undef per argument in list context, an empty hash
# in scalar context; get_multi and the like an empty hash), with last_error "no servers".
# A hash, without the core's client.
package Mcpool::NoServers;
our @ISA = ('Mcpool');

sub class_for { Mcpool::_mixed_in(__PACKAGE__, $_[0]) }

sub _empty {
    my ($class, $conf) = @_;
    return bless { namespace => $conf->{namespace} // '' }, $class;
}

sub _fail {
    my ($name) = @_;
    Mcpool::_restore_last_error("$name: no servers (this client was made without any)");
    return;
}
{
    no strict 'refs';
    my %hash  = map { $_ => 1 } qw(get_multi gets_multi gat_multi gats_multi flush_all
        server_versions stats);
    my %multi = map { $_ => 1 } qw(set_multi add_multi replace_multi append_multi
        prepend_multi cas_multi delete_multi incr_multi decr_multi touch_multi);
    # what cannot fail: nothing to say, last_error left as it is
    my %quiet = (
        server_labels => sub { return },
        server_events => sub { return },
        server_for    => sub { return undef },
        value_format  => sub { return undef },    # no client, no format in force
        metrics       => sub { return {} },
        server_states => sub { return [] },
        _dispatch_events => sub { return },
        _deliver_ops  => sub { return },
        nowait_push   => sub { return },
        DESTROY       => sub { return },
    );
    my %skip = map { $_ => 1 } qw(new import can isa VERSION last_error
        last_error_outcome_unknown option_names option_doc library_version tls_supported
        expiry_from_now class_for CLONE_SKIP CLONE namespace enable_compress disconnect_all
        close set_servers);
    for my $name (sort keys %Mcpool::) {
        next if $name =~ /[^A-Za-z_]/ || $skip{$name} || !defined &{"Mcpool::$name"};
        next if $name =~ /^_/ && !$quiet{$name};
        *{"Mcpool::NoServers::$name"} = $quiet{$name} // ($hash{$name}
            ? sub { Mcpool::_clear_last_error(); _fail($name); return {} }
            : $multi{$name}
            ? sub {
                my $self = shift;
                Mcpool::_clear_last_error();
                _fail($name);
                return wantarray ? ((undef) x @_) : {};
            }
            : sub { Mcpool::_clear_last_error(); _fail($name) });
    }
}

# A namespace is kept (Cache::Memcached::Fast's namespace method works there too).
sub namespace {
    my $self = shift;
    my $old  = $self->{namespace};
    if (@_) {
        Mcpool::_clear_last_error();    # namespace($new) can fail, as Mcpool's
        my $ns = $_[0] // '';
        Mcpool::_croak('Mcpool::namespace: the namespace must be a string, not a reference')
            unless Mcpool::_is_string($ns);
        $self->{namespace} = $ns;
    }
    return $old;
}

sub enable_compress { Mcpool::_clear_last_error(); return }
sub disconnect_all  { Mcpool::_clear_last_error(); return }
sub close           { Mcpool::_clear_last_error(); return }

sub set_servers {
    Mcpool::_croak('Mcpool->set_servers: this client was made without servers; '
            . 'make one with them (Mcpool->new)');
}


# An Mcpool made with readonly => 1: Cache::Memcached's read-only client. Every command that
# writes sends nothing and answers as Cache::Memcached's refused commands do: false (0) for
# the stores and delete (its _set and delete return 0), nothing for incr and decr (undef);
# the commands Cache::Memcached has not follow their kind: 0 for those that answer true or
# false (cas, touch, set_counter, set_bytes, the _with_version stores and delete, invalidate,
# set_multi_noreply), nothing
# for those that return a value (gat, gats, get_lease, incr_or_init, decr_or_init, the
# _with_version counters) and for cas_result (whose answers all name what the server said), one
# such answer per item for the _multi forms, an empty hash for gat_multi, gats_multi and
# flush_all. last_error says why. Reads (get, gets, get_multi, gets_multi, meta_info) and the
# rest go to the core as usual.
package Mcpool::ReadOnly;
our @ISA = ('Mcpool');

sub class_for { Mcpool::_mixed_in(__PACKAGE__, $_[0]) }

sub _refuse {
    my ($name, $key) = @_;
    Mcpool::_clear_last_error();
    my $what = defined $key && !ref $key ? qq{$name "$key"} : $name;
    Mcpool::_restore_last_error(
        "$what: this client is read-only (readonly => 1): nothing sent");
    return;
}
{
    no strict 'refs';
    my %false = map { $_ => 1 } qw(set add replace append prepend cas set_counter delete
        remove touch set_with_version delete_with_version invalidate set_multi_noreply
        set_bytes);
    my %undef = map { $_ => 1 } qw(incr decr incr_or_init decr_or_init incr_with_version
        decr_with_version gat gats get_lease cas_result);
    my %multi = (
        (map { $_ => 0 } qw(set_multi add_multi replace_multi append_multi prepend_multi
            cas_multi delete_multi touch_multi)),
        (map { $_ => undef } qw(incr_multi decr_multi)),
    );
    for my $name (keys %false) {
        *{"Mcpool::ReadOnly::$name"} = sub { _refuse($name, $_[1]); return 0 };
    }
    for my $name (keys %undef) {
        *{"Mcpool::ReadOnly::$name"} = sub {
            _refuse($name, ($name eq 'gat' || $name eq 'gats') ? $_[2] : $_[1]);
            return;
        };
    }
    for my $name (keys %multi) {
        my $answer = $multi{$name};
        *{"Mcpool::ReadOnly::$name"} = sub {
            my $self = shift;
            _refuse($name);
            return unless defined wantarray;
            return (($answer) x @_) if wantarray;
            return {} unless defined $answer;
            return { map { ((ref $_ eq 'ARRAY' ? $_->[0] : $_) => $answer) } @_ };
        };
    }
    for my $name (qw(gat_multi gats_multi flush_all)) {
        *{"Mcpool::ReadOnly::$name"} = sub { _refuse($name); return {} };
    }
}

1;

__END__

=encoding UTF-8

=head1 NAME

Mcpool - memcached client for Perl over mcpool's C core, a drop-in for Cache::Memcached::Fast

=head1 SYNOPSIS

    use Mcpool;

    my $memd = Mcpool->new({
        servers => [ { address => '10.0.0.1:11211', weight => 2 }, '10.0.0.2:11211' ],
        namespace          => 'app:',
        connect_timeout    => 0.2,
        io_timeout         => 0.5,
        compress_threshold => 100_000,
        utf8               => 1,
    });

    $memd->set('key', 'value', 60);
    my $v    = $memd->get('key');
    my $href = $memd->get_multi(qw(k1 k2 k3));
    my $cv   = $memd->gets('key');
    $memd->cas('key', @$cv) if $cv;

=head1 DESCRIPTION

Mcpool speaks to memcached through C<libmcpool>, the C ABI of the mcpool Rust core
(F<include/mcpool.h>). The core does the protocol, the placement of keys on servers and the
compression; this module only turns Perl values into bytes and flags and back.

Its interface is Cache::Memcached::Fast's: replacing C<Cache::Memcached::Fast-E<gt>new> with
C<Mcpool-E<gt>new> is the change an application needs, unless it relies on one of the
differences listed in L</Differences from Cache::Memcached::Fast> (ithreads, bad input, times
and deltas Cache::Memcached::Fast would turn into others, values it would return wrong). Keys
land on the same server as with Cache::Memcached::Fast (and Cache::Memcached), and values
written by either are read by the other, so a fleet can switch client by client without
losing its cache.

=head2 Differences from Cache::Memcached::Fast

Every one of them on purpose; each is described where its method is.

=over

=item * B<Argument counts>: a method croaks (C<Usage: ...>) when called with fewer or more
arguments than it takes: C<get()> without a key, C<set('k')> without a value, C<cas('k')>,
C<gat('k')> without an expiry, and C<get('k', 'extra')> with one too many, where
Cache::Memcached::Fast ignores the extra ones (and reads a missing one as C<undef>). A call
that would send something else than its caller meant is refused, never guessed at.

=item * B<ithreads>: an object is not cloned into a new thread (there it is an unblessed
reference; see L</FORK AND THREADS>): create a client in each thread. Cache::Memcached::Fast
clones it (a new client from the same constructor arguments).

=item * B<A key given more than once> to a C<_multi> call: the scalar-context hash says done
when any occurrence was done (L</A key given more than once (differs from
Cache::Memcached::Fast)>).

=item * B<An undef or reference key croaks> (L</BAD INPUT>); Cache::Memcached::Fast returns
undef, or stores under C<"ARRAY(0x...)">.

=item * B<Times>: a fractional expiration time rounds up (C<0.4> is 1 second, never 0,
"never expires"; but C<2592000.5> is 30 days, not rounded across the 30-day line to a unix
time in 1970), one of 2**31 seconds or more is refused (memcached would expire the
item at once), and so is a string that is not a number (C<'5m'>, C<'1 hour'>, C<''>,
C<'0x3c'>: Cache::Memcached::Fast sends 5, 1, 0 and 0, with at most a warning; Mcpool
returns nothing (an empty list, C<undef> in scalar context, as for any other failure),
C<last_error> naming the time as given; C<flush_all> croaks for either). A set so refused
deletes the key (as one refused as too large), so that, as after Cache::Memcached::Fast's
set, no older value is left to read; the other stores leave it (L</BAD INPUT>).

=item * B<Keys with a tab, another control byte or DEL> (C<"k\tx">, C<"k\x01">,
C<"k\x7f">) are refused as keys with a space are (nothing returned, C<last_error>), on the
text protocol; Cache::Memcached::Fast sends them, and memcached stores them. Values it wrote
under such keys read as misses through Mcpool.

=item * B<flush_all($delay)> gives every server the same delay; Cache::Memcached::Fast
staggers it over the servers (three servers and C<flush_all(30)>: 30, 15 and 0 seconds).

=item * B<IPv6 servers written Cache::Memcached::Fast's way> (C<'::1:11211'>) are named
C<'[::1]:11211'> in results keyed by server (C<server_versions>, C<flush_all>) and by
C<server_labels> and C<server_for>.

=item * B<A server whose Ketama point count rounds to 0> (C<ketama_points> times its weight
below 0.5) gets 1 point, with a warning; Cache::Memcached::Fast gives it none, so no key is
placed there. The keys that point takes go to that server instead of where
Cache::Memcached::Fast puts them: give such a server a weight of at least
C<0.5 / ketama_points>, or leave it out of the list.

=item * B<incr/decr deltas>: one that is not an integer from 0 to 2**64-1 (C<-1>,
C<1.5>, C<'abc'>, a float of 2**64 or more, which C<2**64-1> computed by Perl is) is
refused, nothing sent; Cache::Memcached::Fast converts it into another delta (C<incr> by -1
decrements, C<incr> by C<2**64> too: by 2**64-1) (L</incr, decr ($key, [$delta]), incr_multi,
decr_multi (@keys or [$key, $delta], ...)>).

=item * B<Values that cannot be read> are errors, with a warning and C<last_error>, never a
miss nor the value without its bytes: a Storable image with bytes after it, a value flagged
Storable whose thaw dies (L</SECURITY: Storable>), a value flagged Storable with
C<deserialize =E<gt> 0> (L</deserialize>).

=item * B<A floating-point value> is stored as the text that reads back as the same number:
Perl's 15 digits when they do, else 17 (C<0.57 * 100> is C<"56.999999999999993">,
C<0.1 + 0.2> C<"0.30000000000000004">); Cache::Memcached::Fast stores Perl's 15 digits
(C<"57">, C<"0.3">), a different number. So a counter kept as a float (C<set('n', 0.57 *
100)>) is not a number memcached's C<incr> takes: store C<int(...)> or C<sprintf> the text
you mean (L</value_format>).

=item * B<A key and its upgraded copy>: a byte string and the same string after
C<utf8::upgrade> (or one holding only ASCII either way) are one key, but a byte string with
bytes 0x80-0xFF and its upgraded copy are two (its bytes, and their UTF-8 encoding), as in
Cache::Memcached::Fast: C<get_multi>'s hash then holds the value under the key as you gave
it. Decode or encode keys one way throughout (the namespace alike: L</namespace>).

=item * B<Mcpool-E<gt>new()> without arguments makes a client without servers, as
Cache::Memcached::Fast's (every command fails, C<last_error> says so).

=item * B<A _multi list with an invalid last item> gives one result per argument, its
C<undef> included (Cache::Memcached::Fast drops that trailing C<undef>).

=item * C<compress_methods> is not honoured: the core compresses with gzip and reads gzip and
zlib. Gzip's own functions (C<IO::Compress::Gzip::gzip> with a gunzip) are what it does
already; any other methods get a warning, since a Cache::Memcached::Fast reader using them
(zlib's C<compress>, say) misses the values mcpool compresses. C<nowait> and a
server's C<noreply> are accepted and not offered: every command waits for its reply.

=item * B<Error messages> name the method, key and server (and C<last_error> has them);
Cache::Memcached::Fast's constructor messages come first where it has one
(C<Server weight should be positive (...)>).

=item * B<No servers> (none given, or an empty list): the commands answer as
Cache::Memcached::Fast's do (nothing), with C<last_error> C<"... no servers ...">; the object
is an C<Mcpool::NoServers> (an C<Mcpool>), whose C<set_servers> croaks.

=item * B<Strings that are not Unicode text under C<utf8 =E<gt> 1>>: a character string
holding a surrogate (C<"\x{d800}">) or a code point above U+10FFFF (C<"\x{110000}">), which
Perl strings can, is refused: the store returns nothing (C<undef>), C<last_error>
C<... the data is not a valid text (UTF-8)>, nothing sent. Cache::Memcached::Fast stores
Perl's extended encoding of them with the UTF-8 flag, which no other client reads as text;
reading such a value here (one Cache::Memcached::Fast wrote) is an error with a warning that
the body C<is not UTF-8>, never a wrong string. Store such data as bytes (C<utf8> off, or
C<Encode::encode('utf-8', ...)> with a replacement) instead.

=item * B<C<readonly =E<gt> 1>> (Cache::Memcached's) refuses C<flush_all> too, which
Cache::Memcached still sends (L</readonly, no_rehash>).

=back

=head2 Compatibility with Cache::Memcached::Fast and Cache::Memcached

=over

=item Placement

With C<ketama_points> 0 (the default) keys are placed by the core's C<cache-memcached>
profile, which agrees key for key with Cache::Memcached and Cache::Memcached::Fast, weights
included. With C<ketama_points> N above 0, the C<cmf-ketama:N> profile, which agrees with
Cache::Memcached::Fast's Ketama continuum. The namespace is not hashed, unless
C<hash_namespace> is true (then it is, as in Cache::Memcached::Fast).

Weights are rational, as in Cache::Memcached::Fast. With C<ketama_points> above 0 each server
gets Cache::Memcached::Fast's C<(int)(ketama_points x weight + 0.5)> points, so a weight such
as 2.5 or 1.1 places every key where Cache::Memcached::Fast does (the core is given the point
counts as whole weights, with C<cmf-ketama:1>; C<set_servers> does the same). With
C<ketama_points> 0 (modulo, whole weights in the C ABI) a fractional weight is rounded, with a
warning: Cache::Memcached::Fast scales a continuum by the weights as given, so most keys are
then on other servers there (1,457 of 2,000 with weights 1.5, 2.5, 3.5, 1.5, 5.5, measured);
Cache::Memcached::Fast itself only agrees with Cache::Memcached for integer weights there.
Give integer weights, or the same C<ketama_points> to both.

Cache::Memcached's C<[$hash, $key]> keys (a caller's hash picking the server) are refused
with a croak that says why: see L</BAD INPUT>.

=item Cache::Memcached's methods that Mcpool has not

Mcpool has Cache::Memcached::Fast's methods; of Cache::Memcached's own, it takes the
constructor words C<readonly>, C<no_rehash> and C<select_timeout> and the method
C<set_servers>, not these (a call dies with Perl's "Can't locate object method"): its setters
C<set_compress_threshold>, C<set_readonly>, C<set_norehash>, C<set_connect_timeout>,
C<set_debug> and C<set_cb_connect_fail> (give the constructor C<compress_threshold>,
C<readonly>, C<no_rehash>, C<connect_timeout>; C<enable_compress> switches compression;
C<on_server_event> sees servers failing, C<on_operation> every exchange),
C<forget_dead_hosts> (a dead server is tried again after C<retry_timeout>; C<disconnect_all>
closes the connections), C<stats_reset> (memcached's C<stats reset>: no counterpart), and
C<stats> with an array of group names (C<stats($group)> takes one group at a time).

=item Values and flags

By default Cache::Memcached's flag layout (the core's C<cache-memcached-fast> value format):
1 = Storable (the value was a reference, serialized with C<serialize_methods>, by default
C<Storable::nfreeze>), 2 = compressed (gzip, as C<Compress::Zlib::memGzip> writes it), 4 =
UTF-8 (a character string stored with C<utf8 =E<gt> 1>). The flags, the wire forms and
compression belong to the core (see L</value_format>), so C<compress_methods> is not
honoured (a warning unless they are gzip's own functions).

=item Return values

As Cache::Memcached::Fast: store commands, C<delete> and C<touch> return true (1) on success,
false (C<"">) for a negative server answer (C<add> of an existing key, C<cas> of a changed
item, a missing key), and nothing (C<undef> in scalar context) on an error (server down,
timeout, an invalid key, a value over C<max_size>). C<incr>/C<decr> return the new value as the
decimal string memcached sent (C<"6">, so a JSON encoder writes C<"6"> as with
Cache::Memcached::Fast; 0 as C<"0E0">), false for a missing key, nothing on error. C<get> returns the value or nothing
(a miss, an error, a value that does not thaw (with a warning), or one that thaws to C<undef>); C<get_multi> a hash
reference of the keys found. The C<_multi> store forms and
C<delete_multi> return a list of results, one per argument and in order (C<undef> for an item
that failed), in list context, and a hash reference of key =E<gt> result for the defined
results in scalar context; in void context they still run.

=item A key given more than once (differs from Cache::Memcached::Fast)

A key given more than once to a C<_multi> command is sent once per occurrence, in order, and
in list context each occurrence has its answer, as in Cache::Memcached::Fast. The scalar
context's hash differs, on purpose. Cache::Memcached::Fast 0.28 keeps the last defined
occurrence's answer; Mcpool keeps true when any occurrence was done (the last such one's
result: a counter's latest value), and false only when none was. So
C<< scalar $memd->delete_multi('k', 'k') >>, which deletes C<k> with the first occurrence
and finds nothing with the second, returns C<< { k =E<gt> 1 } >> here and
C<< { k =E<gt> '' } >> from Cache::Memcached::Fast; C<add_multi> of a missing key given
twice (the first added, the second refused) and C<cas_multi> of one item twice with the same
CAS likewise. Why: the hash answers per key whether the command was done, and
Cache::Memcached::Fast's would say that a deleted (or added) key was not, a wrong answer
given as if right; every mcpool binding folds repeated keys by this one rule
(docs/errors.md, "A key given more than once"). With distinct keys, or when the last
occurrence is the one done, the two hashes are the same. Code that needs each occurrence's
answer calls in list context (t/22-multi-repeated-key.t compares both side by side).

=back

=head1 SECURITY: Storable

A value is thawed with C<Storable::thaw> (or your C<serialize_methods>) only when its flags
say Storable (bit 1). By default it is, as Cache::Memcached::Fast does: B<this is unsafe
when anyone you do not trust can write to your memcached>. Storable's thaw of data crafted
by an attacker can make objects of any class (whose C<DESTROY> then runs), call
C<STORABLE_thaw> hooks and use memory without bound. Against untrusted writers, turn thawing
off with C<deserialize =E<gt> 0> (see L</deserialize>), or give C<serialize_methods> a safer
pair (e.g. JSON), or keep memcached on a trusted network.

A value flagged Storable whose thaw dies (bytes prepended to an image, a value another
writer flagged 1, a C<serialize_methods> thaw that dies) is an error, never a miss:
C<get>, C<gets>, C<gat> and C<gats> return nothing and C<get_multi>/C<gets_multi> leave the
key out, with a warning naming the key and the flags (C<Mcpool::get: MCPOOL_VALUE_FORMAT:
key "K" with flags 1 (0x1): the value is flagged Storable (serialized) and does not thaw:
Storable binary image v62.101 more recent than I am (v2.11): not returned at script.pl line
6.>) and C<last_error> saying why (Cache::Memcached::Fast returns nothing, silently, as for a
miss). The thaw's message is given without the place its die added (Storable's
C<at .../Storable.pm line 471, E<lt>GEN1E<gt> line 1, at script.pl line 6.>): C<last_error>
names no Perl file, and the warning names the caller's line once, as every warning does. A thaw that
returns C<undef> without dying is a miss, as there.

A Storable image with bytes after it is an error, never the value without them: memcached
appends raw bytes and keeps the item's flags, and C<Storable::thaw> stops at the end of the
image, so after an C<append> (or a C<prepend> of a whole image) Cache::Memcached::Fast
returns the value as it was before. Here C<get>, C<gets>, C<gat> and C<gats> return nothing
and C<get_multi>/C<gets_multi> leave the key out, with a warning naming the key
(C<Mcpool::get: MCPOOL_VALUE_FORMAT: key "K" with flags 1 (0x1): the value is a Storable
image with 4 bytes after the serialized object ...: not returned>) and C<last_error> saying
why (C<get_lease> returns nothing, C<last_error> says why). Storable has no way to ask where
an image ends, so the binding reads Storable's format (version 2, what C<freeze> and
C<nfreeze> write) to find its end, and Storable confirms it: the error is given only when
C<thaw> reads the image without the bytes after it, so a value C<thaw> reads whole is never
refused. Told only with the default thaw method (C<serialize_methods>' second entry
C<\&Storable::thaw>): with a thaw of your own (even one that calls C<Storable::thaw>), and
for an image this reading cannot measure (a type a Storable newer than 3.26 added, an
object over 2 GB), the bytes after an image go unseen, as in Cache::Memcached::Fast.

Objects of this class cannot be forged: the client is attached to the object where Perl code
cannot reach it (ext magic, checked on every call), not kept as a number inside it. A scalar
blessed into C<Mcpool> by other code, or thawed from the cache, is refused by every method
(C<Mcpool: not an Mcpool object>), and its destruction does nothing.

=head1 CONSTRUCTOR

=head2 new

    my $memd = Mcpool->new(\%options);

Options: Cache::Memcached::Fast's names and units, and every option of the mcpool core by
its own name (see L</The core's options>). The defaults are the core's C<cache-memcached-fast>
preset (Cache::Memcached::Fast's own defaults, set once in the core, not here); this module
only translates Cache::Memcached::Fast's names and units (seconds, C<max_failures 0>,
C<compress_threshold -1>) into the core's. One core option set by two arguments (a
Cache::Memcached::Fast name and the core's own: C<compress_threshold> with C<compression> or
C<compression_threshold>, C<failure_timeout> with C<retry_timeout>, C<max_size> with
C<max_value_size>, C<serialize> with C<serialized_perl>, C<namespace> with C<key_prefix>,
C<no_rehash> with C<failover>) croaks naming both (C<option
compression given twice (as compress_threshold and compression)>), whatever the values: the
core's rule, the same in every binding.

=over

=item servers

An array reference; each element is C<'host:port'> (an IPv6 address as C<'[::1]:11211'>, or
as Cache::Memcached::Fast writes it, C<'::1:11211'>: split at the last colon),
C<'/path/to/socket'>, a hash reference
C<{ address =E<gt> 'host:port', weight =E<gt> 2 }> or an array reference C<['host:port', 2]>.
The order matters: it decides placement. An address with a C<user:password@> before the host
is refused (SASL credentials are the C<sasl_username> and C<sasl_password> options), and no
croak, warning or C<last_error> of C<new> or C<set_servers> quotes it: they show it as the
core does, C<E<lt>userinfo hiddenE<gt>@host:port>, whatever else is wrong with the entry (a bad
weight beside it is reported as the address's refusal). No servers (the option left out, or an empty list)
is Cache::Memcached::Fast's client that fails every command: each returns what a failed
command returns (nothing; a C<_multi> store or delete one C<undef> per argument in list
context and an empty hash in scalar context; C<get_multi>, C<flush_all> and the like an empty
hash) with C<last_error> C<"set: no servers (this client was made without any)">, nothing
sent (a configuration that switches caching off). The other options are checked as usual,
as far as Perl checks them. A hash's C<noreply> flag (Cache::Memcached::Fast's:
void-context commands ask for no reply) is accepted and has no effect: every command waits
for its reply, so a command in void context still completes before the next one.

=item namespace, hash_namespace

A prefix for every key (at most 250 bytes); whether it is hashed for placement (default no).
The prefix is the namespace's bytes as Perl holds them, as Cache::Memcached::Fast sends it: a
string of Latin-1 bytes is those bytes, a character string (UTF8 flag on) its UTF-8.
Both are the core's: C<namespace> is its C<key_prefix>, C<hash_namespace> its
C<hash_key_prefix> (true or false; not given: the distribution's rule, which for
Cache::Memcached::Fast's placement is not to hash it). C<namespace> and C<key_prefix> both
given croak (C<option key_prefix given twice (as namespace and key_prefix)>), whatever the
values: one prefix, never one silently dropped.

=item connect_timeout, io_timeout (or select_timeout)

Seconds, rational; defaults 0.25 and 1.0; 0 means no limit (a day). At most 10^9.
C<select_timeout> is Cache::Memcached's name for C<io_timeout>; given both, B<C<select_timeout>
wins>, whatever the values, as in Cache::Memcached::Fast (whose constructor sets
C<io_timeout>, then C<select_timeout> over it): C<{ io_timeout =E<gt> 0.2, select_timeout
=E<gt> 0.6 }> waits 0.6 s for a silent server.

As in Cache::Memcached::Fast, for commands that talk to more than one server (C<get_multi>,
C<set_multi>, C<delete_multi>, ...) C<io_timeout> applies per server set, not per server:
every server's request is written first, and once one server's wait has timed out the
others get only what is left of C<io_timeout> since the call last made progress (a reply
counts as of when it arrived, not when it is read: over TCP on Linux). Six silent servers
cost a C<get_multi> about one C<io_timeout>, not six, however they alternate with live
servers in the list; the other servers' keys are still answered. A signal that interrupts a wait does not restart it (over TCP the
wait still ends C<io_timeout> after the request). Perl's (deferred) signal handlers run when
the call returns, so within that bound (docs/options.md).

=item compress_threshold, compress_ratio

Values of at least C<compress_threshold> bytes are compressed, in the value format's codec
(gzip, as Cache::Memcached::Fast writes it, under the default C<cache-memcached-fast>; zlib
under C<mcpool>; see L</value_format>), when the result is at most C<compress_ratio> of the
original (default 0.8). Default -1: no compression. A fraction counts as its whole part, as
in Cache::Memcached::Fast (C<0.5> is 0: no compression). C<compress_ratio>
is from 0 to 1, as Cache::Memcached::Fast's; 0: no compressed form is ever kept (every value
stored plain); outside that range C<new> croaks (C<compress_ratio must be a number between 0
and 1>). Compressed values are always inflated on reading, whatever this setting.

=item max_failures, failure_timeout

As in Cache::Memcached::Fast, after C<max_failures> failures within C<failure_timeout>
seconds (default 10) of the first of them a server is not tried for another
C<failure_timeout> seconds; its keys fail at once meanwhile. A success in between does not
reset the count; failures further apart than C<failure_timeout> do not add up, and after the
rest the count starts again (the core's C<failure_window>, C<retry_timeout> and
C<retry_timeout_max>, all set by C<failure_timeout>). C<max_failures> 0 (the default) never
marks a server dead. C<failure_timeout> 0 is no rest: the server is tried again by the next
call (not "no limit" as for the timeouts above; Cache::Memcached::Fast, whose clock is whole
seconds, rests it for the rest of the current second). C<max_failures> is at most
4294967295, C<failure_timeout> at most 10^9 seconds.

=item ketama_points

See L</Placement>.

=item serialize_methods

C<[\&freeze, \&thaw]>, default C<[\&Storable::nfreeze, \&Storable::thaw]>. Freeze returns
bytes: a character string it returns is stored as its characters when each is below 256
(Latin-1), and a string with wider characters is refused (C<set> croaks, nothing stored), where
Cache::Memcached::Fast stores its UTF-8 encoding and thaw then gets other characters back (give
JSON::PP C<-E<gt>utf8>, or encode with C<Encode::encode_utf8>).

=item value_format

mcpool extension: the value format of the fleet, by name (docs/value-format.md):
C<cache-memcached-fast> (the default; the same as C<cache-memcached>), C<mcpool> (the layout
every mcpool client reads: Python, Java, C, Rust and this one), or another client's
(C<pylibmc>, C<python-memcached>, C<pymemcache>, C<whalin>, C<spymemcached>,
C<libmemcached>). Every program sharing a cache uses the same one. Perl values map to the
format's kinds: a reference is a Storable image, an integer (a number that was never used as
a string) an integer (under a format without integers, its decimal text, as
Cache::Memcached::Fast stores it), a character string UTF-8 text with C<utf8 =E<gt> 1>
(the default where the format has a text kind and is not a Perl client's: L</utf8>), a boolean of Perl 5.36 and later (C<builtin::true>, a
comparison's result, a boolean read back) a boolean where the format has one (C<mcpool>,
C<pylibmc>, C<whalin>, C<spymemcached>; elsewhere the bytes C<1> or the empty string, as Perl
prints it), a floating-point number the text that reads back as the same number (Perl's own
15 digits when they do, else 17: C<0.1 + 0.2> is C<0.30000000000000004>, never C<0.3>; infinity
and NaN as Perl prints them; a dualvar whose string is not a number, such as C<$!>, is its
string, as Cache::Memcached::Fast stores it), anything else bytes. Reading gives back the same: an integer
as a number (2**63..2**64-1, such as a counter past 2**63, as an unsigned one, the form Perl
holds it in, so storing it back keeps it an integer), text as a character string (with
C<utf8>), a reference thawed. An integer beyond 64 bits (a Python writer's, under C<pylibmc> or C<python-memcached>) is returned as the exact
string of its digits, never a rounded or saturated number. A value the core
cannot deliver as a Perl value (flags that mean nothing in the format, a Python pickle or a
Java object, a compressed value that does not inflate, a Storable image with C<serialize
=E<gt> 0>) is an error: C<get> returns nothing and C<get_multi> leaves the key out, with a
warning naming the key and the flags (C<Mcpool::get: MCPOOL_VALUE_FORMAT: ...: not
returned>) and C<last_error> saying why, never its bytes. The core options
C<serialized_python> and C<serialized_java> change nothing here: they let the core deliver
those objects to a language that can read them, and Perl cannot, so a Python pickle or a Java
object stays that error (the warning says C<Perl cannot read it>), never a miss. An unknown
name croaks.

=item serialize

mcpool extension. True by default (as Cache::Memcached::Fast, which always serializes
references): references are stored as Storable images, and values flagged Storable are
delivered for thawing (see L</deserialize>). With C<serialize =E<gt> 0> storing a reference
croaks and a value flagged Storable is an error on every read (a warning and C<last_error>,
nothing returned).

=item deserialize

mcpool extension. True by default: values flagged Storable are thawed with the thaw method,
as Cache::Memcached::Fast does, which is B<unsafe against untrusted writers> (see
L</SECURITY: Storable>). With C<deserialize =E<gt> 0> nothing read is ever thawed: a value
flagged Storable is an error, never its bytes passed off as the value, nor a miss. C<get>,
C<gets>, C<gat> and C<gats> return nothing for it and C<get_multi>/C<gets_multi>/C<gat_multi>
leave its key out, each with a warning naming the key and the flags (C<Mcpool::get:
MCPOOL_VALUE_FORMAT: key "K" with flags 1 (0x1): the value is flagged Storable (serialized)
and deserialize is off: not returned>) and C<last_error> saying why (C<key "K" with flags 1
(0x1): the value is flagged Storable (serialized) and deserialize is off>), as for the other
values that cannot be read; C<get_lease> returns nothing, C<last_error> saying why. (Before
2026-12-06 C<last_error> stayed empty, so the value read as a miss, and C<get_lease>
answered C<'hit'> with an undef value.) The other values of the call are returned. Values
that are not flagged Storable are returned as always. Storing a reference still serializes
it (flag 1), for readers that thaw.

=item utf8

Store character strings (the UTF8 flag on: decoded, or C<utf8::upgrade>d even when ASCII) as
UTF-8 text, the value format's text kind (flag 4 in Cache::Memcached's layout, 16 under
C<pylibmc>), and decode text on reading (as a character string, the UTF8 flag on). Off, a
character string is stored as bytes, its characters as Latin-1 when each is below 256, and
one with wider characters croaks ("Wide character"), as with Cache::Memcached::Fast; text
is read as its UTF-8 bytes. Off under Cache::Memcached's format (C<cache-memcached>, its
preset), a character string is stored as Perl holds it, as Cache::Memcached (C<use bytes>)
writes it: an upgraded or decoded string (C<"caf\x{e9}">, a wide character too) as its UTF-8
bytes, a byte string as its bytes, under flags 0, and read back as bytes; so both clients
store the same bytes for the same string during a migration (up to 2026-12-07 it was stored
as Latin-1, and a wide character croaked: tester finding migration 1).

Not given, it follows the value format in force (whichever option set it, in any spelling the
core takes; C<value_format> names it): B<on> where the format has a text kind and is not a
Perl client's, so that a Perl program sharing the cache with Python or Java clients stores
text their C<str> and C<String> read, and reads theirs as character strings: C<mcpool>,
C<pylibmc>, C<python-memcached>, C<pymemcache>, C<whalin>. B<Off> under the Perl clients'
formats, C<cache-memcached-fast> (the default) and C<cache-memcached>, as with
Cache::Memcached::Fast and Cache::Memcached (whose off differs, above), and under the formats without a text kind of
their own: C<spymemcached> (its text is flags 0, which reads as bytes) and C<libmemcached>.
C<utf8 =E<gt> 0> or C<utf8 =E<gt> 1> given always wins. (Up to 2026-12-06 it was on only
under C<mcpool>: under the Python formats and C<whalin> a decoded string was stored as
Latin-1 bytes, a Python C<str> came back as bytes, and a wide character croaked.)

=item max_size

Largest value stored, after serialization and compression (default 1 MiB): a larger one is
not sent and the store returns nothing. From 1 to 1073741824 (1 GiB, memcached's largest
item); C<-1> or any other value outside the range croaks. memcached's own limit (C<-I>, 1 MiB
by default) counts the key and the item header too, so a value just under it can still be
refused by the server ("SERVER_ERROR object too large for cache"): the same failure, the
store returns nothing and C<last_error> says too large; in C<set_multi> only that item is
C<undef>.

=item nowait, close_on_error, check_args

Accepted for compatibility. C<nowait> is not offered (every command waits for its reply);
connections that saw an error are closed by the core (C<close_on_error> is on), except after
a store's C<SERVER_ERROR> reply, which answers that store and leaves the connection in step.

=item readonly, no_rehash

Cache::Memcached's. C<readonly =E<gt> 1>: the object (an C<Mcpool::ReadOnly>, a subclass of
C<Mcpool>, or of your subclass) sends no command that writes. Those answer as
Cache::Memcached's refused commands do: C<set>, C<add>, C<replace>, C<append>, C<prepend>,
C<delete> (C<remove>) return 0, C<incr> and C<decr> nothing (C<undef>); the commands
Cache::Memcached has not answer by their kind: C<cas>, C<touch>, C<set_counter>,
C<set_bytes>, C<set_with_version>, C<delete_with_version> and C<invalidate> 0, C<gat>, C<gats>,
C<get_lease>, C<incr_or_init>, C<decr_or_init>, C<incr_with_version>,
C<decr_with_version> and C<cas_result> nothing, the C<_multi> forms one
such answer per item (in scalar context a hash of the defined ones), C<gat_multi>,
C<gats_multi> and C<flush_all> an empty hash. C<last_error> says why (C<set "k": this client
is read-only (readonly =E<gt> 1): nothing sent>). C<get>, C<gets>, C<get_multi>,
C<gets_multi>, C<meta_info> and the other methods work as usual. C<flush_all> is refused
too, where Cache::Memcached still sends it (its documentation: "Only get and get_multi will
work").

C<no_rehash> is the core's C<failover>: C<no_rehash =E<gt> 1> is C<fail-fast> (a dead
server's keys fail, Cache::Memcached's C<get_sock> returns no socket), C<no_rehash =E<gt> 0>
C<rehash> (they go to another server, Cache::Memcached's default loop), whatever the
preset. The C<cache-memcached> preset rehashes already and marks a server dead at its first
failure, as Cache::Memcached; under the default C<cache-memcached-fast> preset a server is
marked dead only with C<max_failures>, so C<no_rehash =E<gt> 0> moves its keys once it is.
Given with C<failover> it croaks (C<option failover given twice (as no_rehash and
failover)>), whatever the values.

=item pool_size, distribution

mcpool extensions: connections per server the client may open (the core's C<max_size>; the
preset's default), and any placement profile of the core by name (e.g.
C<libmemcached-ketama>). Given with C<ketama_points> above 0 it is refused (C<option
distribution given twice (as ketama_points and distribution)>): two placements, never one
silently overriding the other.

=item preset

The core preset applied first (default C<cache-memcached-fast>, none beside a
C<libmemcached_config>, which applies its own; e.g. C<cache-memcached>): its defaults,
placement and value layout. Every other option overrides it.

=back

=head2 The core's options

Any option of the core's table (C<Mcpool::option_names()> lists them,
C<Mcpool::option_doc($name)> gives each one's type, unit, default and meaning) is accepted by
its name, in any spelling the core reads (case ignored, C<-> for C<_>, white space around it
ignored: C<'IO-Timeout'> and C<" io_timeout"> are C<io_timeout>, with C<io_timeout>'s meaning;
two spellings of one option croak). A name is read as its characters, however Perl stores
them: C<"\x{a0}io_timeout"> (a no-break space) is C<io_timeout> whether or not it was
C<utf8::upgrade>d. The option is forwarded as it is, in the core's text forms: durations C<'250ms'>, C<'1.5s'>,
C<'2s'>, C<'500us'>; a bare number (C<2>, C<0.25>, C<'2'>) for a duration is B<seconds>, Perl's
convention, as for C<connect_timeout> and C<io_timeout> (which options are durations is the
core's answer, as in Python: C<{ io_timeout =E<gt> 10, operation_timeout =E<gt> 2 }> is 10 s and
2 s). Such seconds reach the core exact to the nanosecond (its resolution), and a positive
number is never 0 (which these options read as "none" or "the system's"): one below a
nanosecond is 1 ns, so the core takes or refuses it by its own rule (C<operation_timeout
=E<gt> 4e-7> is a 400 ns deadline, C<tcp_keepidle =E<gt> 4e-7> croaks as C<1e-6> does; before
2026-12-06 both were rounded to 0 µs: no deadline, the system's keepalive idle time); a
negative, NaN or infinite number croaks naming the option and the value. Booleans
C<1>/C<0>/C<'true'>/C<'false'>,
names. A new option added to the core reaches Perl with no change here. The TLS options need a
core built with TLS: C<Mcpool::tls_supported()> says whether this one was (README, "TLS in every
package"); C<Mcpool::library_version()> gives the core's version. C<libmemcached_config>
(a libmemcached configuration string, C<"--SERVER=10.0.0.1:11211/?2 --DISTRIBUTION=consistent">,
docs/options.md) names the servers itself: C<servers> may then be left out. It applies the
C<libmemcached> preset itself, so it is not given with C<preset> (the core refuses the two,
naming both). Its words are defaults, as a preset's: an option given beside it (C<io_timeout>, C<distribution>) keeps its
value (t/31-libmemcached-config-with-options.t). Those
Cache::Memcached::Fast users lack include:

    Mcpool->new({
        servers           => ['10.0.0.1:11211'],
        operation_timeout => '2s',        # bound on a whole call, retries included ('0': none)
        protocol          => 'meta',      # text (default), meta, binary
        failover          => 'rehash',    # fail-fast, rehash, eject: a dead server's keys
        failure_limit     => 3,           # (max_failures says the same in C::M::F's words)
        tls_ca_file       => '/etc/ssl/memcached-ca.pem',   # TLS, verified against this CA
                                          # file (required: no system roots); also
                                          # tls_client_cert, tls_client_key,
        tls_server_name   => 'cache.internal',              # tls_insecure_skip_verify
        sasl_username     => 'app',       # SASL PLAIN (binary protocol)
        sasl_password     => 'secret',
        sanitize_keys     => 1,           # URL-encode keys (any bytes become a valid key)
    });

Option values are text (UTF-8 to the core): a character string is sent as its UTF-8, a
byte string that is valid UTF-8 as it is, and any other byte string as Latin-1 characters,
so a C<use utf8> literal such as C<"p:ss w\x{f6}rd"> is the same password whether or not it
was C<utf8::upgrade>d. (The C<namespace> is the exception: its bytes as Perl holds them, as
Cache::Memcached::Fast sends it.)

Where a name is both Cache::Memcached::Fast's and the core's, Cache::Memcached::Fast's meaning
wins: C<connect_timeout>, C<io_timeout>, C<select_timeout> and C<failure_timeout> are
seconds (a number and a unit is the core's text form, read as the core reads it, in any case
and with white space: C<'250ms'>, C<'1.5S'>, C<' 2 s'>), C<max_size> is the largest value (the core's C<max_value_size>);
the pool's size is C<pool_size>. A bad value croaks naming the option, the value and the
accepted form (C<Mcpool-E<gt>new: protocol: option protocol: bad value "smoke": ...>); an
unknown name warns (C<Unknown arguments: ...>), as in Cache::Memcached::Fast, with the name
the core suggests (C<Unknown arguments: io_timout (did you mean io_timeout?)>), except an
unknown name that begins with C<tls>, C<ssl> or C<sasl> or has one of them as a word
(C<use_tls>, C<enable-ssl>; in any case), C<username>, C<password> (pylibmc's names) and
C<passwd>, another client's name of a TLS option (C<ca_file>, C<ssl_certfile>), and one within
two letters of a TLS or SASL option's name (C<tsl_ca_file>): these croak, even with C<< check_args => 'skip' >>, in the
core's words with the name it suggests (C<Mcpool-E<gt>new: unknown option "tls_cafile" (did
you mean tls_ca_file, tls?)>), since a misspelled TLS or SASL option would leave the client
talking plain text or without SASL (Cache::Memcached::Fast has no such options). C<resolver>
(Python's and C's hook that answers a server name's addresses) croaks: the core resolves names
on its own threads, which cannot run Perl code; give the servers by IP address (resolved
before C<new> or C<set_servers>) or by a name the system resolves.

Options are checked when the client is made, and a bad one croaks naming it (e.g.
C<Mcpool-E<gt>new: io_timeout must be a number between 0 and 1000000000 seconds (got
'abc')>): every numeric option (the timeouts, C<max_failures>, C<ketama_points>,
C<max_size>, C<pool_size>, C<compress_threshold>, C<compress_ratio> and server weights) must be
a finite number (a string that looks like one is fine) within its range, and none of them
may be negative except C<compress_threshold> (0 or less: no compression). C<namespace>,
C<distribution> and server addresses must be strings (or objects that overload C<"">), not
references. Where Cache::Memcached::Fast quietly reads C<"abc"> as 0 or a negative size as a
huge one, Mcpool refuses it.

=head2 fail_open and on_operation (docs/tracing.md)

C<< fail_open => 1 >> (a core option): a timeout or an unreachable server answers as a miss
(C<get> undef, C<get_multi> without the key) or as not done (C<set>, C<delete>, C<touch>
false; C<incr>/C<decr> false, as for a missing counter) instead of the error's undef, counted
in C<metrics> as C<fail_open_misses> and C<fail_open_not_stored>. Protocol violations, values
that do not decode and refused keys stay errors, and so do C<cas> and C<cas_result> (undef,
C<last_error> set): a C<cas> whose reply was lost may have been applied, and false would read
as "changed since C<gets>", so a retry loop applied its update twice.

C<< on_operation => sub { my ($op, $memd) = @_; ... } >>: called once per exchange with a server (a
multi-key call: once per server; and once for keys refused before any server was asked, a
bad key or value, with server undef) with a hash reference C<{ op, keys, hits, server (undef:
none), protocol, duration (seconds), duration_ns, outcome (hit, miss, stored, not_stored, ok,
error, failed_open), error_class, error (undef unless it failed), bytes_sent, bytes_received,
ended_ago (seconds since the exchange ended, C<now> being when the sub is called for this
record: it ran from C<now - ended_ago - duration> to C<now - ended_ago>, on the monotonic
clock) }>. The core queues the records during the call; the sub gets them when the method
returns, in order, each record's C<ended_ago> measured right before the sub is called with it
(a slow sub does not move the next records' exchanges), and the object is then an
C<Mcpool::Hooked>, a subclass of C<Mcpool>. What the method left in C<last_error>,
C<last_error_outcome_unknown>, C<last_item_error> and C<last_item_outcome_unknown> is put
back after the subs (C<on_operation> and C<on_server_event>), whatever calls they made. A sub
that dies is warned about and counted in C<< $memd->_state->{on_operation_errors} >>, never
propagated; more than 256 records in one method are dropped and reported as one
C<< { op => 'dropped', count => N } >>.

Both callbacks get the object itself as their second argument (C<< my ($op, $memd) = @_ >>),
so a callback that uses it need not refer to it. A callback that does refer to the object (a
closure over C<$memd>, or a method of an object that holds C<$memd>) makes a reference cycle,
and Perl frees neither: the object, its connections and the core's thread stay until the
process exits (about 80 kB and a connection per server for each one dropped). Use the
argument, or capture a weakened copy, as for any Perl callback kept by the object it refers
to:

    use Scalar::Util qw(weaken);
    my $weak;
    my $memd = Mcpool->new({ servers => [...], on_operation => sub {
        my ($op) = @_;
        return unless $weak;    # the object while it lives, undef once it is freed
        ...
    } });
    weaken($weak = $memd);

The same holds for C<on_server_event>.

=head1 METHODS

=over

=item set, add, replace ($key, $value, [$expiration_time])

=item append, prepend ($key, $value)

=item cas ($key, $cas, $value, [$expiration_time])

=item set_multi, add_multi, replace_multi, append_multi, prepend_multi, cas_multi ([$key, ...], ...)

Each is one pipelined call (per server, every command is written before any reply is read:
one round trip per server), each item with its own expiration time (C<cas_multi>: its own CAS
unique, C<[$key, $cas, $value, $expiration_time]>; C<append_multi> and C<prepend_multi>:
C<[$key, $value]>). The arguments are all checked (and serialized) before anything is sent,
so a bad one croaks with nothing stored. Results as Cache::Memcached::Fast's: per item 1
(stored), C<''> (not stored: C<add> of an existing key, C<replace>/C<append>/C<prepend> of a
missing one, C<cas> of a changed or deleted item) or C<undef> (an error). A C<$cas> of 0 (in
C<cas> or C<cas_multi>) is an error (C<undef>, C<last_error> naming C<cas>) and nothing is
sent: no item has CAS 0, and the binary protocol would take 0 for "no CAS" and store
unconditionally.

C<$cas> is read by its value, as C<incr>'s delta: an integer from 1 to 18446744073709551615 (as
C<gets> returns it), a string of decimal digits (read exactly), or a float that is exactly an
integer. Anything else (C<"709abc">, C<707.5>, C<" 711">, C<-1>, C<2**64>, C<undef>, a
reference) is refused before anything is sent: C<undef> (in C<cas_multi> for that item), with
C<last_error> C<cas "k": the CAS unique must be a decimal integer from 1 to
18446744073709551615 (as gets returns it), not '709abc'>, the item untouched.
Cache::Memcached::Fast converts such a token into another one (C<"709abc"> and C<709.5> into
709, C<-1> into 2**64-1), so a token the caller never had from C<gets> may store.

A CAS unique belongs to the server process that gave it: after a failover, a C<set_servers>
that moved the key or a server restart, C<gets> the key again before a C<cas>
(docs/failover.md). A timeout or an unreachable server is an error (C<undef>, C<last_error>
set), with C<fail_open> too, and the message of a timeout after the request was sent says
that whether it was applied is unknown: read back before repeating it.

=item cas_result ($key, $cas, $value, [$expiration_time])

mcpool extension (Cache::Memcached::Fast has none): C<cas> that says which "not stored" it
was. C<cas> answers C<''> both when the item changed since C<gets> and when it is gone (as
Cache::Memcached::Fast does, and so it stays), so a retry loop cannot tell "read it again and
retry" from "gone: C<add> it". C<cas_result> takes C<cas>'s arguments, checks them as C<cas>
does (the same reading of C<$cas>, the same serialization of C<$value>, the same expiration
times) and sends the same command, and returns:

=over

=item C<'stored'>

stored: the item's CAS unique was still C<$cas>;

=item C<'exists'>

not stored: someone changed the item since C<gets>: read it again and retry;

=item C<'not_found'>

not stored: the item is gone (deleted, expired, evicted, or never there);

=item C<'not_stored'>

not stored for a reason the server did not name (memcached answers every C<cas> with one of
the three above: this is a server or proxy that answers C<NOT_STORED> to it instead; as
Java's C<CasResult.NOT_STORED>, so no answer is reported as another);

=item nothing (C<undef> in scalar context)

an error, as for C<cas>: C<last_error> says why. A C<$cas> of 0 (C<cas "k": invalid cas: 0>)
or a token C<cas> refuses (C<cas "k": the CAS unique must be a decimal integer ...>),
a bad key or time, an unreachable server or a timeout (with C<fail_open> too, as C<cas>: a
C<cas> whose reply was lost may have been applied). C<last_error> names the command, C<cas>,
for its arguments and the server's answers, and the method, C<cas_result>, only where the
client itself refuses every call (read-only, no servers). An undef or reference key croaks (naming C<cas_result>), as for
C<cas>.

=back

The Java binding's C<casResult> (C<OK>, C<EXISTS>, C<NOT_FOUND>), the C ABI's C<MCPOOL_OK>,
C<MCPOOL_EXISTS>, C<MCPOOL_NOT_FOUND> and Python's C<True>, C<False>, C<None> are the same
answers. With C<readonly =E<gt> 1> it sends nothing and returns nothing (L</readonly, no_rehash>).

    while (1) {
        my $cv = $memd->gets('k');
        if (!$cv) { last if $memd->add('k', 1); next }
        my $r = $memd->cas_result('k', $cv->[0], $cv->[1] + 1) // die $memd->last_error;
        last if $r eq 'stored';
        next if $r eq 'exists' || $r eq 'not_found';    # read again (a gone item: add)
        die "cas_result: $r";
    }

=item set_multi_noreply ([$key, $value[, $expiration_time]], ...)

mcpool extension (Cache::Memcached::Fast has none): the fastest bulk load, the core's
C<set_multi_noreply>. On the text protocol every item is sent C<noreply>, without waiting
for its reply, then one round trip per server learns that every command was read; on meta
and binary it is C<set_multi>, every item answered. Items as C<set_multi>'s; the values are
stored as bytes, under the value format's flags for bytes (0; 4096 under C<whalin>, 2048
under C<spymemcached>), as C<set> stores a byte string (compressed by the same rule): a
string, a number under a format without integers (its text), C<undef>. A value the
value format stores under flags of its own (a reference, a character string with
C<utf8 =E<gt> 1>, an integer or boolean under C<mcpool>'s format) croaks, nothing sent:
store it with C<set_multi>. The batch has one expiration time: every item that gives one
gives the same (an item without one: 0); differing ones croak, nothing sent; a time the core
refuses (checked for the whole batch by the core's
C<mcpool_client_store_expiry_checked_multi>), or one item's time that is not a number or is
past 64 bits (C<'5m'>, NaN, C<1e30>), refuses the whole batch: nothing stored and nothing
returned, and every item's key deleted, in one batch of C<delete>s, as the core's
C<set_multi_noreply> does for such a time (L</BAD INPUT>).
C<last_error> is the first refused item's message, naming its time as given and saying in
the core's words that its key and the batch's other keys were deleted: C<set_multi_noreply
"k": invalid ttl: 2147483648 is above 2147483647, ...; nothing was stored and the key was
deleted, as memcached deletes it when it refuses a set, and so was the other key of this
batch refused for its ttl>.

What it returns depends on C<fail_open> (L</fail_open and on_operation (docs/tracing.md)>):

=over

=item without C<fail_open> (the default)

true (1) when every item was sent (on meta and binary: stored), and nothing (C<undef>)
when one failed, C<last_error> the first failure's message. An item refused before sending
(a bad or too long key, a value over C<max_size>) fails alone, the others sent; so do the
keys of a server marked dead, unreachable or timing out. On text memcached reports no
refusal of a C<noreply> store (a value too large for an item is not stored, and the call
still returns true): use C<set_multi> to learn each item's outcome.

=item with C<< fail_open =E<gt> 1 >>

1 says only that no item failed otherwise than by an outage: the items whose server was
down, unreachable, marked dead or timed out were B<not stored>, and the call still returns 1
with C<last_error> empty (the core's answer on purpose: under C<fail_open> an outage never
fails a request; docs/tracing.md). Each such item is counted in that server's
C<fail_open_not_stored> (L</metrics>), so C<< $memd->metrics->{$server}{fail_open_not_stored} >>
grows by the items lost; compare it before and after the call to learn how many, or use
C<set_multi>, which answers C<''> (not stored) for each of them. The other failures (a
refused key, a value over C<max_size>, on meta and binary a server's error reply) still
return nothing (C<undef>) with C<last_error>, as without C<fail_open>.

=back

An empty list returns true.

=item get ($key), gets ($key)

C<gets> returns C<[$cas, $value]>.

=item get_bytes ($key)

mcpool extension: in list context C<($bytes, $flags, $as_stored)>; in scalar context the
same three as an array reference, C<[$bytes, $flags, $as_stored]> (as C<gets> returns
C<[$cas, $value]>), so C<< my $r = $memd->get_bytes($k) >> is the value's reference, never
one of its numbers: C<< my ($bytes, $flags) = $memd->get_bytes($k) >> or
C<< $memd->get_bytes($k)->[0] >> (on a hit). Never thawed or decoded as text; nothing on a
miss or an error (an empty list, C<undef> in scalar context; C<last_error>);
C<$as_stored> is 1 for a value handed out as memcached holds it (below), else 0. A value the value format reads comes as the format delivers it
(inflated); one it cannot deliver (flags of another client's types, a compressed body that
does not inflate: where C<get> warns and returns nothing) comes as memcached holds it, its
flags as stored, compression bits included. One read, placed as C<get>'s (the core's
C<get_or_stored>). C<set_bytes> stores what it hands out back.

=item set_bytes ($key, $value, $flags, [$expiration_time])

mcpool extension: stores C<$value> as bytes under the caller's C<$flags>, C<get_bytes>'s
counterpart (the C ABI's C<mcpool_client_set>, Java's C<setBytes>): what C<get_bytes> hands
out, stored back, is the same value with the same flags, whatever its kind (a Python C<str>,
a Java C<Long>, a Storable image), none of it decoded on the way:

    if (my ($bytes, $flags) = $memd->get_bytes('k')) {
        $memd->set_bytes('copy', $bytes, $flags, 3600) // die $memd->last_error;
    }

One exception, the byte API's own: flags 0 under C<spymemcached> and C<whalin> are their
bytes kind, so a spymemcached String (flags 0) stored back is a C<byte[]> to spymemcached
(docs/value-format.md).

Answers as C<set>: true when stored, nothing (C<undef> in scalar context)
on an error, C<last_error> saying why (naming the command sent, C<set>). The key as for
C<set> (the namespace before it, the same key rules); C<$expiration_time> as for C<set>
(0 or omitted: never expires; a negative one expires the item at once; a refused one returns
nothing, C<last_error> naming it, and deletes the key, as C<set>: L</BAD INPUT>).

C<$value> is bytes, never serialized nor encoded: a byte string as it is, a character string
as its characters when each is below 256 (Latin-1), whatever C<utf8> says; a string with wider
characters croaks (C<Wide character>: encode it first, C<Encode::encode_utf8>), as C<undef> and
a reference (other than an object with overloaded C<"">) do, nothing stored. C<$flags> is an
integer from 0 to 4294967295 (2**32-1), by its value: C<7>, C<"7">, C<2**10>; C<undef>, a
negative number, a fraction, 2**32 or more, a string that is not decimal digits
(C<"4abc">, C<"1e3">) or a reference croaks naming the call, the key and the flags as given
(a dualvar by the number it is read by: C<set_bytes "k": flags must be an integer from 0 to
4294967295 (2**32-1), not '-1'> for C<dualvar(-1, '7')>), never wrapped or truncated into
other flags.

The core checks C<$flags> against the value format and the body against the kind they name:
flags the format cannot read back (under C<mcpool> application flags are 16 bits, a wider word
must be a kind's; under the other formats a word outside the format's table; the compression
bits are the core's), or a body the kind cannot hold (not decimal text under an integer's
flags, not UTF-8 under text's), are refused with the core's C<MCPOOL_VALUE_FORMAT> error:
nothing is stored (an older value stays), nothing returned, C<last_error> saying why. So a
value C<get_bytes> handed out as memcached holds it (C<$as_stored> 1) is refused where its
flags mean nothing in the format. Under a kind's flags the body is that kind's as
C<get_bytes> hands it out (an integer's decimal text, a boolean's C<0>/C<1>), and the core
writes the format's wire form (Whalin's binary integers); values at or above the
compression threshold are compressed, as by C<set>. Under C<libmemcached> every 32 bits
are the caller's, stored and read back as given (docs/value-format.md).

=item get_multi (@keys), gets_multi (@keys)

One round trip per server (the core writes every server's batch before reading any). Each
value is read from the connection straight into the buffer of the scalar returned (no
intermediate copy); a single key takes the single-key read. A key asked twice appears once.

=item gat ($expiration_time, $key), gats ($expiration_time, $key)

=item gat_multi ($expiration_time, @keys), gats_multi ($expiration_time, @keys)

=item incr, decr ($key, [$delta]), incr_multi, decr_multi (@keys or [$key, $delta], ...)

C<$delta> (default 1; undef is 1) is an integer from 0 to 18446744073709551615, read by the
number Perl holds, exactly: a scalar that holds a number is read by that number, whatever its
string says, as Cache::Memcached::Fast reads it: an integer (C<5>, the UV
C<18446744073709551615>), a float that is exactly an integer (C<1e3>, C<4.0>, C<2**62>,
C<2**63>, C<1e19>: never by the text Perl prints for it, C<9.22337203685478e+18> for
C<2**63>), a dualvar by its number (C<Scalar::Util::dualvar(3, "7")> is 3, and so is
C<dualvar(3, "x")>), a string already used as a number by the number Perl made of it. Only a
scalar that holds no number (a plain string) is read by its text, which must be decimal
digits, read exactly (C<"5">, C<"18446744073709551615">, all 20 digits, also after it was used
as a number: Perl keeps a float that rounds it private). C<set_counter> takes its value the
same way, and the C<_with_version> calls their C<$delta> and C<$version>, C<cas> its C<$cas>
and C<set_bytes> its C<$flags>. Anything else (a negative number, C<1.5>, NaN, infinity, the
strings C<"abc">, C<"1e3">, C<" 7">, a float of 2**64 or more, a reference) is refused before
anything is sent: C<undef>, C<last_error> C<incr "k": the delta must be a
decimal integer from 0 to 18446744073709551615 ...>, the counter untouched; in
C<incr_multi>/C<decr_multi> that item alone (C<undef>, not sent).

B<2**64-1 must be written as the integer literal C<18446744073709551615>> (a UV) or the
string C<"18446744073709551615">: Perl computes C<2**64-1> (C<2**64> is already a float)
as a floating-point number, and a double has no 2**64-1: it is 2**64
(C<18446744073709551616>), which is out of range and refused, never wrapped to 0 nor
clamped to 2**64-1. (On a perl whose floats are long doubles, C<2**64-1> is exact and taken.)

Cache::Memcached::Fast converts a delta it cannot take into another one (-1 into 2**64-1,
so C<incr> by -1 decrements; a float of 2**64 or more, C<2**64-1> computed as above and
infinity into 2**64-1, so C<incr> by C<2**64> decrements by one; C<"abc"> into 0; 1.5 into
1), a different change given as if right; every other mcpool surface refuses them. An exact
integer held as a float below 2**64 it reads as that integer, as mcpool does (C<incr> of 10
by C<2**63>: 9223372036854775818 from both). For a negative delta use the other command.

C<incr_multi>/C<decr_multi> answer each key as C<incr>/C<decr> would: the new value, C<"">
for a missing key, C<undef> for a key whose value is not a number, on every protocol; the
keys after a non-numeric one get their own answers (Cache::Memcached::Fast's
C<close_on_error> gives C<undef> for those, though memcached applied them).

=item incr_or_init, decr_or_init ($key, [$delta, [$initial, [$expiration_time]]])

mcpool extension (the core's C<incr_or_init>, Python's C<incr_or_init(key, delta=1,
initial=0, time=0)>, Java's C<incrOrInit>, Whalin's C<addOrIncr>): C<incr> (C<decr>) by
C<$delta>, or, when C<$key> is missing, creates the counter with C<$initial> (stored as
C<set_counter> stores it), expiring after C<$expiration_time>. Returns the counter's new value
(C<$initial> when it was created; 0 as C<"0E0">, as C<incr>), or nothing (C<undef>) on an
error, C<last_error> saying why (a value that is not a number: the server's error); a miss
is never an answer. One round trip where the protocol creates counters (meta, binary), C<incr>,
C<add>, C<incr> on text; two callers creating the counter at once both count, on every
protocol. The time applies only when the counter is created (a later call keeps it).

C<$delta> (default 1; undef is 1) is read as C<incr>'s, C<$initial> (default 0; undef is 0)
as C<set_counter>'s value, C<$expiration_time> (default 0, never expires) as C<set>'s. A bad
one is refused before anything is sent: C<undef>, C<last_error> naming the call, the key and
the argument as given (C<incr_or_init "k": the initial value must be a decimal integer from 0
to 18446744073709551615 ...>), nothing created.

=item set_counter ($key, $value, [$expiration_time])

Stores C<$value> as a counter for C<incr>/C<decr>: memcached's decimal text with raw flags 0,
never compressed, whatever the value format (the core's C<set_counter>, Whalin's
C<storeCounter>). memcached's counters are unsigned 64-bit: C<$value> must be an integer
from 0 to 18446744073709551615, read by its value as C<incr> reads its delta (an integer, a
float that is exactly an integer such as C<2**63>, a dualvar by its number, a string of
decimal digits, an object by its string). C<18446744073709551615> (the integer literal, a UV, or that string) is stored
and C<incr> then wraps to 0, as memcached does; C<2**64-1> is a float equal to 2**64 (see
L</incr, decr ($key, [$delta]), incr_multi, decr_multi (@keys or [$key, $delta], ...)>) and
croaks. Anything else (a negative number, which no C<incr> could count on, C<1.5>, C<"1e3">,
undef, a float of 2**64 or more) croaks, naming the call, the key and the value as given, as
C<incr> names a refused delta (a dualvar by the number it is read by: C<set_counter "k": the
value must be a decimal integer from 0 to 18446744073709551615 (memcached's counters are
unsigned 64-bit), not '-1'> for C<dualvar(-1, '7')>). True when stored.

=item delete ($key) (alias remove), delete_multi (@keys or [$key, $delay], ...)

C<delete_multi> is one pipelined call, as C<set_multi>. A non-zero C<$delay> is ignored with
a warning, as in Cache::Memcached::Fast.

=item touch ($key, [$expiration_time]), touch_multi ([$key, $expiration_time], ...)

=item flush_all ([$delay])

Returns C<{ 'host:port' =E<gt> 1 }> for every server flushed and C<undef> for each that
failed (Cache::Memcached::Fast leaves a server it could not reach out); C<last_error> is the
first failure's message. The same delay is given to every server.

=item server_versions

C<{ 'host:port' =E<gt> '1.6.21', ... }> for the servers that answered.

=item noop

mcpool extension (Cache::Memcached::Fast has none): a no-op round trip to every server (meta
C<mn>, binary NOOP, text C<version> with its answer dropped; the core's C<noop>). Returns
C<{ 'host:port' =E<gt> 1 }> for every server that answered and C<undef> for each that failed,
as C<flush_all>; C<last_error> is the first failure's message.

=item stats ([$group])

mcpool extension (Cache::Memcached::Fast has no C<stats>; Cache::Memcached's C<stats> sums
its own selection of groups): every server's statistics, as the other surfaces' C<stats(group)>
(the core's): C<{ 'host:port' =E<gt> { pid =E<gt> '1234', curr_items =E<gt> '7', ... } }>.
C<$group> undef (or left out) asks for the general ones, otherwise a group such as C<'items'>,
C<'slabs'>, C<'settings'>. A server that failed maps to C<undef> (as in C<flush_all>), and
C<last_error> is the first failure's message. A group memcached's protocol cannot carry (empty,
a space or a control byte) croaks, nothing sent; so does a reference.

=item disconnect_all

Closes every connection, as Cache::Memcached::Fast's does: idle ones now, one in use (by
another thread of the pool's) when its call gives it back; the next command opens a new one
(the core's C<mcpool_client_disconnect_all>). Nothing else changes: the metrics keep
counting from where they were, and a server marked dead stays dead until its
C<failure_timeout> ends.

=item close

Closes the client, for a program shutting down (the core's C<mcpool_client_close>): idle
connections close now, one in use when its call gives it back, and no new one is opened;
every later command fails as on any failure (it returns C<undef>; C<last_error> says the
client is closed), nothing sent; a batch of no keys, which sends nothing, answers as an empty
batch always does. Idempotent. The object itself
goes when its last reference does, as before. Cache::Memcached::Fast has no C<close>: use
C<disconnect_all> to close the connections and keep using the client.

=item namespace ([$new]), enable_compress ($bool)

A reference (other than an object that overloads C<"">) as the new namespace croaks.

C<enable_compress> is Cache::Memcached::Fast's: compression is on while C<compress_threshold>
is positive, and C<enable_compress> flips its sign. So with the default -1,
C<enable_compress(1)> compresses every value of 1 byte or more; with C<-N>, those of N bytes
or more; C<enable_compress(0)> after a positive N stops compressing until
C<enable_compress(1)> turns N on again; a C<compress_threshold> of 0 never compresses. Under
the C<cache-memcached> preset without C<compress_threshold> it changes nothing (as
Cache::Memcached's, whose threshold is then undef). Where the core's own options decide
(C<compression> or C<compression_threshold> given by name, another preset, or
C<libmemcached_config>), it switches
the core's C<compression> on or off, at the threshold they set. Either way the client
switches in place (the core's C<mcpool_client_set_compression>): its connections, the
servers' health (a server marked dead stays so) and the metrics are kept. Returns nothing.

=item server_for ($key)

mcpool extension: the C<host:port> of the server the key lives on, without any I/O.

=item last_item_error ($index)

mcpool extension: after a C<_multi> call that stores, deletes or touches (C<set_multi>,
C<add_multi>, C<delete_multi>, ...), the message of item C<$index> (0-based, in the order
given) when that item failed, else C<undef>: C<last_error> holds only the first failed
item's message. Called as C<Mcpool::last_item_error($i)>; per thread, replaced by the next
batch call (not by one an C<on_operation> or C<on_server_event> sub makes: after a method
returns, the answers are its own). An item this binding refused before anything was sent (a
bad expiration time or CAS unique) goes to the core as a value the core refuses for it alone
(a CAS of 0, an expiration time of 4294967295), and its C<last_item_error> is the core's
message about that value; C<last_error> names the first such refusal as the caller gave it (tester finding
retest24 3), followed by what the batch did about its key (a C<set_multi> item refused for
its time has its key deleted by the batch: C<...; nothing was stored and the key was
deleted, ...>).

=item last_item_outcome_unknown ($index)

mcpool extension: C<last_error_outcome_unknown> for item C<$index> of the last C<_multi>
call (the item C<last_item_error> names): true when that write failed after its request was
sent (its message says "whether it was applied is unknown"); false when it did not fail,
failed otherwise, or C<$index> is past the items. Called as
C<Mcpool::last_item_outcome_unknown($i)>; replaced as C<last_item_error> is.

=item last_error_outcome_unknown

mcpool extension: true when C<last_error> is of a write whose request was sent and whose
outcome is unknown: it timed out waiting for the reply, or the connection was closed or reset
after sending (the message says "whether it was applied is unknown"; the core's answer,
C<mcpool_last_error_outcome_unknown>). Read the key back before repeating the write: an
C<incr> or C<append> repeated blindly may be applied twice. False for an error before
anything was sent (a refused connect, a bad key, a refusal of this binding's), for one the
server answered, for a read, and when C<last_error> is empty. Called as
C<Mcpool::last_error_outcome_unknown()> or C<< $memd->last_error_outcome_unknown >>; the rule
of C<last_error>: after a call, it is that call's (kept through the calls of C<on_operation>
and C<on_server_event> callbacks and the methods that cannot fail).

=item last_error

mcpool extension (Cache::Memcached::Fast has none: it only warns or returns nothing). Called
as C<Mcpool::last_error()> or C<< $memd->last_error >>; it is per thread, not per object.
The rule: B<after a call, C<last_error> is that call's failure or the empty string>. Every
method that can fail (the commands, C<new>, C<namespace($new)>, C<enable_compress>,
C<set_servers>, C<flush_all>, C<noop>, C<server_versions>, C<stats>, C<disconnect_all>,
C<close>) empties it when it
starts; when it returns, it holds a message only if that call failed: it returned nothing
(C<undef>), or a C<_multi> call returned C<undef> for some item (then the first failed
item's message), or it croaked: then the croak's message, as C<$@> has it without the
C<" at FILE line N."> Perl adds, whatever refused (the binding's own checks of its
arguments, C<Mcpool::get: the key is undef>, C<set_counter "k": the value must be a decimal
integer ...>, C<Mcpool-E<gt>new: compress_ratio must be ...>; the argument count, C<Usage:
Mcpool::get(m, key)>; a client destroyed or not an C<Mcpool>; or the core). A die of the
caller's own code run during the call (the freeze method of C<serialize_methods>, a key's
overloaded C<"">, a tied argument's C<FETCH>, a signal handler) is not a failure of the
method's: it goes through as it is, and C<last_error> does not hold it (a thaw that dies is
a value that cannot be read: below). The message names the command, the key, the server and the
OS error (C<get "user:1": I/O error talking to 10.0.0.1:11211: Connection refused (os error
111)>); that of a value that cannot be read (L</value_format>, L</SECURITY: Storable>) names
the key and its flags but no server (the core's message for it has none; C<server_for>
gives the key's server), and no Perl file or line. A miss, C<''> for not stored and the like are answers, not failures: empty. Steps
the module takes on its own (asking the value format what it stores, an integer stored as
its text under a format without integers) never show; nor do the calls an C<on_operation>
or C<on_server_event> callback makes (the method's message is put back after them). The
methods that cannot fail leave it as it is, so they may be called between a call and the
look at C<last_error>: C<last_error> itself, C<last_error_outcome_unknown>,
C<last_item_error>, C<last_item_outcome_unknown>, C<server_labels>,
C<server_for>, C<metrics>, C<metrics_prometheus>,
C<server_states>, C<server_events>, C<value_format>, C<namespace> without an argument, C<option_names>,
C<option_doc>, C<library_version>, C<tls_supported>, C<expiry_from_now>. They leave it as it
is when they croak too (C<server_for> of an undef key, C<expiry_from_now> of C<'abc'>: the
croak alone says why).

=item metrics

mcpool extension: a snapshot of every server's counters and gauges, without I/O:
C<{ 'host:port' =E<gt> { operations =E<gt> ..., hits, misses, connects, connect_errors,
timeouts, io_errors, server_errors, protocol_errors, pool_waits, pool_wait_ns, pool_timeouts,
ejections, returns, handed_over, pool_open, pool_idle, returns_flushed, stale_deleted,
away_overflows, fail_open_misses, fail_open_not_stored, failovers, cleanups_refused, ... } }> (the names are the
core's, docs/metrics.md has each one's meaning; a newer core's appear by themselves). An
address listed twice (a double share) is one server, its entries' counters and connections
summed by the core (docs/metrics.md).

=item metrics_prometheus

mcpool extension: the same snapshot as a string in the Prometheus text exposition format
(version 0.0.4: C<mcpool_E<lt>metricE<gt>_total{server="host:port"}> for counters,
docs/metrics.md), without I/O: what an exporter's C</metrics> page serves.

=item server_states

mcpool extension: C<[ { server =E<gt> 'host:port', alive =E<gt> 1, failures =E<gt> 0,
retry_in_ms =E<gt> 0 }, ... ]> in configuration order, without I/O: whether calls may go to
each server now, its consecutive failures, and while it is marked dead the milliseconds until
it is retried. One entry per address, where it first appears in the list: the entries of an
address listed twice are merged by the core (dead while either is, the most failures, the
longest wait; docs/metrics.md).

=item on_server_event (constructor argument)

mcpool extension: C<on_server_event =E<gt> sub { my ($ev, $memd) = @_; ... }> is called with each
server event (the hashes C<server_events> returns) on the thread that uses the object, right
after the method call during which the event was queued, never inside the core's call or on
one of its threads (the core queues each event in C; the call's wrapper hands them over).
A callback that dies is warned about; the method's answer stands. Events of the pool's own
background work (connections it opens) come after the next call. C<server_events> then
returns only what the callback has not been given yet.

=item server_events

mcpool extension: the server events since the last call, oldest first, and the queue emptied:
C<{ kind =E<gt> 'down', server =E<gt> 'host:port', failures =E<gt> 2, retry_in_ms =E<gt> 1000 }>
(marked dead) and C<{ kind =E<gt> 'up', server =E<gt> ... }> (answering again). The core's
event callback queues them (it runs inside the core's call, where no Perl code may run); at
most 64 are kept, and older ones are reported as one C<{ kind =E<gt> 'dropped', count =E<gt> N }>
first.

=item get_lease ($key, [$vivify_ttl, [$recache_below]])

mcpool extension (meta protocol only: C<protocol =E<gt> 'meta'>; otherwise nothing is returned
and C<last_error> says why): in list context C<($state, $value, $cas)>, in scalar context
the same three as an array reference, C<[$state, $value, $cas]> (as C<gets> returns
C<[$cas, $value]>; never one of the three alone); nothing on an error (an empty list,
C<undef> in scalar context). C<$state> is one of C<'hit'> (a fresh
value), C<'recompute'> (this caller alone should recompute and C<set> it; C<$value> is the
stale value or undef) and C<'wait'> (another caller is recomputing; C<$value> is the stale
value or undef). C<$cas> is the CAS unique of the item returned (the value or the stale
value), and C<undef> when there is none (a miss, as the C<'recompute'> of a new key: no item
is returned, and no item has CAS 0, which C<cas> refuses), as Python's C<None>. A miss creates the key empty for C<$vivify_ttl> seconds (30 when omitted
or undef, as in Python: the C header's C<MCPOOL_LEASE_DEFAULT_VIVIFY_TTL>); with
C<$recache_below> (0 when omitted or undef: never early) above 0 a hit with fewer seconds left also hands out C<'recompute'>, once.
Both are durations, 0 to 2592000 seconds (30 days, the core's rule): a longer one, which
memcached would read as a unix time long past (the election gone at once), or a negative one
returns nothing, C<last_error> naming it as given (C<get_lease "k": invalid vivify_ttl:
2592001 is above 2592000 (30 days): a vivify_ttl is a duration, ...>).
That placeholder is a miss for this client's plain reads (C<get>, C<gets>, C<get_multi>: the
core reads memcached's flag on it); C<add> fails until the winner's C<set> replaces it, and a
text or binary protocol client reads it as an empty value. A stale value may be empty
(C<''>, not undef). memcached flags a stored item as a placeholder once a lease with
C<$recache_below> took its token: an empty value stored as bytes (flags 0) is then taken for
one (a miss) until it is set again, while an empty character string stored with
C<utf8 =E<gt> 1> (flags of its own) stays a value (docs/protocols.md, "Leases").

=item invalidate ($key, [$stale_ttl])

mcpool extension (meta protocol only): marks the key stale for C<$stale_ttl> seconds (30 when
omitted or undef, as in Python: C<MCPOOL_LEASE_DEFAULT_STALE_TTL>) instead of deleting it, so C<get_lease> readers keep the old value while one recomputes. True, false
when the key did not exist, nothing on an error. Plain reads still return the old value.
C<$stale_ttl> is a duration, 0 to 2592000 seconds (30 days), as C<get_lease>'s times: a
longer or a negative one returns nothing, C<last_error> naming it, and the key is left as it
is.
memcached gives the recompute token to the first read of the stale item, whatever it asks:
C<get>, C<get_multi> and C<gat> hand it back (one more round trip), so the next C<get_lease>
still answers C<'recompute'>; C<gets>, C<gets_multi>, C<gats> and C<meta_info>, which return
a CAS, keep it (handing it back would change that CAS), and C<get_lease> then answers
C<'wait'> until the key is set again or C<$stale_ttl> runs out (docs/protocols.md, "Plain
reads of an invalidated item").

=item set_with_version ($key, $value, $version[, $expiration_time])

mcpool extension (meta protocol, memcached 1.6.27 or later): C<set> that gives the item the
CAS version C<$version> (meta C<E> flag), for writers that keep several pools consistent.
True when stored; nothing on an error, e.g. from an older server (C<last_error> names the
version it reports; nothing was stored). C<$version> is read as C<delete_with_version>'s: an
integer from 0 to 2**64-1 by its value, anything else croaks (a negative one or a fraction
was converted: -1 sent as 2**64-1, 2.5 as 2); 0 then returns nothing with C<last_error>
(memcached never gives an item CAS 0, as for C<cas>; on every C<_with_version> call).

=item delete_with_version ($key, $version)

mcpool extension (meta protocol, memcached 1.6.27 or later): C<delete> with the explicit CAS
version C<$version> (meta C<E> flag). True when the key existed, false when it did not,
nothing on an error, e.g. from an older server (C<last_error> names the version it reports;
nothing was deleted).

=item incr_with_version ($key, $delta, $version), decr_with_version ($key, $delta, $version)

mcpool extension (meta protocol, memcached 1.6.27 or later): C<incr> / C<decr> that give the
counter the CAS version C<$version>. The new value (C<"0E0"> for zero, as C<incr>), false for
a missing key, nothing on an error (as C<delete_with_version>). C<$delta> is read as
C<incr>'s: an integer from 0 to 2**64-1 by its value (undef is 1), anything else returns
nothing with C<last_error> naming it, nothing sent. C<$version> is an integer from 0 to
2**64-1 read the same way (a float that is exactly an integer, such as C<2**63>, is taken; a
string of decimal digits is read exactly); anything else (a negative number, a fraction, a
float of 2**64 or more, undef) croaks, as it does for C<delete_with_version> and
C<set_with_version>, naming the call, the key and the version as given (a dualvar by the
number it is read by): C<delete_with_version "k": the version must be an integer from 0 to
2**64-1, not '-1'>.

=item meta_info ($key)

mcpool extension (meta protocol only): the item's metadata without its value, as a hash
reference C<{ hit_before =E<gt> 0|1, last_access =E<gt> seconds, ttl =E<gt> seconds or undef
(never expires), cas, size, flags }>; undef for a miss; nothing on an error. The request is
not an access (memcached's C<u> flag): it changes neither C<hit_before> nor C<last_access>.
Of an invalidated key it does take the recompute token, as every read that returns a CAS
does (see C<invalidate>).

=item Mcpool::option_names (), Mcpool::option_doc ($name)

The core's options (see L</The core's options>). C<option_doc> takes a name in any spelling
C<new> takes (C<'IO-Timeout'>), by the core's rule (C<mcpool_option_find>); undef for a name
that is no option.

=item Mcpool::expiry_from_now ($seconds)

mcpool extension: a duration (seconds from now, such as CHI's C<expires_in>) as the
expiration time to pass to C<set> and the other commands, by the core's rule
(C<mcpool_expiry_moment_from_now>): up to 30 days the seconds as they are; above, the unix time they
end at, since memcached reads an expiration time above 30 days as a unix time (the seconds
themselves would be a moment in 1970: the item would expire at once while C<set> returns
true); 0 or less expires the item at once (never 0, which is "never expires"); a fraction
rounds up (the core's rule for fractions: C<0.4> is 1 second). A moment after
2038 makes the command fail (memcached cannot hold it), never a shorter expiry; the number
answered is the moment asked, never cut to 32 bits, so the failure names it. A duration whose
moment is beyond 2**63-1 (C<2**63> seconds and more, C<1e30>, C<'99999999999999999999'>: no
number can answer it) croaks, in the core's words for such a time, naming the duration as
given (as Perl prints it), never answered as another number (it was 9223372036854775807):
C<expiry_from_now: invalid duration: 1e+30 is too long: from now it ends after
9223372036854775807, the latest unix time an expiry can name>, as Python's C<expiry_from_now>. So do NaN and infinity (C<expiry_from_now:
invalid duration: Inf is not a finite number of seconds>) and a string that is not a number
(C<expiry_from_now: invalid duration: "abc" is not a number of seconds>), and C<undef>
(C<expiry_from_now: invalid duration: undef is not a number of seconds>: never read as 0,
which would be "expired at once"). No I/O.

=item set_servers (\@servers)

As Cache::Memcached's: replaces the server list at run time (entries as in C<servers>:
C<'host:port'>, C<[$addr, $weight]> or C<{ address =E<gt> $addr, weight =E<gt> $w }>). The
core's C<mcpool_client_set_servers>: atomic (calls already running finish on the old list),
servers still present keep their connections, health and metrics, removed ones close theirs
once no call uses them. A bad list croaks naming the entry, and the old list stays. Returns 1.

=item server_labels

mcpool extension: the configured servers, in order.

=item value_format ()

mcpool extension (Python's C<Client.value_format>): the name of the value format the client
was built with, as the core has it in force (the names of L</value_format>:
C<'cache-memcached-fast'>, C<'mcpool'>, C<'pylibmc'>, ...), whichever option set it: the
C<value_format> option in any spelling (C<'MCPOOL'> is C<'mcpool'>), a C<preset>, a
C<libmemcached_config>, or the default C<'cache-memcached-fast'>. No I/O; it cannot fail, and
leaves C<last_error> as it is. A client made without servers (L</servers>) has no core
client, and answers C<undef>.

=back

=head1 ERRORS

What each call returns is decided by the core's status classes (C<mcpool_status_class>, the
one map in F<docs/errors.md>): true for OK, false (C<"">) for a miss, not stored or exists,
nothing (C<undef>) for the error classes (client error, server error, timeout, connection,
configuration); C<last_error> has the message, until the next call that can fail (see
L</last_error>). C<cas_result> names the answer instead of true or false (C<'stored'>,
C<'exists'>, C<'not_found'>; errors as above: L</cas_result ($key, $cas, $value,
[$expiration_time])>).

=head1 BAD INPUT

An undef key croaks (C<Mcpool::get: the key is undef>); so does a reference used as a key
(C<Mcpool::set: the key must be a string, not a reference (ARRAY)>): Cache::Memcached::Fast
stores under C<"ARRAY(0x...)"> instead, which is never what was meant. An array reference of
two elements is Cache::Memcached's C<[$hash, $key]> form, whose C<$hash> picks the server;
mcpool places every key by the hash of the key itself (the core's placement: no call takes a
caller's hash), so it cannot honour the form, also with C<preset =E<gt> 'cache-memcached'>, and
the croak says so (C<Mcpool::set: the key is an array reference of two elements,
Cache::Memcached's [$hash, $key] form, ...: pass the key ($key) instead ...>). Pass the key
itself; its server may then differ from the one Cache::Memcached picks for
C<[$hash, $key]>, so such keys written by Cache::Memcached may be missed until rewritten. A
key longer than 250
bytes (with the namespace), empty without a namespace (under one, the empty key is the
namespace itself, as in Cache::Memcached::Fast), or, on the text protocol (the default), with
spaces or control characters is refused by the core before anything is sent, and the command
returns nothing (C<undef>), as Cache::Memcached::Fast does for a key with a space or a
newline (a key with a tab, another control byte or DEL it sends, and memcached stores:
L</Differences from Cache::Memcached::Fast>); C<last_error> says why. The meta protocol carries such a key base64-encoded and the binary protocol as it is
(docs/keys.md), so those store it. A C<_multi> argument that is not an array
reference croaks (C<Not an array reference>), as in Cache::Memcached::Fast.

An expiration time (of every method that takes one, C<flush_all>'s delay included) is 0 to
2**31-1 seconds, a number (a string that is not one, such as C<'5m'>, is refused, never read
as 5 seconds). C<get_lease>'s and C<invalidate>'s times (C<$vivify_ttl>, C<$recache_below>,
C<$stale_ttl>) are durations, 0 to 2592000 seconds (30 days): memcached would read a longer
one as a unix time long past, and the lease or the stale value would be gone at once. memcached reads an expiration time above 2**31-1 as
negative, so the item would expire at once while the store answers true: the core refuses it
before the command is sent, and the command returns nothing with C<last_error> saying why (an
empty list in list context and C<undef> in scalar context, as for a bad key, a bad CAS or a
server that is down, and as Cache::Memcached::Fast; in a C<_multi> call C<undef> for that
item). So does every method that takes a time (C<set>, C<set_bytes>, C<add>,
C<replace>, C<cas>, C<cas_result>, C<touch>, C<gat>, C<gats>, C<set_counter>,
C<incr_or_init>, C<decr_or_init>, C<set_with_version>, C<get_lease>, C<invalidate>,
C<set_multi_noreply>, the C<_multi> forms per item): C<< my @r = $memd->set($k, $v, '5m') >>
is empty, never C<(undef)>.

A set so refused (C<set>, C<set_bytes>, C<set_counter>, C<set_with_version>, an item of
C<set_multi>, every item of a C<set_multi_noreply>) stores nothing and B<deletes the key>,
as a set refused as too large does, and C<last_error> says so (C<set "k": invalid ttl: 4294967296 is
above 2147483647, the largest expiry memcached can honour; nothing was stored and the key was
deleted, as memcached deletes it when it refuses a set>). The rule is the core's (for the
times this binding checks before the store, C<mcpool_client_store_expiry_checked>: the
delete is a round trip of its own; for a C<set_multi_noreply>,
C<mcpool_client_store_expiry_checked_multi>: one batch of deletes for all its keys, each
message adding C<and so was the other key of this batch refused for its ttl>), for a time that is not a number too: Cache::Memcached::Fast
sends such a set, which memcached stores already expired (or for a wrapped time), and reads a
time string by its leading number (C<'1 hour'> is 1 second) and stores the value, so after
it no older value is left to read, and none is after mcpool's refusal either. The other
stores (C<add>, C<replace>, C<cas>, C<cas_result>, C<append>, C<prepend> and their
C<_multi> forms) and C<touch>, C<gat>, C<gats>, C<incr_or_init>, C<decr_or_init>,
C<get_lease> and C<invalidate> leave the old value as it is; so does C<flush_all>, which
croaks.

A negative time expires
the key at once, as with Cache::Memcached::Fast (memcached's own reading of it), and a
negative C<flush_all> delay flushes now, as there (the core's rules for signed times). A
fractional time (C<0.4>, C<"1.7">) goes through the core's rule for fractions
(C<mcpool_whole_seconds>): a positive fraction rounds up to whole seconds, so C<0.4> keeps the
item 1 second, never 0, which memcached reads as "never expires" (Cache::Memcached::Fast
sends C<0.4> as 0 and keeps it forever); a negative one stays negative. A refused time is
named in C<last_error> as given (as Perl prints it), not as the whole seconds it was rounded
to: C<2147483647.5> and C<'2147483647.5'> as C<2147483647.5> (C<replace "k": invalid ttl:
2147483647.5 is above 2147483647, ...>), never the 2147483648 they round up to, C<'3e9'> as
C<3e9>. NaN and infinity
(C<9**9**9>, C<-9**9**9>, C<'nan'>, C<'inf'>) are refused as a string that is not a number
is, named as given (C<add "k": invalid ttl: NaN is not a finite number of seconds>;
C<get_lease> names C<vivify_ttl> or C<recache_below>, C<invalidate> C<stale_ttl>,
C<flush_all> croaks with C<flush_all: invalid delay: Inf ...>, C<expiry_from_now> with
C<invalid duration>, for a string that is not a number too: C<expiry_from_now: invalid
duration: "abc" is not a number of seconds>, and for a duration whose moment is past 2**63-1,
C<expiry_from_now: invalid duration: 1e+30 is too long: ...>); so is a time past 64
bits, once named 9223372036854775807:
C<< $memd->set('k', 'v', 1e30) >> (C<1e30>, which Perl prints as C<1e+30>, the text named)
leaves in C<last_error> exactly C<set "k": invalid ttl: 1e+30 is above 2147483647, the
largest expiry memcached can honour; nothing was stored and the key was deleted, as
memcached deletes it when it refuses a set>.

=head1 FORK AND THREADS

After C<fork>, parent and child may both keep using the same object: the core notices the
fork and the child opens its own connections on first use; the parent's sockets are never
used by the child. A child that closes its inherited descriptors (C<POSIX::close> in a loop,
L<Proc::Daemon>) and reuses the numbers keeps its own files and clients: an inherited socket
is closed only while its number still names it. Close them before the child's first call,
or call C<disconnect_all> first: sockets the child opened are its client's, and closing them
behind its back breaks it as it breaks any library that holds sockets (the client never
closes a number that no longer names its own socket, but a call made meanwhile may write its
request into whatever took the number).

A call whose process forks while it runs fails in the child with the core's
C<MCPOOL_FORKED> (docs/errors.md). No Perl code of yours runs inside a call to the core
(the freeze method runs before it, the thaw after the reply is read, C<on_operation> and
C<on_server_event> after the method's call, a signal's handler once the core has returned),
so a C<fork> in Perl comes between calls and no method of this module meets it in practice.
Should C code fork during a call all the same (a C signal handler of another module's), the
child's keys not yet read fail as any error does, never as misses: nothing (C<undef>; that
item C<undef> in a C<_multi> call; the key absent from C<get_multi>'s hash), with
C<last_error> C<get "k": the process forked during this call (a callback called fork()): the
child does not use the parent's connections, and this key was not answered here>. The
parent's call goes on undisturbed, and the child's next calls open connections of their own.

Perl ithreads: an Mcpool object is not cloned into a new thread (there it
is an unblessed reference to C<undef>, so a method call dies C<Can't call method "get" on
unblessed reference>; a subclass that asks to be cloned gets a copy without a client, which
croaks C<this client has been destroyed>; a copy made by C<threads::shared::shared_clone>
croaks C<not an Mcpool object>): create a client in each thread. L<CHI::Driver::Mcpool>
does that for its drivers: each gets a client of its own in a new thread.
This differs from Cache::Memcached::Fast, which gives each new thread a copy of the object
(a new client from the same constructor arguments): its own F<t/threads.t>, which uses the
parent's client in each thread, does not pass here.

=head1 TAINT MODE

Under C<perl -T>, values read from memcached come back untainted, as Cache::Memcached::Fast
returns them; Cache::Memcached taints them. A program moving from Cache::Memcached that
relies on taint checks for cached data must untaint-check it itself (or treat the cache as
trusted). Server addresses, namespaces and keys taken from tainted data (C<%ENV>) are
accepted, as by Cache::Memcached::Fast.

=head1 SIGNALS

The core's own threads (a pool's background thread, a resolver's) block every signal, so a
signal sent to the process is always handled by a Perl thread, whenever its handler was
installed.

Signal handlers that C<die> are safe around every method, including the perlipc timeout
idiom with an "unsafe" handler, which runs inside the C signal handler
(C<POSIX::sigaction>'s default, C<PERL_SIGNALS=unsafe>, L<Sys::SigAction>'s
C<timeout_call>):

    POSIX::sigaction(SIGALRM, POSIX::SigAction->new(sub { die "timeout\n" }));
    my $v = eval { alarm 1; my $v = $memd->get($key); alarm 0; $v };
    alarm 0;

Such a C<die> must never unwind through the Rust core: it would skip the code that gives the
call's pooled connection back (after C<pool_size> of them the server would be out of
connections for good) and leave locks held. So while a method is inside the core (the
network, the pool, the server list), the signals that have a Perl handler (a code
reference, a glob or a sub's name in C<%SIG>: what C<%SIG>, C<POSIX::sigaction>, safe or
not, and Sys::SigAction install) are held for that thread, and delivered as soon as the
core returns: the handler runs then, before anything else of the method, and its C<die>
comes out of the method as usual. The same signals are held while a value is thawed
(Storable, or your C<deserialize>), and a signal that came during a thaw is delivered as it
returns: until 2026-12-05 a handler ran inside that guarded thaw, its C<die> was taken for
the value not thawing (C<get> returned C<undef> with a warning), and an "unsafe" handler's
C<die> there could leave C<malloc>'s lock held and hang the process. So C<alarm> cannot cut
a thaw short either: a C<deserialize> that runs long runs to its end first
(a value the interrupted call had already fetched is dropped, its memory not reclaimed;
nothing else is lost). Each call into the
core is bounded by C<io_timeout> (and C<operation_timeout>, C<pool_timeout>), so a handled
signal waits at most that long: C<alarm> cannot cut a call shorter than C<io_timeout> (use
C<io_timeout> or C<operation_timeout> for that); the next call finds the pool whole. Signals
without a Perl handler are never held: C<SIGTERM> left to its default ends the process at
once, and an ignored signal stays ignored; nor are the fault signals (C<SIGSEGV>,
C<SIGBUS>, C<SIGFPE>, C<SIGILL>). A signal the program blocked itself stays blocked. With no
signal handler installed this costs one comparison of Perl's signal table per call and no
system call; with one, two C<pthread_sigmask> calls per call into the core.

=head1 INSTALLATION

Mcpool links C<libmcpool>, the C library of the mcpool Rust core. Its F<Makefile.PL> takes the
first of these it finds, and prints which one it took (C<Mcpool 0.1.0: linking ...>):

=over

=item 1. C<MCPOOL_LIB_DIR> (a directory with F<libmcpool.a>, else F<libmcpool.so>), with
F<mcpool.h> in C<MCPOOL_INCLUDE_DIR>;

=item 2. inside the mcpool repository, its F<target/release> and F<include/> (built with cargo
first if they are not);

=item 3. an installed libmcpool, through pkg-config: F<mcpool-static.pc> (F<libmcpool.a>, so
the module needs nothing at run time), else F<mcpool.pc> (F<libmcpool.so>, linked with an
rpath), of at least this module's version;

=item 4. the Rust core bundled in the distribution (F<mcpool-core/>), built with cargo during
C<make> (a Rust toolchain from L<https://rustup.rs>, and crates.io for its dependencies).
C<MCPOOL_BUILD_CORE=1> chooses this even when pkg-config finds a library.

=back

With none of them it stops, naming what to install. As a user, with the C library installed
from the mcpool sources:

    make install PREFIX=$HOME/.local          # in the mcpool sources
    tar xzf Mcpool-0.1.0.tar.gz && cd Mcpool-0.1.0
    PKG_CONFIG_PATH=$HOME/.local/lib/pkgconfig perl Makefile.PL
    make && make test && make install

or, with cargo on C<PATH>, C<cpanm Mcpool-0.1.0.tar.gz>. The distribution comes from
C<make perl-dist> at the repository's root (or C<make dist> in F<ffi/perl>); its version is
the crate's. C<make test> starts its own memcached processes on free 127.0.0.1 ports
(C<memcached> on C<PATH>, or C<MEMCACHED=/path/to/memcached>); its compatibility tests need
L<Cache::Memcached::Fast> and L<Cache::Memcached> (in C<TEST_REQUIRES>).

=head1 LICENCE

MIT OR Apache-2.0, as the mcpool crate (F<LICENSE-MIT>, F<LICENSE-APACHE>).

=head1 SEE ALSO

L<Cache::Memcached::Fast>, L<Cache::Memcached>, mcpool's F<docs/c-abi.md>.

=cut
