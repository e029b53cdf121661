# The multi-key commands on their zero-copy and pipelined paths: get_multi / gets_multi (values
# read straight into the result's scalars), set_multi / delete_multi (one pipelined call), with
# Cache::Memcached::Fast's return conventions; values written by Cache::Memcached::Fast; bad
# keys mixed in; misses, duplicates, magic keys; no scalar leaked, on success or on error.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;
use Cache::Memcached::Fast;
use IO::Socket::INET;
use POSIX ();
use Storable ();
use Encode ();

my $srv = start_memcached();
my $m   = Mcpool->new({ servers => [$srv] });
my $p   = unique('mu');
my $long = 'k' x 251;

# ----- the store _multi forms: one pipelined call per server, C::M::F's results -----
{
    my @two = ($srv, start_memcached());
    my $m2  = Mcpool->new({ servers => [@two] });
    my $cmf = Cache::Memcached::Fast->new({ servers => [@two] });
    my ($a, $b) = (unique('am'), unique('ac'));    # our keys, C::M::F's keys
    # the same story for both clients: half of the keys exist before add_multi
    for my $c ([$m2, $a], [$cmf, $b]) {
        my ($cl, $q) = @$c;
        $cl->set("$q$_", "old$_") for grep { $_ % 2 } 0 .. 99;
    }
    my $ops = sub { my $mx = $m2->metrics; return [map { $mx->{$_}{operations} } @two] };
    my $before = $ops->();
    my @ra = $m2->add_multi(map { ["$a$_", "new$_", 100] } 0 .. 99);
    my @rc = $cmf->add_multi(map { ["$b$_", "new$_", 100] } 0 .. 99);
    my $after = $ops->();
    is_deeply(\@ra, \@rc, 'add_multi of 100 keys over 2 servers: the results of Cache::Memcached::Fast');
    is_deeply(\@ra, [map { $_ % 2 ? '' : 1 } 0 .. 99], '... 1 for a new key, "" for an existing one');
    is_deeply([map { $after->[$_] - $before->[$_] } 0, 1], [1, 1], '... one request batch per server');
    is_deeply($m2->get_multi(map { "$a$_" } 0 .. 3), { "${a}0" => 'new0', "${a}1" => 'old1', "${a}2" => 'new2', "${a}3" => 'old3' },
        '... new keys added, existing ones kept');
    my $ha = $m2->add_multi(map { ["$a$_", 'again'] } 0 .. 9);
    my $hc = $cmf->add_multi(map { ["$b$_", 'again'] } 0 .. 9);
    is_deeply([map { $ha->{"$a$_"} } 0 .. 9], [map { $hc->{"$b$_"} } 0 .. 9], 'add_multi, scalar context: as C::M::F');
    for my $cmd (qw(replace_multi append_multi prepend_multi)) {
        my @items = map { [$_ % 3 ? "$a$_" : "${a}none$_", "+$cmd"] } 0 .. 29;
        my @citems = map { [$_ % 3 ? "$b$_" : "${b}none$_", "+$cmd"] } 0 .. 29;
        is_deeply([$m2->$cmd(@items)], [$cmf->$cmd(@citems)], "$cmd: the results of Cache::Memcached::Fast");
    }
    is($m2->get("${a}1"), "+prepend_multi+replace_multi+append_multi", '... replace, append, prepend applied in order');
    my $g = $m2->gets_multi(map { "$a$_" } 0 .. 9);
    my $gc = $cmf->gets_multi(map { "$b$_" } 0 .. 9);
    my @ci  = map { ["$a$_", $_ % 2 ? $g->{"$a$_"}[0] : $g->{"$a$_"}[0] + 1000, "cas$_"] } 0 .. 9;
    my @cci = map { ["$b$_", $_ % 2 ? $gc->{"$b$_"}[0] : $gc->{"$b$_"}[0] + 1000, "cas$_"] } 0 .. 9;
    push @ci,  ["${a}gone", 1, 'x'];
    push @cci, ["${b}gone", 1, 'x'];
    my @rca = $m2->cas_multi(@ci);
    is_deeply(\@rca, [$cmf->cas_multi(@cci)], 'cas_multi with per-item CAS: the results of Cache::Memcached::Fast');
    is_deeply(\@rca, [(map { $_ % 2 ? 1 : '' } 0 .. 9), ''], '... 1 when unchanged, "" when changed or gone');
    is($m2->get("${a}1"), 'cas1', '... stored where the CAS matched');
    ok(!eval { $m2->cas_multi(["${a}1", 'v']); 1 }, 'cas_multi with a short item croaks');
    # incr_multi, decr_multi, touch_multi: one batch per server, C::M::F's results
    for my $c ([$m2, $a], [$cmf, $b]) {
        my ($cl, $q) = @$c;
        $cl->set("${q}n$_", $_ * 10) for grep { $_ % 3 } 0 .. 59;
        $cl->set("${q}txt", 'text');
    }
    my @na = ((map { "${a}n$_" } 0 .. 29), (map { ["${a}n$_", 7] } 30 .. 59));
    my @nc = ((map { "${b}n$_" } 0 .. 29), (map { ["${b}n$_", 7] } 30 .. 59));
    $before = $ops->();
    my @ia = $m2->incr_multi(@na);
    $after = $ops->();
    is_deeply([map { $after->[$_] - $before->[$_] } 0, 1], [1, 1], 'incr_multi: one request batch per server');
    my @ic = $cmf->incr_multi(@nc);
    is_deeply(\@ia, \@ic, 'incr_multi: the results of Cache::Memcached::Fast');
    is_deeply([$m2->incr_multi("${a}txt")], [undef], '... undef for a non-numeric value');
    # a non-numeric value answers its own key; the keys after it get theirs, as the server
    # applied them (text and meta used to fail them all). Not C::M::F's results here: its
    # close_on_error gives undef for every key after the non-numeric one on the server,
    # though memcached incremented them.
    for my $proto ('text', 'meta', 'binary') {
        my $mp = Mcpool->new({ servers => [$srv], protocol => $proto });
        my $q  = unique("nn$proto");
        $mp->set("${q}num", 10);
        $mp->set("${q}txt", 'abc');
        my @got = $mp->incr_multi("${q}txt", "${q}num", "${q}gone", ["${q}num", 5]);
        is_deeply(\@got, [undef, '11', '', '16'],
            "$proto: incr_multi after a non-numeric key: undef, the new values, '' for a miss");
        is($mp->get("${q}num"), '16', "$proto: ... the server's value");
        is_deeply([$mp->decr_multi("${q}txt", ["${q}num", 6])], [undef, '10'], "$proto: ... decr_multi too");
    }
    is_deeply([@ia[1 .. 4]], ['11', '21', '', '41'], '... the new values, "" for a missing key');
    is_deeply([$m2->decr_multi(map { ["${a}n$_", 100] } 1 .. 5)], ['0E0', '0E0', '', '0E0', '0E0'],
        'decr_multi: floors at 0 ("0E0", true), "" for a missing key');
    is_deeply(scalar $m2->incr_multi("${a}n1", "${a}n3"), { "${a}n1" => 1, "${a}n3" => '' },
        'incr_multi, scalar context: key => result');
    $before = $ops->();
    my @ta = $m2->touch_multi(map { ["${a}n$_", 100] } 0 .. 59);
    $after = $ops->();
    is_deeply([map { $after->[$_] - $before->[$_] } 0, 1], [1, 1], 'touch_multi: one request batch per server');
    is_deeply(\@ta, [$cmf->touch_multi(map { ["${b}n$_", 100] } 0 .. 59)], 'touch_multi: the results of Cache::Memcached::Fast');
    is_deeply([@ta[0 .. 3]], ['', 1, 1, ''], '... 1 touched, "" missing');
    ok(!eval { $m2->touch_multi("${a}n1"); 1 }, 'touch_multi of a bare key croaks');
    # gat_multi, gats_multi: one read per server (get-and-touch), C::M::F's results
    my @gk = map { "${a}n$_" } 0 .. 59;
    my @gck = map { "${b}n$_" } 0 .. 59;
    $before = $ops->();
    my $ga = $m2->gat_multi(200, @gk);
    $after = $ops->();
    is_deeply([map { $after->[$_] - $before->[$_] } 0, 1], [1, 1], 'gat_multi: one request batch per server');
    my $gac = $cmf->gat_multi(200, @gck);
    is_deeply([map { exists $ga->{"${a}n$_"} ? 1 : 0 } 0 .. 59], [map { exists $gac->{"${b}n$_"} ? 1 : 0 } 0 .. 59],
        'gat_multi: the keys Cache::Memcached::Fast finds');
    is_deeply($ga, $m2->get_multi(@gk), '... with the values get_multi reads');
    is(scalar(keys %$ga), 40, '... the 40 existing keys, no entry for a missing one');
    my $gs = $m2->gats_multi(300, @gk[1 .. 4]);
    is_deeply([map { ref $gs->{$_} ? $gs->{$_}[1] : 'none' } @gk[1 .. 4]], [map { $ga->{$_} // 'none' } @gk[1 .. 4]],
        'gats_multi: [cas, value] pairs');
    ok((grep { $gs->{$_} && $gs->{$_}[0] > 0 } @gk[1 .. 4]) == 3, '... with a CAS unique for each hit');
    ok(!eval { $m2->gat_multi(); 1 }, 'gat_multi without an expiry croaks');
    $m2->delete_multi(map { "$a$_" } 0 .. 99);
}

# ----- set_multi -----
{
    my $ms = Mcpool->new({ servers => [$srv], max_size => 1000 });
    my @r = $ms->set_multi(["${p}s1", 'one'], [$long, 'x'], ["${p}s3", 'y' x 2000], ['', 'e'],
        ["${p}s5", 'five', 100], ['a b', 'sp'], ["${p}s7", [7]]);
    is_deeply(\@r, [1, undef, undef, undef, 1, undef, 1],
        'set_multi, list context: one result per argument; undef for a refused key or value');
    like($ms->last_error, qr/key|too large|larger/i, '... last_error names the first failure');
    is_deeply($m->get_multi(map { "${p}s$_" } 1, 3, 5, 7), { "${p}s1" => 'one', "${p}s5" => 'five', "${p}s7" => [7] },
        '... the valid items around them were stored');
    my $h = $ms->set_multi(["${p}s1", 'uno'], [$long, 'x'], ["${p}s5", 'cinco']);
    is_deeply($h, { "${p}s1" => 1, "${p}s5" => 1 }, 'set_multi, scalar context: key => result for the defined ones');
    $ms->set_multi(["${p}void1", 'v1'], ["${p}void2", 'v2']);
    is_deeply($m->get_multi("${p}void1", "${p}void2"), { "${p}void1" => 'v1', "${p}void2" => 'v2' },
        'set_multi in void context stores too');
    is_deeply([$m->set_multi()], [], 'set_multi of nothing: an empty list');
    is_deeply(scalar $m->set_multi(), {}, '... and {} in scalar context');

    # Expiration times differ: runs of equal times, in order; a later item for the same key wins.
    @r = $m->set_multi(["${p}t1", 'a', 100], ["${p}t2", 'b', -1], ["${p}t3", 'c', 100], ["${p}t4", 'd'],
        ["${p}t1", 'a2', 0]);
    is_deeply(\@r, [1, 1, 1, 1, 1], 'set_multi with different expiration times');
    is_deeply($m->get_multi(map { "${p}t$_" } 1 .. 4), { "${p}t1" => 'a2', "${p}t3" => 'c', "${p}t4" => 'd' },
        '... each item has its own (a negative one has expired), and the last write of a key wins');

    # What croaks does so before anything is sent.
    ok(!eval { my @x = $m->set_multi(["${p}c1", 'no'], 'notaref'); 1 }, 'set_multi with a non-array argument croaks');
    like($@, qr/^Mcpool::set_multi: Not an array reference/, '... as Cache::Memcached::Fast words it');
    ok(!eval { $m->set_multi(["${p}c1", 'no'], ["${p}c2"]); 1 }, 'set_multi with an item without a value croaks');
    like($@, qr/^Usage: \$memd->set_multi/, '... with the usage');
    ok(!eval { $m->set_multi(["${p}c1", 'no'], [undef, 'v']); 1 }, 'set_multi with an undef key croaks');
    like($@, qr/^Mcpool::set_multi: the key is undef/, '... naming the method');
    ok(!eval { $m->set_multi(["${p}c1", 'no'], ["${p}c3", "\x{263a}"]); 1 }, 'a wide character croaks (no utf8)');
    is_deeply([$m->get("${p}c1")], [], '... and nothing was sent before the croak');

    # Storable and UTF-8 values through set_multi, read by Cache::Memcached::Fast.
    my $mu  = Mcpool->new({ servers => [$srv], utf8 => 1, compress_threshold => 1000 });
    my $cmf = Cache::Memcached::Fast->new({ servers => [$srv], utf8 => 1, compress_threshold => 1000 });
    my $chars = "caf\x{e9} \x{263a}";
    my $big   = join '', map { chr(97 + ($_ * 7) % 26) } 0 .. 19_999;
    is_deeply([$mu->set_multi(["${p}su", $chars], ["${p}sr", { a => [1] }], ["${p}sz", $big], ["${p}sb", { b => $big }])],
        [1, 1, 1, 1], 'set_multi of a character string, a reference, a compressed value and both');
    is_deeply($cmf->get_multi(map { "${p}s$_" } qw(u r z b)),
        { "${p}su" => $chars, "${p}sr" => { a => [1] }, "${p}sz" => $big, "${p}sb" => { b => $big } },
        '... Cache::Memcached::Fast reads them all');

    my $ns = Mcpool->new({ servers => [$srv], namespace => "${p}ns:", hash_namespace => 1 });
    is_deeply([$ns->set_multi(['a', 1], [$long, 2], ['b', 2])], [1, undef, 1], 'set_multi with hash_namespace');
    is_deeply($m->get_multi("${p}ns:a", "${p}ns:b"), { "${p}ns:a" => 1, "${p}ns:b" => 2 }, '... the namespace is in front');
    is_deeply([$ns->delete_multi('a', 'zz', $long)], [1, '', undef], 'delete_multi with hash_namespace');
}

# ----- delete_multi -----
{
    $m->set("${p}d$_", $_) for 1 .. 6;
    my @w;
    local $SIG{__WARN__} = sub { push @w, @_ };
    my @r = $m->delete_multi("${p}d1", $long, "${p}nope", ["${p}d2", 0], ["${p}d3"], '');
    is_deeply(\@r, [1, undef, '', 1, 1, undef],
        'delete_multi, list context: 1, undef for a refused key, "" for a missing one; [$key, $delay] accepted');
    is("@w", '', '... a zero delay does not warn');
    my $h = $m->delete_multi("${p}d4", "${p}nope", $long);
    is_deeply($h, { "${p}d4" => 1, "${p}nope" => '' }, 'delete_multi, scalar context: key => defined result');
    $m->delete_multi(["${p}d5", 10]);
    like("@w", qr/non-zero delete expiration time is ignored/, 'a non-zero delay warns, as Cache::Memcached::Fast');
    is_deeply([$m->get("${p}d5")], [], 'delete_multi in void context deletes too');
    is_deeply([$m->delete_multi()], [], 'delete_multi of nothing');
    ok(!eval { $m->delete_multi("${p}d6", {}); 1 }, 'delete_multi with a hash reference croaks');
    like($@, qr/Not an array reference/, '... as Cache::Memcached::Fast words it');
    is($m->get("${p}d6"), 6, '... before anything was deleted');
    ok(!eval { $m->delete_multi("${p}d6", undef); 1 }, 'delete_multi with an undef key croaks');
}

# ----- get_multi / gets_multi -----
{
    $m->set("${p}g$_", "v$_") for 1 .. 60;
    $m->delete("${p}g30");
    my @keys = map { "${p}g$_" } 1 .. 60;
    my $h = $m->get_multi(@keys);
    is(scalar(keys %$h), 59, 'get_multi of 60 keys with a miss in the middle: 59 hits');
    ok(!exists $h->{"${p}g30"}, '... the miss is absent');
    is_deeply([map { $h->{$_} } @keys[0, 28, 30, 59]], ['v1', 'v29', 'v31', 'v60'], '... each value under its own key');
    is_deeply($m->get_multi("${p}g1", "${p}nope", "${p}g2"), { "${p}g1" => 'v1', "${p}g2" => 'v2' }, 'a miss between two hits');
    is_deeply($m->get_multi("${p}nope", "${p}nope2"), {}, 'only misses: {}');
    is_deeply($m->get_multi("${p}g3", "${p}g3", "${p}nope", "${p}nope", "${p}g3"), { "${p}g3" => 'v3' },
        'duplicate keys (hits and misses)');
    is_deeply($m->get_multi("${p}g4"), { "${p}g4" => 'v4' }, 'one key: a hit');
    is_deeply($m->get_multi("${p}nope"), {}, 'one key: a miss');
    is_deeply($m->get_multi($long), {}, 'one key: refused, {}');
    is_deeply($m->get_multi("${p}g5", $long, '', "${p}g6"), { "${p}g5" => 'v5', "${p}g6" => 'v6' },
        'refused keys among valid ones: only the valid ones answer');

    $m->set("${p}empty", '');
    my $bin = join '', map { chr } reverse 0 .. 255;
    $m->set("${p}bin", $bin);
    my $large = 'L' x 600_000;
    ok($m->set("${p}large", $large), 'a 600 kB value');
    $h = $m->get_multi("${p}empty", "${p}bin", "${p}large");
    is($h->{"${p}empty"}, '', 'get_multi: an empty value is ""');
    is($h->{"${p}bin"}, $bin, '... binary bytes intact');
    is(length $h->{"${p}large"}, 600_000, '... a large value whole');
    ok($h->{"${p}large"} eq $large, '... and right');
    is($m->get("${p}large"), $large, 'get of the large value');
    is($m->get("${p}empty"), '', 'get of the empty value');

    # gets_multi: the CAS uniques are the server's (as gets reports them) and usable.
    $h = $m->gets_multi("${p}g7", "${p}nope", "${p}g8", "${p}g7");
    is_deeply([sort keys %$h], ["${p}g7", "${p}g8"], 'gets_multi: the hits');
    is($h->{"${p}g8"}[1], 'v8', '... [cas, value]');
    is($h->{"${p}g7"}[0], $m->gets("${p}g7")->[0], '... the CAS unique is the one gets reports');
    isnt($h->{"${p}g7"}[0], $h->{"${p}g8"}[0], '... each item its own');
    is($m->cas("${p}g8", $h->{"${p}g8"}[0], 'new8'), 1, '... and cas with it stores');
    is($m->cas("${p}g7", $h->{"${p}g8"}[0], 'bad'), '', '... a wrong one does not');
    my $one = $m->gets_multi("${p}g9");
    is($one->{"${p}g9"}[1], 'v9', 'gets_multi of one key');
    is($one->{"${p}g9"}[0], $m->gets("${p}g9")->[0], '... with its CAS unique');
    ok(!exists $m->gets_multi("${p}nope")->{"${p}nope"}, 'gets_multi of one missing key');
}

# ----- values written by Cache::Memcached::Fast, read through the new path -----
{
    my %o   = (servers => [$srv], compress_threshold => 1000, utf8 => 1);
    my $cmf = Cache::Memcached::Fast->new({%o});
    my $mu  = Mcpool->new({%o});
    my $big = join '', map { chr(97 + ($_ * 7 + int($_ / 13)) % 26) } 0 .. 49_999;
    my %v = (
        plain => 'plain', utf8 => "na\x{ef}ve \x{263a} \x{1F600}", storable => { a => [1, 2] },
        compressed => $big, bigref => { big => $big }, utf8big => "\x{263a}" x 20_000,
    );
    ok($cmf->set("${p}cmf-$_", $v{$_}), "CMF sets $_") for sort keys %v;
    my @k = map { "${p}cmf-$_" } sort keys %v;
    my $h = $mu->get_multi(@k, "${p}nope");
    is_deeply($h, { map { ("${p}cmf-$_" => $v{$_}) } keys %v }, 'get_multi of every kind written by CMF');
    ok(utf8::is_utf8($h->{"${p}cmf-utf8"}), '... the UTF-8 value is a character string');
    for my $name (sort keys %v) {
        is_deeply($mu->get_multi("${p}cmf-$name"), { "${p}cmf-$name" => $v{$name} }, "one-key get_multi: $name");
    }
    $h = $mu->gets_multi(@k);
    is_deeply({ map { ($_ => $h->{$_}[1]) } keys %$h }, { map { ("${p}cmf-$_" => $v{$_}) } keys %v },
        'gets_multi of every kind written by CMF');
    my $cas = $cmf->gets_multi(@k);
    is_deeply({ map { ($_ => $h->{$_}[0]) } keys %$h }, { map { ($_ => $cas->{$_}[0]) } keys %$cas },
        '... with the CAS uniques CMF reads');
    my $raw = Mcpool->new({ servers => [$srv] });    # no utf8: the octets, as CMF without utf8
    is($raw->get_multi("${p}cmf-utf8")->{"${p}cmf-utf8"}, Encode::encode_utf8($v{utf8}), 'without utf8: flag-4 values are octets');
    is($raw->get_multi("${p}cmf-compressed", "${p}x")->{"${p}cmf-compressed"}, $big, '... compressed values still inflate');
}

# ----- thaw that moves the Perl stack; a thaw that fails -----
{
    my $thaws = 0;
    my $mt = Mcpool->new({ servers => [$srv], serialize_methods => [\&Storable::nfreeze, sub {
        $thaws++;
        my @spread = (1) x 50_000;    # grows (and so moves) the Perl stack
        return Storable::thaw($_[0]);
    }] });
    $mt->set("${p}ref$_", { n => $_ }) for 1 .. 40;
    my $h = $mt->get_multi(map { "${p}ref$_" } 1 .. 40);
    is_deeply($h, { map { ("${p}ref$_" => { n => $_ }) } 1 .. 40 }, 'get_multi when thaw moves the Perl stack');
    is($thaws, 40, '... thaw ran once per value');
    is_deeply($mt->get("${p}ref3"), { n => 3 }, '... get too');
    is_deeply($mt->gets_multi("${p}ref4")->{"${p}ref4"}[1], { n => 4 }, '... one-key gets_multi too');
    my $bad = Mcpool->new({ servers => [$srv], serialize_methods => [\&Storable::nfreeze, sub { die "no\n" }] });
    $m->set("${p}plain", 'p');
    is_deeply($bad->get_multi("${p}ref1", "${p}plain", "${p}ref2"), { "${p}plain" => 'p' },
        'values that do not thaw are misses; the others are there');
}

# ----- magic keys: fetched once, filed under what was sent -----
{
    package Counter;
    sub TIESCALAR { my $n = 0; return bless \$n }
    sub FETCH { my $s = shift; return 'tk' . ($$s++) }
    package main;
    my $obj = tie my $t, 'Counter';
    my $mt = Mcpool->new({ servers => [$srv], namespace => "${p}" });
    $mt->set("tk$_", "tied$_") for 0 .. 5;
    is_deeply($mt->get_multi($t, 'other'), { tk0 => 'tied0' }, 'get_multi with a tied key: fetched once');
    is($$obj, 1, '... exactly once');
    is_deeply($mt->get_multi($t), { tk1 => 'tied1' }, 'one-key get_multi with a tied key');
    is($$obj, 2, '... fetched once');
    is_deeply($mt->get_multi($t, $t), { tk2 => 'tied2', tk3 => 'tied3' }, 'the same tied key twice: two fetches, two keys');
    is_deeply([$mt->delete_multi($t, 'none')], [1, ''], 'delete_multi with a tied key');
    is_deeply($mt->get_multi('tk4', 'tk5'), { tk5 => 'tied5' }, '... deleted what was fetched');

    package Stringy;
    use overload '""' => sub { my $s = shift; $s->{n}++; return "ov$s->{k}" }, fallback => 1;
    package main;
    my $o = bless { k => 1, n => 0 }, 'Stringy';
    $mt->set('ov1', 'over');
    is_deeply($mt->get_multi($o, 'other'), { ov1 => 'over' }, 'get_multi with an object that overloads ""');
    is($o->{n}, 1, '... stringified once');
    is_deeply($mt->get_multi($o), { ov1 => 'over' }, 'one-key get_multi with it');
    is($o->{n}, 2, '... stringified once');
}

# ----- a server that breaks its reply after a value: nothing returned, nothing leaked -----
{
    my $listen = IO::Socket::INET->new(Listen => 5, LocalAddr => '127.0.0.1', LocalPort => 0, Proto => 'tcp', ReuseAddr => 1)
        or die "listen: $!";
    my $port = $listen->sockport;
    my $pid = fork() // die "fork: $!";
    if (!$pid) {
        # Answers every request with one whole value, then closes without END.
        while (my $c = $listen->accept) {
            my $line = <$c>;
            print $c "VALUE k1 0 5\r\nhello\r\nVALUE k2 0 5\r\nwor" if defined $line;
            close $c;
        }
        POSIX::_exit(0);
    }
    close $listen;
    my $mb = Mcpool->new({ servers => ["127.0.0.1:$port"], io_timeout => 0.5 });
    is_deeply([$mb->get('k1')], [], 'get: a reply broken after the value returns nothing');
    ok(length $mb->last_error, '... last_error: ' . ($mb->last_error =~ s/\n.*//sr));
    is_deeply($mb->get_multi('k1', 'k2'), {}, 'get_multi: a reply broken after a value returns {}');
    is_deeply($mb->gets_multi('k1'), {}, 'one-key gets_multi: {}');
    my $before = Mcpool::_sv_count();
    for (1 .. 50) { my @x = $mb->get('k1'); my $y = $mb->get_multi('k1', 'k2'); $y = $mb->get_multi('k1') }
    is(Mcpool::_sv_count() - $before, 0, '... and no scalar is leaked on these error paths');
    kill 'TERM', $pid;
    waitpid $pid, 0;
}

# ----- result hashes made ahead (at the end of the previous call): any size, any order -----
{
    my $mh = Mcpool->new({ servers => [$srv] });
    my %all = map { ("${p}ah$_" => "v$_") } 1 .. 600;
    $mh->set_multi(map { [$_, $all{$_}] } sort keys %all);
    my @kept;
    for my $n (500, 500, 100, 500, 3, 9, 600, 600, 20, 500) {
        my @k = map { "${p}ah$_" } 1 .. $n;
        my $h = $mh->get_multi(@k);
        is_deeply($h, { map { ($_ => $all{$_}) } @k }, "get_multi of $n keys, after the sizes before it");
        push @kept, $h;
    }
    $kept[0]{extra} = 1;
    ok(!exists $kept[1]{extra}, 'each result is a hash of its own');
    is(scalar(keys %{ $kept[2] }), 100, '... that keeps its keys after later calls');
    my $hs = $mh->get_multi(keys %all);
    is(scalar(keys %$hs), 600, 'keys shared by Perl (from keys %h): every key');
    is($hs->{"${p}ah7"}, 'v7', '... with its value');
    my $hp = $mh->get_multi(map { "${p}ah$_" } 1 .. 600);
    is($hp->{"${p}ah600"}, 'v600', 'then unshared keys again, same size');
}

# ----- no scalar leaked on the usual paths -----
{
    my $mu = Mcpool->new({ servers => [$srv], utf8 => 1 });
    $mu->set("${p}lk$_", $_ % 3 ? "v$_" : $_ % 2 ? [$_] : "\x{263a}$_") for 1 .. 50;
    my @k = ((map { "${p}lk$_" } 1 .. 50), "${p}nope", $long, "${p}lk1");
    my $run = sub {
        my $h = $mu->get_multi(@k);
        $h = $mu->gets_multi(@k);
        $h = $mu->get_multi("${p}lk3");
        $h = $mu->gets_multi("${p}nope");
        my @r = $mu->set_multi(map { ["${p}lk$_", "v$_"] } 40 .. 50);
        $h = $mu->set_multi(["${p}lk51", 'x'], [$long, 'y']);
        @r = $mu->delete_multi("${p}lk51", "${p}nope", $long);
        $h = $mu->delete_multi("${p}lk52");
        @r = ($mu->get("${p}lk1"), $mu->gets("${p}lk2"), $mu->get("${p}nope"));
    };
    $run->() for 1 .. 3;    # warm up
    my $before = Mcpool::_sv_count();
    $run->() for 1 .. 30;
    is(Mcpool::_sv_count() - $before, 0, 'no scalar leaked by get_multi, gets_multi, set_multi, delete_multi, get, gets');
}

# ----- a key given more than once: sent once per occurrence; in scalar context one entry,
# true when any occurrence was done (it was the last occurrence's answer) -----
{
    my $d = unique('dup');
    $m->set("${d}1", 'v');
    is_deeply([$m->delete_multi("${d}1", "${d}1")], [1, ''], 'delete_multi(k, k), list context: one result per occurrence');
    $m->set("${d}1", 'v');
    is_deeply(scalar $m->delete_multi("${d}1", "${d}1", "${d}none", "${d}none"),
        { "${d}1" => 1, "${d}none" => '' },
        'delete_multi(k, k), scalar context: deleted by the first occurrence, 1 (not the second one\'s "")');
    ok(!defined $m->get("${d}1"), '... and gone');
    is_deeply(scalar $m->delete_multi(["${d}1"], ["${d}1"]), { "${d}1" => '' }, '... again: no occurrence deleted it, ""');
    is_deeply(scalar $m->add_multi(["${d}a", 'x'], ["${d}a", 'y']), { "${d}a" => 1 }, 'add_multi(k, k): added by the first, 1');
    is($m->get("${d}a"), 'x', '... with the first one\'s value');
    $m->set("${d}n", 5);
    is_deeply(scalar $m->incr_multi("${d}n", ["${d}n", 2]), { "${d}n" => 8 }, 'incr_multi(k, k), scalar context: the latest value');
    is_deeply(scalar $m->touch_multi(["${d}n", 100], ["${d}nope", 100], ["${d}n", 100]), { "${d}n" => 1, "${d}nope" => '' },
        'touch_multi(k, k)');
}

done_testing;
