//! Failover within the failing call (`rehash` / `eject`): when a key's server cannot be
//! reached and nothing was sent (here: a loopback port with nothing listening, so the
//! connect is refused), and that failure leaves the server dead, the same call goes on to the
//! server the policy now picks, as python-memcached's `_get_server`, Cache::Memcached's
//! `get_sock` and Whalin's `getSock` do. Checked for every preset that fails over, for single
//! and multi-key reads and writes; placement checked against the real python-memcached and
//! Cache::Memcached with the same server down. A request whose bytes may have reached a
//! server is never sent again (a deliberately broken fake server reads it, then closes), and
//! `fail-fast` still fails.
mod common;

use common::fake::{fake, Then};
use common::{refusing_port, unique, wait_until, Memcached, RefusingPort};
use mcpool::{Client, ClientBuilder, Error, FailoverPolicy, Router, ServerSpec, ValueFormat};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// The presets whose failover (`rehash` or `eject`) moves a key when its server is marked dead.
/// (pymemcache's preset is not among them: its keys move on the third failed period, a
/// second apart, as pymemcache's HashClient removes a node: `eject_after` 3, tester finding
/// pycompat 1.)
const PRESETS: &[&str] = &[
    "python-memcached",
    "cache-memcached",
    "whalin",
    "spymemcached",
];

/// Three real servers and, second in the list, a loopback port nobody listens on (held,
/// so that no server started meanwhile takes it).
struct Fleet {
    live: Vec<Memcached>,
    addrs: Vec<String>,
    dead: usize,
    _down: RefusingPort,
}

fn fleet() -> Fleet {
    let live: Vec<Memcached> = (0..3).map(|_| Memcached::start(&[])).collect();
    let down = refusing_port();
    let addrs = vec![live[0].addr(), down.addr(), live[1].addr(), live[2].addr()];
    Fleet {
        live,
        addrs,
        dead: 1,
        _down: down,
    }
}

impl Fleet {
    /// The memcached behind list position `i` (not the dead one).
    fn server(&self, i: usize) -> &Memcached {
        match i {
            0 => &self.live[0],
            2 => &self.live[1],
            3 => &self.live[2],
            _ => panic!("position {i} is the dead server"),
        }
    }

    /// List positions of the live servers holding `wire` (raw probes: flags uninterpreted).
    fn holders(&self, wire: &[u8]) -> Vec<usize> {
        (0..self.addrs.len())
            .filter(|&i| i != self.dead)
            .filter(|&i| probe(&self.server(i).addr()).get(wire).unwrap().is_some())
            .collect()
    }

    fn flush(&self) {
        for mc in &self.live {
            probe(&mc.addr()).flush_all(None).unwrap();
        }
    }
}

fn probe(addr: &str) -> Client {
    Client::builder()
        .server(addr)
        .value_format(ValueFormat::Libmemcached)
        .build()
        .unwrap()
}

fn preset_builder(preset: &str, addrs: &[String]) -> ClientBuilder {
    Client::builder()
        .set("preset", preset)
        .unwrap()
        .servers(addrs)
        // The presets' own timeouts are seconds; a refused connect is immediate anyway.
        .connect_timeout(Duration::from_millis(500))
        .io_timeout(Duration::from_millis(500))
        // No retry of the dead server comes due during a test (whalin's is 1 s): each
        // failover counted is the one the test makes.
        .retry_timeout(Duration::from_secs(60))
        .retry_timeout_max(Duration::from_secs(60))
}

fn preset_client(preset: &str, addrs: &[String]) -> Client {
    preset_builder(preset, addrs).build().unwrap()
}

/// Keys that live on the dead server, and keys that do not, as `c` places them.
fn keys_of(c: &Client, dead: usize, n: usize) -> (Vec<String>, Vec<String>) {
    let tag = unique("fic");
    let all: Vec<String> = (0..4000).map(|i| format!("{tag}-{i}")).collect();
    let on_dead: Vec<String> = all
        .iter()
        .filter(|k| c.server_for(k).unwrap() == dead)
        .take(n)
        .cloned()
        .collect();
    let others: Vec<String> = all
        .iter()
        .filter(|k| c.server_for(k).unwrap() != dead)
        .take(n)
        .cloned()
        .collect();
    assert_eq!(on_dead.len(), n, "not enough keys on the dead server");
    (on_dead, others)
}

/// Where the profile's failover places `key` while `dead` is down (pure placement).
fn failover_target(c: &Client, key: &str, dead: usize) -> usize {
    let cfg = c.config();
    let router = Router::new(&cfg.distribution, &cfg.servers).unwrap();
    let wire = c.wire_key(key.as_bytes()).unwrap();
    router
        .locate_alive(&wire, cfg.failover, &|i| i != dead)
        .expect("a live server")
}

/// Calls to the dead server's keys until the next failure marks it dead: the presets whose
/// `failure_limit` is above 1 (spymemcached: 2) fail the calls before.
fn fail_until_dead(c: &Client, key: &str, dead: usize) {
    let limit = c.config().failure_limit as usize;
    for n in 1..limit {
        let r = c.get(key);
        assert!(r.is_err(), "call {n} of {limit}: {r:?}");
        assert!(c.server_states()[dead].alive, "dead after {n} of {limit}");
    }
}

#[test]
fn single_key_write_and_read_go_on_within_the_failing_call_under_every_failover_preset() {
    let f = fleet();
    for preset in PRESETS {
        let c = preset_client(preset, &f.addrs);
        let policy = c.config().failover;
        assert_ne!(policy, FailoverPolicy::FailFast, "{preset}");
        let (on_dead, _) = keys_of(&c, f.dead, 8);
        fail_until_dead(&c, &on_dead[0], f.dead);
        // The call whose connect failure marks the server dead is answered by the next one.
        c.set(&on_dead[0], b"first", 0)
            .unwrap_or_else(|e| panic!("{preset}: the failing call itself: {e}"));
        assert!(!c.server_states()[f.dead].alive, "{preset}");
        for k in &on_dead {
            c.set(k, k.as_bytes(), 0)
                .unwrap_or_else(|e| panic!("{preset} {k}: {e}"));
            let wire = c.wire_key(k.as_bytes()).unwrap();
            assert_eq!(
                f.holders(&wire),
                vec![failover_target(&c, k, f.dead)],
                "{preset} {k}"
            );
        }
        let m = &c.metrics()[f.dead];
        assert_eq!(m.failovers, 1, "{preset}: one call went on: {m:?}");

        // A read as the first call of a client: its value is found on the failover server.
        let r = preset_client(preset, &f.addrs);
        fail_until_dead(&r, &on_dead[1], f.dead);
        let got = r
            .get(&on_dead[1])
            .unwrap_or_else(|e| panic!("{preset}: the failing read itself: {e}"));
        assert_eq!(got.as_deref(), Some(on_dead[1].as_bytes()), "{preset}");
        assert_eq!(r.metrics()[f.dead].failovers, 1, "{preset}");
        f.flush();
    }
}

#[test]
fn multi_key_get_and_set_send_a_dead_servers_keys_to_their_new_servers_in_the_same_call() {
    let f = fleet();
    for preset in PRESETS {
        let c = preset_client(preset, &f.addrs);
        let (on_dead, others) = keys_of(&c, f.dead, 20);
        fail_until_dead(&c, &on_dead[0], f.dead);
        let keys: Vec<&String> = on_dead.iter().chain(&others).collect();
        let items: Vec<(&String, &[u8])> = keys.iter().map(|k| (*k, k.as_bytes())).collect();
        for (k, r) in keys.iter().zip(c.set_multi(&items, 0)) {
            assert!(r.is_ok(), "{preset} set_multi {k}: {r:?}");
        }
        for k in &keys {
            let wire = c.wire_key(k.as_bytes()).unwrap();
            let want = if on_dead.contains(k) {
                failover_target(&c, k, f.dead)
            } else {
                c.server_for(k).unwrap()
            };
            assert_eq!(f.holders(&wire), vec![want], "{preset} {k}");
        }
        assert_eq!(
            c.metrics()[f.dead].failovers,
            on_dead.len() as u64,
            "{preset}"
        );

        // A multi-key get as a client's first call.
        let r = preset_client(preset, &f.addrs);
        fail_until_dead(&r, &on_dead[0], f.dead);
        for (k, got) in keys.iter().zip(r.get_multi(&keys)) {
            let got = got.unwrap_or_else(|e| panic!("{preset} get_multi {k}: {e}"));
            assert_eq!(got.map(|i| i.value.into_vec()), Some(k.as_bytes().to_vec()));
        }
        assert_eq!(
            r.metrics()[f.dead].failovers,
            on_dead.len() as u64,
            "{preset}"
        );

        // Deletes and noreply stores take the same way.
        let d = preset_client(preset, &f.addrs);
        fail_until_dead(&d, &on_dead[0], f.dead);
        for (k, r) in keys.iter().zip(d.delete_multi(&keys)) {
            assert!(
                r.unwrap_or_else(|e| panic!("{preset} {k}: {e}")),
                "{preset} {k}"
            );
        }
        let n = preset_client(preset, &f.addrs);
        fail_until_dead(&n, &on_dead[0], f.dead);
        n.set_multi_noreply(&items, 0)
            .unwrap_or_else(|e| panic!("{preset} set_multi_noreply: {e}"));
        for k in &on_dead {
            let wire = c.wire_key(k.as_bytes()).unwrap();
            assert_eq!(f.holders(&wire), vec![failover_target(&c, k, f.dead)]);
        }
        f.flush();
    }
}

#[test]
fn a_failed_retry_of_a_dead_server_goes_on_within_the_call_too() {
    let f = fleet();
    let c = preset_builder("python-memcached", &f.addrs)
        .retry_timeout(Duration::from_millis(50))
        .retry_timeout_max(Duration::from_millis(50))
        .build()
        .unwrap();
    let (on_dead, _) = keys_of(&c, f.dead, 1);
    c.set(&on_dead[0], b"v", 0).unwrap();
    assert!(!c.server_states()[f.dead].alive);
    wait_until("the retry to come due", Duration::from_secs(5), || {
        c.server_states()[f.dead].alive
    });
    // The retry's connect is refused: the server is marked dead again and the same call
    // goes on to the key's rehashed server.
    assert_eq!(c.get(&on_dead[0]).unwrap().as_deref(), Some(&b"v"[..]));
    assert!(!c.server_states()[f.dead].alive);
    assert_eq!(c.metrics()[f.dead].failovers, 2);
    f.flush();
}

/// Runs a real library's `script` (it stores the keys; the probes find where). `None` when
/// the program or the library is missing.
fn run_peer(program: &str, args: &[&str], script: &str) -> Option<()> {
    if !Path::new(program).exists() {
        return None;
    }
    let out = Command::new(program)
        .args(args)
        .arg(script)
        .output()
        .unwrap_or_else(|e| panic!("run {program}: {e}"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("MISSING") {
        eprintln!("\n!!!!! {program}: {stderr} !!!!!\n");
        return None;
    }
    assert!(out.status.success(), "{program} failed: {stderr}");
    Some(())
}

/// The real library (python-memcached or Cache::Memcached, one server down) and mcpool with
/// the library's preset put every key on the same server.
fn same_servers_as_the_peer(preset: &str, program: &str, args: &[&str], script: &str) {
    let f = fleet();
    let weights = [1u32, 2, 1, 3];
    let c = {
        let mut b = preset_builder(preset, &[]);
        for (a, w) in f.addrs.iter().zip(weights) {
            b = b.server_weighted(a, w);
        }
        b.build().unwrap()
    };
    let tag = unique("peer");
    let keys: Vec<String> = (0..300).map(|i| format!("{tag}-{i}")).collect();
    let Some(theirs) = peer_holders(&f, &weights, &keys, program, args, script) else {
        return;
    };
    let moved = keys
        .iter()
        .filter(|k| c.server_for(k).unwrap() == f.dead)
        .count();
    assert!(moved > 20, "{preset}: only {moved} keys on the dead server");
    f.flush();
    for (k, r) in keys
        .iter()
        .zip(c.set_multi(&keys.iter().map(|k| (k, b"v")).collect::<Vec<_>>(), 0))
    {
        r.unwrap_or_else(|e| panic!("{preset} {k}: {e}"));
    }
    let ours: Vec<Vec<usize>> = keys.iter().map(|k| f.holders(k.as_bytes())).collect();
    for ((k, t), o) in keys.iter().zip(&theirs).zip(&ours) {
        assert_eq!(t.len(), 1, "{preset} {k}: the library stored it on {t:?}");
        assert_eq!(o, t, "{preset} {k}: mcpool vs the library");
    }
    // The single-key route too, as a fresh client's first calls.
    f.flush();
    let one = {
        let mut b = preset_builder(preset, &[]);
        for (a, w) in f.addrs.iter().zip(weights) {
            b = b.server_weighted(a, w);
        }
        b.build().unwrap()
    };
    for (k, t) in keys.iter().zip(&theirs) {
        one.set(k, b"v", 0)
            .unwrap_or_else(|e| panic!("{preset} {k}: {e}"));
        assert_eq!(&f.holders(k.as_bytes()), t, "{preset} {k}: single-key set");
    }
}

#[test]
fn python_memcached_places_the_dead_servers_keys_where_the_real_library_does() {
    let script = r#"
import sys
try:
    import memcache
except ImportError:
    sys.stderr.write("MISSING python3-memcache\n")
    sys.exit(0)
servers = []
for s in "@SERVERS@".split(","):
    addr, w = s.split("=")
    servers.append((addr, int(w)))
mc = memcache.Client(servers, socket_timeout=1)
for k in "@KEYS@".split(","):
    if not mc.set(k, "v"):
        sys.exit("set %s failed" % k)
"#;
    same_servers_as_the_peer("python-memcached", "/usr/bin/python3", &["-c"], script);
}

#[test]
fn cache_memcached_places_the_dead_servers_keys_where_the_real_library_does() {
    let script = r#"
use strict;
BEGIN { eval { require Cache::Memcached; 1 } or do { print STDERR "MISSING libcache-memcached-perl\n"; exit 0 } }
my @servers = map { my ($a, $w) = split /=/; [$a, $w] } split /,/, "@SERVERS@";
my $mc = Cache::Memcached->new({ servers => \@servers });
for my $k (split /,/, "@KEYS@") {
    $mc->set($k, "v") or die "set $k failed\n";
}
"#;
    same_servers_as_the_peer("cache-memcached", "/usr/bin/perl", &["-e"], script);
}

/// A deliberately broken fake server (not memcached): reads each request line, then closes
/// without answering, so the request's bytes have reached it.
fn reads_then_closes() -> String {
    fake(64, |_, _, _| Then::Close).0
}

#[test]
fn a_request_that_may_have_reached_its_server_is_never_sent_again() {
    let mc = Memcached::start(&[]);
    let broken = reads_then_closes();
    let addrs = vec![broken.clone(), mc.addr()];
    for preset in ["python-memcached", "cache-memcached", "whalin"] {
        let c = preset_client(preset, &addrs);
        let (on_broken, _) = keys_of(&c, 0, 3);
        // Had the call been sent again, it would find this value on the failover server.
        for k in &on_broken {
            let wire = c.wire_key(k.as_bytes()).unwrap();
            probe(&mc.addr()).set(&wire, b"elsewhere", 0).unwrap();
        }
        let r = c.get(&on_broken[0]);
        assert!(
            matches!(r, Err(Error::Io { .. }) | Err(Error::Protocol { .. })),
            "{preset}: a read sent to the broken server must fail, got {r:?}"
        );
        assert_eq!(c.metrics()[0].failovers, 0, "{preset}");

        let c = preset_client(preset, &addrs);
        let wire = c.wire_key(on_broken[1].as_bytes()).unwrap();
        probe(&mc.addr()).delete(&wire).unwrap();
        let r = c.set(&on_broken[1], b"new", 0);
        assert!(
            r.is_err(),
            "{preset}: a set sent to the broken server: {r:?}"
        );
        assert_eq!(
            probe(&mc.addr()).get(&wire).unwrap(),
            None,
            "{preset}: not resent"
        );

        let c = preset_client(preset, &addrs);
        for r in c.get_multi(&on_broken) {
            assert!(
                r.is_err(),
                "{preset}: multi-get sent to the broken server: {r:?}"
            );
        }
    }
}

#[test]
fn fail_fast_still_fails_the_call() {
    let f = fleet();
    let c = Client::builder()
        .servers(&f.addrs)
        .distribution(mcpool::Distribution::PythonMemcached)
        .failover(FailoverPolicy::FailFast)
        .failure_limit(1)
        .build()
        .unwrap();
    let (on_dead, others) = keys_of(&c, f.dead, 4);
    assert!(matches!(c.set(&on_dead[0], b"v", 0), Err(Error::Io { .. })));
    assert!(matches!(c.get(&on_dead[1]), Err(Error::ServerDead { .. })));
    let keys: Vec<&String> = on_dead.iter().chain(&others).collect();
    for (k, r) in keys.iter().zip(c.get_multi(&keys)) {
        assert_eq!(r.is_err(), on_dead.contains(k), "{k}: {r:?}");
    }
    assert_eq!(c.metrics()[f.dead].failovers, 0);
    for k in &on_dead {
        assert!(f.holders(k.as_bytes()).is_empty(), "{k}");
    }
}

// ---- eject: every key placed by the table without the dead servers -------------------------

/// Calls keys of list position `dead` until `c` marks it dead (bounded).
fn mark_dead(c: &Client, dead: usize) {
    let tag = unique("md");
    let key = (0..20_000)
        // varying at the front: a hash such as Java's String.hashCode puts keys that differ
        // only at the end on one stretch of a continuum
        .map(|i| format!("{i}-{tag}"))
        .find(|k| c.server_for(k).unwrap() == dead)
        .expect("a key of the dead server");
    for _ in 0..10 {
        if !c.server_states()[dead].alive {
            return;
        }
        let _ = c.get(&key);
    }
    panic!("position {dead} never marked dead");
}

/// Where the router built without `dead` puts `key`, as an index into the full list.
fn without_dead(c: &Client, dead: usize, key: &str) -> usize {
    let cfg = c.config();
    let rest: Vec<ServerSpec> = cfg
        .servers
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != dead)
        .map(|(_, s)| s.clone())
        .collect();
    let r = Router::new(&cfg.distribution, &rest).unwrap();
    let j = r.locate(&c.wire_key(key.as_bytes()).unwrap());
    if j >= dead {
        j + 1
    } else {
        j
    }
}

/// A client of `f`'s servers with `weights`, `distribution` and `failover`.
fn eject_client(f: &Fleet, weights: &[u32], distribution: &str, failover: &str) -> Client {
    eject_builder(f, weights, distribution, failover)
        .build()
        .unwrap()
}

fn eject_builder(f: &Fleet, weights: &[u32], distribution: &str, failover: &str) -> ClientBuilder {
    let mut b = Client::builder()
        .set("distribution", distribution)
        .unwrap()
        .set("failover", failover)
        .unwrap()
        .failure_limit(1)
        .connect_timeout(Duration::from_millis(500))
        .io_timeout(Duration::from_millis(500))
        .retry_timeout(Duration::from_secs(60))
        .retry_timeout_max(Duration::from_secs(60));
    for (a, w) in f.addrs.iter().zip(weights) {
        b = b.server_weighted(a, *w);
    }
    b
}

/// Stores `keys` through `c` (one `set_multi`, then flushed and again key by key) and checks
/// each lands where `want` says; returns how many keys of live servers moved.
fn lands_where(f: &Fleet, c: &Client, keys: &[String], want: &dyn Fn(&str) -> usize) -> usize {
    let what = c.config().distribution.to_string();
    f.flush();
    let pairs: Vec<(&String, &[u8])> = keys.iter().map(|k| (k, &b"v"[..])).collect();
    for (k, r) in keys.iter().zip(c.set_multi(&pairs, 0)) {
        r.unwrap_or_else(|e| panic!("{what} {k}: {e}"));
    }
    for k in keys {
        assert_eq!(
            f.holders(k.as_bytes()),
            vec![want(k)],
            "{what} {k}: set_multi"
        );
    }
    f.flush();
    for k in keys {
        c.set(k, b"v", 0)
            .unwrap_or_else(|e| panic!("{what} {k}: {e}"));
        assert_eq!(f.holders(k.as_bytes()), vec![want(k)], "{what} {k}: set");
        assert_eq!(c.get(k).unwrap().as_deref(), Some(&b"v"[..]), "{what} {k}");
    }
    keys.iter()
        .filter(|k| {
            let home = c.server_for(k).unwrap();
            home != f.dead && home != want(k)
        })
        .count()
}

#[test]
fn eject_places_every_key_by_the_table_without_the_dead_server() {
    let f = fleet();
    let tag = unique("ej");
    let keys: Vec<String> = (0..300).map(|i| format!("{tag}-{i}")).collect();
    // (distribution, weights, failover, whether live servers' keys must move)
    let cases: &[(&str, [u32; 4], &str, bool)] = &[
        // (libmemcached's own modula moves no key: route::tests libmemcached_modula_ejects_no_key)
        ("cache-memcached", [1, 2, 1, 3], "eject", true),
        ("libmemcached-ketama-weighted", [1, 2, 1, 3], "eject", true),
        ("pylibmc:ketama_weighted=1", [1, 2, 1, 3], "eject", true),
        (
            "twemproxy:hash=md5,distribution=modula",
            [1, 1, 1, 1],
            "eject",
            true,
        ),
        (
            "twemproxy:hash=md5,distribution=ketama",
            [1, 2, 1, 3],
            "eject",
            true,
        ),
        ("libmemcached-ketama", [1, 1, 1, 1], "eject", false),
        // rehash is eject for a profile whose client has no rule of its own
        (
            "twemproxy:hash=md5,distribution=modula",
            [1, 1, 1, 1],
            "rehash",
            true,
        ),
        ("pymemcache-rendezvous", [1, 1, 1, 1], "eject", false),
    ];
    for (dist, weights, failover, moves) in cases {
        let c = eject_client(&f, weights, dist, failover);
        mark_dead(&c, f.dead);
        let moved = lands_where(&f, &c, &keys, &|k| without_dead(&c, f.dead, k));
        assert_eq!(
            moved > 0,
            *moves,
            "{dist} {failover}: {moved} live keys moved"
        );
        // Not the dead server's keys only: before the fix this count was 0.
        eprintln!("{dist} {failover}: {moved} of 300 keys of live servers moved");
    }
    f.flush();
}

/// A peer's script run with the fleet's servers and keys; then where each key is.
fn peer_holders(
    f: &Fleet,
    weights: &[u32],
    keys: &[String],
    program: &str,
    args: &[&str],
    script: &str,
) -> Option<Vec<Vec<usize>>> {
    f.flush();
    let list = f
        .addrs
        .iter()
        .zip(weights)
        .map(|(a, w)| format!("{a}={w}"))
        .collect::<Vec<_>>()
        .join(",");
    let script = script
        .replace("@SERVERS@", &list)
        .replace("@KEYS@", &keys.join(","));
    if run_peer(program, args, &script).is_none() {
        assert!(
            std::env::var("CI").map_or(true, |v| v != "true"),
            "the real library is missing"
        );
        return None;
    }
    Some(keys.iter().map(|k| f.holders(k.as_bytes())).collect())
}

#[test]
fn eject_places_keys_where_pylibmc_with_auto_eject_does() {
    let script = r#"
import sys
try:
    import pylibmc
except ImportError:
    sys.stderr.write("MISSING python3-pylibmc\n")
    sys.exit(0)
servers = ["%s:%s" % tuple(s.split("=")) for s in "@SERVERS@".split(",")]
keys = "@KEYS@".split(",")
mc = pylibmc.Client(servers, behaviors={"auto_eject": 1, "failure_limit": 1,
                                        "retry_timeout": 60, "ketama_weighted": True})
for _ in range(5):  # until the dead server is ejected: no set fails
    errors = 0
    for k in keys:
        try:
            mc.set(k, "v")
        except pylibmc.Error:
            errors += 1
    if errors == 0:
        break
else:
    sys.exit("the dead server was never ejected")
import socket
for s in servers:  # forget the stores from before the ejection (the dead one refuses)
    host, port = s.split(":")[:2]
    try:
        c = socket.create_connection((host, int(port)), timeout=5)
        c.sendall(b"flush_all\r\n")
        c.makefile("rb").readline()
        c.close()
    except OSError:
        pass
for k in keys:
    if not mc.set(k, "v"):
        sys.exit("set %s failed" % k)
"#;
    let f = fleet();
    let weights = [1u32, 2, 1, 3];
    let tag = unique("pyl");
    let keys: Vec<String> = (0..500).map(|i| format!("{tag}-{i}")).collect();
    let Some(theirs) = peer_holders(&f, &weights, &keys, "/usr/bin/python3", &["-c"], script)
    else {
        return;
    };
    for dist in ["libmemcached-ketama-weighted", "pylibmc:ketama_weighted=1"] {
        let c = eject_client(&f, &weights, dist, "eject");
        mark_dead(&c, f.dead);
        let want = |k: &str| {
            let i = keys.iter().position(|x| x == k).unwrap();
            assert_eq!(theirs[i].len(), 1, "pylibmc stored {k} on {:?}", theirs[i]);
            theirs[i][0]
        };
        let moved = lands_where(&f, &c, &keys, &want);
        assert!(moved > 0, "{dist}: no live key moved");
    }
    f.flush();
}

#[test]
fn eject_places_keys_where_nutcracker_with_auto_eject_hosts_does() {
    let script = r#"
import shutil, socket, subprocess, sys, tempfile
if shutil.which("nutcracker") is None:
    sys.stderr.write("MISSING nutcracker\n")
    sys.exit(0)
servers = [s.split("=") for s in "@SERVERS@".split(",")]
keys = "@KEYS@".split(",")
def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
port = free_port()
d = tempfile.mkdtemp(prefix="mcpool-nut")
lines = "".join("   - %s:%s\n" % (a, w) for a, w in servers)
open(d + "/n.yml", "w").write("""pool:
  listen: 127.0.0.1:%d
  hash: @HASH@
  distribution: @DIST@
  auto_eject_hosts: true
  server_retry_timeout: 600000
  server_failure_limit: 1
  timeout: 2000
  servers:
%s""" % (port, lines))
nut = subprocess.Popen(["nutcracker", "-a", "127.0.0.1", "-s", str(free_port()), "-c", d + "/n.yml",
                        "-o", d + "/n.log"])
def command(addr, line):
    host, p = addr.rsplit(":", 1)
    s = socket.create_connection((host, int(p)), timeout=5)
    s.sendall(line)
    r = s.makefile("rb").readline()
    s.close()
    return r
try:
    for _ in range(2000):  # until it listens (bounded)
        try:
            socket.create_connection(("127.0.0.1", port), timeout=5).close()
            break
        except OSError:
            if nut.poll() is not None:
                sys.exit("nutcracker exited")
    else:
        sys.exit("nutcracker does not listen")
    proxy = "127.0.0.1:%d" % port
    def set_all():
        return sum(command(proxy, b"set %s 0 0 1\r\nv\r\n" % k.encode()) != b"STORED\r\n"
                   for k in keys)
    for _ in range(10):  # until the dead server is ejected (bounded)
        if set_all() == 0:
            break
    else:
        sys.exit("the dead server was never ejected")
    for a, _ in servers:  # forget the stores from before the ejection
        try:
            command(a, b"flush_all\r\n")
        except OSError:
            pass
    if set_all() != 0:
        sys.exit("a set failed after the ejection")
finally:
    nut.kill()
    nut.wait()
    shutil.rmtree(d, ignore_errors=True)
"#;
    let f = fleet();
    for (dist, hash, weights) in [
        ("modula", "md5", [1u32, 1, 1, 1]),
        ("ketama", "md5", [1, 2, 1, 3]),
    ] {
        let tag = unique("nut");
        let keys: Vec<String> = (0..300).map(|i| format!("{tag}-{i}")).collect();
        let script = script.replace("@DIST@", dist).replace("@HASH@", hash);
        let Some(theirs) = peer_holders(&f, &weights, &keys, "/usr/bin/python3", &["-c"], &script)
        else {
            return;
        };
        let mine = format!("twemproxy:hash={hash},distribution={dist}");
        let c = eject_client(&f, &weights, &mine, "eject");
        mark_dead(&c, f.dead);
        let want = |k: &str| {
            let i = keys.iter().position(|x| x == k).unwrap();
            assert_eq!(
                theirs[i].len(),
                1,
                "nutcracker stored {k} on {:?}",
                theirs[i]
            );
            theirs[i][0]
        };
        let moved = lands_where(&f, &c, &keys, &want);
        assert!(moved > 0, "{mine}: no live key moved");
    }
    f.flush();
}

// ---- spymemcached: FailureMode.Redistribute ------------------------------------------------

/// spymemcached 2.12.3 storing keys with one server down: waits until its live servers are
/// connected, then sets each key and prints `stored N`.
const SPY_JAVA: &str = r#"
import net.spy.memcached.*;
import java.util.concurrent.TimeUnit;
public class SpyRedistribute {
  public static void main(String[] a) throws Exception {
    // "default", "ketama", or "LOCATOR:HASH" for a ConnectionFactoryBuilder
    // (ARRAY_MOD:CRC_HASH, CONSISTENT:FNV1A_32_HASH), whose failure mode is the default's.
    ConnectionFactory cf;
    if (a[1].equals("ketama")) cf = new KetamaConnectionFactory();
    else if (a[1].equals("default")) cf = new DefaultConnectionFactory();
    else {
      String[] lh = a[1].split(":");
      cf = new ConnectionFactoryBuilder()
          .setLocatorType(ConnectionFactoryBuilder.Locator.valueOf(lh[0]))
          .setHashAlg(DefaultHashAlgorithm.valueOf(lh[1])).build();
    }
    MemcachedClient c = new MemcachedClient(cf, AddrUtil.getAddresses(a[0]));
    int live = Integer.parseInt(a[2]);
    for (int i = 0; i < 2000 && c.getAvailableServers().size() < live; i++) Thread.sleep(5);
    if (c.getAvailableServers().size() != live) throw new RuntimeException("not connected");
    int ok = 0;
    String[] keys = a[3].split(",");
    for (String k : keys) {
      try { if (c.set(k, 0, "v").get(3, TimeUnit.SECONDS)) ok++; } catch (Exception e) { }
    }
    System.out.println("stored " + ok);
    c.shutdown();
  }
}
"#;

#[test]
fn spymemcached_preset_sends_a_dead_servers_keys_where_spymemcached_redistributes_them() {
    let jar = "/usr/share/java/spymemcached.jar";
    let ci = std::env::var("CI").is_ok_and(|v| v == "true");
    if !Path::new(jar).exists() || !Path::new("/usr/bin/javac").exists() {
        assert!(!ci, "spymemcached or javac is missing");
        eprintln!("\n!!!!! MISSING libspymemcached-java / default-jdk: skipped !!!!!\n");
        return;
    }
    let dir = std::env::temp_dir().join(unique("spy-redistribute"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("SpyRedistribute.java"), SPY_JAVA).unwrap();
    let javac = Command::new("javac")
        .args(["-nowarn", "-cp", jar, "-d"])
        .arg(&dir)
        .arg(dir.join("SpyRedistribute.java"))
        .output()
        .unwrap();
    assert!(
        javac.status.success(),
        "{}",
        String::from_utf8_lossy(&javac.stderr)
    );
    // Three servers, the middle one down.
    let live: Vec<Memcached> = (0..2).map(|_| Memcached::start(&[])).collect();
    let down = refusing_port();
    let addrs = vec![live[0].addr(), down.addr(), live[1].addr()];
    let holders = |k: &str| -> Vec<usize> {
        [(0, &live[0]), (2, &live[1])]
            .into_iter()
            .filter(|(_, mc)| probe(&mc.addr()).get(k).unwrap().is_some())
            .map(|(i, _)| i)
            .collect()
    };
    let flush = || {
        for mc in &live {
            probe(&mc.addr()).flush_all(None).unwrap();
        }
    };
    for (kind, distribution) in [
        ("default", None),
        ("ketama", Some("spymemcached-ketama")),
        (
            "ARRAY_MOD:CRC_HASH",
            Some("spymemcached:locator=array_mod,hash=crc"),
        ),
        (
            "CONSISTENT:FNV1A_32_HASH",
            Some("spymemcached:locator=consistent,hash=fnv1a_32"),
        ),
        (
            "CONSISTENT:NATIVE_HASH",
            Some("spymemcached:locator=consistent,hash=native"),
        ),
    ] {
        let mut b = preset_builder("spymemcached", &addrs);
        if let Some(d) = distribution {
            b = b.set("distribution", d).unwrap();
        }
        let c = b.build().unwrap();
        // The varying part first: String.hashCode (NATIVE_HASH) of keys that differ only at
        // the end falls on one stretch of a continuum. 60 of the 300 keys are the second
        // server's (the one that dies), whatever the ports drawn give it.
        let tag = unique("spy");
        let (mut keys, mut on_second) = (Vec::new(), 0);
        for i in 0..100_000u64 {
            let k = format!("{:08x}-{tag}", (i + 1).wrapping_mul(0x9e37_79b9) as u32);
            let second = c.server_for(&k).unwrap() == 1;
            if (second && on_second < 60) || (!second && keys.len() - on_second < 240) {
                on_second += usize::from(second);
                keys.push(k);
            }
            if keys.len() == 300 {
                break;
            }
        }
        assert_eq!((keys.len(), on_second), (300, 60), "{kind}: keys drawn");
        flush();
        let run = Command::new("java")
            .arg("-cp")
            .arg(format!("{jar}:{}", dir.display()))
            .args([
                "SpyRedistribute",
                &addrs.join(" "),
                kind,
                "2",
                &keys.join(","),
            ])
            .output()
            .unwrap();
        assert!(
            run.status.success(),
            "{kind}: {}",
            String::from_utf8_lossy(&run.stderr)
        );
        let theirs: Vec<Vec<usize>> = keys.iter().map(|k| holders(k)).collect();
        flush();
        assert_eq!(c.config().failover, FailoverPolicy::Rehash);
        mark_dead(&c, 1);
        let mut on_dead = 0;
        for (k, t) in keys.iter().zip(&theirs) {
            let r = c.set(k, b"v", 0);
            // A key whose whole sequence is down: spymemcached queues it on the dead
            // primary (not stored), mcpool answers ServerDead.
            assert_eq!(r.is_ok(), !t.is_empty(), "{kind} {k}: {r:?}");
            assert_eq!(&holders(k), t, "{kind} {k}: mcpool vs spymemcached");
            on_dead += usize::from(c.server_for(k).unwrap() == 1);
        }
        assert_eq!(on_dead, 60, "{kind}: keys on the dead server");
        eprintln!("{kind}: {on_dead} keys of the dead server, all where spymemcached puts them");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `eject_after`: a dead server's keys move only once it has been marked dead that many times
/// in a row (its marking, then each failed retry after `retry_timeout`); until then they fail
/// with `ServerDead` and every other key stays where it lives. libmemcached counts its
/// `failure_limit` this way before `auto_eject` removes a server (measured with pylibmc 1.6.3:
/// `failure_limit` 2 and `retry_timeout` 1 s ejected a refused server after 1.6 s of traffic,
/// 3 after 3.6 s; docs/failover.md), where mcpool ejected at once.
#[test]
fn eject_after_moves_keys_only_after_that_many_failed_periods() {
    let f = fleet();
    // Long enough for the checks after the ejection to finish before the next retry is due
    // (a due server is back in the ring, and keys go home to retry it).
    let retry = Duration::from_millis(1000);
    let mut b = Client::builder()
        .set("distribution", "libmemcached-ketama-weighted")
        .unwrap()
        .set("failover", "eject")
        .unwrap()
        .failure_limit(1)
        .eject_after(3)
        .connect_timeout(Duration::from_millis(500))
        .io_timeout(Duration::from_millis(500))
        .retry_timeout(retry)
        .retry_timeout_max(retry);
    for (a, w) in f.addrs.iter().zip([1u32, 2, 1, 3]) {
        b = b.server_weighted(a, w);
    }
    let c = b.build().unwrap();
    let tag = unique("ea");
    let keys: Vec<String> = (0..300).map(|i| format!("{i}-{tag}")).collect();
    let dead_key = keys
        .iter()
        .find(|k| c.server_for(k).unwrap() == f.dead)
        .expect("a key of the dead server")
        .clone();
    // Keys of live servers that the ring without the dead server puts elsewhere.
    let movers: Vec<&String> = keys
        .iter()
        .filter(|k| {
            let home = c.server_for(k).unwrap();
            home != f.dead && without_dead(&c, f.dead, k) != home
        })
        .collect();
    assert!(!movers.is_empty(), "the weighted ring moves some live keys");
    for marking in 1..=3u32 {
        // Each failed period: the dead server's key fails (connect refused: the marking),
        // then, while it is in timeout, fails at once as ServerDead.
        if marking > 1 {
            wait_until("the retry to come due", Duration::from_secs(5), || {
                c.server_states()[f.dead].alive
            });
        }
        let first = c.get(&dead_key);
        if marking == 3 {
            // The failed retry that ejects it: the same call goes on to the key's new server.
            assert_eq!(first.unwrap(), None, "moved within the call that ejected");
        } else {
            assert!(first.is_err(), "marking {marking}: {first:?}");
        }
        if marking < 3 {
            let again = c.get(&dead_key);
            assert!(
                matches!(again, Err(Error::ServerDead { .. })),
                "marking {marking}: the dead server's key fails, not moved: {again:?}"
            );
            f.flush();
            for k in &movers {
                assert!(c.set(k, b"v", 0).unwrap().is_stored());
                let home = c.server_for(k).unwrap();
                assert_eq!(
                    f.holders(k.as_bytes()),
                    vec![home],
                    "marking {marking}: {k} moved early"
                );
            }
        }
    }
    // Marked three times: ejected, keys placed by the ring without it.
    f.flush();
    for k in movers.iter().take(10) {
        assert!(c.set(k, b"v", 0).unwrap().is_stored());
        let want = without_dead(&c, f.dead, k);
        assert_eq!(
            f.holders(k.as_bytes()),
            vec![want],
            "{k}: ejected, placed without it"
        );
    }
    assert!(c.set(&dead_key, b"v", 0).unwrap().is_stored());
    f.flush();
}

/// Tester finding pycompat 1: the pymemcache preset moved a dead server's keys at its second
/// failed call, 0.4 s into an outage that pymemcache's HashClient (retry_attempts 2,
/// retry_timeout 1 s) rode out, and the two programs read different values for a minute.
/// Now, as HashClient: the server is left alone a second after each failure, its keys fail
/// meanwhile, and they move on its third failed period.
#[test]
fn the_pymemcache_preset_moves_keys_on_the_third_failed_period_a_second_apart() {
    let f = fleet();
    let c = Client::builder()
        .set("preset", "pymemcache")
        .unwrap()
        .servers(&f.addrs)
        .build()
        .unwrap();
    let (on_dead, _) = keys_of(&c, f.dead, 1);
    let k = &on_dead[0];
    let started = std::time::Instant::now();
    // The first failure marks it dead; the calls of the next second fail at once.
    assert!(c.set(k, b"v", 0).is_err());
    assert!(!c.server_states()[f.dead].alive);
    for _ in 0..3 {
        assert!(matches!(c.get(k), Err(Error::ServerDead { .. })));
    }
    // Its keys move once it has failed three periods: not before about 2 s.
    let mut moved_at = None;
    wait_until("the key to move", Duration::from_secs(10), || {
        std::thread::sleep(Duration::from_millis(50));
        if c.set(k, b"v", 0).is_ok() {
            moved_at = Some(started.elapsed());
            return true;
        }
        false
    });
    let at = moved_at.unwrap();
    assert!(at >= Duration::from_millis(1900), "moved after {at:?}");
    assert_eq!(f.holders(&c.wire_key(k.as_bytes()).unwrap()).len(), 1);
}

/// Tester finding noreply 1: under `eject` with a modulo profile, the batch whose call ejects
/// a server had set (or deleted) the live servers' keys where they lived before the
/// ejection, and the same client's next read looked where they live after it: the older
/// value another client had written there after its own ejection. Such items are done once
/// more on their new server within the call: every protocol, set_multi, set_multi_noreply
/// and delete_multi.
#[test]
fn a_batch_that_ejects_a_server_leaves_its_own_writes_where_the_next_read_looks() {
    let f = fleet();
    for protocol in ["text", "meta", "binary"] {
        let prefix = unique(protocol);
        let client = || {
            eject_builder(&f, &[1, 1, 1, 1], "cache-memcached", "eject")
                .set("protocol", protocol)
                .unwrap()
                .key_prefix(prefix.as_str())
                .build()
                .unwrap()
        };
        let keys: Vec<String> = (0..40).map(|i| format!("k{i}")).collect();
        let with = |v: &'static [u8]| -> Vec<(&str, &[u8])> {
            keys.iter().map(|k| (k.as_str(), v)).collect()
        };
        // a client that has ejected writes OLD where every key lives without the dead server
        let first = client();
        first.set_multi(&with(b"OLD"), 0);
        assert!(first.set_multi(&with(b"OLD"), 0).iter().all(Result::is_ok));
        let hits = |c: &Client, v: &[u8]| {
            c.get_multi(&keys)
                .into_iter()
                .filter(|r| matches!(r, Ok(Some(it)) if &it.value[..] == v))
                .count()
        };
        assert_eq!(hits(&first, b"OLD"), keys.len(), "{protocol}");
        // a client that has not: its batch ejects the server during the call
        let second = client();
        assert!(second.set_multi(&with(b"NEW"), 0).iter().all(Result::is_ok));
        assert_eq!(hits(&second, b"NEW"), keys.len(), "{protocol} set_multi");
        let third = client();
        third.set_multi_noreply(&with(b"NR"), 0).unwrap();
        assert_eq!(
            hits(&third, b"NR"),
            keys.len(),
            "{protocol} set_multi_noreply"
        );
        let fourth = client();
        let deleted = fourth.delete_multi(&keys);
        assert!(deleted.iter().all(Result::is_ok), "{deleted:?}");
        let left = fourth.get_multi(&keys);
        assert!(
            left.iter().all(|r| matches!(r, Ok(None))),
            "{protocol} delete_multi"
        );
    }
}

/// A server that hangs in a call whose other keys moved on from a refused server (`rehash`,
/// `eject`): the moved keys that land on the hung server get its error from the first wait,
/// not a second wait, so the call costs one I/O timeout and counts one failure against it
/// (tester finding partial 1: two waits, and two failures in one call marked it dead with
/// `failure_limit` 2). Reads and writes; the hung server is a real memcached, stopped.
#[test]
fn a_hung_server_costs_a_call_with_moved_keys_one_failure() {
    for policy in ["rehash", "eject"] {
        for write in [false, true] {
            let live = Memcached::start(&[]);
            let down = refusing_port();
            let hung = Memcached::start(&[]);
            let c = ClientBuilder::new()
                .set(
                    "servers",
                    &format!("{},{},{}", live.addr(), down.addr(), hung.addr()),
                )
                .unwrap()
                .set("failover", policy)
                .unwrap()
                .set("failure_limit", "2")
                .unwrap()
                .set("retry_timeout", "30s")
                .unwrap()
                .set("io_timeout", "300ms")
                .unwrap()
                .set("min_idle", "0")
                .unwrap()
                .build()
                .unwrap();
            let keys: Vec<String> = (0..60).map(|i| unique(&format!("hung{i}-"))).collect();
            let items: Vec<(&str, &[u8])> = keys.iter().map(|k| (k.as_str(), &b"v"[..])).collect();
            // the refused server's first failure (its second, in the call, moves its keys)
            let _ = c.set_multi(&items, 0);
            assert!(
                keys.iter().any(|k| c.server_for(k).unwrap() == 1),
                "{policy}"
            );
            assert_eq!(c.server_states()[1].failures, 1, "{policy}");
            hung.freeze();
            if write {
                let _ = c.set_multi(&items, 0);
            } else {
                let _ = c.get_multi(&keys);
            }
            let states = c.server_states();
            hung.thaw();
            let what = format!(
                "{policy}, {}",
                if write { "set_multi" } else { "get_multi" }
            );
            assert!(
                !states[1].alive,
                "{what}: the refused server's keys moved: {states:?}"
            );
            assert_eq!(states[2].failures, 1, "{what}: {states:?}");
            assert!(
                states[2].alive,
                "{what}: marked dead by one call: {states:?}"
            );
        }
    }
}
