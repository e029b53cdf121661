//! Recovery (issue 15, items 9 and 10): the dead-server back-off doubles per failed retry,
//! not per caller in flight, and connections from before a restart are not failed retries;
//! an event callback may issue commands of its own. Against real memcached, stopped
//! (SIGSTOP), killed and restarted.
mod common;

use common::{unique, wait_until, Memcached};
use mcpool::{Client, Error, Event};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The restart test brings memcached back on the port it had; while it is down another test
/// of this file could be given that free port. The tests of this file run one at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner())
}

/// Item 9: 16 callers in flight when the server stalls for 1.5 s. Their failures are one
/// incident: once the server answers again it is used again within about the retry timeout
/// (after 0 s with 1 caller, 3.5 s with 4 and 29.5 s with 16 before: each caller's failure
/// doubled the back-off).
#[test]
fn a_server_back_from_a_stall_under_16_callers_is_used_again_within_the_retry_timeout() {
    let _serial = one_at_a_time();
    let mc = Memcached::start(&[]);
    let c = Client::builder()
        .server(&mc.addr())
        .key_prefix(unique("stall"))
        .max_size(16)
        .io_timeout(Duration::from_millis(300))
        .operation_timeout(Some(Duration::from_secs(1)))
        .failure_limit(2)
        .retry_timeout(Duration::from_millis(500))
        .retry_timeout_max(Duration::from_secs(30))
        .build()
        .unwrap();
    c.set("k", b"v", 0).unwrap();
    let base = Instant::now();
    let stop = Arc::new(AtomicBool::new(false));
    // Milliseconds since `base` of the latest success, and the successes.
    let last_ok = Arc::new(Mutex::new(None::<Duration>));
    let oks = Arc::new(AtomicUsize::new(0));
    let callers: Vec<_> = (0..16)
        .map(|_| {
            let (c, stop, last_ok, oks) = (c.clone(), stop.clone(), last_ok.clone(), oks.clone());
            std::thread::spawn(move || {
                for _ in 0..1_000_000 {
                    if stop.load(Ordering::Relaxed) {
                        return;
                    }
                    match c.get("k") {
                        Ok(v) => {
                            assert_eq!(v.as_deref(), Some(&b"v"[..]));
                            *last_ok.lock().unwrap() = Some(base.elapsed());
                            oks.fetch_add(1, Ordering::Relaxed);
                        }
                        // Pacing while the server is marked dead, not synchronisation.
                        Err(_) => std::thread::sleep(Duration::from_millis(2)),
                    }
                }
            })
        })
        .collect();
    wait_until("calls succeed", Duration::from_secs(10), || {
        oks.load(Ordering::Relaxed) > 100
    });
    mc.freeze();
    let frozen = Instant::now();
    wait_until("the server marked dead", Duration::from_secs(10), || {
        !c.server_states()[0].alive
    });
    // The stall lasts 1.5 s.
    std::thread::sleep(Duration::from_millis(1_500).saturating_sub(frozen.elapsed()));
    mc.thaw();
    let thawed = base.elapsed();
    let back = Instant::now();
    let used_again = || last_ok.lock().unwrap().is_some_and(|t| t > thawed);
    while !used_again() && back.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(5));
    }
    let took = back.elapsed();
    stop.store(true, Ordering::Relaxed);
    for t in callers {
        t.join().unwrap();
    }
    let m = &c.metrics()[0];
    eprintln!(
        "used again {took:?} after the thaw; {m:?}; {:?}",
        c.server_states()
    );
    assert!(used_again(), "not used again within 10 s of the thaw");
    // Back-off 0.5 s, 1 s after one failed retry: about 0.6 s; 3 s is generous.
    assert!(
        took < Duration::from_secs(3),
        "used again only {took:?} after the thaw"
    );
}

/// Item 9: idle connections opened before the server was marked dead (and then killed and
/// restarted) are not failed retries of the restarted server: once the back-off is over,
/// callers that find such a connection get an error, the connection is dropped, and the
/// server stays in use (each stale connection marked it dead again before).
#[test]
fn idle_connections_from_before_a_restart_are_not_failed_retries() {
    let _serial = one_at_a_time();
    let mut mc = Memcached::start(&[]);
    let port = mc.port;
    let c = Client::builder()
        .server(&mc.addr())
        .key_prefix(unique("restart"))
        .max_size(8)
        .min_idle(8)
        .io_timeout(Duration::from_millis(500))
        .failure_limit(1)
        .retry_timeout(Duration::from_millis(500))
        .retry_timeout_max(Duration::from_secs(30))
        .build()
        .unwrap();
    wait_until("eight idle connections", Duration::from_secs(10), || {
        c.pool_states()[0] == (8, 8) && c.metrics()[0].connects >= 8
    });
    mc.kill();
    assert!(c.set("k", b"v", 0).is_err());
    assert!(!c.server_states()[0].alive, "one failure marks it dead");
    let _restarted = Memcached::start_on(port, &[]);
    wait_until("the back-off over", Duration::from_secs(10), || {
        c.server_states()[0].alive
    });
    // Eight callers at once: most of them find a connection from before the restart.
    let start = Arc::new(std::sync::Barrier::new(8));
    let callers: Vec<_> = (0..8)
        .map(|_| {
            let (c, start) = (c.clone(), start.clone());
            std::thread::spawn(move || {
                start.wait();
                let began = Instant::now();
                let mut errors = Vec::new();
                for _ in 0..1_000 {
                    match c.set("k", b"v", 0) {
                        Ok(_) => return (began.elapsed(), errors),
                        Err(e) => errors.push(e.to_string()),
                    }
                    if began.elapsed() > Duration::from_secs(10) {
                        break;
                    }
                    // Pacing while the server is marked dead, not synchronisation.
                    std::thread::sleep(Duration::from_millis(10));
                }
                panic!("never used again: {errors:?}");
            })
        })
        .collect();
    for t in callers {
        let (took, mut errors) = t.join().unwrap();
        errors.dedup();
        // Before: a stale connection marked it dead again for at least the 500 ms back-off.
        assert!(
            took < Duration::from_millis(400),
            "used again after {took:?}: {errors:?} {:?}",
            c.metrics()
        );
    }
    assert_eq!(c.metrics()[0].ejections, 1, "{:?}", c.metrics());
}

/// Item 10: an event callback that issues a command of its own, with one connection per
/// server. It ran while its caller still held that connection, so the callback's `get`
/// waited for it and failed after the deadline; now events come after the connection is
/// back, and the callback's command completes at once.
#[test]
fn an_event_callback_may_issue_commands() {
    let _serial = one_at_a_time();
    let mc = Memcached::start(&[]);
    type Seen = (Event, Result<Option<Vec<u8>>, String>, Duration);
    let client: Arc<Mutex<Option<Client>>> = Arc::default();
    let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let (inner, log) = (client.clone(), seen.clone());
    let c = Client::builder()
        .server(&mc.addr())
        .key_prefix(unique("event"))
        .max_size(1)
        .io_timeout(Duration::from_millis(200))
        .operation_timeout(Some(Duration::from_secs(1)))
        .pool_timeout(Duration::from_millis(1_500))
        .failure_limit(1)
        .retry_timeout(Duration::from_millis(200))
        .retry_timeout_max(Duration::from_millis(200))
        .on_event(move |e| {
            let c = inner.lock().unwrap().clone();
            if let Some(c) = c {
                let start = Instant::now();
                let r = c.get("k").map_err(|e| e.to_string());
                log.lock().unwrap().push((e.clone(), r, start.elapsed()));
            }
        })
        .build()
        .unwrap();
    *client.lock().unwrap() = Some(c.clone());
    c.set("k", b"v", 0).unwrap();
    mc.freeze();
    let start = Instant::now();
    assert!(matches!(c.get("k"), Err(Error::IoTimeout { .. })));
    assert!(
        start.elapsed() < Duration::from_secs(1),
        "{:?}",
        start.elapsed()
    );
    assert!(!c.server_states()[0].alive);
    mc.thaw();
    let mut slowest = Duration::ZERO;
    wait_until("the server back", Duration::from_secs(10), || {
        let start = Instant::now();
        let back = c.get("k").is_ok();
        slowest = slowest.max(start.elapsed());
        back
    });
    *client.lock().unwrap() = None;
    let seen = seen.lock().unwrap().clone();
    let up = seen
        .iter()
        .find(|(e, ..)| matches!(e, Event::ServerUp { .. }))
        .unwrap_or_else(|| panic!("no ServerUp: {seen:?}"));
    assert_eq!(up.1, Ok(Some(b"v".to_vec())), "{seen:?}");
    assert!(up.2 < Duration::from_millis(500), "{seen:?}");
    let down = seen
        .iter()
        .find(|(e, ..)| matches!(e, Event::ServerDown { .. }))
        .unwrap_or_else(|| panic!("no ServerDown: {seen:?}"));
    assert!(down.2 < Duration::from_millis(500), "{seen:?}");
    assert!(
        slowest < Duration::from_millis(900),
        "a call took {slowest:?}"
    );
}

/// 32 threads calling a server that refuses connections: it is marked dead once, with the
/// first back-off (tester finding rust 2: calls that passed the health check just before the
/// marking and took the new epoch just after it each counted as a failed retry, so that
/// 32 threads took the back-off to 30 s within a quarter of a second).
#[test]
fn callers_racing_with_the_marking_do_not_double_the_back_off() {
    let _one = one_at_a_time();
    let addr = format!("127.0.0.1:{}", common::free_port());
    let retry = Duration::from_secs(2);
    let c = Client::builder()
        .server(&addr)
        .retry_timeout(retry)
        .retry_timeout_max(Duration::from_secs(30))
        .build()
        .unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let workers: Vec<_> = (0..32)
        .map(|_| {
            let (c, stop) = (c.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut n = 0u32;
                while !stop.load(Ordering::Relaxed) && n < 1_000_000 {
                    let _ = c.get("k");
                    n += 1;
                }
            })
        })
        .collect();
    // well within the first back-off: no retry is due yet
    std::thread::sleep(Duration::from_millis(500));
    stop.store(true, Ordering::Relaxed);
    for w in workers {
        w.join().unwrap();
    }
    let s = &c.server_states()[0];
    assert!(!s.alive, "{s:?}");
    assert!(
        s.retry_in.is_some_and(|r| r <= retry),
        "one marking, the first back-off: {s:?}"
    );
}

/// Tester finding proxy2 2: when a dead server's retry came due, every call placed on it
/// tried it, and against a stalled server each waited its `io_timeout`. One call tries it
/// now; the calls that come while that try is under way find the server resting (marked
/// dead, at once), and once the server answers again it is used again.
#[test]
fn a_due_retry_of_a_stalled_server_is_one_calls_try() {
    let _serial = one_at_a_time();
    let mc = Memcached::start(&[]);
    let c = Client::builder()
        .server(&mc.addr())
        .key_prefix(unique("single"))
        .max_size(8)
        .min_idle(0)
        .io_timeout(Duration::from_millis(400))
        .failure_limit(1)
        .retry_timeout(Duration::from_millis(300))
        .retry_timeout_max(Duration::from_secs(30))
        .build()
        .unwrap();
    c.set("k", b"v", 0).unwrap();
    mc.freeze();
    assert!(
        matches!(c.get("k"), Err(Error::IoTimeout { .. })),
        "the stall"
    );
    assert!(!c.server_states()[0].alive, "one failure marks it dead");
    wait_until("the retry due", Duration::from_secs(10), || {
        c.server_states()[0].alive
    });
    let timeouts_before = c.metrics()[0].timeouts;
    let results = common::gets_at_once(&c, "k", 8);
    let timed_out = results
        .iter()
        .filter(|r| matches!(r, Err(Error::IoTimeout { .. })))
        .count();
    let resting = results
        .iter()
        .filter(|r| matches!(r, Err(Error::ServerDead { .. })))
        .count();
    assert_eq!(
        (timed_out, resting),
        (1, 7),
        "one call tries the stalled server, the others find it resting: {results:?}"
    );
    assert_eq!(c.metrics()[0].timeouts - timeouts_before, 1, "one try");
    mc.thaw();
    // Rested again (twice the back-off) after the failed try: used again once it answers.
    wait_until("used again", Duration::from_secs(10), || {
        c.get("k").is_ok_and(|v| v.as_deref() == Some(&b"v"[..]))
    });
    assert!(c.server_states()[0].alive);
}
