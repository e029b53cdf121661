//! Issue 15, item 1: a stray copy of a reply (duplicated by a faulty proxy, or arriving late)
//! never becomes another call's answer. The servers here are deliberately broken fakes (not
//! memcached) that send such copies. Every meta and binary request carries a tag unique on
//! its connection (meta `O`, binary opaque, and the binary opcode is checked), so a copy that
//! arrives during a call is refused; and a pooled connection with bytes waiting is never
//! reused (a non-blocking peek at check-out), which also covers text replies, which carry no
//! tag. The next call gets an error or its own value, never the stray one.

mod common;

use common::fake::{binary_fake, binary_response, fake, get_key, value_reply, Then};
use common::fake_client;
use common::wait_until;
use mcpool::{Error, Protocol};
use std::collections::HashMap;
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// `Ok(own)` or a protocol error: anything else (above all another call's value) fails.
fn own_or_protocol_error<T: PartialEq + std::fmt::Debug>(
    what: &str,
    got: mcpool::Result<T>,
    own: T,
) -> bool {
    match got {
        Ok(v) => {
            assert_eq!(v, own, "{what}: a value that is not this call's own");
            false
        }
        Err(e) => {
            assert!(matches!(e, Error::Protocol { .. }), "{what}: {e}");
            true
        }
    }
}

/// The meta token of flag `c` in a request line (`O17` → `Some("O17")`).
fn meta_flag(line: &str, c: char) -> Option<String> {
    line.split_whitespace()
        .skip(2)
        .find(|t| t.starts_with(c))
        .map(str::to_owned)
}

#[test]
fn meta_late_duplicate_of_a_reply_is_never_the_next_calls_value() {
    // Each reply is sent again, on the same connection, just before the next reply: a copy
    // that arrives after the next call has sent its request.
    let previous: Mutex<HashMap<usize, Vec<u8>>> = Mutex::default();
    let (addr, _) = fake(16, move |conn, line, w| {
        let line = String::from_utf8_lossy(line).into_owned();
        let mut t = line.split_whitespace();
        if t.next() != Some("mg") {
            return Then::Continue;
        }
        let key = t.next().unwrap_or("").to_owned();
        let value = format!("value-of-{key}");
        let o = meta_flag(&line, 'O').unwrap_or_default();
        let reply = format!("VA {} f0 {o}\r\n{value}\r\n", value.len()).into_bytes();
        let mut previous = previous.lock().unwrap();
        let mut out = previous.remove(&conn).unwrap_or_default();
        out.extend_from_slice(&reply);
        let _ = w.write_all(&out);
        previous.insert(conn, reply);
        Then::Continue
    });
    let c = fake_client(&addr, Protocol::Meta);
    let mut refused = 0;
    for key in ["a", "b", "c", "d", "e", "f"] {
        let own = Some(format!("value-of-{key}").into_bytes());
        refused += usize::from(own_or_protocol_error(key, c.get(key), own));
    }
    assert!(
        refused >= 2,
        "the stray copies were seen and refused ({refused})"
    );
}

#[test]
fn meta_stray_mn_does_not_end_a_multi_get_early() {
    // A stray `MN` (the end of an earlier pipeline) arrives before the replies of a
    // multi-get: the keys are all there, so a miss would be a wrong answer.
    let (addr, _) = fake(16, move |_, line, w| {
        let line = String::from_utf8_lossy(line).into_owned();
        let mut t = line.split_whitespace();
        match t.next() {
            Some("mg") => {
                let key = t.next().unwrap_or("").to_owned();
                let value = format!("value-of-{key}");
                let o = meta_flag(&line, 'O').unwrap_or_default();
                let mut out = Vec::new();
                if key == "k0" {
                    out.extend_from_slice(b"MN\r\n");
                }
                out.extend_from_slice(
                    format!("VA {} f0 {o}\r\n{value}\r\n", value.len()).as_bytes(),
                );
                let _ = w.write_all(&out);
            }
            Some("mn") => {
                let _ = w.write_all(b"MN\r\n");
            }
            _ => {}
        }
        Then::Continue
    });
    let c = fake_client(&addr, Protocol::Meta);
    let keys = ["k0", "k1", "k2"];
    let got = c.get_multi(&keys);
    let mut refused = 0;
    for (key, r) in keys.iter().zip(got) {
        let own = Some(mcpool::ValueBytes::from(
            format!("value-of-{key}").into_bytes(),
        ));
        refused += usize::from(own_or_protocol_error(
            key,
            r.map(|i| i.map(|i| i.value)),
            own,
        ));
    }
    assert_eq!(
        refused,
        keys.len(),
        "the stray MN fails the whole server's batch"
    );
}

const GET: u8 = 0x00;
const INCREMENT: u8 = 0x05;

/// A binary response packet without a key.
fn response(opcode: u8, opaque: u32, extras: &[u8], value: &[u8]) -> Vec<u8> {
    binary_response(opcode, opaque, extras, b"", value)
}

#[test]
fn binary_late_duplicate_of_a_reply_is_never_the_next_calls_value() {
    let previous: Mutex<HashMap<usize, Vec<u8>>> = Mutex::default();
    let addr = binary_fake(move |conn, opcode, opaque, key| {
        let reply = match opcode {
            GET => {
                let value = format!("value-of-{}", String::from_utf8_lossy(key));
                response(GET, opaque, &[0; 4], value.as_bytes())
            }
            // A counter: the stray copy of this one must never be read as a value.
            INCREMENT => response(INCREMENT, opaque, &[], &42u64.to_be_bytes()),
            _ => return Vec::new(),
        };
        let mut previous = previous.lock().unwrap();
        let mut out = previous.remove(&conn).unwrap_or_default();
        out.extend_from_slice(&reply);
        previous.insert(conn, reply);
        out
    });
    let c = fake_client(&addr, Protocol::Binary);
    let mut refused = 0;
    for key in ["a", "b", "c", "d"] {
        let own = Some(format!("value-of-{key}").into_bytes());
        refused += usize::from(own_or_protocol_error(key, c.get(key), own));
    }
    // A counter's reply, then a read on the same connection.
    for key in ["n1", "n2", "n3"] {
        refused += usize::from(own_or_protocol_error(key, c.incr(key, 1), Some(42)));
        let own = Some(format!("value-of-{key}").into_bytes());
        refused += usize::from(own_or_protocol_error(key, c.get(key), own));
    }
    assert!(
        refused >= 3,
        "the stray copies were seen and refused ({refused})"
    );
}

#[test]
fn binary_reply_with_the_wrong_opcode_is_refused() {
    // The opaque matches, but the response is an INCREMENT's: a counter is not a value.
    let addr =
        binary_fake(|_, _, opaque, _| response(INCREMENT, opaque, &[], &42u64.to_be_bytes()));
    let c = fake_client(&addr, Protocol::Binary);
    let e = c.get("k").expect_err("an INCREMENT response to a GET");
    assert!(matches!(e, Error::Protocol { .. }), "{e}");
    let e = c
        .decr("k", 1)
        .expect_err("an INCREMENT response to a DECREMENT");
    assert!(matches!(e, Error::Protocol { .. }), "{e}");
}

/// The client-side TCP sockets connected to 127.0.0.1:`port`, from `/proc/net/tcp`: each
/// one's state (1 = established, 8 = close-wait: the peer closed) and bytes waiting unread.
fn sockets_to(port: u16) -> Vec<(u8, u64)> {
    let table = std::fs::read_to_string("/proc/net/tcp").unwrap_or_default();
    let remote = format!("0100007F:{port:04X}");
    table
        .lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            if f.get(2) != Some(&remote.as_str()) {
                return None;
            }
            let state = u8::from_str_radix(f.get(3)?, 16).ok()?;
            let rx = u64::from_str_radix(f.get(4)?.split(':').nth(1)?, 16).ok()?;
            Some((state, rx))
        })
        .collect()
}

fn port_of(addr: &str) -> u16 {
    addr.rsplit(':').next().unwrap().parse().unwrap()
}

/// A text fake whose connections each answer `incr` with the next number of a shared
/// counter (5, 6, …) and, when `stray` is set, send a copy of that reply later, while the
/// connection sits idle in the client's pool: once `go` is set, then `sent` is set.
struct IdleStray {
    addr: String,
    conns: Arc<AtomicUsize>,
    go: Arc<AtomicBool>,
    sent: Arc<AtomicBool>,
}

fn idle_stray_fake(reply_for: fn(&[u8], u64) -> Vec<u8>) -> IdleStray {
    let go = Arc::new(AtomicBool::new(false));
    let sent = Arc::new(AtomicBool::new(false));
    let counter = Arc::new(AtomicU64::new(5));
    let (g, s) = (go.clone(), sent.clone());
    let (addr, conns) = fake(8, move |conn, line, w| {
        let n = counter.fetch_add(1, Ordering::SeqCst);
        let reply = reply_for(line, n);
        let _ = w.write_all(&reply);
        if conn == 0 {
            // The first connection's stray copy, once the call that read the reply is over.
            let mut late = w.try_clone().unwrap();
            let (g, s) = (g.clone(), s.clone());
            std::thread::spawn(move || {
                for _ in 0..5000 {
                    if g.load(Ordering::SeqCst) {
                        let _ = late.write_all(&reply);
                        let _ = late.flush();
                        s.store(true, Ordering::SeqCst);
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(1));
                }
            });
        }
        Then::Continue
    });
    IdleStray {
        addr,
        conns,
        go,
        sent,
    }
}

impl IdleStray {
    /// Lets the stray copy go and waits until it waits, unread, in the client's socket.
    fn release_stray(&self) {
        self.go.store(true, Ordering::SeqCst);
        wait_until("the stray copy", Duration::from_secs(5), || {
            self.sent.load(Ordering::SeqCst)
        });
        let port = port_of(&self.addr);
        wait_until(
            "the stray copy in the socket",
            Duration::from_secs(5),
            || sockets_to(port).iter().any(|&(_, rx)| rx > 0),
        );
    }
}

#[test]
fn text_incr_stray_copy_while_idle_is_not_the_next_incr() {
    // Text replies carry no tag: the peek at check-out is what finds the copy.
    let f = idle_stray_fake(|_, n| format!("{n}\r\n").into_bytes());
    let c = fake_client(&f.addr, Protocol::Text);
    assert_eq!(c.incr("n", 1).unwrap(), Some(5));
    f.release_stray();
    assert_eq!(c.incr("n", 1).unwrap(), Some(6), "not the stray 5");
    assert_eq!(
        f.conns.load(Ordering::SeqCst),
        2,
        "the connection was discarded"
    );
}

#[test]
fn stray_bytes_while_idle_in_the_pool_discard_the_connection() {
    // A text get: the stray copy of the reply for key `a` would answer the next `get a`.
    let f = idle_stray_fake(|line, n| value_reply(&get_key(line), format!("v{n}").as_bytes()));
    let c = fake_client(&f.addr, Protocol::Text);
    assert_eq!(c.get("a").unwrap().as_deref(), Some(&b"v5"[..]));
    f.release_stray();
    assert_eq!(
        c.get("a").unwrap().as_deref(),
        Some(&b"v6"[..]),
        "not the stray v5"
    );
    assert_eq!(
        f.conns.load(Ordering::SeqCst),
        2,
        "the connection was discarded"
    );
    // Meta: the same, where the tag would also refuse the copy.
    let f = idle_stray_fake(|line, n| {
        let line = String::from_utf8_lossy(line);
        let o = meta_flag(&line, 'O').unwrap_or_default();
        format!("VA 2 f0 {o}\r\nv{n}\r\n").into_bytes()
    });
    let c = fake_client(&f.addr, Protocol::Meta);
    assert_eq!(c.get("a").unwrap().as_deref(), Some(&b"v5"[..]));
    f.release_stray();
    assert_eq!(c.get("a").unwrap().as_deref(), Some(&b"v6"[..]));
    assert_eq!(
        f.conns.load(Ordering::SeqCst),
        2,
        "the connection was discarded"
    );
}

#[test]
fn idle_connection_closed_by_the_server_is_replaced_without_an_error() {
    // The server closes each connection after its first reply; the close reaches the pooled
    // connection while it is idle, and the next call opens another one.
    let closed = Arc::new(AtomicUsize::new(0));
    let cl = closed.clone();
    let (addr, conns) = fake(8, move |_, line, w| {
        let _ = w.write_all(&value_reply(&get_key(line), b"v"));
        let _ = w.shutdown(std::net::Shutdown::Both);
        cl.fetch_add(1, Ordering::SeqCst);
        Then::Close
    });
    let c = fake_client(&addr, Protocol::Text);
    let port = port_of(&addr);
    for i in 1..=3 {
        assert_eq!(c.get("a").unwrap().as_deref(), Some(&b"v"[..]), "call {i}");
        wait_until("the close", Duration::from_secs(5), || {
            closed.load(Ordering::SeqCst) >= i
        });
        // The pooled connection has seen the close (close-wait), not yet the next call.
        wait_until(
            "the close in the client's socket",
            Duration::from_secs(5),
            || sockets_to(port).iter().all(|&(state, _)| state != 1),
        );
    }
    assert_eq!(conns.load(Ordering::SeqCst), 3);
}
