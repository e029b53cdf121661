//! What a client costs a process, as a forking server (Perl's process per worker, Python
//! under gunicorn) pays it: building a client starts no thread and opens no connection
//! (`min_idle` 0, the default); the first call starts one background thread for the whole
//! process, however many clients and servers; a forked child starts its own one thread at its
//! first call and reads correct values. (Its own test binary, one test: it counts the
//! process's threads.)
mod common;

use common::{thread_count as threads, unique, wait_for_child, wait_until, Memcached};
use mcpool::Client;
use std::io::ErrorKind;
use std::net::TcpListener;
use std::time::{Duration, Instant};

/// `clients` clients of `servers` servers each (one memcached, distinct server names).
fn clients(mc: &Memcached, clients: usize, servers: usize, prefix: &str) -> Vec<Client> {
    (0..clients)
        .map(|_| {
            // (named servers: twemproxy's placement reads the names)
            let mut b = Client::builder()
                .key_prefix(prefix)
                .distribution(mcpool::Distribution::TwemproxyKetama);
            for i in 0..servers {
                b = b.server(&format!("{}:s{i}", mc.addr()));
            }
            b.build().unwrap()
        })
        .collect()
}

/// Every client sets and reads back keys on every one of its servers.
fn use_all(cs: &[Client], tag: &str) -> bool {
    cs.iter().enumerate().all(|(n, c)| {
        (0..16).all(|i| {
            let k = format!("{tag}{n}-{i}");
            c.set(&k, k.as_bytes(), 0).is_ok()
                && c.get(&k).ok().flatten().as_deref() == Some(k.as_bytes())
        })
    })
}

#[test]
fn clients_are_lazy_and_share_one_background_thread_per_process() {
    let mc = Memcached::start(&[]);
    let prefix = unique("pc");
    // A server that must not be connected to: nobody answers it.
    let idle = TcpListener::bind("127.0.0.1:0").unwrap();
    idle.set_nonblocking(true).unwrap();
    let idle_addr = idle.local_addr().unwrap().to_string();
    let before = threads();
    let lazy = Client::builder().server(&idle_addr).build().unwrap();
    let cs = clients(&mc, 3, 4, &prefix);
    // Nothing may happen in the background: watch for a while (bounded).
    let until = Instant::now() + Duration::from_millis(300);
    while Instant::now() < until {
        match idle.accept() {
            Err(e) if e.kind() == ErrorKind::WouldBlock => {}
            other => panic!("a fresh client connected before its first call: {other:?}"),
        }
        assert_eq!(threads(), before, "building clients started a thread");
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(lazy);

    // The first calls start one thread, for every client and server of the process.
    assert!(use_all(&cs, "p"), "the parent's values");
    assert_eq!(threads(), before + 1, "one background thread per process");

    // SAFETY: the child only uses the clients and leaves with _exit, never returning into
    // the test harness.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let code = if threads() != 1 {
            2
        } else if !use_all(&cs, "c") {
            3
        } else if threads() != 2 {
            4
        } else {
            0
        };
        // SAFETY: ends the child without running the parent's destructors or test harness.
        unsafe { libc::_exit(code) };
    }
    assert!(use_all(&cs, "q"), "the parent keeps working meanwhile");
    // The child must finish (a deadlock in it would hang here: bounded).
    let code = wait_for_child(pid, Duration::from_secs(30));
    assert_eq!(
        code, 0,
        "child: 2 = threads inherited, 3 = wrong values, 4 = not one new thread"
    );
    assert_eq!(
        cs[0].get("c0-3").unwrap().as_deref(),
        Some(&b"c0-3"[..]),
        "the child's writes landed"
    );

    // min_idle > 0 still opens its connections when the client is built.
    let _eager = Client::builder()
        .server(&idle_addr)
        .min_idle(1)
        .build()
        .unwrap();
    wait_until(
        "min_idle 1 connects at build",
        Duration::from_secs(10),
        || idle.accept().is_ok(),
    );
}
