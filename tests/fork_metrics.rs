//! A forked child's metrics count its own calls and connections from 0, read before its
//! first call or after it, while the parent's go on (tester finding fork 3: the child's
//! counters went on from the parent's totals while its gauges started from 0). Its own test
//! binary: one thread forks.
mod common;

use common::*;
use mcpool::Client;
use std::time::Duration;

#[test]
fn a_forked_childs_metrics_start_from_zero() {
    let mc = Memcached::start(&[]);
    let c = Client::builder()
        .server(&mc.addr())
        .key_prefix(unique("forkm"))
        .build()
        .unwrap();
    for i in 0..20 {
        c.set(format!("k{i}"), b"v", 0).unwrap();
        c.get(format!("k{i}")).unwrap();
    }
    let parent = c.metrics()[0].clone();
    assert!(parent.operations >= 40 && parent.hits >= 20, "{parent:?}");
    // SAFETY: the child only uses the client and then leaves with _exit, never returning
    // into the test harness.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let before = c.metrics()[0].clone();
        let report = c.server_reports().remove(0);
        let zero = before.operations == 0
            && before.hits == 0
            && before.connects == 0
            && report.pool == (0, 0);
        let hit = c.get("k1").ok().flatten().is_some();
        let after = c.metrics()[0].clone();
        let counted = after.operations == 1 && after.hits == 1 && after.connects >= 1;
        if !(zero && hit && counted) {
            eprintln!("child: before {before:?} {report:?}, after {after:?}");
        }
        // SAFETY: ends the child without running the parent's destructors or test harness.
        unsafe { libc::_exit(if zero && hit && counted { 0 } else { 1 }) };
    }
    assert_eq!(wait_for_child(pid, Duration::from_secs(30)), 0, "the child");
    // The parent's counters go on from where they were.
    c.get("k2").unwrap();
    let now = c.metrics()[0].clone();
    assert_eq!(now.operations, parent.operations + 1, "{now:?}");
    assert_eq!(now.hits, parent.hits + 1);
}
