//! Several real memcached processes: keys land where the placement profile says (namespace
//! handling included), a dead or stopped server affects only its own keys, each failover
//! policy behaves as documented, keys go back when a server returns, and the client works
//! through twemproxy (nutcracker).
mod common;

use common::{unique, wait_until, Memcached};
use mcpool::{Client, Distribution, Error, FailoverPolicy, Router, ServerSpec};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn servers(n: usize) -> Vec<Memcached> {
    (0..n).map(|_| Memcached::start(&[])).collect()
}

fn addrs(mcs: &[Memcached]) -> Vec<String> {
    mcs.iter().map(Memcached::addr).collect()
}

/// Which servers hold `wire_key`, probed with plain single-server clients.
fn holders(mcs: &[Memcached], wire_key: &[u8]) -> Vec<usize> {
    mcs.iter()
        .enumerate()
        .filter(|(_, mc)| {
            let probe = Client::new([mc.addr()]).unwrap();
            probe.get(wire_key).unwrap().is_some()
        })
        .map(|(i, _)| i)
        .collect()
}

#[test]
fn keys_land_where_the_profile_says_with_and_without_namespace_hashing() {
    let mcs = servers(3);
    for (dist, hashes_prefix) in [
        (Distribution::CacheMemcached, false),
        (Distribution::PythonMemcached, true),
    ] {
        assert_eq!(dist.hashes_namespace(), hashes_prefix);
        let prefix = unique("ns");
        let mut b = Client::builder()
            .distribution(dist.clone())
            .key_prefix(prefix.clone());
        for (a, w) in addrs(&mcs).iter().zip([1, 2, 1]) {
            b = b.server_weighted(a, w);
        }
        let c = b.build().unwrap();
        let specs: Vec<ServerSpec> = c.config().servers.clone();
        let router = Router::new(&dist, &specs).unwrap();
        for i in 0..150 {
            let key = format!("user:{i}");
            c.set(&key, b"v", 0).unwrap();
            let wire = format!("{prefix}{key}");
            let hashed = if hashes_prefix {
                wire.as_str()
            } else {
                key.as_str()
            };
            let expected = router.locate(hashed.as_bytes());
            assert_eq!(c.server_for(&key).unwrap(), expected, "{dist} {key}");
            assert_eq!(
                holders(&mcs, wire.as_bytes()),
                vec![expected],
                "{dist} {key}"
            );
        }
    }
}

fn keyed_client(mcs: &[Memcached], policy: FailoverPolicy) -> Client {
    Client::builder()
        .servers(addrs(mcs))
        .failover(policy)
        .failure_limit(1)
        .retry_timeout(Duration::from_millis(200))
        .retry_timeout_max(Duration::from_millis(200))
        .io_timeout(Duration::from_millis(300))
        .connect_timeout(Duration::from_millis(300))
        .key_prefix(unique("fo"))
        .build()
        .unwrap()
}

#[test]
fn a_killed_server_fails_only_its_own_keys_under_fail_fast() {
    let mut mcs = servers(3);
    let c = keyed_client(&mcs, FailoverPolicy::FailFast);
    let keys: Vec<String> = (0..120).map(|i| format!("k{i}")).collect();
    for k in &keys {
        c.set(k, k.as_bytes(), 0).unwrap();
    }
    let victim = 1;
    mcs[victim].kill();
    for round in 0..3 {
        let start = Instant::now();
        let got = c.get_multi(&keys);
        assert!(
            start.elapsed() < Duration::from_secs(3),
            "round {round} hung"
        );
        for (k, r) in keys.iter().zip(got) {
            if c.server_for(k).unwrap() == victim {
                assert!(
                    r.is_err(),
                    "{k}: a dead server's key must be an error, got {r:?}"
                );
            } else {
                assert_eq!(r.unwrap().unwrap().value, k.as_bytes(), "{k}");
            }
        }
    }
    let states = c.server_states();
    assert!(
        !states[victim].alive && states[0].alive && states[2].alive,
        "{states:?}"
    );
    let k = keys
        .iter()
        .find(|k| c.server_for(k).unwrap() == victim)
        .unwrap();
    assert!(matches!(
        c.get(k),
        Err(Error::ServerDead { .. }) | Err(Error::Io { .. })
    ));
}

#[test]
fn rehash_and_eject_move_a_dead_servers_keys_and_bring_them_back() {
    for policy in [FailoverPolicy::Rehash, FailoverPolicy::Eject] {
        let mut mcs = servers(3);
        let c = keyed_client(&mcs, policy);
        let victim = 2;
        let port = mcs[victim].port;
        let keys: Vec<String> = (0..60)
            .map(|i| format!("r{i}"))
            .filter(|k| c.server_for(k).unwrap() == victim)
            .take(10)
            .collect();
        assert!(!keys.is_empty());
        mcs[victim].kill();
        // The first call finds the server dead (one failure marks it) and its key moves on
        // within that call (docs/failover.md).
        c.set(&keys[0], b"x", 0)
            .unwrap_or_else(|e| panic!("{policy:?}: the call that finds it dead: {e}"));
        for k in &keys {
            let start = Instant::now();
            c.set(k, b"moved", 0)
                .unwrap_or_else(|e| panic!("{policy:?} {k}: {e}"));
            assert_eq!(c.get(k).unwrap().unwrap(), b"moved", "{policy:?}");
            assert!(start.elapsed() < Duration::from_secs(2));
        }
        // The server comes back (empty) on the same port: after the retry delay the keys
        // go home again.
        mcs[victim] = Memcached::start_on(port, &[]);
        wait_until("keys to go back", Duration::from_secs(10), || {
            c.set(&keys[0], b"home", 0).is_ok()
                && holders(&mcs, &c.wire_key(keys[0].as_bytes()).unwrap()).contains(&victim)
        });
        for k in &keys {
            c.set(k, b"home", 0).unwrap();
            let wire = c.wire_key(k.as_bytes()).unwrap();
            assert!(holders(&mcs, &wire).contains(&victim), "{policy:?} {k}");
        }
    }
}

#[test]
fn a_stopped_server_times_out_within_bounds_and_recovers() {
    let mcs = servers(2);
    let c = keyed_client(&mcs, FailoverPolicy::FailFast);
    let keys: Vec<String> = (0..40).map(|i| format!("s{i}")).collect();
    for k in &keys {
        c.set(k, b"v", 0).unwrap();
    }
    let stopped = 0;
    mcs[stopped].freeze();
    let start = Instant::now();
    let got = c.get_multi(&keys);
    let took = start.elapsed();
    mcs[stopped].thaw();
    assert!(
        took < Duration::from_millis(1500),
        "blocked {took:?}, io_timeout is 300 ms"
    );
    for (k, r) in keys.iter().zip(got) {
        if c.server_for(k).unwrap() == stopped {
            assert!(
                matches!(
                    r,
                    Err(Error::IoTimeout { .. }) | Err(Error::ServerDead { .. })
                ),
                "{k}: {r:?}"
            );
        } else {
            assert!(r.unwrap().is_some(), "{k}");
        }
    }
    wait_until("recovery after SIGCONT", Duration::from_secs(10), || {
        c.get_multi(&keys).iter().all(|r| matches!(r, Ok(Some(_))))
    });
}

/// nutcracker (twemproxy) in front of `backends`, on a free loopback port; killed on drop.
struct Twemproxy {
    child: Child,
    port: u16,
    _dir: std::path::PathBuf,
}

impl Drop for Twemproxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn twemproxy(backends: &[Memcached]) -> Option<Twemproxy> {
    let lines: Vec<String> = backends
        .iter()
        .enumerate()
        .map(|(i, mc)| format!("127.0.0.1:{}:1 node{i}", mc.port))
        .collect();
    twemproxy_with(&lines)
}

/// nutcracker (md5, ketama) over its server `lines` as its YAML takes them
/// (`host:port:weight name`).
fn twemproxy_with(lines: &[String]) -> Option<Twemproxy> {
    if Command::new("nutcracker")
        .arg("--version")
        .output()
        .is_err()
    {
        assert!(
            std::env::var("CI").is_err(),
            "nutcracker missing in CI (Debian: nutcracker)"
        );
        eprintln!("SKIP: nutcracker not installed (Debian: apt-get install nutcracker)");
        return None;
    }
    let dir = std::env::temp_dir().join(unique("twem"));
    std::fs::create_dir_all(&dir).unwrap();
    let port = common::free_port();
    let stats = common::free_port();
    let servers: String = lines.iter().map(|l| format!("   - {l}\n")).collect();
    let conf = format!(
        "pool:\n  listen: 127.0.0.1:{port}\n  hash: md5\n  distribution: ketama\n  \
         auto_eject_hosts: false\n  timeout: 2000\n  servers:\n{servers}"
    );
    let path = dir.join("nutcracker.yml");
    std::fs::write(&path, conf).unwrap();
    let child = Command::new("nutcracker")
        .arg("-c")
        .arg(&path)
        .args(["-s", &stats.to_string(), "-a", "127.0.0.1", "-o"])
        .arg(dir.join("log"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let proxy = Twemproxy {
        child,
        port,
        _dir: dir,
    };
    wait_until("nutcracker to listen", Duration::from_secs(10), || {
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
    Some(proxy)
}

#[test]
fn the_command_suite_through_twemproxy() {
    let mcs = servers(3);
    let Some(proxy) = twemproxy(&mcs) else { return };
    let c = Client::builder()
        .server(&format!("127.0.0.1:{}", proxy.port))
        .key_prefix(unique("tw"))
        .build()
        .unwrap();
    let keys: Vec<String> = (0..100).map(|i| format!("t{i}")).collect();
    let items: Vec<(String, String)> = keys.iter().map(|k| (k.clone(), format!("v-{k}"))).collect();
    assert!(c
        .set_multi(&items, 0)
        .into_iter()
        .all(|r| r.unwrap().is_stored()));
    for ((k, v), r) in items.iter().zip(c.get_multi(&keys)) {
        assert_eq!(r.unwrap().unwrap().value, v.as_bytes(), "{k}");
    }
    assert!(!c.add("t1", b"x", 0).unwrap().is_stored());
    assert!(c.replace("t1", b"r", 0).unwrap().is_stored());
    assert!(c.append("t1", b">").unwrap().is_stored());
    assert!(c.prepend("t1", b"<").unwrap().is_stored());
    assert_eq!(c.get("t1").unwrap().unwrap(), b"<r>");
    let item = c.gets("t1").unwrap().unwrap();
    assert!(c.cas("t1", b"c", 0, item.cas.unwrap()).unwrap().is_stored());
    c.set("n", b"5", 0).unwrap();
    assert_eq!(c.incr("n", 2).unwrap(), Some(7));
    assert_eq!(c.decr("n", 10).unwrap(), Some(0));
    assert!(c.delete("t1").unwrap());
    assert_eq!(c.get("t1").unwrap(), None);
    // The keys are spread over the three backends, where the twemproxy profile says.
    let spread: Vec<usize> = (0..3)
        .map(|i| {
            keys.iter()
                .filter(|k| holders(&mcs[i..=i], &c.wire_key(k.as_bytes()).unwrap()) == vec![0])
                .count()
        })
        .collect();
    assert!(spread.iter().all(|&n| n > 10), "{spread:?}");
    let named: Vec<ServerSpec> = mcs
        .iter()
        .enumerate()
        .map(|(i, mc)| ServerSpec::parse(&format!("127.0.0.1:{}:node{i}", mc.port)).unwrap())
        .collect();
    let router = Router::new(&"twemproxy-ketama".parse().unwrap(), &named).unwrap();
    for k in keys.iter().filter(|k| *k != "t1") {
        let wire = c.wire_key(k.as_bytes()).unwrap();
        assert_eq!(holders(&mcs, &wire), vec![router.locate(&wire)], "{k}");
    }
}

/// Fleet F3: nutcracker servers named with digits only (`- 127.0.0.1:P:1 10`) could not be
/// configured (`host:port:10` is weight 10), and placement then differed from nutcracker's
/// on 7,275 of 9,995 keys. nutcracker's own line, `host:port:weight name`, is accepted as it
/// is: keys stored through real nutcracker are on the backend that `twemproxy-ketama` over
/// the same lines names.
#[test]
fn nutcracker_server_lines_with_digit_names_place_keys_as_nutcracker_does() {
    let mcs = servers(3);
    let lines: Vec<String> = mcs
        .iter()
        .zip([(1, "10"), (2, "20"), (1, "30")])
        .map(|(mc, (w, name))| format!("127.0.0.1:{}:{w} {name}", mc.port))
        .collect();
    assert_places_as_nutcracker(&addrs(&mcs), &lines, "nd");
}

/// nutcracker's socket line without a name, `/path:weight` (tester finding placement 1: the
/// weight was read as part of the path, so the server could not be reached and its ring
/// points were not nutcracker's).
#[test]
fn nutcracker_socket_lines_without_a_name_place_keys_as_nutcracker_does() {
    let dir = std::env::temp_dir().join(unique("twsock"));
    std::fs::create_dir_all(&dir).unwrap();
    let sock = dir.join("mc.sock").to_str().unwrap().to_owned();
    let tcp = servers(2);
    let unix = Memcached::start_unix(&sock);
    let lines = vec![
        format!("127.0.0.1:{}:1", tcp[0].port),
        format!("{sock}:2"),
        format!("127.0.0.1:{}:1", tcp[1].port),
    ];
    let backends = vec![tcp[0].addr(), sock.clone(), tcp[1].addr()];
    assert_places_as_nutcracker(&backends, &lines, "ns");
    drop(unix);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Keys set through nutcracker over its server `lines` land, server by server (`backends`,
/// the same servers as plain addresses), where mcpool's `twemproxy-ketama` over the same
/// lines, as every string surface takes them, places them; and mcpool reads them there.
fn assert_places_as_nutcracker(backends: &[String], lines: &[String], tag: &str) {
    let Some(proxy) = twemproxy_with(lines) else {
        return;
    };
    let through = Client::builder()
        .server(&format!("127.0.0.1:{}", proxy.port))
        .build()
        .unwrap();
    let tag = unique(tag);
    let keys: Vec<String> = (0..300).map(|i| format!("{tag}{i}")).collect();
    for k in &keys {
        assert!(through.set(k, b"v", 0).unwrap().is_stored());
    }
    // The same lines, as every string surface takes them (the CLI's --servers, C, bindings).
    let specs: Vec<ServerSpec> = lines
        .iter()
        .map(|l| ServerSpec::parse_entry(l, None).unwrap())
        .collect();
    let direct = Client::builder()
        .servers(lines.iter())
        .distribution("twemproxy-ketama".parse().unwrap())
        .build()
        .unwrap();
    let router = Router::new(&"twemproxy-ketama".parse().unwrap(), &specs).unwrap();
    let held: Vec<Vec<bool>> = backends
        .iter()
        .map(|addr| {
            let probe = Client::new([addr]).unwrap();
            probe
                .get_multi(&keys)
                .into_iter()
                .map(|r| r.unwrap().is_some())
                .collect()
        })
        .collect();
    let mut differ = 0;
    for (i, k) in keys.iter().enumerate() {
        let on: Vec<usize> = (0..backends.len()).filter(|&s| held[s][i]).collect();
        assert_eq!(on.len(), 1, "{k} on {on:?}");
        assert_eq!(direct.server_for(k).unwrap(), router.locate(k.as_bytes()));
        if on[0] != router.locate(k.as_bytes()) {
            differ += 1;
        }
        assert_eq!(direct.get(k).unwrap().as_deref(), Some(&b"v"[..]), "{k}");
    }
    assert_eq!(differ, 0, "keys placed elsewhere than nutcracker");
}

/// `store_multi_items` (add, replace, append, prepend, cas with per-item CAS), `touch_multi`
/// and `arith_multi`: the single commands' outcomes, in one pipelined request batch per
/// server (the `operations` counter counts a batch once per server), on every protocol.
#[test]
fn store_multi_items_every_command_one_batch_per_server() {
    use mcpool::{Protocol, SetItem, StoreCommand, StoreOutcome};
    let (a, b) = (Memcached::start(&[]), Memcached::start(&[]));
    for protocol in [Protocol::Text, Protocol::Meta, Protocol::Binary] {
        let c = Client::builder()
            .server(&a.addr())
            .server(&b.addr())
            .protocol(protocol)
            .key_prefix(unique("smi"))
            .build()
            .unwrap();
        let keys: Vec<String> = (0..100).map(|i| format!("k{i}")).collect();
        for k in keys.iter().step_by(2) {
            c.set(k, b"old", 0).unwrap();
        }
        let ops = |c: &Client| c.metrics().iter().map(|m| m.operations).collect::<Vec<_>>();
        let run = |cmd: StoreCommand, items: &[SetItem]| {
            let before = ops(&c);
            let out: Vec<StoreOutcome> = c
                .store_multi_items(cmd, items)
                .into_iter()
                .map(|r| r.unwrap())
                .collect();
            let after = ops(&c);
            let delta: Vec<u64> = after.iter().zip(&before).map(|(x, y)| x - y).collect();
            assert_eq!(delta, [1, 1], "{protocol:?} {cmd:?}: one batch per server");
            out
        };
        let items: Vec<SetItem> = keys
            .iter()
            .map(|k| SetItem::new(k.as_bytes(), b"new", 0))
            .collect();
        let want = |even: StoreOutcome, odd: StoreOutcome| -> Vec<StoreOutcome> {
            (0..100)
                .map(|i| if i % 2 == 0 { even } else { odd })
                .collect()
        };
        use StoreOutcome::{Exists, NotFound, NotStored, Stored};
        assert_eq!(
            run(StoreCommand::Add, &items),
            want(NotStored, Stored),
            "{protocol:?} add"
        );
        assert_eq!(c.get("k0").unwrap().as_deref(), Some(&b"old"[..]));
        assert_eq!(c.get("k1").unwrap().as_deref(), Some(&b"new"[..]));
        let more: Vec<String> = (0..100)
            .map(|i| {
                if i % 2 == 0 {
                    format!("k{i}")
                } else {
                    format!("none{i}")
                }
            })
            .collect();
        let tail: Vec<SetItem> = more
            .iter()
            .map(|k| SetItem::new(k.as_bytes(), b"+t", 0))
            .collect();
        let head: Vec<SetItem> = more
            .iter()
            .map(|k| SetItem::new(k.as_bytes(), b"h+", 0))
            .collect();
        let repl: Vec<SetItem> = more
            .iter()
            .map(|k| SetItem::new(k.as_bytes(), b"r", 0))
            .collect();
        assert_eq!(
            run(StoreCommand::Replace, &repl),
            want(Stored, NotStored),
            "{protocol:?}"
        );
        assert_eq!(
            run(StoreCommand::Append, &tail),
            want(Stored, NotStored),
            "{protocol:?}"
        );
        assert_eq!(
            run(StoreCommand::Prepend, &head),
            want(Stored, NotStored),
            "{protocol:?}"
        );
        assert_eq!(c.get("k0").unwrap().as_deref(), Some(&b"h+r+t"[..]));
        // cas: the current unique for even keys, a stale one for odd, a missing key last.
        let mut cas_keys: Vec<String> = keys[..10].to_vec();
        cas_keys.push("gone".into());
        let items: Vec<SetItem> = cas_keys
            .iter()
            .enumerate()
            .map(|(i, k)| {
                let cas = c.gets(k).unwrap().map_or(1, |it| it.cas.unwrap());
                SetItem {
                    cas: if i % 2 == 0 { cas } else { cas + 1000 },
                    ..SetItem::new(k.as_bytes(), b"cas", 0)
                }
            })
            .collect();
        let mut expect: Vec<StoreOutcome> = (0..10)
            .map(|i| if i % 2 == 0 { Stored } else { Exists })
            .collect();
        expect.push(NotFound);
        assert_eq!(
            run(StoreCommand::Cas(0), &items),
            expect,
            "{protocol:?} cas"
        );
        assert_eq!(c.get("k0").unwrap().as_deref(), Some(&b"cas"[..]));
        assert_eq!(c.get("k1").unwrap().as_deref(), Some(&b"new"[..]));
        // touch_multi and arith_multi: one batch per server too.
        let counters: Vec<String> = (0..40).map(|i| format!("n{i}")).collect();
        for (i, k) in counters.iter().enumerate().step_by(2) {
            c.set(k, format!("{}", i * 10).as_bytes(), 0).unwrap();
        }
        let once = |f: &dyn Fn()| {
            let before = ops(&c);
            f();
            let after = ops(&c);
            let delta: Vec<u64> = after.iter().zip(&before).map(|(x, y)| x - y).collect();
            assert_eq!(delta, [1, 1], "{protocol:?}: one batch per server");
        };
        let deltas: Vec<(&str, u64)> = counters.iter().map(|k| (k.as_str(), 3)).collect();
        once(&|| {
            let got: Vec<Option<u64>> = c
                .arith_multi(true, &deltas)
                .into_iter()
                .map(|r| r.unwrap())
                .collect();
            let want: Vec<Option<u64>> = (0..40)
                .map(|i| (i % 2 == 0).then_some(i as u64 * 10 + 3))
                .collect();
            assert_eq!(got, want, "{protocol:?} incr");
        });
        once(&|| {
            let got: Vec<Option<u64>> = c
                .arith_multi(false, &deltas)
                .into_iter()
                .map(|r| r.unwrap())
                .collect();
            let want: Vec<Option<u64>> = (0..40)
                .map(|i| (i % 2 == 0).then_some(i as u64 * 10))
                .collect();
            assert_eq!(got, want, "{protocol:?} decr");
        });
        let ttls: Vec<(&str, u32)> = counters.iter().map(|k| (k.as_str(), 100)).collect();
        once(&|| {
            let got: Vec<bool> = c
                .touch_multi(&ttls)
                .into_iter()
                .map(|r| r.unwrap())
                .collect();
            let want: Vec<bool> = (0..40).map(|i| i % 2 == 0).collect();
            assert_eq!(got, want, "{protocol:?} touch");
        });
        // A non-numeric value is the item's error (on text, as Cache::Memcached::Fast, the
        // error reply also ends the rest of that server's batch: the connection is closed).
        let r = c.arith_multi(true, &[("k0", 1u64)]);
        assert!(
            matches!(r[0], Err(Error::Client { .. })),
            "{protocol:?}: {r:?}"
        );
    }
}
