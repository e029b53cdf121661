//! Value formats: how each kind's flags and body look on the wire, as data. `mcpool` is our
//! cross-language layout; the others are the layouts of the clients mcpool replaces, read
//! from their sources and checked against the clients themselves (tests/value_interop.rs).
//! docs/value-format.md has every table side by side.

use super::codec::{Codec, CompressionFormat};
use super::kind::{Kind, Lang};
use crate::error::{Error, Result};
use std::fmt;

/// A named value format (flag layout): which flags mark each kind, how integers and
/// booleans are written, which bit marks compression. Every program sharing a fleet uses the
/// same one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum ValueFormat {
    /// mcpool's cross-language layout (the default): bytes, UTF-8 text, integers, booleans,
    /// serialized objects tagged with their language, compression with its codec named
    /// (zlib, gzip or zstd), all in flag bits 16..=24, which no legacy layout uses; bits
    /// 0..=15 are the application's own flags.
    #[default]
    Mcpool,
    /// pylibmc 1.6: text 16, int 4 (2 read), bool 2 as `1`/`0` (read back as an int, as
    /// pylibmc reads it), pickle 1, zlib 8.
    Pylibmc,
    /// python-memcached: text 16, int 2 (4 read), pickle 1 (a bool too: pickled, as
    /// python-memcached and pymemcache write it), zlib 8.
    PythonMemcached,
    /// pymemcache's `python_memcache_serializer` (the same as python-memcached).
    Pymemcache,
    /// Cache::Memcached::Fast: UTF-8 text 4, Storable 1, gzip 2.
    CacheMemcachedFast,
    /// Cache::Memcached: the same table (it ignores bit 4 and reads such text as its bytes).
    CacheMemcached,
    /// Whalin's Java client (`com.danga.MemCached`, `NativeHandler`): native type markers,
    /// binary big-endian integers, serialized 8, gzip 2.
    Whalin,
    /// spymemcached's `SerializingTranscoder`: `SPECIAL_*` types in bits 8..=15, integers
    /// in packed big-endian binary, serialized 1, gzip 2.
    Spymemcached,
    /// libmemcached (`memcp`/`memcat`): bytes only; the flags are the caller's, never
    /// interpreted, and nothing is compressed.
    Libmemcached,
    /// mcpool before value formats: flags are the caller's; compression is marked by bit 2
    /// (gzip) or 8 (zlib). Chosen only by [`crate::ClientBuilder::compression_format`]; no name.
    Legacy(CompressionFormat),
}

/// How a kind's body is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Body {
    /// As given (bytes, text, serialized objects).
    Plain,
    /// UTF-8 text; under spymemcached's flags 0 a body that is not UTF-8 is read as bytes.
    TextOrBytes,
    /// A decimal integer in ASCII (`-42`).
    Decimal,
    /// A big-endian two's complement integer of exactly `.0` bytes holding a value of `.1`
    /// bits (Whalin: a Short is 4 bytes with a 16-bit value; a body outside that range is no
    /// value its writer wrote, an error rather than a truncated number).
    BigEndian(u8, u8),
    /// A big-endian integer of at most this many bytes, leading zero bytes dropped (0 is
    /// empty), sign-extended from the width (spymemcached `TranscoderUtils(true)`).
    Packed(u8),
    /// A boolean as one byte 0 or 1 (Whalin).
    ByteBool,
    /// A boolean as ASCII `0` or `1` (pylibmc-style, spymemcached).
    AsciiBool,
    /// A boolean as Python's pickle of `True`/`False` (protocol 0: `I01\n.`/`I00\n.`, the
    /// default of python-memcached, which every pickle reader loads): written only, under
    /// flags the pickle row reads (python-memcached, pymemcache), and only with Python
    /// pickles on, since reading it back needs them.
    PickledBool,
}

/// The body of [`Body::PickledBool`].
pub(crate) fn pickled_bool(b: bool) -> &'static [u8] {
    if b {
        b"I01\n."
    } else {
        b"I00\n."
    }
}

/// One row of a legacy table: these flags (without the compression bit) mean this kind,
/// written this way. For writing, the first row of a kind wins (for an int, one that holds
/// every `i64`); for reading, the first row of the flags: a row whose flags an earlier row
/// holds is how the peer writes a kind it reads back as the earlier row's (pylibmc's bool, an
/// int; the python-memcached bool, a pickle).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Row {
    pub flags: u32,
    pub kind: Kind,
    pub body: Body,
    /// What the writer calls it, for the docs and messages.
    pub what: &'static str,
}

/// A legacy layout.
#[derive(Debug)]
pub(crate) struct Table {
    /// The bit that marks a compressed value (none: never compressed).
    pub compressed: Option<u32>,
    /// The codecs its peers can read; the first is the default.
    pub codecs: &'static [Codec],
    pub rows: &'static [Row],
    /// Flags that mean a type mcpool has no kind for.
    pub foreign: &'static [(u32, &'static str)],
}

const fn row(flags: u32, kind: Kind, body: Body, what: &'static str) -> Row {
    Row {
        flags,
        kind,
        body,
        what,
    }
}

use Body::*;
use Kind::*;

const PY_PICKLE: Kind = Serialized(Lang::Python);

static PYLIBMC: Table = Table {
    compressed: Some(8),
    codecs: &[Codec::Zlib],
    rows: &[
        row(0, Bytes, Plain, "bytes"),
        row(16, Text, Plain, "str (PYLIBMC_FLAG_TEXT)"),
        row(4, Int, Decimal, "int (PYLIBMC_FLAG_LONG)"),
        row(2, Int, Decimal, "int / bool (PYLIBMC_FLAG_INTEGER)"),
        // pylibmc 1.6 writes True/False as PYLIBMC_FLAG_INTEGER "1"/"0" and reads them back
        // as the ints 1/0: so does this format (the row above reads flags 2)
        row(
            2,
            Bool,
            AsciiBool,
            "bool (PYLIBMC_FLAG_INTEGER, read back as an int)",
        ),
        row(1, PY_PICKLE, Plain, "pickle (PYLIBMC_FLAG_PICKLE)"),
    ],
    foreign: &[],
};

static PYTHON_MEMCACHED: Table = Table {
    compressed: Some(8),
    codecs: &[Codec::Zlib],
    rows: &[
        row(0, Bytes, Plain, "bytes"),
        row(16, Text, Plain, "str (_FLAG_TEXT)"),
        row(2, Int, Decimal, "int (_FLAG_INTEGER)"),
        row(4, Int, Decimal, "long (_FLAG_LONG, Python 2)"),
        row(1, PY_PICKLE, Plain, "pickle (_FLAG_PICKLE; also bool)"),
        // python-memcached and pymemcache test `type(v) is int`: a bool is pickled, and
        // their readers unpickle it to True/False (the row above reads flags 1)
        row(1, Bool, PickledBool, "bool (pickled, _FLAG_PICKLE)"),
    ],
    foreign: &[],
};

static CACHE_MEMCACHED: Table = Table {
    compressed: Some(2),
    codecs: &[Codec::Gzip],
    rows: &[
        row(0, Bytes, Plain, "scalar (bytes)"),
        row(4, Text, Plain, "character string (F_UTF8, utf8 => 1)"),
        row(1, Serialized(Lang::Perl), Plain, "reference (F_STORABLE)"),
    ],
    foreign: &[],
};

static WHALIN: Table = Table {
    compressed: Some(2),
    codecs: &[Codec::Gzip],
    rows: &[
        row(4096, Bytes, Plain, "byte[] (MARKER_BYTEARR)"),
        row(
            0,
            Bytes,
            Plain,
            "no marker (primitiveAsString; read as bytes)",
        ),
        row(32, Text, Plain, "String (MARKER_STRING)"),
        row(64, Text, Plain, "StringBuffer (MARKER_STRINGBUFFER)"),
        row(2048, Text, Plain, "StringBuilder (MARKER_STRINGBUILDER)"),
        // The core's int is 64-bit, Java's Long: every int is written as a Long whatever its
        // size, so a Java reader always gets the same type. Integer, Short and Byte are read,
        // and written under explicit flags (the Java binding's markers, a get's flags stored
        // back): the body is decimal text, the core writes these bytes (transcode::int_wire).
        row(16384, Int, BigEndian(8, 64), "Long (MARKER_LONG, 8 bytes)"),
        row(
            4,
            Int,
            BigEndian(4, 32),
            "Integer (MARKER_INTEGER, 4 bytes)",
        ),
        row(256, Int, BigEndian(4, 16), "Short (MARKER_SHORT, 4 bytes)"),
        row(1, Int, BigEndian(1, 8), "Byte (MARKER_BYTE)"),
        row(8192, Bool, ByteBool, "Boolean (MARKER_BOOLEAN, byte 0/1)"),
        row(
            8,
            Serialized(Lang::Java),
            Plain,
            "Serializable (F_SERIALIZED)",
        ),
    ],
    foreign: &[
        (16, "a Java Character (MARKER_CHARACTER)"),
        (128, "a Java Float (MARKER_FLOAT)"),
        (512, "a Java Double (MARKER_DOUBLE)"),
        (1024, "a Java Date (MARKER_DATE)"),
    ],
};

static SPYMEMCACHED: Table = Table {
    compressed: Some(2),
    codecs: &[Codec::Gzip],
    rows: &[
        row(0x800, Bytes, Plain, "byte[] (SPECIAL_BYTEARRAY)"),
        row(0, Text, TextOrBytes, "String (no flags)"),
        // An int of every other surface is Java's Long (first: the typed store's row),
        // whatever its size, as under Whalin; Integer is read, and written by Java's
        // SpyTranscoder under its own flags.
        row(0x300, Int, Packed(8), "Long (SPECIAL_LONG)"),
        row(0x200, Int, Packed(4), "Integer (SPECIAL_INT)"),
        row(0x500, Int, Packed(1), "Byte (SPECIAL_BYTE)"),
        row(0x100, Bool, AsciiBool, "Boolean (SPECIAL_BOOLEAN, '0'/'1')"),
        row(
            1,
            Serialized(Lang::Java),
            Plain,
            "Serializable (SERIALIZED)",
        ),
    ],
    foreign: &[
        (0x400, "a Java Date (SPECIAL_DATE)"),
        (0x600, "a Java Float (SPECIAL_FLOAT)"),
        (0x700, "a Java Double (SPECIAL_DOUBLE)"),
    ],
};

/// The `mcpool` layout's bits.
pub(crate) mod mcpool {
    /// Set on every value whose flags are not 0: tells mcpool's layout from every legacy one.
    pub const MARK: u32 = 1 << 24;
    /// The kind's number (`Kind::number`), bits 16..=19.
    pub const KIND_SHIFT: u32 = 16;
    pub const KIND_MASK: u32 = 0xf << KIND_SHIFT;
    /// The codec of a compressed value, bits 20..=21: 0 none, 1 zlib, 2 gzip, 3 zstd.
    pub const CODEC_SHIFT: u32 = 20;
    pub const CODEC_MASK: u32 = 0x3 << CODEC_SHIFT;
    /// The application's own flags (the byte API's `flags`), bits 0..=15.
    pub const APP_MASK: u32 = 0xffff;
    /// Everything mcpool's layout defines; any other bit makes the flags foreign.
    pub const KNOWN: u32 = MARK | KIND_MASK | CODEC_MASK | APP_MASK;
}

/// A value's flags, classified: its kind, how its body is written, whether it is compressed
/// (and with which codec, when the flags say), and the flags a reader is given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Class {
    pub kind: Kind,
    pub body: Body,
    pub compressed: bool,
    /// The codec the flags name (`mcpool` only).
    pub codec: Option<Codec>,
    /// The flags a reader gets: without the compression bits (and, under `mcpool`, a bytes
    /// value's application flags only).
    pub delivered: u32,
    /// What the writer calls the type (the table's words), for messages.
    pub what: &'static str,
}

impl ValueFormat {
    /// Every named format, the default first.
    pub const ALL: [ValueFormat; 9] = [
        ValueFormat::Mcpool,
        ValueFormat::Pylibmc,
        ValueFormat::PythonMemcached,
        ValueFormat::Pymemcache,
        ValueFormat::CacheMemcachedFast,
        ValueFormat::CacheMemcached,
        ValueFormat::Whalin,
        ValueFormat::Spymemcached,
        ValueFormat::Libmemcached,
    ];

    /// Its name, as `FromStr` reads it.
    pub fn name(self) -> &'static str {
        match self {
            ValueFormat::Mcpool => "mcpool",
            ValueFormat::Pylibmc => "pylibmc",
            ValueFormat::PythonMemcached => "python-memcached",
            ValueFormat::Pymemcache => "pymemcache",
            ValueFormat::CacheMemcachedFast => "cache-memcached-fast",
            ValueFormat::CacheMemcached => "cache-memcached",
            ValueFormat::Whalin => "whalin",
            ValueFormat::Spymemcached => "spymemcached",
            ValueFormat::Libmemcached => "libmemcached",
            ValueFormat::Legacy(CompressionFormat::Gzip) => "legacy-gzip-bit-2",
            ValueFormat::Legacy(CompressionFormat::Zlib) => "legacy-zlib-bit-8",
        }
    }

    pub(crate) fn table(self) -> Option<&'static Table> {
        match self {
            ValueFormat::Pylibmc => Some(&PYLIBMC),
            ValueFormat::PythonMemcached | ValueFormat::Pymemcache => Some(&PYTHON_MEMCACHED),
            ValueFormat::CacheMemcachedFast | ValueFormat::CacheMemcached => Some(&CACHE_MEMCACHED),
            ValueFormat::Whalin => Some(&WHALIN),
            ValueFormat::Spymemcached => Some(&SPYMEMCACHED),
            _ => None,
        }
    }

    /// The codecs this format can mark (its readers can inflate); the first is its default.
    /// Empty: the format never compresses.
    pub fn codecs(self) -> &'static [Codec] {
        match self {
            ValueFormat::Mcpool => &[Codec::Zlib, Codec::Gzip, Codec::Zstd],
            ValueFormat::Libmemcached => &[],
            ValueFormat::Legacy(CompressionFormat::Gzip) => &[Codec::Gzip],
            ValueFormat::Legacy(CompressionFormat::Zlib) => &[Codec::Zlib],
            f => f.table().map_or(&[], |t| t.codecs),
        }
    }

    /// Whether a client with this format compresses large values unless told otherwise.
    /// Not under `pymemcache`: its shipped serdes (3.x, and 4.x's default) do not inflate, so
    /// a compressed value would read there as its compressed bytes, a wrong value with no
    /// error; `compression = true` still turns it on (for pymemcache 4's `CompressedSerde`).
    pub fn compresses_by_default(self) -> bool {
        !matches!(self, ValueFormat::Pymemcache)
    }

    /// Whether a value of `kind` may be compressed in this format: not python-memcached's
    /// integers, which it never compresses (`_val_to_store_info` sets `min_compress_len = 0`
    /// for an int), so its readers and ours store the same bytes.
    pub fn compresses_kind(self, kind: Kind) -> bool {
        !(self == ValueFormat::PythonMemcached && kind == Kind::Int)
    }

    /// Whether the format has a counterpart for `kind`.
    pub fn has_kind(self, kind: Kind) -> bool {
        match self {
            ValueFormat::Mcpool => true,
            ValueFormat::Libmemcached | ValueFormat::Legacy(_) => kind == Kind::Bytes,
            f => f
                .table()
                .is_some_and(|t| t.rows.iter().any(|r| r.kind == kind)),
        }
    }

    /// Classifies a value's flags as read from the wire; the error says why they mean
    /// nothing in this format (without the key: the caller adds it).
    pub(crate) fn classify(self, flags: u32) -> std::result::Result<Class, String> {
        match self {
            ValueFormat::Mcpool => classify_mcpool(flags),
            ValueFormat::Libmemcached => Ok(Class {
                kind: Kind::Bytes,
                body: Body::Plain,
                compressed: false,
                codec: None,
                delivered: flags,
                what: "bytes",
            }),
            ValueFormat::Legacy(f) => {
                let bit = f.flag();
                Ok(Class {
                    kind: Kind::Bytes,
                    body: Body::Plain,
                    compressed: flags & bit != 0,
                    codec: None,
                    delivered: flags & !bit,
                    what: "bytes",
                })
            }
            f => {
                let t = f.table().expect("every other format has a table");
                let bit = t.compressed.unwrap_or(0);
                let plain = flags & !bit;
                if let Some(r) = t.rows.iter().find(|r| r.flags == plain) {
                    return Ok(Class {
                        kind: r.kind,
                        body: r.body,
                        compressed: flags & bit != 0,
                        codec: None,
                        delivered: plain,
                        what: r.what,
                    });
                }
                if let Some((_, what)) = t.foreign.iter().find(|(f, _)| *f == plain) {
                    return Err(format!(
                        "they mark {what} in the {} value format, which mcpool has no kind for",
                        self.name()
                    ));
                }
                Err(format!(
                    "they mean nothing in the {} value format",
                    self.name()
                ))
            }
        }
    }

    /// The flags of an uncompressed value of `kind` (with application flags `app` under
    /// `mcpool`), written with `body`: the first row of the kind, the typed store's (for an
    /// integer a row that holds every `i64`: spymemcached's and Whalin's Long, whatever the
    /// size); `None` when the format has no such kind.
    pub(crate) fn flags_for(self, kind: Kind) -> Option<(u32, Body)> {
        match self {
            ValueFormat::Mcpool => Some(match kind {
                Kind::Bytes => (0, Body::Plain),
                Kind::Int => (mcpool_kind_flags(kind), Body::Decimal),
                Kind::Bool => (mcpool_kind_flags(kind), Body::AsciiBool),
                _ => (mcpool_kind_flags(kind), Body::Plain),
            }),
            ValueFormat::Libmemcached | ValueFormat::Legacy(_) => {
                (kind == Kind::Bytes).then_some((0, Body::Plain))
            }
            f => f
                .table()?
                .rows
                .iter()
                .find(|r| r.kind == kind)
                .map(|r| (r.flags, r.body)),
        }
    }

    /// Whether `flags` mark a type of the format's own writers that mcpool has no kind for
    /// (Whalin's Double, spymemcached's Date): their values are read by no format here.
    pub(crate) fn marks_a_type_without_kind(self, flags: u32) -> bool {
        self.table().is_some_and(|t| {
            let plain = flags & !t.compressed.unwrap_or(0);
            t.foreign.iter().any(|(f, _)| *f == plain)
        })
    }

    /// The formats in which `flags` would mean something, for error messages.
    pub(crate) fn readers_of(flags: u32) -> Vec<&'static str> {
        ValueFormat::ALL
            .iter()
            .filter(|f| **f != ValueFormat::Libmemcached && **f != ValueFormat::CacheMemcached)
            .filter(|f| f.classify(flags).is_ok())
            .map(|f| f.name())
            .collect()
    }
}

/// The `mcpool` flags of an uncompressed value of a kind other than bytes.
pub(crate) fn mcpool_kind_flags(kind: Kind) -> u32 {
    mcpool::MARK | kind.number() << mcpool::KIND_SHIFT
}

pub(crate) fn fits_in(i: i64, bytes: u8) -> bool {
    match bytes {
        1 => i8::try_from(i).is_ok(),
        2 => i16::try_from(i).is_ok(),
        4 => i32::try_from(i).is_ok(),
        _ => true,
    }
}

fn classify_mcpool(flags: u32) -> std::result::Result<Class, String> {
    use mcpool::*;
    if flags & MARK == 0 {
        if flags == 0 {
            return Ok(Class {
                kind: Kind::Bytes,
                body: Body::Plain,
                compressed: false,
                codec: None,
                delivered: 0,
                what: "bytes",
            });
        }
        return Err("they lack the mcpool layout's mark (bit 24) and mean nothing in it".into());
    }
    if flags & !KNOWN != 0 {
        return Err(format!(
            "they set bits the mcpool layout reserves (0x{:x})",
            flags & !KNOWN
        ));
    }
    let n = (flags & KIND_MASK) >> KIND_SHIFT;
    let kind = Kind::from_number(n)
        .ok_or_else(|| format!("their kind field {n} is no kind of the mcpool layout"))?;
    let codec = match (flags & CODEC_MASK) >> CODEC_SHIFT {
        0 => None,
        1 => Some(Codec::Zlib),
        2 => Some(Codec::Gzip),
        _ => Some(Codec::Zstd),
    };
    let body = match kind {
        Kind::Int => Body::Decimal,
        Kind::Bool => Body::AsciiBool,
        _ => Body::Plain,
    };
    let delivered = if kind == Kind::Bytes {
        flags & APP_MASK
    } else {
        flags & !CODEC_MASK
    };
    Ok(Class {
        kind,
        body,
        compressed: codec.is_some(),
        codec,
        delivered,
        what: kind.name(),
    })
}

/// The bits of `codec` in the `mcpool` layout.
pub(crate) fn mcpool_codec_bits(codec: Codec) -> u32 {
    let n = match codec {
        Codec::Zlib => 1,
        Codec::Gzip => 2,
        Codec::Zstd => 3,
    };
    mcpool::MARK | n << mcpool::CODEC_SHIFT
}

impl fmt::Display for ValueFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A client's name as the options take it, for `value_format` and `preset` alike: in any
/// case, `_` for `-`, white space around ignored, and the other names of a client
/// (`cmf`, `Cache::Memcached::Fast`; `memcache`, `python-memcache` for python-memcached)
/// mapped to the one used here.
pub(crate) fn client_name(s: &str) -> String {
    let s = s.trim().to_ascii_lowercase().replace('_', "-");
    match s.as_str() {
        "cmf" | "cache::memcached::fast" => "cache-memcached-fast".into(),
        "cache::memcached" => "cache-memcached".into(),
        "memcache" | "python-memcache" => "python-memcached".into(),
        _ => s,
    }
}

impl std::str::FromStr for ValueFormat {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        let s = client_name(s);
        ValueFormat::ALL
            .into_iter()
            .find(|f| f.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = ValueFormat::ALL.iter().map(|f| f.name()).collect();
                Error::Config(format!(
                    "unknown value format {s:?} (one of: {})",
                    names.join(", ")
                ))
            })
    }
}

/// The `mcpool` layout's flags of an uncompressed text value (for tests and tools).
pub fn mcpool_text_flags() -> u32 {
    mcpool_kind_flags(Kind::Text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back() {
        for f in ValueFormat::ALL {
            assert_eq!(f.name().parse::<ValueFormat>().unwrap(), f);
        }
        let e = "lz4".parse::<ValueFormat>().unwrap_err().to_string();
        assert!(e.contains("pylibmc") && e.contains("lz4"), "{e}");
    }

    /// The typed store writes an int under its kind's first row: that row must hold every
    /// `i64` (a narrower first row would need the flags picked by the value).
    #[test]
    fn the_first_int_row_holds_every_i64() {
        for f in ValueFormat::ALL {
            if let Some((flags, body)) = f.flags_for(Kind::Int) {
                let holds = match body {
                    Body::Decimal => true,
                    Body::BigEndian(_, bits) => fits_in(i64::MIN, bits / 8),
                    Body::Packed(n) => fits_in(i64::MIN, n),
                    _ => false,
                };
                assert!(holds, "{f}: int row {flags} {body:?}");
            }
        }
    }

    #[test]
    fn every_kind_written_reads_back_as_itself() {
        for f in ValueFormat::ALL {
            for k in Kind::ALL {
                let Some((flags, body)) = f.flags_for(k) else {
                    assert!(!f.has_kind(k), "{f} {k}");
                    continue;
                };
                let c = f.classify(flags).unwrap();
                // A bool is written as its format's peer writes it and read back as the peer
                // reads it: pylibmc's as an int, python-memcached's and pymemcache's as a
                // pickle. Every other kind reads back as itself.
                let read_as = match (f, k) {
                    (ValueFormat::Pylibmc, Kind::Bool) => {
                        assert_eq!((flags, body), (2, Body::AsciiBool));
                        Kind::Int
                    }
                    (ValueFormat::PythonMemcached | ValueFormat::Pymemcache, Kind::Bool) => {
                        assert_eq!((flags, body), (1, Body::PickledBool));
                        PY_PICKLE
                    }
                    _ => {
                        assert_eq!((c.kind, c.body, c.compressed), (k, body, false), "{f} {k}");
                        k
                    }
                };
                assert_eq!((c.kind, c.compressed), (read_as, false), "{f} {k}");
                // And compressed, where the format marks it.
                if let Some(&codec) = f.codecs().first() {
                    let bits = match f {
                        ValueFormat::Mcpool => mcpool_codec_bits(codec),
                        _ => f.table().unwrap().compressed.unwrap(),
                    };
                    let c = f.classify(flags | bits).unwrap();
                    assert!(c.compressed && c.kind == read_as, "{f} {k}");
                }
            }
        }
    }

    #[test]
    fn mcpool_bits_collide_with_no_legacy_meaning() {
        for f in ValueFormat::ALL.into_iter().skip(1) {
            if let Some(t) = f.table() {
                for r in t.rows {
                    assert_eq!(r.flags & !mcpool::APP_MASK, 0, "{f} {}", r.what);
                }
                assert!(t.compressed.unwrap() <= mcpool::APP_MASK);
            }
        }
        // Every legacy marker is foreign to mcpool, and mcpool's flags to every legacy table.
        for flags in [1, 2, 4, 8, 16, 32, 0x800, 0x200, 8192] {
            assert!(ValueFormat::Mcpool.classify(flags).is_err(), "{flags}");
        }
        for f in [
            ValueFormat::Pylibmc,
            ValueFormat::Whalin,
            ValueFormat::Spymemcached,
        ] {
            assert!(f.classify(mcpool_kind_flags(Kind::Text)).is_err());
        }
    }
}
