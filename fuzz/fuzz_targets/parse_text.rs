#![no_main]
//! The text reply parser on arbitrary bytes: never a panic, never an unbounded allocation, and a
//! complete reply never claims more bytes than it was given. The multi-get fast path
//! (`value_of`, given the key the reply starts with) agrees with the general parser whenever it
//! accepts.
use libfuzzer_sys::fuzz_target;
use mcpool::proto::{ascii, Status};

fuzz_target!(|data: &[u8]| {
    // The key as a multi-get would know it: a valid text key (every key sent is checked).
    let key = data.get(6..).and_then(|r| r.split(|&b| b == b' ').next());
    if let Some(key) = key.filter(|k| k.len() <= 250 && k.iter().all(|&b| b > b' ' && b != 0x7f)) {
        if let Some(v) = ascii::value_of(data, key, 1 << 20) {
            match ascii::parse(data, 1 << 20) {
                Ok(Status::Complete(ascii::Reply::Value { key: k, flags, cas, data: d }, used)) => {
                    assert_eq!((k, flags, cas, d, used), (key, v.flags, v.cas, v.data, v.used));
                }
                other => panic!("value_of accepted what parse calls {other:?}"),
            }
        }
    }
    let mut rest = data;
    for _ in 0..64 {
        match ascii::parse(rest, 1 << 20) {
            Ok(Status::Complete(_, used)) => {
                assert!(used > 0 && used <= rest.len());
                rest = &rest[used..];
            }
            Ok(Status::Partial(hint)) => {
                assert!(hint.map_or(true, |h| h > rest.len() && h <= rest.len() + (2 << 20)));
                break;
            }
            Err(_) => break,
        }
    }
});
