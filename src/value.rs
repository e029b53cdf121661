//! Value encoding: compression above a threshold, marked by a flag bit, and its reverse.

use crate::error::{Error, Result};
use flate2::bufread::GzDecoder;
use flate2::write::{GzEncoder, ZlibEncoder};
use flate2::Compression as Level;
use std::borrow::Cow;
use std::io::{Read, Write};

/// Which compressed format is written, and which flag bit marks it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum CompressionFormat {
    /// gzip stream, flag bit 2: Whalin, spymemcached, xmemcached, Cache::Memcached(::Fast).
    #[default]
    Gzip,
    /// zlib stream, flag bit 8: pylibmc, python-memcached, pymemcache.
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
    /// Compress at all (default: on).
    pub enabled: bool,
    /// Format and flag bit (default: gzip, flag 2).
    pub format: CompressionFormat,
    /// Values of at least this many bytes are compressed (default 30 KiB, as SockIOPool).
    pub threshold: usize,
    /// Keep the compressed form only when `compressed / original <= ratio`
    /// (default 0.8, as Cache::Memcached's `compress_ratio`).
    pub ratio: f64,
    /// Refuse to inflate a value beyond this many bytes (default 64 MiB).
    pub max_decompressed: usize,
}

impl Default for Compression {
    fn default() -> Self {
        Compression {
            enabled: true,
            format: CompressionFormat::Gzip,
            threshold: 30 * 1024,
            ratio: 0.8,
            max_decompressed: 64 << 20,
        }
    }
}

impl Compression {
    /// Encodes a value for the wire: compressed (and the flag bit set) when it is at least
    /// the threshold and compression saves enough; otherwise borrowed unchanged.
    pub fn encode<'a>(&self, data: &'a [u8], flags: u32) -> (Cow<'a, [u8]>, u32) {
        if !self.enabled || data.len() < self.threshold || data.is_empty() {
            return (Cow::Borrowed(data), flags);
        }
        let out = Vec::with_capacity(data.len() / 2);
        let level = Level::fast();
        let packed = match self.format {
            CompressionFormat::Gzip => {
                let mut e = GzEncoder::new(out, level);
                e.write_all(data).and_then(|_| e.finish())
            }
            CompressionFormat::Zlib => {
                let mut e = ZlibEncoder::new(out, level);
                e.write_all(data).and_then(|_| e.finish())
            }
        };
        match packed {
            Ok(p) if (p.len() as f64) <= (data.len() as f64) * self.ratio => {
                (Cow::Owned(p), flags | self.format.flag())
            }
            _ => (Cow::Borrowed(data), flags),
        }
    }

    /// Decodes a value from the wire: inflates it when the configured flag bit is set
    /// (recognising gzip or zlib by its header) and clears the bit.
    pub fn decode(&self, data: Vec<u8>, flags: u32) -> Result<(Vec<u8>, u32)> {
        let bit = self.format.flag();
        if flags & bit == 0 {
            return Ok((data, flags));
        }
        Ok((inflate(&data, self.max_decompressed)?, flags & !bit))
    }
}

/// Inflates a gzip or zlib stream (told apart by its first bytes), refusing more than `cap` bytes.
pub fn inflate(data: &[u8], cap: usize) -> Result<Vec<u8>> {
    // The output's size: gzip says it in its trailer (ISIZE, mod 2^32); for zlib, guess
    // generously so that typical values need no regrowth.
    let hint = if data.starts_with(&[0x1f, 0x8b]) && data.len() >= 18 {
        let t = &data[data.len() - 4..];
        u32::from_le_bytes([t[0], t[1], t[2], t[3]]) as usize + 1
    } else {
        data.len().saturating_mul(32).max(4096)
    };
    // Deflate cannot expand more than ~1032:1, so a larger claimed size is a lie: never let
    // a hostile trailer decide the allocation.
    let hint = hint.min(data.len().saturating_mul(1032));
    let mut out = Vec::with_capacity(hint.min(cap.saturating_add(1)));
    inflate_into(data, cap, &mut out)?;
    Ok(out)
}

/// Inflates into `out` (cleared first, its capacity reused), refusing more than `cap` bytes.
pub fn inflate_into(data: &[u8], cap: usize, out: &mut Vec<u8>) -> Result<()> {
    out.clear();
    let limit = cap as u64 + 1;
    if data.starts_with(&[0x1f, 0x8b]) {
        // The bufread decoder reads the slice directly (no intermediate buffer).
        match GzDecoder::new(data).take(limit).read_to_end(out) {
            Err(e) => Err(Error::Decompress(e.to_string())),
            Ok(_) if out.len() > cap => Err(Error::Decompress(format!(
                "inflates to more than the cap of {cap} bytes"
            ))),
            Ok(_) => Ok(()),
        }
    } else if data.len() >= 2
        && data[0] & 0x0f == 8
        && (u16::from(data[0]) << 8 | u16::from(data[1])) % 31 == 0
    {
        inflate_zlib(data, cap, out)
    } else {
        Err(Error::Decompress(
            "flagged compressed but neither a gzip nor a zlib stream".into(),
        ))
    }
}

thread_local! {
    /// One zlib inflater per thread, reset between values: a fresh one allocates and
    /// initialises its 32 KiB window every time, which costs more than inflating a
    /// typical value.
    static INFLATER: std::cell::RefCell<Option<flate2::Decompress>> =
        const { std::cell::RefCell::new(None) };
}

/// Inflates a zlib stream with this thread's inflater into `out`, refusing more than `cap`.
fn inflate_zlib(data: &[u8], cap: usize, out: &mut Vec<u8>) -> Result<()> {
    use flate2::{Decompress, FlushDecompress, Status};
    INFLATER.with(|cell| {
        let mut slot = cell.borrow_mut();
        let d = slot.get_or_insert_with(|| Decompress::new(true));
        d.reset(true);
        loop {
            let consumed = d.total_in() as usize;
            if out.len() == out.capacity() {
                if out.len() > cap {
                    break Err(Error::Decompress(format!(
                        "inflates to more than the cap of {cap} bytes"
                    )));
                }
                out.reserve(
                    (out.capacity()).clamp(4096, cap.saturating_add(1) - out.len().min(cap)),
                );
            }
            let status = d
                .decompress_vec(&data[consumed..], out, FlushDecompress::Finish)
                .map_err(|e| Error::Decompress(e.to_string()));
            match status {
                Err(e) => break Err(e),
                Ok(Status::StreamEnd) if out.len() > cap => {
                    break Err(Error::Decompress(format!(
                        "inflates to more than the cap of {cap} bytes"
                    )))
                }
                Ok(Status::StreamEnd) => break Ok(()),
                Ok(_) if d.total_in() as usize == consumed && out.len() < out.capacity() => {
                    break Err(Error::Decompress("truncated zlib stream".into()))
                }
                Ok(_) => {}
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_both_formats() {
        let big = b"abcdefgh".repeat(10_000);
        for format in [CompressionFormat::Gzip, CompressionFormat::Zlib] {
            let c = Compression {
                format,
                ..Compression::default()
            };
            let (wire, flags) = c.encode(&big, 1);
            assert_eq!(flags, 1 | format.flag());
            assert!(wire.len() < big.len() / 10);
            let (back, f) = c.decode(wire.into_owned(), flags).unwrap();
            assert_eq!(back, big);
            assert_eq!(f, 1);
        }
    }

    #[test]
    fn small_or_incompressible_stays_plain() {
        let c = Compression::default();
        assert!(matches!(c.encode(b"small", 0), (Cow::Borrowed(_), 0)));
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let noise: Vec<u8> = (0..40_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 32) as u8
            })
            .collect();
        assert!(matches!(c.encode(&noise, 0), (Cow::Borrowed(_), 0)));
    }

    #[test]
    fn corrupt_or_bomb_is_an_error() {
        let c = Compression::default();
        assert!(c.decode(b"not compressed".to_vec(), 2).is_err());
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
    }
}
