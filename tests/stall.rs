//! A deliberately broken fake server (not memcached): it stalls its first reply past the
//! client's read timeout, then sends it. The caller must get a timeout, and the next call
//! its own reply, never the stale one.

use mcpool::{Client, Error};
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Answers `get <key>` with the value `value-of-<key>`; the first connection's first reply is
/// delayed by `stall`.
fn stalling_fake(stall: Duration) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let conns = Arc::new(AtomicUsize::new(0));
    let counter = conns.clone();
    std::thread::spawn(move || {
        for (n, stream) in listener.incoming().take(16).enumerate() {
            let Ok(stream) = stream else { return };
            counter.fetch_add(1, Ordering::SeqCst);
            std::thread::spawn(move || {
                let mut w = stream.try_clone().unwrap();
                let reader = BufReader::new(stream);
                for (i, line) in reader.lines().take(100).enumerate() {
                    let Ok(line) = line else { return };
                    let Some(key) = line.strip_prefix("get ") else {
                        return;
                    };
                    if n == 0 && i == 0 {
                        std::thread::sleep(stall);
                    }
                    let v = format!("value-of-{key}");
                    let reply = format!("VALUE {key} 0 {}\r\n{v}\r\nEND\r\n", v.len());
                    if w.write_all(reply.as_bytes()).is_err() {
                        return;
                    }
                }
            });
        }
    });
    (addr, conns)
}

#[test]
fn a_late_reply_never_reaches_the_next_caller() {
    let (addr, conns) = stalling_fake(Duration::from_millis(600));
    let c = Client::builder()
        .server(&addr)
        .min_idle(0)
        .max_size(1)
        .io_timeout(Duration::from_millis(150))
        .failure_limit(100)
        .build()
        .unwrap();
    match c.get("first") {
        Err(Error::IoTimeout { server, .. }) => assert_eq!(server, addr),
        other => panic!("expected an I/O timeout, got {other:?}"),
    }
    // Pool of one: the next call must not reuse the stalled connection.
    for key in ["second", "third", "fourth"] {
        let v = c.get(key).unwrap().unwrap();
        assert_eq!(
            v,
            format!("value-of-{key}").as_bytes(),
            "a stale reply was returned"
        );
    }
    assert_eq!(
        conns.load(Ordering::SeqCst),
        2,
        "one fresh connection after the timeout"
    );
}
