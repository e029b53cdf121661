//! Tester finding (fork 1): a forked child that closes its inherited descriptors, as a daemon
//! does (`closerange(3, ...)`), and reuses their numbers for a client of its own had that
//! client's socket closed by the first use of a client made before the fork, which closed
//! the inherited sockets by number; the new client then read the other server's value. The
//! child closes an inherited number only while it still names the inherited socket. (Its own
//! test binary: one thread forks.)
mod common;

use common::{socket_fds, socket_fds_since, unique, Memcached};
use mcpool::Client;
use std::time::Duration;

/// The child's side: closes every descriptor from 3 up, fills the numbers below the
/// inherited socket's, makes its own client (whose socket takes the inherited number), uses
/// the client made before the fork, and reads through its own again. Returns the exit code.
fn child(old: &Client, inherited_fd: i32, new_server: &str, prefix: &str) -> i32 {
    // SAFETY: closes numbers only; nothing in this child uses them after (the old client's
    // connection is never used in a forked child).
    unsafe { libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32) };
    for _ in 3..inherited_fd {
        // SAFETY: a plain open of /dev/null, kept open to fill the lowest numbers.
        let fd = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY) };
        if fd < 0 {
            return 10;
        }
    }
    let Ok(new) = Client::builder()
        .server(new_server)
        .max_size(1)
        .key_prefix(prefix)
        .build()
    else {
        return 11;
    };
    if new.get("k").ok().flatten().as_deref() != Some(&b"on-B"[..]) {
        return 12;
    }
    if !socket_fds().contains(&inherited_fd) {
        return 13; // the new client's socket did not take the number: the test proves nothing
    }
    if old.get("k").ok().flatten().as_deref() != Some(&b"on-A"[..]) {
        return 14;
    }
    for _ in 0..5 {
        match new.get("k") {
            Ok(Some(v)) if v == b"on-B" => {}
            Ok(Some(v)) if v == b"on-A" => return 3, // the other server's value
            _ => return 4,
        }
    }
    0
}

#[test]
fn a_child_that_reuses_an_inherited_number_keeps_its_own_socket() {
    let a = Memcached::start(&[]);
    let b = Memcached::start(&[]);
    let prefix = unique("fdreuse");
    let on = |addr: &str, v: &[u8]| {
        let c = Client::builder()
            .server(addr)
            .key_prefix(prefix.as_str())
            .build()
            .unwrap();
        c.set("k", v, 0).unwrap();
    };
    on(&b.addr(), b"on-B");
    let before = socket_fds();
    let old = Client::builder()
        .server(&a.addr())
        .max_size(1)
        .key_prefix(prefix.as_str())
        .build()
        .unwrap();
    old.set("k", b"on-A", 0).unwrap();
    let opened = socket_fds_since(&before);
    assert_eq!(opened.len(), 1, "the old client's one socket: {opened:?}");
    let b_addr = b.addr();
    // SAFETY: the child uses clients, /proc and /dev/null, then leaves with _exit, never
    // returning into the test harness.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let code = child(&old, opened[0], &b_addr, &prefix);
        // SAFETY: ends the child without running the parent's destructors or the harness.
        unsafe { libc::_exit(code) };
    }
    assert_eq!(
        common::wait_for_child(pid, Duration::from_secs(60)),
        0,
        "3: the child's own client read the other server's value, 4: it failed; 1x: setup"
    );
    assert_eq!(old.get("k").unwrap().unwrap(), b"on-A");
}
