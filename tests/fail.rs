//! Failure classification and the one I/O timeout a multi-server call's servers share:
//! this process out of file descriptors is not a server failure; memcached refusing a
//! connection beyond its limit (`-c`) is one (as a refused connect is); silent servers
//! interleaved with live ones cost a multi-key call one I/O timeout, not one each.

mod common;

use common::{silent_server, unique, Memcached};
use mcpool::{Client, ClientBuilder, Error, FailoverPolicy, Protocol, StoreOutcome};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

const PROTOCOLS: [Protocol; 3] = [Protocol::Text, Protocol::Meta, Protocol::Binary];

/// Set (to `a,b,c` server addresses) only in the child process of
/// `fd_exhaustion_fails_the_call_and_blames_no_server`.
const EMFILE_CHILD: &str = "MCPOOL_TEST_EMFILE_CHILD";

/// This process out of file descriptors (`EMFILE` from `socket(2)`) fails the call with an
/// error that says so, but the server was never asked: it is not counted towards
/// `failure_limit`, not marked dead, and its keys do not move (with `failover=rehash` a write
/// moved to another server while every other client read the old value at home). The
/// descriptor limit is lowered only in a child process (this test binary run again for
/// `emfile_child`), never in the test binary itself.
#[test]
fn fd_exhaustion_fails_the_call_and_blames_no_server() {
    let servers: Vec<Memcached> = (0..3).map(|_| Memcached::start(&[])).collect();
    let addrs: Vec<String> = servers.iter().map(|m| m.addr()).collect();
    let key = unique("emfile");
    let plain = Client::new(&addrs).unwrap();
    assert_eq!(plain.set(&key, b"old", 0).unwrap(), StoreOutcome::Stored);
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "emfile_child", "--nocapture", "--test-threads=1"])
        .env(EMFILE_CHILD, addrs.join(","))
        .env("MCPOOL_TEST_EMFILE_KEY", &key)
        .spawn()
        .unwrap();
    // Bounded: a child that hangs is killed and the test fails.
    let end = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > end {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the child did not finish in 60 s");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    assert!(
        status.success(),
        "the child's assertions failed (its output is above)"
    );
    // The child's last write, after its descriptors were freed, went to the key's own server.
    let fresh = Client::new(&addrs).unwrap();
    assert_eq!(fresh.get(&key).unwrap().as_deref(), Some(&b"new"[..]));
}

/// The child of `fd_exhaustion_fails_the_call_and_blames_no_server` (does nothing in any
/// other process).
#[test]
#[allow(unsafe_code)] // setrlimit(2), dup(2) in the child process only
fn emfile_child() {
    use std::os::fd::{FromRawFd, OwnedFd};
    let Ok(servers) = std::env::var(EMFILE_CHILD) else {
        return;
    };
    let key = std::env::var("MCPOOL_TEST_EMFILE_KEY").unwrap();
    let addrs: Vec<&str> = servers.split(',').collect();
    let c = ClientBuilder::new()
        .servers(&addrs)
        .failover(FailoverPolicy::Rehash)
        .failure_limit(1)
        .retry_timeout(Duration::from_secs(60))
        .min_idle(0)
        .build()
        .unwrap();
    // This process only: a low limit, then every descriptor under it taken.
    let limit = libc::rlimit {
        rlim_cur: 256,
        rlim_max: 256,
    };
    // SAFETY: `limit` is a valid rlimit during the call.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) }, 0);
    let mut held = Vec::new();
    for _ in 0..256 {
        // SAFETY: dup(2) of standard input; a new descriptor is owned by `held` alone.
        let fd = unsafe { libc::dup(0) };
        if fd < 0 {
            break;
        }
        // SAFETY: `fd` was just opened and is owned by nobody else.
        held.push(unsafe { OwnedFd::from_raw_fd(fd) });
    }
    // SAFETY: as above; fails now.
    assert_eq!(unsafe { libc::dup(0) }, -1, "descriptors left");
    for _ in 0..3 {
        let e = c.set(&key, b"lost", 0).unwrap_err();
        assert!(emfile(&e), "{e:?}");
        assert!(!e.is_server_failure(), "{e:?}");
        let text = e.to_string();
        assert!(
            text.contains("EMFILE") && text.contains("too many open files"),
            "{text}"
        );
        let e = c.get(&key).unwrap_err();
        assert!(emfile(&e) && !e.is_server_failure(), "{e:?}");
    }
    for s in c.server_states() {
        assert!(s.alive && s.failures == 0, "{s:?}");
    }
    for m in c.metrics() {
        assert_eq!((m.ejections, m.failovers), (0, 0), "{m:?}");
    }
    drop(held);
    assert_eq!(c.set(&key, b"new", 0).unwrap(), StoreOutcome::Stored);
    assert_eq!(c.get(&key).unwrap().as_deref(), Some(&b"new"[..]));
}

/// Whether `e` is the I/O error `EMFILE` (no descriptor left in this process).
fn emfile(e: &Error) -> bool {
    matches!(e, Error::Io { source, .. } if source.raw_os_error() == Some(libc::EMFILE))
}

/// Takes every connection memcached `mc` (started with a small `-c`) will accept: holds
/// connections (each answered a `version`) until one is refused with memcached's
/// "ERROR Too many open connections". At most 64 tries.
fn fill_connections(mc: &Memcached) -> Vec<TcpStream> {
    let mut held = Vec::new();
    for _ in 0..64 {
        let mut s = TcpStream::connect(mc.addr()).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let _ = s.write_all(b"version\r\n");
        let mut buf = [0u8; 64];
        let n = s.read(&mut buf).unwrap_or(0);
        if buf[..n].starts_with(b"VERSION ") {
            held.push(s);
        } else {
            assert!(
                buf[..n].starts_with(b"ERROR Too many open connections"),
                "{:?}",
                String::from_utf8_lossy(&buf[..n])
            );
            return held;
        }
    }
    panic!("memcached accepted 64 connections despite -c");
}

/// memcached at its connection limit answers a new connection "ERROR Too many open
/// connections" and closes it: for a caller the server cannot be reached, as when it refuses
/// the connect. In every protocol that is a connection error (class `Connection`, not a
/// protocol error) and a miss under `fail_open`, but not the server's failure: it is alive,
/// serving its other clients, so it is never marked dead and its keys never move to another
/// server under `failover=rehash`, where other clients would keep reading the old values at
/// home (tester finding connlife 1; `tests/server_refusals.rs`).
#[test]
fn a_server_at_its_connection_limit_is_a_connection_error_not_a_dead_server() {
    let full = Memcached::start(&["-c", "16", "-t", "1"]);
    let live = Memcached::start(&[]);
    let _held = fill_connections(&full);
    for p in PROTOCOLS {
        let build = |fail_open: bool| {
            ClientBuilder::new()
                .servers([full.addr(), live.addr()])
                .protocol(p)
                .failover(FailoverPolicy::Rehash)
                .failure_limit(1)
                .retry_timeout(Duration::from_secs(60))
                .min_idle(0)
                .fail_open(fail_open)
                .build()
                .unwrap()
        };
        let c = build(false);
        let key = (0..1000)
            .map(|i| unique(&format!("full{i}-")))
            .find(|k| c.server_for(k).unwrap() == 0)
            .unwrap();
        for _ in 0..3 {
            let e = c.get(&key).unwrap_err();
            assert!(matches!(e, Error::Io { .. }), "{p:?}: {e:?}");
            assert_eq!(e.class(), mcpool::error::Class::Connection, "{p:?}: {e}");
            assert!(e.fails_open(), "{p:?}: {e}");
            assert!(
                e.is_connection_limit() && !e.is_server_failure(),
                "{p:?}: {e}"
            );
            assert!(e.to_string().contains("connection limit"), "{p:?}: {e}");
        }
        let states = c.server_states();
        assert!(states[0].alive, "{p:?}: {states:?}");
        assert_eq!(c.metrics()[0].ejections, 0, "{p:?}");
        // Not moved: the store fails, and nothing is written on the live server.
        assert!(c.set(&key, b"moved", 0).is_err(), "{p:?}");
        let direct = Client::new([live.addr()]).unwrap();
        assert_eq!(direct.get(&key).unwrap(), None, "{p:?}");
        // fail_open: an unreachable server's read is a miss.
        let open = build(true);
        assert_eq!(open.get(&key).unwrap(), None, "{p:?}");
    }
}

/// Six deliberately silent fake servers (accept, never answer) alternating with six real
/// memcached: a get_multi and a set_multi at io_timeout 0.5 s each take about one
/// io_timeout (as Cache::Memcached::Fast's one poll over the server set), not one per silent
/// server (3 s: each live reply read between two silent servers gave the next wait a whole
/// io_timeout again, although it had arrived at once). Every live server's key succeeds.
#[test]
fn silent_servers_between_live_ones_share_one_io_timeout() {
    let live: Vec<Memcached> = (0..6).map(|_| Memcached::start(&[])).collect();
    let io = Duration::from_millis(500);
    for p in PROTOCOLS {
        let mut servers = Vec::new();
        for mc in &live {
            servers.push(silent_server());
            servers.push(mc.addr());
        }
        let c = ClientBuilder::new()
            .servers(&servers)
            .protocol(p)
            .io_timeout(io)
            .operation_timeout(None)
            .failure_limit(1000)
            .min_idle(0)
            .build()
            .unwrap();
        let keys: Vec<String> = (0..120).map(|i| unique(&format!("shared{i}-"))).collect();
        let on_live: Vec<bool> = keys
            .iter()
            .map(|k| c.server_for(k).unwrap() % 2 == 1)
            .collect();
        assert!(on_live.iter().any(|&l| l) && on_live.iter().any(|&l| !l));
        let items: Vec<(&str, Vec<u8>)> = keys
            .iter()
            .map(|k| (k.as_str(), format!("v-{k}").into_bytes()))
            .collect();
        let t = Instant::now();
        let stored = c.set_multi(&items, 0);
        let took = t.elapsed();
        assert!(took < io * 2, "{p:?}: set_multi took {took:?}");
        for (r, &l) in stored.iter().zip(&on_live) {
            if l {
                assert_eq!(r.as_ref().ok(), Some(&StoreOutcome::Stored), "{p:?}: {r:?}");
            } else {
                assert!(matches!(r, Err(Error::IoTimeout { .. })), "{p:?}: {r:?}");
            }
        }
        let t = Instant::now();
        let got = c.get_multi(&keys);
        let took = t.elapsed();
        assert!(took < io * 2, "{p:?}: get_multi took {took:?}");
        for ((g, &l), (_, v)) in got.iter().zip(&on_live).zip(&items) {
            if l {
                let item = g.as_ref().unwrap().as_ref().expect("a hit");
                assert_eq!(&item.value[..], &v[..], "{p:?}");
            } else {
                assert!(matches!(g, Err(Error::IoTimeout { .. })), "{p:?}: {g:?}");
            }
        }
    }
}
