//! A client dropped just before a fork leaves nothing behind that the child trips on: its
//! background thread ends with its last pool (it does not wait, parked, for a reaper run
//! that will never be needed), and a child forked right after builds a client and works.
//! (Its own test binary: it counts the process's threads, and one thread forks.)
mod common;

use common::{thread_count as threads, unique, wait_for_child, wait_until, Memcached};
use mcpool::Client;
use std::time::Duration;

fn client(mc: &Memcached, prefix: &str) -> Client {
    Client::builder()
        .server(&mc.addr())
        .key_prefix(prefix)
        .pool_timeout(Duration::from_secs(2))
        .build()
        .unwrap()
}

/// Forks; the child runs `f` and leaves with its result as exit code. The parent waits at
/// most 30 s and returns the code (panics when the child hangs or dies).
fn in_child(f: impl FnOnce() -> i32) -> i32 {
    // SAFETY: the child only runs `f` (client calls) and leaves with _exit, never returning
    // into the test harness.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let code = f();
        // SAFETY: ends the child without running the parent's destructors or test harness.
        unsafe { libc::_exit(code) };
    }
    wait_for_child(pid, Duration::from_secs(30))
}

#[test]
fn a_client_dropped_right_before_a_fork_leaves_the_child_working() {
    let mc = Memcached::start(&[]);
    let prefix = unique("fad");
    let before = threads();
    {
        let c = client(&mc, &prefix);
        c.set("k", b"v", 0).unwrap();
        assert_eq!(threads(), before + 1, "the first call starts one thread");
    }
    wait_until(
        "the background thread ends with the last client",
        Duration::from_secs(5),
        || threads() == before,
    );
    for round in 0..300 {
        {
            // Made, used (its pool and thread start) and dropped: then at once the fork.
            let c = client(&mc, &prefix);
            c.set(format!("r{round}"), b"parent", 0).unwrap();
        }
        let code = in_child(|| {
            let c = client(&mc, &prefix);
            let ok = c.set("child", b"child", 0).is_ok()
                && c.get(format!("r{round}")).ok().flatten().as_deref() == Some(&b"parent"[..]);
            if ok {
                0
            } else {
                3
            }
        });
        assert_eq!(code, 0, "round {round}: the child's calls failed");
    }
}
