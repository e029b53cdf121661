//! A forked child never uses its parent's sockets: it reconnects transparently, and both
//! processes keep getting their own, correct values. (Its own test binary: one thread forks.)
mod common;

use common::{unique, Memcached};
use mcpool::Client;

#[test]
fn parent_and_child_both_get_their_own_values() {
    let mc = Memcached::start(&[]);
    let c = Client::builder()
        .server(&mc.addr())
        .max_size(2)
        .key_prefix(unique("fork"))
        .build()
        .unwrap();
    for i in 0..50 {
        c.set(format!("p{i}"), format!("parent-{i}").as_bytes(), 0)
            .unwrap();
    }
    // SAFETY: the child only uses the client and then leaves with _exit, never returning
    // into the test harness.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let ok = (0..200).all(|i| {
            let k = format!("c{i}");
            c.set(&k, format!("child-{i}").as_bytes(), 0).is_ok()
                && c.get(&k).ok().flatten() == Some(format!("child-{i}").into_bytes())
                && c.get(format!("p{}", i % 50)).ok().flatten()
                    == Some(format!("parent-{}", i % 50).into_bytes())
        });
        // SAFETY: ends the child without running the parent's destructors or test harness.
        unsafe { libc::_exit(if ok { 0 } else { 1 }) };
    }
    // The parent keeps working on its own sockets meanwhile.
    for i in 0..200 {
        let k = format!("p{}", i % 50);
        assert_eq!(
            c.get(&k).unwrap().unwrap(),
            format!("parent-{}", i % 50).as_bytes()
        );
    }
    let mut status = 0;
    // SAFETY: waits for the child forked above.
    let waited = unsafe { libc::waitpid(pid, &mut status, 0) };
    assert_eq!(waited, pid);
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "child saw wrong values"
    );
    assert_eq!(
        c.get("c199").unwrap().unwrap(),
        b"child-199",
        "the child's writes landed"
    );
    assert_eq!(c.get("p7").unwrap().unwrap(), b"parent-7");
}
