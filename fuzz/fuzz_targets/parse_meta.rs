#![no_main]
//! The meta reply parser on arbitrary bytes: never a panic, never an unbounded allocation, and a
//! complete reply never claims more bytes than it was given.
use libfuzzer_sys::fuzz_target;
use mcpool::proto::{meta, Status};

fuzz_target!(|data: &[u8]| {
    let mut rest = data;
    for _ in 0..64 {
        match meta::parse(rest, 1 << 20) {
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
