//! What a value is: its kind (bytes, text, integer, boolean, a serialized object of one
//! language) and the typed [`Value`] of the Rust API.

use std::borrow::Cow;
use std::fmt;

/// The language whose serializer wrote an object: only that language's binding can read it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Lang {
    /// A Python pickle.
    Python,
    /// A Perl Storable image (`nfreeze`).
    Perl,
    /// A Java serialized object (`ObjectOutputStream`).
    Java,
}

impl Lang {
    /// Every language, in the order of their kinds.
    pub const ALL: [Lang; 3] = [Lang::Python, Lang::Perl, Lang::Java];

    /// What its serialized objects are called, for messages: "a Python pickle", ….
    pub fn describe(self) -> &'static str {
        match self {
            Lang::Python => "a Python pickle",
            Lang::Perl => "a Perl Storable image",
            Lang::Java => "a Java serialized object",
        }
    }

    /// The option that turns its objects on (`serialized_python`, …), by its name on every
    /// surface (CLI `--serialized-python`), for messages.
    pub fn option_name(self) -> &'static str {
        match self {
            Lang::Python => "serialized_python",
            Lang::Perl => "serialized_perl",
            Lang::Java => "serialized_java",
        }
    }

    /// The language's name, for messages.
    pub fn name(self) -> &'static str {
        match self {
            Lang::Python => "Python",
            Lang::Perl => "Perl",
            Lang::Java => "Java",
        }
    }

    pub(crate) fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

/// What a value is. The numbers are the C ABI's `mcpool_kind`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Bytes, as given.
    Bytes,
    /// UTF-8 text.
    Text,
    /// A signed 64-bit integer.
    Int,
    /// A boolean.
    Bool,
    /// An object serialized by one language.
    Serialized(Lang),
}

impl Kind {
    /// Every kind, in the order of their numbers.
    pub const ALL: [Kind; 7] = [
        Kind::Bytes,
        Kind::Text,
        Kind::Int,
        Kind::Bool,
        Kind::Serialized(Lang::Python),
        Kind::Serialized(Lang::Perl),
        Kind::Serialized(Lang::Java),
    ];

    /// The kind's number (the C ABI's `mcpool_kind`, and the kind field of the `mcpool`
    /// layout).
    pub fn number(self) -> u32 {
        match self {
            Kind::Bytes => 0,
            Kind::Text => 1,
            Kind::Int => 2,
            Kind::Bool => 3,
            Kind::Serialized(Lang::Python) => 4,
            Kind::Serialized(Lang::Perl) => 5,
            Kind::Serialized(Lang::Java) => 6,
        }
    }

    /// The kind with this number.
    pub fn from_number(n: u32) -> Option<Kind> {
        Kind::ALL.get(n as usize).copied()
    }

    /// Its name: `bytes`, `text`, `int`, `bool`, `python-pickle`, `perl-storable`,
    /// `java-serialized`.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Bytes => "bytes",
            Kind::Text => "text",
            Kind::Int => "int",
            Kind::Bool => "bool",
            Kind::Serialized(Lang::Python) => "python-pickle",
            Kind::Serialized(Lang::Perl) => "perl-storable",
            Kind::Serialized(Lang::Java) => "java-serialized",
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A typed value, as [`crate::Client::set_value`] stores it and [`crate::Client::get_value`]
/// reads it, in the client's value format.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    /// Bytes.
    Bytes(Vec<u8>),
    /// UTF-8 text.
    Text(String),
    /// A signed 64-bit integer.
    Int(i64),
    /// A boolean.
    Bool(bool),
    /// An object serialized by `lang` (read only when that language's serialized kind is
    /// enabled: [`crate::ClientBuilder::serialized`]).
    Serialized {
        /// The language that wrote it.
        lang: Lang,
        /// Its serialized bytes.
        bytes: Vec<u8>,
    },
}

impl Value {
    /// The value's kind.
    pub fn kind(&self) -> Kind {
        match self {
            Value::Bytes(_) => Kind::Bytes,
            Value::Text(_) => Kind::Text,
            Value::Int(_) => Kind::Int,
            Value::Bool(_) => Kind::Bool,
            Value::Serialized { lang, .. } => Kind::Serialized(*lang),
        }
    }

    /// The value's body as the byte API and the C ABI carry it: bytes and text as they are,
    /// an integer as its decimal text, a boolean as `0` or `1`.
    pub fn abi_body(&self) -> std::borrow::Cow<'_, [u8]> {
        use std::borrow::Cow;
        match self {
            Value::Bytes(b) | Value::Serialized { bytes: b, .. } => Cow::Borrowed(b),
            Value::Text(s) => Cow::Borrowed(s.as_bytes()),
            Value::Int(i) => Cow::Owned(i.to_string().into_bytes()),
            Value::Bool(b) => Cow::Borrowed(if *b { b"1" } else { b"0" }),
        }
    }

    /// The value of `kind` whose ABI body is `body` (the reverse of [`Value::abi_body`]);
    /// `None` when the body is not one (text that is not UTF-8, an integer that is not a
    /// decimal `i64`, a boolean that is not `0` or `1`).
    pub fn from_abi(kind: Kind, body: Vec<u8>) -> Option<Value> {
        Some(match kind {
            Kind::Bytes => Value::Bytes(body),
            Kind::Text => Value::Text(String::from_utf8(body).ok()?),
            Kind::Int => Value::Int(parse_decimal(&body)?),
            Kind::Bool => Value::Bool(match &body[..] {
                b"1" => true,
                b"0" => false,
                _ => return None,
            }),
            Kind::Serialized(lang) => Value::Serialized { lang, bytes: body },
        })
    }
}

/// The one rule for a typed read ([`Value`], 64-bit integers) of a body the core delivered
/// as `kind`: the value, or `Error::ValueFormat` naming the key and the flags. An integer
/// beyond 64 bits (a Python writer's, under pylibmc's or python-memcached's long flag) is
/// that error, saying so: never a wrapped or saturated number. The byte API (`get`,
/// `get_item`, the C ABI) delivers its exact digits instead, which is how the bindings whose
/// language has larger integers read it (Python `int`, Java `BigInteger`, a Perl string).
pub(crate) fn typed_value(
    key: &[u8],
    flags: u32,
    kind: Kind,
    body: Vec<u8>,
) -> crate::error::Result<Value> {
    let who = || {
        format!(
            "key {} with flags {flags} (0x{flags:x})",
            crate::key::quoted(key)
        )
    };
    if kind == Kind::Int && parse_decimal(&body).is_none() && decimal_text(&body).is_some() {
        return Err(crate::error::Error::ValueFormat(format!(
            "{}: the integer {} is outside the signed 64-bit range (-2**63..2**63-1), which \
                 a typed read cannot hold; the byte API (get) delivers its exact digits",
            who(),
            String::from_utf8_lossy(&body)
        )));
    }
    Value::from_abi(kind, body)
        .ok_or_else(|| crate::error::Error::ValueFormat(format!("{}: not a valid {kind}", who())))
}

/// A decimal integer of any size as the text layouts store it (`-`, digits), with the ASCII
/// spaces memcached pads `decr` results with around it: its canonical text (trimmed, no
/// leading zeros, `-0` as `0`: `007` is `7`, as every typed reader reads it), or `None`.
/// Borrowed from `b` unless a `-` has to go before digits that lost their leading zeros.
pub fn decimal_text(b: &[u8]) -> Option<Cow<'_, [u8]>> {
    // the white space Python's int() strips from bytes (C's isspace): Rust's ASCII white
    // space and the vertical tab (tester finding values2 2: \x0b5 was refused, \x0c5 read)
    let space = |c: &u8| b" \t\n\x0b\x0c\r".contains(c);
    let start = b.iter().position(|c| !space(c)).unwrap_or(b.len());
    let end = b.iter().rposition(|c| !space(c)).map_or(start, |i| i + 1);
    let t = &b[start..end];
    let (neg, digits) = match t.strip_prefix(b"-") {
        Some(d) => (true, d),
        None => (false, t),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let zeros = digits.iter().take_while(|&&d| d == b'0').count();
    let d = &digits[zeros.min(digits.len() - 1)..];
    Some(if !neg || d == b"0" {
        Cow::Borrowed(d)
    } else if zeros == 0 {
        Cow::Borrowed(t)
    } else {
        Cow::Owned([&b"-"[..], d].concat())
    })
}

/// A decimal `i64` as the ABI and the text layouts write it: an optional `-`, then digits,
/// nothing else (no `+`, no spaces: what Python's `'%d'` and Perl write).
pub fn parse_decimal(b: &[u8]) -> Option<i64> {
    let digits = b.strip_prefix(b"-").unwrap_or(b);
    if digits.is_empty() || digits.len() > 20 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(b).ok()?.parse().ok()
}

/// Whether `b` is an integer of any size as the ABI writes one: an optional `-`, then digits,
/// nothing else (no `+`, no spaces).
pub fn is_integer_text(b: &[u8]) -> bool {
    let digits = b.strip_prefix(b"-").unwrap_or(b);
    !digits.is_empty() && digits.iter().all(u8::is_ascii_digit)
}

/// An unsigned integer above `i64::MAX` as its decimal text (digits only): the rest of the
/// integer kind's range, `2**63..=2**64-1`, memcached's own counter range (`incr` counts up
/// to `2**64-1`), which the Python peers store as digits under their int flag. `None` for
/// anything else (an `i64` is [`parse_decimal`]'s).
pub fn parse_unsigned_above_i64(b: &[u8]) -> Option<u64> {
    if b.is_empty() || b.len() > 20 || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let v: u64 = std::str::from_utf8(b).ok()?.parse().ok()?;
    (v > i64::MAX as u64).then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_round_trip_and_abi_bodies() {
        for (i, k) in Kind::ALL.iter().enumerate() {
            assert_eq!(k.number(), i as u32);
            assert_eq!(Kind::from_number(i as u32), Some(*k));
        }
        assert_eq!(Kind::from_number(7), None);
        for v in [
            Value::Int(i64::MIN),
            Value::Int(-42),
            Value::Int(i64::MAX),
            Value::Bool(true),
            Value::Bool(false),
            Value::Text("tëxt".into()),
        ] {
            let body = v.abi_body().into_owned();
            assert_eq!(Value::from_abi(v.kind(), body), Some(v));
        }
        for bad in [
            &b""[..],
            b"+1",
            b" 1",
            b"1 ",
            b"--1",
            b"99999999999999999999",
            b"1e3",
        ] {
            assert_eq!(parse_decimal(bad), None, "{bad:?}");
        }
        let canonical = |b: &[u8]| decimal_text(b).map(|c| c.into_owned());
        for (body, want) in [
            (&b"0 "[..], &b"0"[..]),
            (b" -12  ", b"-12"),
            (b"007", b"7"),
            (b"-007", b"-7"),
            (b"-0", b"0"),
            (b"-000", b"0"),
            (b"000", b"0"),
            (b" 12", b"12"),
            (b"\x0b5\x0b", b"5"),
            (b"\t\x0c5\r\n", b"5"),
            (b"0012345678901234567890123", b"12345678901234567890123"),
        ] {
            assert_eq!(canonical(body).as_deref(), Some(want), "{body:?}");
        }
        let big = b"1208925819614629174706176";
        assert_eq!(canonical(big).as_deref(), Some(&big[..]));
        assert!(matches!(decimal_text(b" 12"), Some(Cow::Borrowed(b"12"))));
        assert_eq!(
            Value::from_abi(Kind::Int, big.to_vec()),
            None,
            "beyond i64: refused"
        );
        for bad in [&b""[..], b" ", b"-", b"1 2", b"+1", b"1e3"] {
            assert_eq!(decimal_text(bad), None, "{bad:?}");
        }
        // A typed read of an integer beyond 64 bits: an error saying so, with the digits.
        let e = typed_value(b"k", 4, Kind::Int, big.to_vec()).unwrap_err();
        assert!(
            e.to_string().contains("outside the signed 64-bit range")
                && e.to_string().contains("\"k\""),
            "{e}"
        );
        let e = typed_value(b"k", 4, Kind::Int, b"12x".to_vec()).unwrap_err();
        assert!(e.to_string().contains("not a valid int"), "{e}");
        assert_eq!(
            typed_value(b"k", 4, Kind::Int, b"-9223372036854775808".to_vec()).unwrap(),
            Value::Int(i64::MIN)
        );
        assert_eq!(
            parse_unsigned_above_i64(b"9223372036854775808"),
            Some(1 << 63)
        );
        assert_eq!(
            parse_unsigned_above_i64(b"18446744073709551615"),
            Some(u64::MAX)
        );
        for not in [
            &b"9223372036854775807"[..],
            b"18446744073709551616",
            b"-1",
            b"+9223372036854775808",
            b"",
        ] {
            assert_eq!(parse_unsigned_above_i64(not), None, "{not:?}");
        }
        assert_eq!(Value::from_abi(Kind::Bool, b"2".to_vec()), None);
        assert_eq!(Value::from_abi(Kind::Text, vec![0xff]), None);
    }
}
