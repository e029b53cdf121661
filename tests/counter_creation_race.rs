//! `incr_or_init` when another client creates the counter between the server's miss and its
//! add: memcached's binary protocol answers the creating INCREMENT "not stored" (its add lost
//! the race) and counts nothing; the client counts again, on the other client's counter, as
//! text's incr-add-incr does (tester finding counters 1: the call failed with "status 0x05:
//! Not stored." and Whalin's addOrIncr lost the increment). A deliberately broken fake binary
//! server makes the race certain; real memcached shows it under threads.

mod common;

use common::fake::{binary_fake, binary_response};
use common::fake_client;
use common::Memcached;
use mcpool::{Client, Protocol};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};

const INCREMENT: u8 = 0x05;
const DECREMENT: u8 = 0x06;
const NOT_STORED: u16 = 0x05;

/// `binary_response` with `status` (and no body: memcached's "Not stored." left out).
fn with_status(opcode: u8, opaque: u32, status: u16) -> Vec<u8> {
    let mut r = binary_response(opcode, opaque, &[], b"", b"");
    r[6..8].copy_from_slice(&status.to_be_bytes());
    r
}

#[test]
fn a_creation_lost_to_another_client_counts_on_theirs() {
    for (opcode, decr) in [(INCREMENT, false), (DECREMENT, true)] {
        let seen = Arc::new(AtomicUsize::new(0));
        let s = seen.clone();
        // The first creating request loses the race; the second finds the counter (41).
        let addr = binary_fake(
            move |_, op, opaque, _| match s.fetch_add(1, Ordering::SeqCst) {
                0 => with_status(op, opaque, NOT_STORED),
                _ => binary_response(op, opaque, &[], b"", &41u64.to_be_bytes()),
            },
        );
        let c = fake_client(&addr, Protocol::Binary);
        let n = if decr {
            c.decr_or_init("n", 1, 7, 0)
        } else {
            c.incr_or_init("n", 1, 7, 0)
        };
        assert_eq!(n.unwrap(), 41, "opcode {opcode:#x}");
        assert_eq!(seen.load(Ordering::SeqCst), 2, "opcode {opcode:#x}");
    }
}

/// A server that never stores nor finds it: an error after a few tries, never a loop or a
/// made-up number.
#[test]
fn a_counter_never_created_nor_found_is_an_error() {
    let seen = Arc::new(AtomicUsize::new(0));
    let s = seen.clone();
    let addr = binary_fake(move |_, op, opaque, _| {
        s.fetch_add(1, Ordering::SeqCst);
        with_status(op, opaque, NOT_STORED)
    });
    let c = fake_client(&addr, Protocol::Binary);
    let e = c.incr_or_init("n", 1, 7, 0).unwrap_err();
    assert!(
        e.to_string()
            .contains("counter missing right after it was created"),
        "{e}"
    );
    assert_eq!(seen.load(Ordering::SeqCst), 3);
    // named by the server (tester finding retest24 4: "protocol error from : ...")
    assert_eq!(e.server(), Some(addr.as_str()), "{e}");
}

/// A plain incr answered "not stored" stays the protocol's anomaly it is: an error.
#[test]
fn a_plain_incr_answered_not_stored_is_an_error() {
    let addr = binary_fake(|_, op, opaque, _| with_status(op, opaque, NOT_STORED));
    let c = fake_client(&addr, Protocol::Binary);
    assert!(c.incr("n", 1).is_err());
}

/// Real memcached: threads creating one counter at once, on every protocol, lose no count.
#[test]
fn threads_creating_one_counter_count_every_call() {
    let mc = Memcached::start(&[]);
    for p in [Protocol::Text, Protocol::Meta, Protocol::Binary] {
        let c = Client::builder()
            .server(&mc.addr())
            .protocol(p)
            .max_size(8)
            .build()
            .unwrap();
        for trial in 0..20 {
            let key = format!("race:{p}:{trial}");
            let start = Barrier::new(6);
            std::thread::scope(|s| {
                for _ in 0..6 {
                    s.spawn(|| {
                        start.wait();
                        for _ in 0..10 {
                            c.incr_or_init(&key, 1, 1, 0).unwrap();
                        }
                    });
                }
            });
            let v = c.get(&key).unwrap().unwrap();
            assert_eq!(&v[..], b"60", "{p} trial {trial}");
        }
    }
}
