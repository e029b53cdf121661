//! `Client::close`: callers waiting for a pooled connection end at once with
//! `Error::Closed`, no connection is opened after the close, later calls and `set_servers`
//! are refused, and the call already talking to a server finishes as before (tester finding
//! java 1: waiters opened a new connection after close and ended with a pool timeout).
mod common;

use common::*;
use mcpool::{Client, Error};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A deliberately silent fake server (not memcached) that counts the connections it accepts:
/// it reads nothing and answers nothing.
fn counting_silent_server() -> (String, Arc<AtomicUsize>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap().to_string();
    let n = Arc::new(AtomicUsize::new(0));
    let count = n.clone();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for s in l.incoming().take(16) {
            count.fetch_add(1, Ordering::SeqCst);
            held.push(s);
        }
        std::thread::park();
    });
    (addr, n)
}

#[test]
fn close_ends_the_calls_waiting_for_a_connection_and_opens_none() {
    let (addr, accepted) = counting_silent_server();
    let c = Client::builder()
        .server(&addr)
        .min_idle(0)
        .max_size(1)
        .failure_limit(1000)
        .io_timeout(Duration::from_secs(4))
        .pool_timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    // The first call holds the one connection (the server never answers it).
    let holder = {
        let c = c.clone();
        std::thread::spawn(move || c.get("held"))
    };
    wait_until("the first connection", Duration::from_secs(10), || {
        accepted.load(Ordering::SeqCst) == 1
    });
    let waiters: Vec<_> = (0..3)
        .map(|i| {
            let c = c.clone();
            std::thread::spawn(move || {
                let r = c.get(format!("w{i}"));
                (r, Instant::now())
            })
        })
        .collect();
    // Not a synchronisation: a waiter still on its way into the line when the client closes
    // is refused at the gate with the same error. The pause lets most of them get in line,
    // so that the test covers waking them.
    std::thread::sleep(Duration::from_millis(300));
    let closed_at = Instant::now();
    c.close();
    assert!(c.is_closed());
    for w in waiters {
        let (r, at) = w.join().unwrap();
        assert!(matches!(r, Err(Error::Closed)), "waiter got {r:?}");
        assert!(
            at.duration_since(closed_at) < Duration::from_secs(3),
            "the waiter ended {:?} after close (the pool timeout is 30 s)",
            at.duration_since(closed_at)
        );
    }
    // The holder's call runs to its I/O timeout as before; its connection is then dropped,
    // and no waiter opened another one.
    let held = holder.join().unwrap();
    assert!(matches!(held, Err(Error::IoTimeout { .. })), "{held:?}");
    assert_eq!(
        accepted.load(Ordering::SeqCst),
        1,
        "a connection after close"
    );
    // Later calls fail at once, with nothing sent.
    assert!(matches!(c.get("after"), Err(Error::Closed)));
    assert!(matches!(c.set("after", b"v", 0), Err(Error::Closed)));
    let multi = c.get_multi(&["a", "b"]);
    assert!(
        multi.iter().all(|r| matches!(r, Err(Error::Closed))),
        "{multi:?}"
    );
    assert_eq!(
        accepted.load(Ordering::SeqCst),
        1,
        "a connection after close"
    );
}

#[test]
fn a_closed_client_refuses_calls_and_server_changes_and_the_server_keeps_its_health() {
    let mc = Memcached::start(&[]);
    let prefix = unique("close");
    let c = Client::builder()
        .server(&mc.addr())
        .key_prefix(prefix.clone())
        .build()
        .unwrap();
    c.set("k", b"v", 0).unwrap();
    assert_eq!(c.get("k").unwrap().unwrap(), b"v");
    let clone = c.clone();
    c.close();
    c.close(); // idempotent
    assert!(clone.is_closed(), "a clone shares the close");
    let e = clone.get("k").unwrap_err();
    assert!(matches!(e, Error::Closed), "{e:?}");
    assert_eq!(e.class(), mcpool::error::Class::ClientError);
    assert!(!e.fails_open(), "a closed client never passes for a miss");
    assert!(e.to_string().contains("closed"), "{e}");
    assert!(matches!(
        c.set_servers([mc.addr().as_str()]),
        Err(Error::Closed)
    ));
    // Not the server's fault: it is not marked dead, and another client reads the value.
    let m = c.metrics();
    assert_eq!(m[0].ejections, 0, "{m:?}");
    let other = Client::builder()
        .server(&mc.addr())
        .key_prefix(prefix)
        .build()
        .unwrap();
    assert_eq!(other.get("k").unwrap().unwrap(), b"v");
}

#[test]
fn fail_open_does_not_hide_a_closed_client() {
    let mc = Memcached::start(&[]);
    let c = Client::builder()
        .server(&mc.addr())
        .fail_open(true)
        .build()
        .unwrap();
    c.close();
    assert!(matches!(c.get("k"), Err(Error::Closed)));
}

/// Tester finding cteam3 2: after `close`, a call whose key lives on a server marked dead
/// (its retry not yet due) ended with `ServerDead`, and a batch's items on it too, where
/// every call after close ends with `Closed`; under every failover policy.
#[test]
fn a_closed_clients_calls_on_a_dead_server_end_closed() {
    use mcpool::FailoverPolicy;
    let mc = Memcached::start(&[]);
    let down = format!("127.0.0.1:{}", free_port());
    for failover in [
        FailoverPolicy::FailFast,
        FailoverPolicy::Rehash,
        FailoverPolicy::Eject,
    ] {
        let c = Client::builder()
            .servers([down.clone(), mc.addr()])
            .failover(failover)
            .failure_limit(1)
            .retry_timeout(Duration::from_secs(600))
            .build()
            .unwrap();
        let keys: Vec<String> = (0..64).map(|i| format!("k{i}")).collect();
        let on_down: Vec<&String> = keys
            .iter()
            .filter(|k| c.server_for(k.as_str()).unwrap() == 0)
            .collect();
        let k = on_down[0];
        let _ = c.get(k); // marks it dead
        assert!(!c.server_states()[0].alive, "{failover:?}");
        c.close();
        assert!(
            matches!(c.get(k), Err(Error::Closed)),
            "{failover:?}: {:?}",
            c.get(k)
        );
        for r in c.get_multi(&on_down).into_iter() {
            assert!(matches!(r, Err(Error::Closed)), "{failover:?}: {r:?}");
        }
        for r in c.set_multi(&[(k.as_str(), &b"v"[..])], 0) {
            assert!(matches!(r, Err(Error::Closed)), "{failover:?}: {r:?}");
        }
    }
}
