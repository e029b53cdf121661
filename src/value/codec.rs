//! Compression: the codecs (zlib, gzip, zstd), the settings (threshold, ratio, level), and
//! inflation that recognises the stream by its header and never hands compressed bytes on.

use super::whole_inflate::{Inflater, Outcome, Wrapper};
use crate::error::{Error, Result};
use flate2::write::{GzEncoder, ZlibEncoder};
use flate2::Compression as Level;
use std::io::{Read, Write};

/// The compressed stream a value is written as.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Codec {
    /// A zlib stream (RFC 1950): pylibmc, python-memcached, pymemcache; `mcpool`'s default.
    Zlib,
    /// A gzip stream (RFC 1952): Cache::Memcached(::Fast), Whalin, spymemcached.
    Gzip,
    /// A zstd frame: only the `mcpool` value format can mark it.
    Zstd,
}

impl Codec {
    /// Its name: `zlib`, `gzip`, `zstd`.
    pub fn name(self) -> &'static str {
        match self {
            Codec::Zlib => "zlib",
            Codec::Gzip => "gzip",
            Codec::Zstd => "zstd",
        }
    }

    /// The default level: 6 for zlib and gzip (zlib's own default, what pylibmc and
    /// python-memcached use), 3 for zstd (its own default).
    pub fn default_level(self) -> i32 {
        match self {
            Codec::Zlib | Codec::Gzip => 6,
            Codec::Zstd => 3,
        }
    }

    /// The levels the codec accepts: 0..=9 for zlib and gzip, 1..=22 for zstd.
    pub fn levels(self) -> std::ops::RangeInclusive<i32> {
        match self {
            Codec::Zlib | Codec::Gzip => 0..=9,
            Codec::Zstd => 1..=22,
        }
    }

    /// Compresses `data` at `level` (within [`Codec::levels`]).
    pub fn compress(self, data: &[u8], level: i32) -> std::io::Result<Vec<u8>> {
        let out = Vec::with_capacity(data.len() / 2);
        match self {
            Codec::Zlib => {
                let mut e = ZlibEncoder::new(out, Level::new(level.clamp(0, 9) as u32));
                e.write_all(data).and_then(|_| e.finish())
            }
            Codec::Gzip => {
                let mut e = GzEncoder::new(out, Level::new(level.clamp(0, 9) as u32));
                e.write_all(data).and_then(|_| e.finish())
            }
            Codec::Zstd => zstd::bulk::compress(data, level),
        }
    }
}

impl std::fmt::Display for Codec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Codec {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "zlib" | "deflate" => Ok(Codec::Zlib),
            "gzip" | "gz" => Ok(Codec::Gzip),
            "zstd" | "zstandard" => Ok(Codec::Zstd),
            _ => Err(Error::Config(format!(
                "unknown compression codec {s:?} (zlib, gzip, zstd)"
            ))),
        }
    }
}

/// mcpool's compression convention before value formats (the builder's
/// `compression_format`): which codec is written and which flag bit marks it, with the
/// flags otherwise the caller's. Kept for the callers that still set it; new code sets a
/// [`crate::ValueFormat`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum CompressionFormat {
    /// gzip stream, flag bit 2 (the bit of Whalin, spymemcached, Cache::Memcached(::Fast)).
    #[default]
    Gzip,
    /// zlib stream, flag bit 8 (the bit of pylibmc, python-memcached, pymemcache).
    Zlib,
}

impl CompressionFormat {
    /// The flag bit that marks a compressed value in this convention.
    pub fn flag(self) -> u32 {
        match self {
            CompressionFormat::Gzip => 2,
            CompressionFormat::Zlib => 8,
        }
    }
}

impl std::str::FromStr for CompressionFormat {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "gzip" => Ok(CompressionFormat::Gzip),
            "zlib" => Ok(CompressionFormat::Zlib),
            _ => Err(Error::Config(format!(
                "unknown compression format {s:?} (gzip, zlib)"
            ))),
        }
    }
}

/// Compression settings.
#[derive(Clone, Debug, PartialEq)]
pub struct Compression {
    /// Compress at all; `None` (the default): the value format's default
    /// ([`crate::ValueFormat::compresses_by_default`]: on, except under `pymemcache`), which
    /// [`crate::Client::from_config`] settles. A value format without a compression mark
    /// never compresses.
    pub enabled: Option<bool>,
    /// The codec written; `None`: the value format's default (`mcpool`: zlib; the legacy
    /// formats: their peers').
    pub codec: Option<Codec>,
    /// The level, on the codec's scale; `None`: [`Codec::default_level`] (zlib/gzip 6).
    pub level: Option<i32>,
    /// Values of at least this many bytes are compressed (default 30 KiB, as SockIOPool);
    /// with `above`, values of more than this many.
    pub threshold: usize,
    /// Compare `threshold` strictly: a value is compressed when it is longer than the
    /// threshold (Whalin's and spymemcached's `length > threshold`), not when it is at least
    /// as long (default false).
    pub above: bool,
    /// Keep the compressed form only when `compressed / original <= ratio`
    /// (default 0.8, as Cache::Memcached's `compress_ratio`); 0: never, so nothing is
    /// compressed at all.
    pub ratio: f64,
    /// Compare `ratio` strictly: keep the compressed form only when
    /// `compressed < ratio × original` (pylibmc's and python-memcached's
    /// `len(compressed) < len(value)` at ratio 1: a value whose compressed form is as long
    /// is stored as it is), not when it is at most that (default false).
    pub ratio_below: bool,
    /// Refuse to inflate a value beyond this many bytes (default 64 MiB). A value longer
    /// than this is never compressed on the way in (stored as it is), so a client can read
    /// back whatever it stored.
    pub max_decompressed: usize,
}

impl Default for Compression {
    fn default() -> Self {
        Compression {
            enabled: None,
            codec: None,
            level: None,
            threshold: 30 * 1024,
            above: false,
            ratio: 0.8,
            ratio_below: false,
            max_decompressed: 64 << 20,
        }
    }
}

impl Compression {
    /// The most a value may inflate to: `max_decompressed`, and never past memcached's largest
    /// item whatever it says (tester finding limits 2: a 1,100 MiB zlib bomb inflated under a
    /// 2 GB setting).
    pub(crate) fn inflate_cap(&self) -> usize {
        self.max_decompressed.min(crate::config::MAX_ITEM_SIZE)
    }

    /// Whether a value of `len` bytes is long enough to be compressed (`threshold`, compared
    /// as `above` says).
    pub fn due(&self, len: usize) -> bool {
        if self.above {
            len > self.threshold
        } else {
            len >= self.threshold
        }
    }

    /// Whether `compressed` bytes for an `original` of that many save enough to be kept
    /// (`ratio`, compared as `ratio_below` says).
    fn saves(&self, compressed: usize, original: usize) -> bool {
        let limit = original as f64 * self.ratio;
        if self.ratio_below {
            (compressed as f64) < limit
        } else {
            (compressed as f64) <= limit
        }
    }

    /// `data` compressed with `codec` when it is at least the threshold, no longer than
    /// `max_decompressed` (a longer value, once compressed, would be refused by this very
    /// client's reads: it is stored as it is, under `max_value_size` as any plain value) and
    /// compression saves enough (`compressed <= ratio × original`, or `<` with
    /// `ratio_below`); `None` to store it as it
    /// is. The one compression decision of every store path.
    pub fn compress(&self, codec: Codec, data: &[u8]) -> Option<Vec<u8>> {
        if self.enabled == Some(false)
            || self.ratio <= 0.0
            || !self.due(data.len())
            || data.is_empty()
            || data.len() > self.max_decompressed
        {
            return None;
        }
        let level = self.level.unwrap_or_else(|| codec.default_level());
        match codec.compress(data, level) {
            Ok(p) if self.saves(p.len(), data.len()) => Some(p),
            _ => None,
        }
    }
}

/// The stream a compressed value holds, told by its first bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    /// `1f 8b`.
    Gzip,
    /// A valid zlib header (CM = 8, FCHECK).
    Zlib,
    /// The zstd frame magic `28 b5 2f fd`.
    Zstd,
    /// None of those: possibly raw deflate.
    Other,
}

impl Stream {
    /// Recognises the stream by its header.
    pub fn detect(data: &[u8]) -> Stream {
        if data.starts_with(&[0x1f, 0x8b]) {
            Stream::Gzip
        } else if data.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Stream::Zstd
        } else if data.len() >= 2
            && data[0] & 0x0f == 8
            && data[0] >> 4 <= 7
            && (u16::from(data[0]) << 8 | u16::from(data[1])) % 31 == 0
        {
            Stream::Zlib
        } else {
            Stream::Other
        }
    }
}

/// Inflates a gzip or zlib stream (told apart by its first bytes), refusing more than `cap` bytes.
pub fn inflate(data: &[u8], cap: usize) -> Result<Vec<u8>> {
    // The inflater sizes the output itself ([`room_for`]): from bytes that existed, never
    // from a size the stream claims (gzip's trailer).
    let mut out = Vec::new();
    inflate_into(data, cap, &mut out)?;
    Ok(out)
}

/// Inflates into `out` (cleared first, its capacity reused), refusing more than `cap` bytes.
/// The stream is recognised by its header: gzip, zlib, or (where `zstd` is allowed) a zstd
/// frame; anything else is tried as raw deflate, which must then end exactly at the end of
/// the data. The error says which stream was found and what was wrong with it.
pub fn inflate_into(data: &[u8], cap: usize, out: &mut Vec<u8>) -> Result<()> {
    inflate_stream(data, cap, out, true)
}

/// [`inflate_into`], with zstd frames accepted only when `zstd` is true (only the `mcpool`
/// value format can mark one).
pub(crate) fn inflate_stream(data: &[u8], cap: usize, out: &mut Vec<u8>, zstd: bool) -> Result<()> {
    out.clear();
    inflate_append(data, cap, out, zstd)
}

/// [`inflate_stream`] onto the end of `out` (what it holds is kept; the value's bytes
/// follow, at most `cap` of them, the buffer growing geometrically): a sink that keeps its
/// values in one buffer has them inflated straight into it. On an error `out` is truncated
/// back to what it held.
pub(crate) fn inflate_append(data: &[u8], cap: usize, out: &mut Vec<u8>, zstd: bool) -> Result<()> {
    let start = out.len();
    let done = inflate_onto(data, cap, out, zstd, start);
    if done.is_err() {
        out.truncate(start);
    }
    done
}

fn inflate_onto(
    data: &[u8],
    cap: usize,
    out: &mut Vec<u8>,
    zstd: bool,
    start: usize,
) -> Result<()> {
    let limit = cap as u64 + 1;
    let too_big = || Error::Decompress(format!("inflates to more than the cap of {cap} bytes"));
    match Stream::detect(data) {
        Stream::Gzip => inflate_whole(data, cap, out, Wrapper::Gzip),
        Stream::Zlib => inflate_whole(data, cap, out, Wrapper::Zlib),
        Stream::Zstd if zstd => {
            let mut d = zstd::stream::read::Decoder::with_buffer(data)
                .map_err(|e| Error::Decompress(format!("zstd frame: {e}")))?;
            // The frame names its window size: never let it decide an allocation larger
            // than the cap needs (2^27 is zstd's own default limit).
            let log = (usize::BITS - cap.max(1024).leading_zeros()).clamp(10, 27);
            d.window_log_max(log)
                .map_err(|e| Error::Decompress(format!("zstd frame: {e}")))?;
            out.reserve(room_for(data.len()).min(cap.saturating_add(1)));
            match (&mut d).take(limit).read_to_end(out) {
                // A frame whose window is larger than the cap allows (tester finding limits
                // 3: the message did not say which limit).
                Err(e) if e.to_string().contains("too much memory") => {
                    Err(Error::Decompress(format!(
                        "zstd frame: its window (the memory its decoding needs) is larger \
                         than the cap of {cap} bytes (max_decompressed_size): {e}"
                    )))
                }
                Err(e) => Err(Error::Decompress(format!("zstd frame: {e}"))),
                Ok(_) if out.len() - start > cap => Err(too_big()),
                Ok(_) => {
                    LAST.set((data.len(), out.len() - start));
                    Ok(())
                }
            }
        }
        Stream::Zstd => Err(Error::Decompress(
            "a zstd frame, which only the mcpool value format marks".into(),
        )),
        Stream::Other => inflate_whole(data, cap, out, Wrapper::Raw).map_err(|_| {
            Error::Decompress("neither a gzip, zlib nor zstd stream, nor raw deflate".into())
        }),
    }
}

thread_local! {
    /// One whole-buffer inflater per thread (allocating one costs about as much as
    /// inflating a small value).
    static WHOLE: std::cell::RefCell<Option<Inflater>> = const { std::cell::RefCell::new(None) };
    /// The compressed and inflated lengths of the last value this thread inflated.
    static LAST: std::cell::Cell<(usize, usize)> = const { std::cell::Cell::new((0, 0)) };
}

/// The room to inflate a value of `compressed` bytes into: the thread's last ratio of
/// inflated to compressed bytes (and a sixteenth), but never more than twice the last
/// value's inflated length nor less than twice this one's compressed length. It comes from
/// bytes that existed, never from a size the stream claims.
fn room_for(compressed: usize) -> usize {
    let least = compressed.saturating_mul(2).max(64);
    match LAST.get() {
        (0, _) => least,
        (last_in, last_out) => {
            let ratio = (last_out as u128 * 17 / 16) / last_in as u128 + 1;
            let by_ratio = usize::try_from(compressed as u128 * ratio).unwrap_or(usize::MAX);
            by_ratio.min(last_out.saturating_mul(2)).max(least)
        }
    }
}

/// Inflates a zlib or gzip stream or raw deflate, which must end exactly at the end of
/// `data` (bytes after it are an error, not ignored as zlib's own inflate does: an `append`
/// to a compressed value must not read as the value without what was appended), whole onto
/// the end of `out`,
/// refusing more than `cap`. The inflater needs its room up front: the first try gets
/// [`room_for`] or the vector's spare capacity if larger (nothing is zeroed, so a sink's
/// arena lends its room for free); a stream that needs more is inflated again into twice
/// the room, up to the cap (at most twice the work).
fn inflate_whole(data: &[u8], cap: usize, out: &mut Vec<u8>, wrapper: Wrapper) -> Result<()> {
    let name = match wrapper {
        Wrapper::Zlib => "zlib stream",
        Wrapper::Gzip => "gzip stream",
        Wrapper::Raw => "raw deflate",
    };
    let limit = cap.saturating_add(1);
    let too_big = || Error::Decompress(format!("inflates to more than the cap of {cap} bytes"));
    WHOLE.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            *slot = Inflater::new();
        }
        let Some(inflater) = slot.as_mut() else {
            return Err(Error::Decompress("no memory for an inflater".into()));
        };
        let mut room = room_for(data.len()).min(limit);
        loop {
            out.reserve(room);
            let avail = (out.capacity() - out.len()).min(limit);
            match inflater.inflate(wrapper, data, out, avail) {
                Outcome::Done { written, .. } if written > cap => break Err(too_big()),
                Outcome::Done { read, .. } if read != data.len() => {
                    break Err(Error::Decompress(format!(
                        "{name} followed by {} more bytes (appended or prepended to a \
                         compressed value?)",
                        data.len() - read
                    )))
                }
                Outcome::Done { written, .. } => {
                    LAST.set((data.len(), written));
                    break Ok(());
                }
                Outcome::NoRoom if avail < limit => room = avail.saturating_mul(2).min(limit),
                Outcome::NoRoom => break Err(too_big()),
                Outcome::Bad => {
                    break Err(Error::Decompress(format!("{name}: corrupt or truncated")))
                }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_zstd_frame_whose_window_exceeds_the_cap_names_the_cap() {
        use std::io::Write;
        // Streamed: no content size in the frame, so its window decides the memory.
        let mut enc = zstd::stream::write::Encoder::new(Vec::new(), 3).unwrap();
        enc.write_all(&[b'x'; 900]).unwrap();
        let frame = enc.finish().unwrap();
        let mut out = Vec::new();
        let e = inflate_append(&frame, 1000, &mut out, true)
            .unwrap_err()
            .to_string();
        assert!(e.contains("max_decompressed_size"), "{e}");
        out.clear();
        inflate_append(&frame, 64 << 20, &mut out, true).unwrap();
        assert_eq!(out, [b'x'; 900]);
    }

    #[test]
    fn no_value_inflates_past_memcacheds_largest_item() {
        let c = |max| Compression {
            max_decompressed: max,
            ..Compression::default()
        };
        assert_eq!(c(2_000_000_000).inflate_cap(), crate::config::MAX_ITEM_SIZE);
        assert_eq!(c(usize::MAX).inflate_cap(), crate::config::MAX_ITEM_SIZE);
        assert_eq!(c(1000).inflate_cap(), 1000);
    }

    fn noise(n: usize) -> Vec<u8> {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 32) as u8
            })
            .collect()
    }

    #[test]
    fn round_trip_every_codec_and_detected_by_header() {
        let big = b"abcdefgh".repeat(10_000);
        let c = Compression::default();
        for (codec, stream) in [
            (Codec::Zlib, Stream::Zlib),
            (Codec::Gzip, Stream::Gzip),
            (Codec::Zstd, Stream::Zstd),
        ] {
            let wire = c.compress(codec, &big).unwrap();
            assert!(wire.len() < big.len() / 10, "{codec}");
            assert_eq!(Stream::detect(&wire), stream);
            assert_eq!(inflate(&wire, 1 << 20).unwrap(), big, "{codec}");
        }
        // Raw deflate, as a legacy writer may store it.
        let mut raw = flate2::write::DeflateEncoder::new(Vec::new(), Level::default());
        raw.write_all(&big).unwrap();
        let raw = raw.finish().unwrap();
        assert_eq!(Stream::detect(&raw), Stream::Other);
        assert_eq!(inflate(&raw, 1 << 20).unwrap(), big);
        // zstd only where allowed.
        let z = Codec::Zstd.compress(&big, 3).unwrap();
        assert!(inflate_stream(&z, 1 << 20, &mut Vec::new(), false).is_err());
    }

    #[test]
    fn the_room_guess_fits_any_next_value_and_stops_at_the_cap() {
        // Whole-buffer inflation guesses the room from the thread's last value: a value
        // far larger or smaller than the last, in every codec, still comes back whole,
        // and the cap holds to the byte whatever the guess.
        std::thread::spawn(|| {
            let digits: Vec<u8> = (0..40_000u32)
                .flat_map(|i| format!("{i} ").into_bytes())
                .collect();
            let values = [
                digits.clone(),
                vec![b'z'; 3_000_000],
                noise(5_000),
                digits[..100].to_vec(),
                vec![b'y'; 700_000],
                Vec::new(),
                digits.clone(),
            ];
            for codec in [Codec::Zlib, Codec::Gzip, Codec::Zstd] {
                for v in &values {
                    let wire = codec.compress(v, 6).unwrap();
                    assert_eq!(&inflate(&wire, v.len().max(1)).unwrap(), v, "{codec}");
                    let mut out = b"kept".to_vec();
                    inflate_append(&wire, v.len(), &mut out, true).unwrap();
                    assert_eq!((&out[..4], &out[4..]), (&b"kept"[..], &v[..]), "{codec}");
                    if !v.is_empty() {
                        let mut out = b"kept".to_vec();
                        assert!(inflate_append(&wire, v.len() - 1, &mut out, true).is_err());
                        assert_eq!(out, b"kept", "{codec}: as it was after an error");
                    }
                }
            }
            // Bytes after a stream (an append to a compressed value) are an error.
            for codec in [Codec::Zlib, Codec::Gzip, Codec::Zstd] {
                let mut wire = codec.compress(&digits, 6).unwrap();
                wire.extend_from_slice(b"appended");
                let e = inflate(&wire, 1 << 20).expect_err(codec.to_string().as_str());
                // (zstd reads the bytes as a next frame: an error of its own)
                let named = codec == Codec::Zstd || e.to_string().contains("more bytes");
                assert!(named, "{codec}: {e}");
            }
        })
        .join()
        .unwrap();
    }

    #[test]
    fn small_or_incompressible_stays_plain() {
        let c = Compression::default();
        assert!(c.compress(Codec::Zlib, b"small").is_none());
        assert!(c.compress(Codec::Zlib, &noise(40_000)).is_none());
        let off = Compression {
            enabled: Some(false),
            ..Compression::default()
        };
        assert!(off.compress(Codec::Zlib, &b"a".repeat(100_000)).is_none());
        // Longer than this client could inflate on a read: stored as it is.
        let capped = Compression {
            threshold: 0,
            max_decompressed: 1000,
            ..Compression::default()
        };
        assert!(capped.compress(Codec::Zlib, &b"a".repeat(1001)).is_none());
        assert!(capped.compress(Codec::Zlib, &b"a".repeat(1000)).is_some());
    }

    #[test]
    fn ratio_zero_compresses_nothing() {
        // Cache::Memcached::Fast's compress_ratio 0: no compressed form is short enough
        let never = Compression {
            threshold: 0,
            ratio: 0.0,
            ..Compression::default()
        };
        assert!(never.compress(Codec::Zlib, &b"a".repeat(100_000)).is_none());
        assert!(never.compress(Codec::Gzip, &b"a".repeat(100)).is_none());
    }

    #[test]
    fn ratio_below_keeps_only_a_strictly_smaller_form() {
        // pylibmc and python-memcached keep the compressed form only when it is shorter
        // (`len(comp) < len(value)`): at ratio 1 an equal length is stored as it is
        let at_most = Compression {
            threshold: 0,
            ratio: 1.0,
            ..Compression::default()
        };
        let below = Compression {
            ratio_below: true,
            ..at_most.clone()
        };
        assert!(at_most.saves(100, 100) && !below.saves(100, 100));
        assert!(at_most.saves(99, 100) && below.saves(99, 100));
        assert!(!at_most.saves(101, 100) && !below.saves(101, 100));
    }

    #[test]
    fn the_level_is_used() {
        let text: Vec<u8> = (0..20_000u32)
            .flat_map(|i| format!("{{\"id\":{i},\"name\":\"user{}\"}},", i % 97).into_bytes())
            .collect();
        let fast = Codec::Zlib.compress(&text, 1).unwrap();
        let six = Codec::Zlib.compress(&text, 6).unwrap();
        assert!(six.len() < fast.len(), "{} vs {}", six.len(), fast.len());
    }

    #[test]
    fn corrupt_or_bomb_is_an_error() {
        assert!(inflate(b"not compressed", 1 << 20).is_err());
        let mut gz = GzEncoder::new(Vec::new(), Level::fast());
        gz.write_all(&vec![0u8; 1 << 20]).unwrap();
        let bomb = gz.finish().unwrap();
        assert!(inflate(&bomb, 1000).is_err());
        assert_eq!(inflate(&bomb, 1 << 20).unwrap().len(), 1 << 20);
        let mut truncated = bomb.clone();
        truncated.truncate(bomb.len() / 2);
        assert!(inflate(&truncated, 1 << 21).is_err());
        // The same through the (reused, per-thread) zlib inflater.
        let mut z = ZlibEncoder::new(Vec::new(), Level::fast());
        z.write_all(&vec![7u8; 1 << 20]).unwrap();
        let zbomb = z.finish().unwrap();
        assert!(inflate(&zbomb, 1000).is_err());
        assert_eq!(inflate(&zbomb, 1 << 20).unwrap(), vec![7u8; 1 << 20]);
        assert!(inflate(&zbomb[..zbomb.len() / 2], 1 << 21).is_err());
        let mut corrupt = zbomb.clone();
        corrupt[10] ^= 0xff;
        assert!(inflate(&corrupt, 1 << 21).is_err());
        assert_eq!(
            inflate(&zbomb, 1 << 20).unwrap().len(),
            1 << 20,
            "reusable after errors"
        );
        // zstd: a bomb, a truncated frame.
        let zs = Codec::Zstd.compress(&vec![7u8; 1 << 20], 3).unwrap();
        assert!(inflate(&zs, 1000).is_err());
        assert!(inflate(&zs[..zs.len() / 2], 1 << 21).is_err());
        assert_eq!(inflate(&zs, 1 << 20).unwrap().len(), 1 << 20);
    }
}
