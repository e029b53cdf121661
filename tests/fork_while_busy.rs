//! A child forked while the parent's threads are inside calls gets a working client, also
//! when the parent re-resolves its server's name every 10 ms and replaces connections every
//! 50 ms (tester finding cabi 1: a lock held at the fork by a parent's thread, the resolver's
//! state or the socket registry's, stayed held in the child; the child's background thread
//! waited on it for good, and every call of the child timed out in line for a connection,
//! 6 children in 200). Its own test binary: the children are forked from one thread.
mod common;

use common::{unique, Memcached};
use mcpool::Client;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

#[test]
fn children_forked_while_threads_are_busy_get_a_working_client() {
    let mc = Memcached::start(&[]);
    let port = mc.addr().rsplit_once(':').unwrap().1.to_owned();
    let c = Client::builder()
        .server(&format!("localhost:{port}"))
        .key_prefix(unique("forkbusy"))
        .max_lifetime(Some(Duration::from_millis(50)))
        .pool_timeout(Duration::from_secs(1))
        .set("resolve_interval", "10ms")
        .unwrap()
        .build()
        .unwrap();
    c.set("k", b"v", 0).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let busy: Vec<_> = (0..6)
        .map(|t| {
            let (c, stop) = (c.clone(), stop.clone());
            std::thread::spawn(move || {
                for n in 0..10_000_000u64 {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let _ = c.get(format!("b{t}:{}", n % 50));
                }
            })
        })
        .collect();
    let mut failed = 0;
    for _ in 0..150 {
        std::thread::sleep(Duration::from_millis(3));
        // SAFETY: the child only uses the client and leaves with _exit, never returning into
        // the test harness (alarm ends one that would hang).
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            // SAFETY: alarm(2) only sets this process's timer.
            unsafe { libc::alarm(20) };
            // A panic must not unwind into the test harness's copy in the child: its thread
            // would end alone and leave the process (and the parent's wait) hanging (seen
            // once in CI). It is said on the real standard error, past the harness's capture.
            std::panic::set_hook(Box::new(|info| {
                let said = format!("fork_while_busy child: {info}\n");
                // SAFETY: writes the bytes of a live String to fd 2.
                unsafe { libc::write(2, said.as_ptr().cast(), said.len()) };
            }));
            let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                c.set("k", b"child", 0).is_ok() && c.get("k").ok().flatten().is_some()
            }));
            let code = match ok {
                Ok(true) => 0,
                Ok(false) => 1,
                Err(_) => 2,
            };
            // SAFETY: ends the child without running the parent's destructors.
            unsafe { libc::_exit(code) };
        }
        // The child's end, waited for at most 30 s (its alarm ends it after 20), then killed.
        let mut status = 0;
        let mut ended = false;
        for _ in 0..3000 {
            // SAFETY: polls the child forked above.
            let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
            assert!(r >= 0, "waitpid failed");
            if r == pid {
                ended = true;
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        if !ended {
            // SAFETY: ends and reaps the child forked above.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, &mut status, 0);
            }
        }
        if !(ended && libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0) {
            failed += 1;
        }
    }
    stop.store(true, Ordering::Relaxed);
    for t in busy {
        t.join().unwrap();
    }
    assert_eq!(failed, 0, "children whose calls failed, of 150");
}
