//! Issue 19 items 4 and 5: the `proxy-pool` distribution in front of real nutcracker
//! (twemproxy) processes, each in front of the same real memcached servers; and routing
//! prefixes (`/`) that reach the proxy unchanged.
mod common;

use common::nutcracker::Nutcracker;
use common::{unique, wait_until, Memcached};
use mcpool::{Client, Distribution};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const OP_TIMEOUT: Duration = Duration::from_secs(2);

fn proxy_client(proxies: &[&Nutcracker]) -> Client {
    Client::builder()
        .servers(proxies.iter().map(|p| p.addr()))
        .distribution("proxy-pool".parse().unwrap())
        .key_prefix(unique("pp"))
        .max_size(8)
        .min_idle(0)
        .connect_timeout(Duration::from_millis(500))
        .io_timeout(Duration::from_millis(800))
        .operation_timeout(Some(OP_TIMEOUT))
        .failure_limit(2)
        .retry_timeout(Duration::from_millis(100))
        .retry_timeout_max(Duration::from_millis(400))
        .build()
        .unwrap()
}

fn ops(c: &Client) -> Vec<u64> {
    c.metrics().iter().map(|m| m.operations).collect()
}

/// Item 4: every key goes to the first proxy; a multi-get goes to one proxy in one request.
#[test]
fn item4_every_key_and_each_multi_get_goes_to_the_first_proxy_in_one_request() {
    let mcs = [Memcached::start(&[]), Memcached::start(&[])];
    let (mut a, b) = (Nutcracker::start(&mcs), Nutcracker::start(&mcs));
    let c = proxy_client(&[&a, &b]);
    let keys: Vec<String> = (0..100).map(|i| format!("k{i}")).collect();
    for k in &keys {
        assert!(c.set(k, k.as_bytes(), 0).unwrap().is_stored());
        assert_eq!(c.server_for(k).unwrap(), 0);
    }
    assert_eq!(ops(&c), vec![100, 0], "every set through the first proxy");
    let got = c.get_multi(&keys);
    for (k, r) in keys.iter().zip(got) {
        assert_eq!(r.unwrap().unwrap().value, k.as_bytes());
    }
    assert_eq!(
        ops(&c),
        vec![101, 0],
        "100 keys: one request, to the first proxy"
    );
    // The first proxy killed: the next calls go to the second (the first call's connect is
    // refused before anything is sent, so it is resent there), every key still found (the
    // proxies share the backends).
    a.kill();
    let got = c.get_multi(&keys);
    for (k, r) in keys.iter().zip(got) {
        assert_eq!(r.unwrap().unwrap().value, k.as_bytes(), "{k}");
    }
    let after = ops(&c);
    assert_eq!(after[1], 1, "one request to the second proxy: {after:?}");
    for k in keys.iter().take(10) {
        assert_eq!(c.get(k).unwrap().unwrap(), k.as_bytes());
    }
    assert_eq!(ops(&c)[1], 11);
    // Restarted: back to the first once its retry back-off has passed.
    a.restart();
    wait_until(
        "traffic back on the first proxy",
        Duration::from_secs(10),
        || {
            let before = ops(&c);
            c.get(&keys[0]).unwrap();
            ops(&c)[0] > before[0]
        },
    );
    let before = ops(&c);
    for k in &keys {
        assert_eq!(c.get(k).unwrap().unwrap(), k.as_bytes());
    }
    let after = ops(&c);
    assert_eq!(
        (after[0] - before[0], after[1] - before[1]),
        (100, 0),
        "all traffic on the first proxy again"
    );
}

/// Item 4: a nutcracker killed mid-run under eight threads of load: no value read is one
/// not written for its key, every call ends within its operation deadline, traffic moves to
/// the second proxy and comes back to the first after it is restarted.
#[test]
fn item4_killing_a_proxy_under_load_moves_traffic_and_brings_it_back() {
    let mcs = [Memcached::start(&[]), Memcached::start(&[])];
    let (mut a, b) = (Nutcracker::start(&mcs), Nutcracker::start(&mcs));
    let c = proxy_client(&[&a, &b]);
    let stop = Arc::new(AtomicBool::new(false));
    let calls = Arc::new(AtomicU64::new(0));
    let errors = Arc::new(Mutex::new(Vec::<String>::new()));
    let wrong = Arc::new(Mutex::new(Vec::<String>::new()));
    let slowest = Arc::new(Mutex::new(Duration::ZERO));
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let (c, stop, calls) = (c.clone(), stop.clone(), calls.clone());
            let (errors, wrong, slowest) = (errors.clone(), wrong.clone(), slowest.clone());
            std::thread::spawn(move || {
                let keys: Vec<String> = (0..16).map(|i| format!("t{t}k{i}")).collect();
                // The highest sequence number written (or tried) per key.
                let mut written = vec![0u64; keys.len()];
                let check = |k: &str, value: &[u8], written: u64| -> Option<String> {
                    let text = String::from_utf8_lossy(value);
                    match text.split_once('=') {
                        Some((key, n)) if key == k => match n.parse::<u64>() {
                            Ok(n) if n >= 1 && n <= written => None,
                            _ => Some(format!("{k}: {text} (written up to {written})")),
                        },
                        _ => Some(format!("{k}: {text}")),
                    }
                };
                let started = Instant::now();
                let mut round = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    assert!(started.elapsed() < Duration::from_secs(120), "bounded");
                    round += 1;
                    let i = (round as usize) % keys.len();
                    let k = &keys[i];
                    written[i] = round;
                    let timed = |what: &str, f: &mut dyn FnMut() -> Result<(), String>| {
                        let t0 = Instant::now();
                        let r = f();
                        let took = t0.elapsed();
                        let mut s = slowest.lock().unwrap();
                        *s = (*s).max(took);
                        calls.fetch_add(1, Ordering::Relaxed);
                        if let Err(e) = r {
                            errors.lock().unwrap().push(format!("{what}: {e}"));
                        }
                    };
                    let value = format!("{k}={round}");
                    timed("set", &mut || {
                        c.set(k, value.as_bytes(), 0)
                            .map(|_| ())
                            .map_err(|e| e.to_string())
                    });
                    timed("get", &mut || {
                        if let Some(v) = c.get(k).map_err(|e| e.to_string())? {
                            if let Some(w) = check(k, &v, written[i]) {
                                wrong.lock().unwrap().push(w);
                            }
                        }
                        Ok(())
                    });
                    timed("get_multi", &mut || {
                        for (j, r) in c.get_multi(&keys).into_iter().enumerate() {
                            if let Some(item) = r.map_err(|e| e.to_string())? {
                                if let Some(w) = check(&keys[j], &item.value, written[j]) {
                                    wrong.lock().unwrap().push(w);
                                }
                            }
                        }
                        Ok(())
                    });
                }
            })
        })
        .collect();
    let at_least = |what: &str, server: usize, more: u64| {
        let start = ops(&c)[server];
        wait_until(what, Duration::from_secs(30), || {
            ops(&c)[server] >= start + more
        });
    };
    at_least("load on the first proxy", 0, 2000);
    assert_eq!(
        ops(&c)[1],
        0,
        "nothing on the second proxy while the first is up"
    );
    a.kill();
    at_least("traffic moved to the second proxy", 1, 2000);
    assert!(
        c.metrics()[0].ejections >= 1,
        "the first proxy was marked dead"
    );
    a.restart();
    wait_until(
        "the first proxy healthy again",
        Duration::from_secs(20),
        || c.server_states()[0].failures == 0,
    );
    let before = ops(&c);
    at_least("traffic back on the first proxy", 0, 2000);
    let after = ops(&c);
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        t.join().unwrap();
    }
    let (moved_back, left_on_second) = (after[0] - before[0], after[1] - before[1]);
    assert!(
        left_on_second * 100 <= moved_back,
        "after recovery the second proxy still took {left_on_second} of {moved_back}"
    );
    let wrong = wrong.lock().unwrap();
    assert!(
        wrong.is_empty(),
        "wrong values: {:?}",
        &wrong[..wrong.len().min(10)]
    );
    let slowest = *slowest.lock().unwrap();
    assert!(
        slowest <= OP_TIMEOUT + Duration::from_millis(1500),
        "a call took {slowest:?} (deadline {OP_TIMEOUT:?})"
    );
    let errors = errors.lock().unwrap();
    let calls = calls.load(Ordering::Relaxed);
    eprintln!(
        "{calls} calls, {} errors, slowest {slowest:?}, ops {:?}, first errors {:?}",
        errors.len(),
        ops(&c),
        &errors[..errors.len().min(5)]
    );
    // Connect refusals are resent to the next proxy; only requests in flight at the kill
    // that may not be resent (multi-gets already sent) can fail.
    assert!(
        errors.len() as u64 * 100 <= calls,
        "{} errors in {calls} calls: {:?}",
        errors.len(),
        &errors[..errors.len().min(10)]
    );
}

/// Item 5: routing prefixes reach the proxy unchanged: `/` is never rewritten, not even
/// with key sanitizing on in proxy-pool mode; the Whalin profiles keep Whalin's encoding.
#[test]
fn item5_routing_prefixes_survive_key_sanitizing_in_proxy_pool_mode() {
    let mc = Memcached::start(&[]);
    let pp = Client::builder()
        .server(&mc.addr())
        .distribution(Distribution::ProxyPool)
        .sanitize_keys(true)
        .build()
        .unwrap();
    let plain = Client::new([mc.addr()]).unwrap();
    let key = format!("/region/cluster/{}", unique("k"));
    assert_eq!(pp.wire_key(key.as_bytes()).unwrap(), key.as_bytes());
    // Sanitizing still does its job for what the text protocol cannot carry.
    assert_eq!(
        &*pp.wire_key(b"/r/c/a b").unwrap(),
        b"/r/c/a+b",
        "space encoded, slashes kept"
    );
    assert!(pp.set(&key, b"v", 0).unwrap().is_stored());
    assert_eq!(
        plain.get(&key).unwrap().as_deref(),
        Some(&b"v"[..]),
        "stored under the key as written"
    );
    // memcached proxy style: the route is the text before the first `/`.
    let routed = Client::builder()
        .server(&mc.addr())
        .distribution(Distribution::ProxyPool)
        .build()
        .unwrap();
    assert_eq!(&*routed.wire_key(b"users/42").unwrap(), b"users/42");
    // Whalin's own sanitizing is unchanged (its placement and stored names depend on it).
    let whalin = Client::builder()
        .server(&mc.addr())
        .distribution(Distribution::WhalinNative)
        .build()
        .unwrap();
    assert_eq!(&*whalin.wire_key(b"/r/c/k").unwrap(), b"%2Fr%2Fc%2Fk");
}

/// The keys of the `VALUE` lines of a text `get` of `keys` sent straight to `addr`, in
/// reply order.
fn raw_reply_order(addr: &str, keys: &[String]) -> Vec<String> {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(OP_TIMEOUT)).unwrap();
    s.write_all(format!("get {}\r\n", keys.join(" ")).as_bytes())
        .unwrap();
    let mut raw = Vec::new();
    let mut chunk = [0u8; 65536];
    while !raw.ends_with(b"END\r\n") {
        let got = s.read(&mut chunk).unwrap();
        assert!(got > 0, "nutcracker closed the connection mid-reply");
        raw.extend_from_slice(&chunk[..got]);
    }
    String::from_utf8_lossy(&raw)
        .split("\r\n")
        .filter_map(|l| l.strip_prefix("VALUE "))
        .map(|l| l.split(' ').next().unwrap().to_owned())
        .collect()
}

/// nutcracker 0.5.0 reassembles a multi-get out of request order when a key misses
/// (`... k7 k11 k9 k10 ...`). A text value names its key: every read path still gives each
/// key its own value and the miss, as pylibmc and python-memcached do through it (it was a
/// protocol error for the whole call).
#[test]
fn a_multi_get_with_a_miss_through_nutcracker_reordering_it_finds_every_hit() {
    let mcs = [Memcached::start(&[]), Memcached::start(&[])];
    // md5, as in the finding: nutcracker splits these keys over both backends.
    let proxy = Nutcracker::start_hashed(&mcs, "md5");
    let c = Client::builder()
        .server(&proxy.addr())
        .distribution("proxy-pool".parse().unwrap())
        .min_idle(0)
        .operation_timeout(Some(OP_TIMEOUT))
        .build()
        .unwrap();
    let base = unique("ro");
    let keys: Vec<String> = (0..40).map(|i| format!("{base}-{i}")).collect();
    // The miss: the first key (from the 9th on) whose absence makes nutcracker reorder the
    // reply. Every key is stored, then one deleted at a time (bounded: 30 tries).
    for k in &keys {
        assert!(c.set(k, k.as_bytes(), 0).unwrap().is_stored());
    }
    let mut missing = None;
    for k in &keys[8..38] {
        assert!(c.delete(k).unwrap());
        let order = raw_reply_order(&proxy.addr(), &keys);
        let in_request_order: Vec<String> = keys.iter().filter(|x| *x != k).cloned().collect();
        assert_eq!(order.len(), 39, "{order:?}");
        if order != in_request_order {
            missing = Some(k.clone());
            break;
        }
        assert!(c.set(k, k.as_bytes(), 0).unwrap().is_stored());
    }
    let missing = missing.expect("nutcracker answered in request order for every miss tried");
    let own = |k: &String| (*k != missing).then(|| k.as_bytes().to_vec());
    for (k, r) in keys.iter().zip(c.get_multi(&keys)) {
        assert_eq!(
            r.unwrap().map(|i| i.value.to_vec()),
            own(k),
            "get_multi {k}"
        );
    }
    for (k, r) in keys.iter().zip(c.gets_multi(&keys)) {
        let item = r.unwrap();
        assert!(
            item.as_ref()
                .map_or(true, |i| i.cas.is_some_and(|c| c != 0)),
            "gets_multi {k}: no CAS"
        );
        assert_eq!(item.map(|i| i.value.to_vec()), own(k), "gets_multi {k}");
    }
    let mut seen: Vec<Option<Vec<u8>>> = vec![None; keys.len()];
    let each = c.get_multi_each(&keys, |i, v, _| {
        assert!(seen[i].is_none(), "key {i} twice");
        seen[i] = Some(v.to_vec());
    });
    for ((k, r), v) in keys.iter().zip(each).zip(seen) {
        assert_eq!(r.unwrap(), *k != missing, "get_multi_each {k}");
        assert_eq!(v, own(k), "get_multi_each {k}");
    }
}

/// Tester finding fleet 2: a `set` that timed out on a stalled proxy was sent again to the next
/// one and reported stored, and the stalled proxy's copy landed later, over newer writes.
/// Once sent, a command with an effect is never sent again; a plain read still is.
#[test]
fn a_write_sent_to_a_stalled_proxy_is_not_sent_again() {
    let mc = Memcached::start(&[]);
    // A deliberately broken fake proxy (not memcached): reads every request, answers none.
    let (stalled, _) = common::fake::fake(64, |_, _, _| common::fake::Then::Continue);
    let c = Client::builder()
        .servers([stalled.clone(), mc.addr()])
        .distribution("proxy-pool".parse().unwrap())
        .key_prefix(unique("stall"))
        .min_idle(0)
        .io_timeout(Duration::from_millis(200))
        .operation_timeout(Some(Duration::from_secs(5)))
        .failure_limit(100)
        .build()
        .unwrap();
    let direct = Client::new([mc.addr()]).unwrap();
    let writes = [
        ("set", format!("{:?}", c.set("k", b"v", 0))),
        ("touch", format!("{:?}", c.touch("k", 60))),
        ("gat", format!("{:?}", c.gat("k", 60))),
        ("add", format!("{:?}", c.add("k2", b"v", 0))),
        ("delete", format!("{:?}", c.delete("k"))),
    ];
    for (what, got) in &writes {
        assert!(got.starts_with("Err(IoTimeout"), "{what}: {got}");
    }
    // Nothing reached the backend through the second proxy.
    let m = c.metrics();
    assert_eq!(m[1].operations, 0, "{m:?}");
    let stats = direct.stats(None).remove(0).1.unwrap();
    let stat = |name: &str| stats.iter().find(|(k, _)| k == name).unwrap().1.clone();
    assert_eq!(
        (stat("cmd_set"), stat("cmd_touch")),
        ("0".into(), "0".into())
    );
    // A read is sent again: it changes nothing.
    assert_eq!(c.get("k").unwrap(), None);
    assert_eq!(c.metrics()[1].operations, 1);
}

/// Tester finding noreply 2: through nutcracker, text `set_multi_noreply` closed its batch
/// with a `version` that nutcracker sends to one backend; with that backend dead the call
/// failed though every store was done, and stores for a dead backend are dropped
/// unanswered whatever the barrier says. Under `proxy-pool` every store is answered: the
/// live backend's keys are stored and readable, the dead one's fail the call. With a plain
/// distribution a refused barrier says what it was.
#[test]
fn set_multi_noreply_through_a_proxy_answers_each_store() {
    // the dead backend a port that refuses, which no other test's server can take (md5:
    // nutcracker's fnv1a_64 put all 24 of these similar keys on one backend)
    let (live, dead) = (Memcached::start(&[]), common::refusing_port());
    let proxy = Nutcracker::start_on_ports(&[live.port, dead.port], "md5");
    let c = proxy_client(&[&proxy]);
    let keys: Vec<String> = (0..24).map(|i| format!("nr{i}")).collect();
    let items: Vec<(&str, &[u8])> = keys.iter().map(|k| (k.as_str(), &b"v"[..])).collect();
    let r = c.set_multi_noreply(&items, 0);
    let stored = keys
        .iter()
        .filter(|k| c.get(k).ok().flatten().is_some_and(|v| v == b"v"))
        .count();
    assert!(
        stored > 0 && stored < keys.len(),
        "{stored} of {} stored",
        keys.len()
    );
    assert!(matches!(r, Err(mcpool::Error::Server { .. })), "{r:?}");
    let plain = Client::builder()
        .server(&proxy.addr())
        .key_prefix(unique("pn"))
        .build()
        .unwrap();
    for _ in 0..4 {
        if let Err(e) = plain.set_multi_noreply(&items, 0) {
            let m = e.to_string();
            assert!(
                m.contains("closes a noreply batch") || !m.contains("SERVER_ERROR"),
                "{m}"
            );
        }
    }
}

/// Commands twemproxy does not support (`gat`, `stats`) make it close the connection before
/// any reply: through `proxy-pool` that is the call's `Unsupported` error, saying why, and no
/// failure of the proxy, so a few of them no longer mark every proxy dead and stop the
/// ordinary traffic (tester finding proxy 3).
#[test]
fn commands_a_proxy_does_not_support_fail_alone_and_mark_no_proxy_dead() {
    let mcs = [Memcached::start(&[])];
    let (a, b) = (Nutcracker::start(&mcs), Nutcracker::start(&mcs));
    let c = proxy_client(&[&a, &b]); // failure_limit 2
    assert!(c.set("k", "v", 0).unwrap().is_stored());
    for _ in 0..6 {
        let e = c.gat("k", 100).unwrap_err();
        assert!(matches!(e, mcpool::Error::Unsupported(_)), "{e:?}");
        let text = e.to_string();
        assert!(
            text.contains("closed the connection before any reply")
                && text.contains("does not support"),
            "{text}"
        );
        for (_, r) in c.stats(None) {
            assert!(r.unwrap_err().to_string().contains("does not support"));
        }
    }
    for s in c.server_states() {
        assert!(s.alive && s.failures == 0, "{s:?}");
    }
    // The ordinary traffic goes on, through the first proxy.
    assert_eq!(c.get("k").unwrap().as_deref(), Some(&b"v"[..]));
    assert!(c.set("k", "w", 0).unwrap().is_stored());
}

/// A proxy that reads every request and closes the connection (broken, or a nutcracker pool
/// that speaks another protocol) fails the ordinary commands, which every proxy carries: it
/// is marked dead and the traffic moves to the next proxy (tester finding proxy2 1: with
/// every close-before-reply forgiven, no write ever reached the healthy proxy). The broken
/// proxy is a deliberately broken fake (not memcached nor nutcracker): it reads, then closes.
#[test]
fn a_proxy_that_closes_every_connection_is_marked_dead_and_left() {
    use std::io::Read;
    let mcs = [Memcached::start(&[])];
    let b = Nutcracker::start(&mcs);
    let broken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let broken_addr = broken.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        for conn in broken.incoming().take(200) {
            let Ok(mut conn) = conn else { continue };
            let mut buf = [0u8; 4096];
            let _ = conn.read(&mut buf);
        }
    });
    let c = Client::builder()
        .servers([broken_addr, b.addr()])
        .distribution("proxy-pool".parse().unwrap())
        .key_prefix(unique("broken"))
        .min_idle(0)
        .failure_limit(2)
        .retry_timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    let mut stored = 0;
    for i in 0..10 {
        if c.set(format!("k{i}"), "v", 0).is_ok_and(|o| o.is_stored()) {
            stored += 1;
        }
    }
    assert!(stored >= 8, "{stored} of 10 sets stored");
    assert!(!c.server_states()[0].alive, "{:?}", c.server_states());
    assert_eq!(c.get("k9").unwrap().as_deref(), Some(&b"v"[..]));
}

/// Tester finding proxy2 2: when a dead proxy's retry came due, every call tried it, each
/// waiting its `io_timeout` against a stalled one. One call tries it now; the calls that come
/// while that try is under way go to the next proxy at once (two memcached servers stand in
/// for two interchangeable proxies; the first one stalled with SIGSTOP).
#[test]
fn a_due_retry_of_a_stalled_proxy_is_one_calls_try_the_others_go_on() {
    let (a, b) = (Memcached::start(&[]), Memcached::start(&[]));
    let prefix = unique("ppdue");
    let c = Client::builder()
        .servers([a.addr(), b.addr()])
        .distribution("proxy-pool".parse().unwrap())
        .key_prefix(prefix.clone())
        .max_size(8)
        .min_idle(0)
        .io_timeout(Duration::from_millis(400))
        .failure_limit(1)
        .retry_timeout(Duration::from_millis(300))
        .retry_timeout_max(Duration::from_secs(30))
        .build()
        .unwrap();
    // Each "proxy" its own copy, to tell which one answered.
    for (mc, v) in [(&a, &b"a"[..]), (&b, &b"b"[..])] {
        let direct = Client::builder()
            .server(&mc.addr())
            .key_prefix(prefix.clone())
            .build()
            .unwrap();
        assert!(direct.set("k", v, 0).unwrap().is_stored());
    }
    assert_eq!(c.get("k").unwrap().unwrap(), b"a");
    a.freeze();
    // The stalled first proxy times out, is marked dead, and the read is resent to the next.
    assert_eq!(c.get("k").unwrap().unwrap(), b"b");
    assert!(!c.server_states()[0].alive);
    wait_until("the retry due", Duration::from_secs(10), || {
        c.server_states()[0].alive
    });
    let timeouts = c.metrics()[0].timeouts;
    for r in common::gets_at_once(&c, "k", 8) {
        // (the try's own read is resent to the next proxy after its timeout, in time)
        assert_eq!(r.unwrap().unwrap(), b"b");
    }
    assert_eq!(
        c.metrics()[0].timeouts - timeouts,
        1,
        "one call tried the stalled proxy, the others went to the next"
    );
    a.thaw();
    wait_until(
        "the first proxy used again",
        Duration::from_secs(10),
        || c.get("k").is_ok_and(|v| v.as_deref() == Some(&b"a"[..])),
    );
}
