//! Tester finding (leaks F5): a forked child kept its parent's sockets open for its whole
//! life (never used, never closed), so the parent's connections outlived the parent's
//! client at the server while any child lived. The child now closes them at its first use
//! of the client, sending nothing on them; the parent's sockets keep working. (Its own test
//! binary: one thread forks.)
mod common;

use common::{unique, Memcached};
use mcpool::Client;
use std::collections::BTreeSet;
use std::time::Duration;

/// The socket inodes this process holds open (`socket:[N]` in /proc/self/fd).
fn sockets() -> BTreeSet<String> {
    std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .map(|p| p.to_string_lossy().into_owned())
        .filter(|p| p.starts_with("socket:"))
        .collect()
}

#[test]
fn a_forked_child_closes_the_sockets_it_inherited() {
    let mc = Memcached::start(&[]);
    let before = sockets();
    let c = Client::builder()
        .server(&mc.addr())
        .min_idle(3)
        .max_size(4)
        .key_prefix(unique("forkfd"))
        .build()
        .unwrap();
    c.set("k", b"parent", 0).unwrap();
    // min_idle's connections are opened by the pool's background thread: awaited
    let opened = || -> BTreeSet<String> { sockets().difference(&before).cloned().collect() };
    common::wait_until(
        "the parent's 3 idle connections",
        Duration::from_secs(10),
        || opened().len() >= 3,
    );
    let parents = opened();
    // SAFETY: the child only uses the client and /proc, then leaves with _exit, never
    // returning into the test harness.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let inherited = sockets().intersection(&parents).count() == parents.len();
        let read = c.get("k").ok().flatten() == Some(b"parent".to_vec());
        let kept: Vec<_> = sockets().intersection(&parents).cloned().collect();
        let code = match (inherited, read, kept.is_empty()) {
            (true, true, true) => 0,
            (false, _, _) => 2,
            (_, false, _) => 3,
            (_, _, false) => 4,
        };
        // SAFETY: ends the child without running the parent's destructors or the harness.
        unsafe { libc::_exit(code) };
    }
    let mut status = 0;
    // SAFETY: waits for the child forked above.
    let waited = unsafe { libc::waitpid(pid, &mut status, 0) };
    assert_eq!(waited, pid);
    assert!(libc::WIFEXITED(status), "child: {status}");
    assert_eq!(
        libc::WEXITSTATUS(status),
        0,
        "2: did not inherit, 3: read failed, 4: kept the parent's sockets"
    );
    // The parent's sockets are still open and still serve it.
    assert!(parents.is_subset(&sockets()));
    for _ in 0..20 {
        assert_eq!(c.get("k").unwrap().unwrap(), b"parent");
    }
}
