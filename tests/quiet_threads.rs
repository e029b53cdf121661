//! Tester finding (fork 2): a signal the calling thread held back during a call was delivered
//! by the kernel to the core's background thread, where Perl's `%SIG` handler ran without an
//! interpreter and the process died (SIGSEGV). The core's threads start with every signal
//! blocked, so a process's signals reach only the program's own threads.
mod common;

use common::{unique, Memcached};
use mcpool::Client;

/// (name, blocked-signal mask) of every thread of this process.
fn threads() -> Vec<(String, u64)> {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|e| {
            let dir = e.ok()?.path();
            let name = std::fs::read_to_string(dir.join("comm")).ok()?;
            let status = std::fs::read_to_string(dir.join("status")).ok()?;
            let mask = status
                .lines()
                .find_map(|l| l.strip_prefix("SigBlk:"))
                .and_then(|m| u64::from_str_radix(m.trim(), 16).ok())?;
            Some((name.trim().to_owned(), mask))
        })
        .collect()
}

#[test]
fn the_cores_threads_take_no_signal() {
    let mc = Memcached::start(&[]);
    let c = Client::builder()
        .server(&mc.addr())
        .min_idle(1) // the pool's background thread keeps it open
        .key_prefix(unique("quiet"))
        .build()
        .unwrap();
    c.set("k", b"v", 0).unwrap();
    let ours: Vec<(String, u64)> = threads()
        .into_iter()
        .filter(|(name, _)| name.starts_with("mcpool-"))
        .collect();
    assert!(!ours.is_empty(), "no mcpool thread: {:?}", threads());
    for sig in [
        libc::SIGINT,
        libc::SIGTERM,
        libc::SIGALRM,
        libc::SIGCHLD,
        libc::SIGUSR1,
        libc::SIGHUP,
        libc::SIGPIPE,
    ] {
        for (name, mask) in &ours {
            assert!(
                mask & (1 << (sig - 1)) != 0,
                "thread {name} takes signal {sig} (SigBlk {mask:x})"
            );
        }
    }
    // the caller's own mask is left as it was
    let mine = std::fs::read_to_string("/proc/thread-self/status").unwrap();
    let blk = mine
        .lines()
        .find_map(|l| l.strip_prefix("SigBlk:"))
        .unwrap()
        .trim()
        .to_owned();
    let blk = u64::from_str_radix(&blk, 16).unwrap();
    assert_eq!(
        blk & (1 << (libc::SIGUSR1 - 1)),
        0,
        "the caller's mask changed"
    );
    assert_eq!(c.get("k").unwrap().unwrap(), b"v");
}
