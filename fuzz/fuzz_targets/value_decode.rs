#![no_main]
//! The value transcoder on arbitrary (flags, body) under every value format, with every
//! serialized kind on: never a panic, inflation bounded by the cap, and a value that decodes
//! is a valid value of the kind its flags say (text UTF-8, an integer decimal digits: an
//! `i64`, or, from a text layout whose Python writers store any int, a longer number).
use libfuzzer_sys::fuzz_target;
use mcpool::value::kind::decimal_text;
use mcpool::value::{Compression, Kind, Transcoder, Value, ValueFormat, ValueOptions};

fuzz_target!(|data: &[u8]| {
    if data.len() < 4 {
        return;
    }
    let flags = u32::from_le_bytes([data[0], data[1], data[2], data[3]]);
    let body = &data[4..];
    let compression = Compression {
        max_decompressed: 1 << 16,
        ..Compression::default()
    };
    for format in ValueFormat::ALL {
        let options = ValueOptions {
            format,
            serialized: 0b111,
        };
        let t = Transcoder::new(options, &compression);
        let mut scratch = Vec::new();
        if let Ok((out, delivered, kind)) = t.decode(b"k", body, flags, &mut scratch) {
            assert!(out.len() <= body.len().max(1 << 16), "{format}: inflated past the cap");
            assert_eq!(t.flags_kind(delivered).ok(), Some(kind), "{format}: delivered flags");
            let valid = if kind == Kind::Int {
                decimal_text(&out).as_deref() == Some(&out[..])
            } else {
                Value::from_abi(kind, out.into_owned()).is_some()
            };
            assert!(valid, "{format}: a {kind} that is not one");
        }
    }
});
