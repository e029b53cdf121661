//! I/O timeouts under signals, and the one I/O timeout a multi-server call's servers share.
//! Every server that must time out here is a deliberately silent fake server: a listener
//! that accepts connections, holds them, and never reads or answers.

mod common;

use common::{unique, Memcached};
use mcpool::{Client, ClientBuilder, Error};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A deliberately silent fake server: accepts every connection and never answers.
struct SilentServer {
    addr: String,
    stop: Arc<AtomicBool>,
}

impl SilentServer {
    fn start() -> SilentServer {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap().to_string();
        l.set_nonblocking(true).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        std::thread::spawn(move || {
            let mut held: Vec<TcpStream> = Vec::new();
            // Bounded: at most 10 minutes, ends when the test drops the server.
            for _ in 0..60_000 {
                if s.load(Ordering::Relaxed) {
                    break;
                }
                match l.accept() {
                    Ok((c, _)) => held.push(c),
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
        });
        SilentServer { addr, stop }
    }
}

impl Drop for SilentServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

extern "C" fn nothing(_: libc::c_int) {}

/// Sends SIGUSR2 (its handler does nothing; installed without `SA_RESTART`) to the calling
/// thread every `every` until dropped: each one interrupts a blocking read with `EINTR`.
struct Pester {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Pester {
    fn start(every: Duration) -> Pester {
        // SAFETY: installs a handler that does nothing (async-signal-safe).
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = nothing as extern "C" fn(libc::c_int) as usize;
            sa.sa_flags = 0;
            libc::sigemptyset(&mut sa.sa_mask);
            assert_eq!(libc::sigaction(libc::SIGUSR2, &sa, std::ptr::null_mut()), 0);
        }
        // SAFETY: pthread_self has no preconditions.
        let target = unsafe { libc::pthread_self() };
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let thread = std::thread::spawn(move || {
            // Bounded: at most 60 s of signals.
            for _ in 0..(60_000 / every.as_millis().max(1)) {
                if s.load(Ordering::Relaxed) {
                    break;
                }
                std::thread::sleep(every);
                if s.load(Ordering::Relaxed) {
                    break;
                }
                // SAFETY: the target thread outlives this one (joined in `drop`).
                unsafe { libc::pthread_kill(target, libc::SIGUSR2) };
            }
        });
        Pester {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Pester {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn client(servers: &[String], io_timeout: &str, protocol: &str) -> Client {
    ClientBuilder::new()
        .set("servers", &servers.join(","))
        .unwrap()
        .set("io_timeout", io_timeout)
        .unwrap()
        .set("operation_timeout", "0")
        .unwrap()
        .set("protocol", protocol)
        .unwrap()
        .set("min_idle", "0")
        .unwrap()
        .set("retry_timeout", "0")
        .unwrap()
        .build()
        .unwrap()
}

// Serialises the tests that signal their own thread (one handler for the process).
static SIGNALS: Mutex<()> = Mutex::new(());

#[test]
fn signals_more_often_than_io_timeout_do_not_stop_it_from_expiring() {
    let _one = SIGNALS.lock().unwrap_or_else(|e| e.into_inner());
    let silent = SilentServer::start();
    let c = client(std::slice::from_ref(&silent.addr), "500ms", "text");
    let start = Instant::now();
    let res = {
        let _signals = Pester::start(Duration::from_millis(50));
        c.get("k")
    };
    let took = start.elapsed();
    assert!(matches!(res, Err(Error::IoTimeout { .. })), "{res:?}");
    // Ten signals per I/O timeout used to restart it for ever; now it ends one I/O timeout
    // after the request (at the latest one after the first signal).
    assert!(took >= Duration::from_millis(400), "{took:?}");
    assert!(took < Duration::from_millis(1500), "{took:?}");
}

#[test]
fn the_first_signal_does_not_extend_io_timeout_over_tcp() {
    let _one = SIGNALS.lock().unwrap_or_else(|e| e.into_inner());
    let silent = SilentServer::start();
    let c = client(std::slice::from_ref(&silent.addr), "1s", "text");
    let start = Instant::now();
    let res = {
        // One signal 700 ms into the wait: the wait still ends at 1 s (counted from the
        // request, which the kernel dates), not 1 s after the signal.
        let _signals = Pester::start(Duration::from_millis(700));
        c.get("k")
    };
    let took = start.elapsed();
    assert!(matches!(res, Err(Error::IoTimeout { .. })), "{res:?}");
    assert!(took >= Duration::from_millis(900), "{took:?}");
    assert!(took < Duration::from_millis(1500), "{took:?}");
}

#[test]
fn an_interrupt_check_that_says_go_on_does_not_end_the_call() {
    let _one = SIGNALS.lock().unwrap_or_else(|e| e.into_inner());
    let mc = Memcached::start(&[]);
    let c = client(&[mc.addr()], "2s", "meta");
    let key = unique("intr");
    c.set(&key, b"v", 0).unwrap();
    fn go_on() -> bool {
        false
    }
    mcpool::set_interrupt_check(Some(go_on));
    let _signals = Pester::start(Duration::from_millis(1));
    // Every exchange may be interrupted; each still gets its reply.
    for _ in 0..300 {
        assert_eq!(c.get(&key).unwrap().as_deref(), Some(&b"v"[..]));
    }
    mcpool::set_interrupt_check(None);
}

/// A client of a deliberately silent fake server, with an interrupt check that always says
/// stop (set process-wide: the caller holds `SIGNALS` and clears it at the end).
fn stopping_client() -> (SilentServer, Client) {
    fn stop() -> bool {
        true
    }
    let silent = SilentServer::start();
    let c = client(std::slice::from_ref(&silent.addr), "5s", "text");
    mcpool::set_interrupt_check(Some(stop));
    (silent, c)
}

#[test]
fn an_interrupt_check_that_says_stop_ends_the_call_and_drops_the_connection() {
    let _one = SIGNALS.lock().unwrap_or_else(|e| e.into_inner());
    let (_silent, c) = stopping_client();
    for _ in 0..2 {
        let start = Instant::now();
        let res = {
            let _signals = Pester::start(Duration::from_millis(100));
            c.get("k")
        };
        let took = start.elapsed();
        assert!(matches!(res, Err(Error::Interrupted { .. })), "{res:?}");
        assert!(took < Duration::from_secs(2), "{took:?}");
    }
    mcpool::set_interrupt_check(None);
    let m = &c.metrics()[0];
    // Each call had a connection of its own (the interrupted one was closed), and the
    // server was not blamed.
    assert_eq!(m.connects, 2, "{m:?}");
    assert_eq!((m.timeouts, m.ejections), (0, 0), "{m:?}");
}

/// An interrupted call that changes data, once its request was written, says its outcome is
/// unknown, as a timeout after sending does: the server may have applied it (tester finding
/// interrupts 1: an interrupted `incr` the server applied said its outcome was known, and a
/// retry would count it twice). A read says nothing of it. The server is a deliberately
/// silent fake one, so every request is written and never answered.
#[test]
fn an_interrupted_write_that_was_sent_has_an_unknown_outcome() {
    let _one = SIGNALS.lock().unwrap_or_else(|e| e.into_inner());
    let (_silent, c) = stopping_client();
    type Call<'a> = &'a dyn Fn() -> Result<(), Error>;
    let interrupted = |f: Call| {
        let _signals = Pester::start(Duration::from_millis(100));
        f().unwrap_err()
    };
    let writes: [(&str, Call); 3] = [
        ("incr", &|| c.incr("n", 5).map(drop)),
        ("set", &|| c.set("s", b"new", 0).map(drop)),
        ("delete", &|| c.delete("d").map(drop)),
    ];
    for (name, f) in writes {
        let e = interrupted(f);
        assert!(
            matches!(e, Error::Interrupted { sent: true }),
            "{name}: {e:?}"
        );
        assert!(e.outcome_unknown(), "{name}: {e:?}");
        assert!(
            e.to_string().contains("whether it was applied is unknown"),
            "{name}: {e}"
        );
    }
    let e = interrupted(&|| c.get("g").map(drop));
    assert!(matches!(e, Error::Interrupted { .. }), "{e:?}");
    assert!(!e.outcome_unknown(), "a read: {e:?}");
    assert!(!e.to_string().contains("unknown"), "{e}");
    mcpool::set_interrupt_check(None);
}

/// A signal handler that runs long in the interrupt check (Python's, waiting `pool_timeout`
/// for the very connection the interrupted call holds) does not spend the call's I/O timeout
/// or its operation timeout: the call goes on and reads its reply, and the server is not
/// blamed (tester finding callbacks 2: the call failed with an I/O timeout, counted against
/// the server, and two such signals ejected it). The server is a deliberately slow fake
/// one: each get answered 300 ms after it arrives, within both timeouts.
#[test]
fn time_spent_in_the_interrupt_check_is_not_the_servers() {
    let _one = SIGNALS.lock().unwrap_or_else(|e| e.into_inner());
    static SLEPT: AtomicBool = AtomicBool::new(false);
    fn slow_handler() -> bool {
        if !SLEPT.swap(true, Ordering::SeqCst) {
            // longer than either timeout, and than twice the I/O timeout (a handler waiting
            // the default 5 s pool timeout under a 1 s I/O timeout: retest25 1)
            std::thread::sleep(Duration::from_millis(1000));
        }
        false
    }
    let (addr, _) = common::fake::fake(8, |_, line, w| {
        use std::io::Write;
        if line.starts_with(b"get ") {
            std::thread::sleep(Duration::from_millis(300));
            let _ = w.write_all(b"VALUE k 0 1\r\nv\r\nEND\r\n");
        }
        common::fake::Then::Continue
    });
    mcpool::set_interrupt_check(Some(slow_handler));
    for (io, operation) in [("400ms", "0"), ("5s", "500ms")] {
        let c = ClientBuilder::new()
            .set("servers", &addr)
            .unwrap()
            .set("io_timeout", io)
            .unwrap()
            .set("operation_timeout", operation)
            .unwrap()
            .set("min_idle", "0")
            .unwrap()
            .build()
            .unwrap();
        SLEPT.store(false, Ordering::SeqCst);
        let res = {
            let _signals = Pester::start(Duration::from_millis(100));
            c.get("k")
        };
        assert_eq!(
            res.unwrap().as_deref(),
            Some(&b"v"[..]),
            "io {io}, operation {operation}"
        );
        assert!(SLEPT.load(Ordering::SeqCst), "the handler ran");
        let m = &c.metrics()[0];
        assert_eq!((m.timeouts, m.ejections), (0, 0), "{m:?}");
    }
    mcpool::set_interrupt_check(None);
}

/// Handlers that keep taking time (a sampling profiler's: 40 ms in every check, signals
/// every few ms) do not stretch a wait on a silent server without end: what the checks take
/// is not counted up to an I/O and a pool timeout per operation, then the wait ends (tester
/// finding retest24 1: 9.8 s with io_timeout 1 s).
#[test]
fn handlers_that_keep_running_stretch_a_wait_one_io_timeout_at_most() {
    let _one = SIGNALS.lock().unwrap_or_else(|e| e.into_inner());
    fn busy_handler() -> bool {
        std::thread::sleep(Duration::from_millis(40));
        false
    }
    let silent = SilentServer::start();
    let c = ClientBuilder::new()
        .set("servers", &silent.addr)
        .unwrap()
        .set("io_timeout", "300ms")
        .unwrap()
        .set("pool_timeout", "300ms")
        .unwrap()
        .set("operation_timeout", "0")
        .unwrap()
        .set("min_idle", "0")
        .unwrap()
        .build()
        .unwrap();
    mcpool::set_interrupt_check(Some(busy_handler));
    let start = Instant::now();
    let res = {
        let _signals = Pester::start(Duration::from_millis(5));
        c.get("k")
    };
    let took = start.elapsed();
    mcpool::set_interrupt_check(None);
    assert!(matches!(res, Err(Error::IoTimeout { .. })), "{res:?}");
    // 300 ms, 600 more of handlers at most (the I/O and pool timeouts), a last 40 ms
    // check, and slack for the machine
    assert!(took < Duration::from_millis(2500), "{took:?}");
}

/// `silent` deliberately silent fake servers and one real memcached: a multi-key call of
/// every kind returns within about one I/O timeout (not one per silent server), the real
/// server's keys succeed and the silent servers' keys time out.
fn multi_call_shares_one_io_timeout(protocol: &str) {
    let silent: Vec<SilentServer> = (0..5).map(|_| SilentServer::start()).collect();
    let mc = Memcached::start(&[]);
    let mut servers: Vec<String> = silent.iter().map(|s| s.addr.clone()).collect();
    servers.insert(2, mc.addr());
    let io = Duration::from_millis(400);
    let c = client(&servers, "400ms", protocol);
    let keys: Vec<String> = (0..60).map(|i| unique(&format!("set{i}-"))).collect();
    let real = Client::new([mc.addr()]).unwrap();
    let mine: Vec<bool> = keys.iter().map(|k| c.server_for(k).unwrap() == 2).collect();
    assert!(mine.iter().any(|&m| m) && mine.iter().any(|&m| !m));
    // Each returns within 3 I/O timeouts (it was one per silent server, 5 here).
    let bound = io * 3;
    let items: Vec<(&str, &[u8])> = keys.iter().map(|k| (k.as_str(), &b"v"[..])).collect();
    let t = Instant::now();
    let stored = c.set_multi(&items, 0);
    assert!(t.elapsed() < bound, "set_multi took {:?}", t.elapsed());
    for (r, &m) in stored.iter().zip(&mine) {
        if m {
            assert!(r.is_ok(), "{r:?}");
        } else {
            assert!(matches!(r, Err(Error::IoTimeout { .. })), "{r:?}");
        }
    }
    for (k, &m) in keys.iter().zip(&mine) {
        if m {
            assert_eq!(real.get(k).unwrap().as_deref(), Some(&b"v"[..]));
        }
    }
    let t = Instant::now();
    let got = c.get_multi(&keys);
    assert!(t.elapsed() < bound, "get_multi took {:?}", t.elapsed());
    for (g, &m) in got.iter().zip(&mine) {
        if m {
            assert!(matches!(g, Ok(Some(_))), "{g:?}");
        } else {
            assert!(matches!(g, Err(Error::IoTimeout { .. })), "{g:?}");
        }
    }
    let t = Instant::now();
    let touched = c.touch_multi(&keys.iter().map(|k| (k.as_str(), 100)).collect::<Vec<_>>());
    assert!(t.elapsed() < bound, "touch_multi took {:?}", t.elapsed());
    let t = Instant::now();
    let deleted = c.delete_multi(&keys);
    assert!(t.elapsed() < bound, "delete_multi took {:?}", t.elapsed());
    for ((d, tch), &m) in deleted.iter().zip(&touched).zip(&mine) {
        if m {
            assert_eq!(d.as_ref().ok(), Some(&true), "{d:?}");
            assert_eq!(tch.as_ref().ok(), Some(&true), "{tch:?}");
        } else {
            assert!(matches!(d, Err(Error::IoTimeout { .. })), "{d:?}");
            assert!(matches!(tch, Err(Error::IoTimeout { .. })), "{tch:?}");
        }
    }
}

#[test]
fn multi_server_calls_share_one_io_timeout_text() {
    multi_call_shares_one_io_timeout("text");
}

#[test]
fn multi_server_calls_share_one_io_timeout_meta() {
    multi_call_shares_one_io_timeout("meta");
}

#[test]
fn multi_server_calls_share_one_io_timeout_binary() {
    multi_call_shares_one_io_timeout("binary");
}
