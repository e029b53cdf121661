//! The process's interrupt check (`mcpool::set_interrupt_check`, Python's Ctrl-C) ends a
//! call that waits in line for a busy pooled connection: a parked thread sees no signal,
//! so the wait asks the check every 50 ms (tester-conc F1). And a connect the operation's
//! deadline ended names that deadline, not the connect timeout (tester-conc F2). The
//! servers are deliberately silent or blackholed fake servers (testkit).
mod common;

use common::{blackholed_port, silent_server, wait_until};
use mcpool::{Client, Error};
use std::sync::Mutex;
use std::thread::ThreadId;
use std::time::{Duration, Instant};

/// The thread whose call the check ends (the check is process-wide; other threads' calls
/// are left alone).
static TARGET: Mutex<Option<ThreadId>> = Mutex::new(None);

fn check() -> bool {
    *TARGET.lock().unwrap() == Some(std::thread::current().id())
}

#[test]
fn the_interrupt_check_ends_a_wait_in_line_for_a_pooled_connection() {
    mcpool::set_interrupt_check(Some(check));
    let io = Duration::from_secs(1);
    let c = Client::builder()
        .server(&silent_server())
        .max_size(1)
        .min_idle(0)
        .io_timeout(io)
        .pool_timeout(Duration::from_secs(10))
        .operation_timeout(None)
        .failure_limit(1000)
        .build()
        .unwrap();
    std::thread::scope(|s| {
        // The one connection, held by a call the server never answers.
        let holder = s.spawn(|| c.get("held"));
        wait_until("the holder's checkout", Duration::from_secs(5), || {
            c.metrics_and_pool_states().1[0] == (1, 0)
        });
        // (A fresh pool's first checkout counts a wait too.)
        let waits = c.metrics()[0].pool_waits;
        *TARGET.lock().unwrap() = Some(std::thread::current().id());
        let t = Instant::now();
        let r = c.get("k");
        let took = t.elapsed();
        *TARGET.lock().unwrap() = None;
        assert!(matches!(r, Err(Error::Interrupted { .. })), "{r:?}");
        assert!(took < Duration::from_millis(500), "{took:?}");
        assert_eq!(
            c.metrics()[0].pool_waits,
            waits + 1,
            "the call waited in line"
        );
        // The interrupted caller left the line: the holder's permit goes to the next
        // caller, which then times out on the silent server itself (not at the pool).
        let next = c.get("k2");
        assert!(matches!(next, Err(Error::IoTimeout { .. })), "{next:?}");
        let held = holder.join().unwrap();
        assert!(matches!(held, Err(Error::IoTimeout { .. })), "{held:?}");
    });
}

#[test]
fn a_connect_ended_by_the_operation_timeout_names_it() {
    let black = blackholed_port();
    let client = |connect: u64, operation: u64| {
        Client::builder()
            .server(&black.addr())
            .min_idle(0)
            .connect_timeout(Duration::from_millis(connect))
            .operation_timeout(Some(Duration::from_millis(operation)))
            .failure_limit(1000)
            .build()
            .unwrap()
    };
    let e = client(8000, 300).get("k").unwrap_err();
    assert!(
        matches!(
            e,
            Error::ConnectTimeout {
                operation_timeout: true,
                ..
            }
        ),
        "{e:?}"
    );
    let msg = e.to_string();
    assert!(
        msg.contains("operation timeout") && msg.contains("operation_timeout ended the connect"),
        "{msg}"
    );
    let e = client(300, 8000).get("k").unwrap_err();
    assert!(
        matches!(
            e,
            Error::ConnectTimeout {
                operation_timeout: false,
                ..
            }
        ),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        format!("connect timeout to {}", black.addr())
    );
}

/// A wait in line for a connection that the operation's deadline ends, before the pool
/// timeout, names that deadline (tester finding timeouts 2: "pool timeout" after 30 ms with
/// a pool_timeout of 5 s, as if raising it would help); one the pool timeout ends says so.
/// The one connection is held by a `get_multi_each` whose callback waits (it runs while the
/// call holds the connection, past any deadline of its own: a call timing out released it
/// just before the waiter's deadline, and the waiter then timed out talking instead).
#[test]
fn a_pool_wait_ended_by_the_operation_timeout_names_it() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let mc = common::Memcached::start(&[]);
    for (pool, operation, by_deadline) in [(5000, 200, true), (200, 5000, false)] {
        let c = Client::builder()
            .server(&mc.addr())
            .max_size(1)
            .min_idle(0)
            .pool_timeout(Duration::from_millis(pool))
            .operation_timeout(Some(Duration::from_millis(operation)))
            .build()
            .unwrap();
        c.set("held", b"v", 0).unwrap();
        let release = AtomicBool::new(false);
        let holding = AtomicBool::new(false);
        std::thread::scope(|s| {
            let holder = s.spawn(|| {
                c.get_multi_each(&["held"], |_, _, _| {
                    holding.store(true, Ordering::SeqCst);
                    for _ in 0..1000 {
                        if release.load(Ordering::SeqCst) {
                            break;
                        }
                        std::thread::sleep(Duration::from_millis(10));
                    }
                })
            });
            wait_until("the holder's callback", Duration::from_secs(5), || {
                holding.load(Ordering::SeqCst)
            });
            // (a multi-key read: not handed over to the holder, it waits in line itself)
            let e = c.get_multi(&["k1", "k2"]).remove(0).unwrap_err();
            release.store(true, Ordering::SeqCst);
            match &e {
                Error::PoolTimeout {
                    operation_timeout, ..
                } => assert_eq!(*operation_timeout, by_deadline, "{e}"),
                other => panic!("pool {pool}, operation {operation}: {other:?}"),
            }
            assert_eq!(
                e.to_string().contains("operation_timeout ran out"),
                by_deadline,
                "{e}"
            );
            assert!(holder.join().unwrap()[0].is_ok());
        });
    }
}
