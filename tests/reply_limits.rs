//! Issue 15, item 5: a reply header cannot make the client allocate what it announces. The
//! servers here are deliberately broken fakes (not memcached) announcing huge values and
//! sending a few bytes of them. `max_value_size` is capped at memcached's largest item
//! (1 GiB), and the read buffer grows only as a value's bytes arrive.

mod common;

use common::fake::{fake, Then};
use mcpool::config::MAX_ITEM_SIZE;
use mcpool::{Client, Error, Protocol};
use std::io::Write;
use std::time::Duration;

fn client(addr: &str, p: Protocol, max_value: usize) -> Client {
    Client::builder()
        .server(addr)
        .protocol(p)
        .min_idle(0)
        .max_value_size(max_value)
        .io_timeout(Duration::from_secs(3))
        .build()
        .unwrap()
}

/// The process's peak resident memory so far, in KiB (`VmHWM`).
fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn max_value_size_above_memcacheds_item_limit_is_a_config_error() {
    for too_big in [MAX_ITEM_SIZE + 1, usize::MAX] {
        let e = Client::builder()
            .server("127.0.0.1:1")
            .max_value_size(too_big)
            .build()
            .expect_err("above 1 GiB");
        assert!(matches!(e, Error::Config(_)), "{e}");
        assert!(e.to_string().contains("max_value_size"), "{e}");
    }
    // The same for a configuration built by hand.
    let mut config = Client::builder()
        .server("127.0.0.1:1")
        .into_config()
        .unwrap();
    config.max_value_size = usize::MAX;
    assert!(matches!(Client::from_config(config), Err(Error::Config(_))));
    // The cap itself is allowed.
    Client::builder()
        .server("127.0.0.1:1")
        .max_value_size(MAX_ITEM_SIZE)
        .build()
        .unwrap();
}

#[test]
fn a_one_terabyte_value_header_is_a_clean_error() {
    for (p, header) in [
        (Protocol::Text, &b"VALUE k 0 1000000000000\r\n"[..]),
        (Protocol::Meta, &b"VA 1000000000000 f0\r\n"[..]),
    ] {
        let (addr, _) = fake(4, move |_, _, w| {
            let _ = w.write_all(header);
            let _ = w.write_all(b"some bytes");
            Then::Continue
        });
        let e = client(&addr, p, MAX_ITEM_SIZE)
            .get("k")
            .expect_err("a 1 TB value");
        assert!(matches!(e, Error::Protocol { .. }), "{p}: {e}");
    }
}

#[test]
fn an_announced_value_costs_memory_only_as_its_bytes_arrive() {
    // Just under the cap: accepted by the parser, but only 64 KiB of it ever arrives.
    let announced = MAX_ITEM_SIZE - 1024;
    for p in [Protocol::Text, Protocol::Meta] {
        let header = match p {
            Protocol::Text => format!("VALUE k 0 {announced}\r\n"),
            _ => format!("VA {announced} f0 O1\r\n"),
        };
        let (addr, _) = fake(4, move |_, _, w| {
            let _ = w.write_all(header.as_bytes());
            let _ = w.write_all(&vec![b'x'; 64 * 1024]);
            Then::Close
        });
        let before = peak_rss_kib();
        let e = client(&addr, p, MAX_ITEM_SIZE)
            .get("k")
            .expect_err("the server closed mid-value");
        assert!(matches!(e, Error::Io { .. }), "{p}: {e}");
        let grown_mib = (peak_rss_kib() - before) / 1024;
        assert!(
            grown_mib < 128,
            "{p}: peak memory grew by {grown_mib} MiB for 64 KiB received"
        );
    }
}
