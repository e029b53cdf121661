//! A child forked from a client whose servers are named by host (re-resolved at each connect,
//! the default) resolves them and works (tester finding prefork 1: in a child, a resolution
//! that answered while the calling thread still held the resolver's state lost its answer,
//! the lookup stayed "in flight" for good, and every call of that child waited out its
//! connect timeout: the server was marked dead there, 5 children in 30 without threads).
//! Its own test binary: the children are forked from one thread.
mod common;

use common::{unique, Memcached};
use mcpool::Client;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

#[test]
fn children_of_a_client_named_by_host_resolve_and_work() {
    let mc = Memcached::start(&[]);
    let port: u16 = mc.addr().rsplit_once(':').unwrap().1.parse().unwrap();
    // A resolver that answers at once: the answer comes while the caller that started the
    // lookup is still on its way to wait for it.
    let c = Client::builder()
        .server(&format!("cache.invalid:{port}"))
        .resolver(|_host, port| Ok(vec![SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port)]))
        .key_prefix(unique("forkresolve"))
        .connect_timeout(Duration::from_secs(2))
        .build()
        .unwrap();
    c.set("k", b"parent", 0).unwrap();
    let mut failed = 0;
    for _ in 0..20 {
        // SAFETY: the child only uses the client and leaves with _exit, never returning into
        // the test harness (alarm ends one that would hang).
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            // SAFETY: alarm(2) only sets this process's timer.
            unsafe { libc::alarm(20) };
            // Threads of the child connect at once: each connect resolves again, and the
            // resolver's state is often held by one of them when an answer comes.
            let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let threads: Vec<_> = (0..4)
                    .map(|t| {
                        let c = c.clone();
                        std::thread::spawn(move || {
                            (0..10).all(|i| {
                                c.disconnect_all();
                                let key = format!("k{t}:{i}");
                                c.set(&key, b"child", 0).is_ok()
                                    && c.get(&key).ok().flatten() == Some(b"child".to_vec())
                            })
                        })
                    })
                    .collect();
                threads.into_iter().all(|t| t.join().unwrap_or(false))
            }));
            // SAFETY: ends the child without running the parent's destructors.
            unsafe { libc::_exit(if matches!(ok, Ok(true)) { 0 } else { 1 }) };
        }
        let mut status = 0;
        // SAFETY: waits for the child forked above (its alarm ends it after 20 s).
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        assert_eq!(r, pid, "waitpid failed");
        if !(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0) {
            failed += 1;
        }
    }
    assert_eq!(failed, 0, "children whose calls failed, of 20");
}
