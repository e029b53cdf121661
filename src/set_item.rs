//! Items of a batch store with their own expiry, compression decision and CAS unique
//! ([`Client::set_multi_items`](crate::Client::set_multi_items),
//! [`Client::store_multi_items`](crate::Client::store_multi_items), the C ABI's
//! `mcpool_client_set_multi_ttl` and `mcpool_client_store_multi`).

use crate::value::Kind;

/// Whether one stored value is compressed: a per-call decision that needs no second client
/// with another threshold.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Compress {
    /// Never compressed, whatever its size.
    Never,
    /// The client's rule: compressed when compression is on and the value is at least
    /// `compression_threshold` bytes (and it shrinks to `compression_ratio`).
    #[default]
    Auto,
    /// Compressed whatever its size and whether compression is on, in the client's format,
    /// kept only when it shrinks to `compression_ratio` (a caller that has its own threshold,
    /// such as pylibmc's per-call `min_compress_len`, decides with this).
    Always,
    /// The client's rule with this threshold in place of `compression_threshold`, compared
    /// as the client compares it (`compression_compare`), compression on for this value: a
    /// per-call threshold such as Whalin's per-`MemCachedClient` `compressThreshold`, with
    /// no second client.
    Threshold(usize),
    /// As [`Compress::Always`], at this level on the codec's scale (zlib and gzip 0..=9,
    /// zstd 1..=22; another is `Error::InvalidArgument`) in place of `compression_level`:
    /// a per-call level such as pylibmc's `compress_level`.
    AlwaysAt(i32),
}

impl Compress {
    /// The C ABI's byte: 0 never, 1 the client's rule, 2 always, 16 + level (16..=38)
    /// always at that level ([`Compress::AlwaysAt`]); `None` for anything else (3, a
    /// threshold, comes with its number: [`Compress::Threshold`]).
    pub fn from_byte(b: u8) -> Option<Compress> {
        match b {
            0 => Some(Compress::Never),
            1 => Some(Compress::Auto),
            2 => Some(Compress::Always),
            Compress::AT_LEVEL..=38 => Some(Compress::AlwaysAt(i32::from(b - Compress::AT_LEVEL))),
            _ => None,
        }
    }

    /// The C ABI's byte of [`Compress::AlwaysAt`] level 0 (level `l` is `AT_LEVEL + l`).
    pub const AT_LEVEL: u8 = 16;
}

/// One item of [`Client::set_multi_items`](crate::Client::set_multi_items).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SetItem<'a> {
    /// The key (the client's prefix is added).
    pub key: &'a [u8],
    /// The value.
    pub value: &'a [u8],
    /// The flags stored with it (the compression bit is the client's to set).
    pub flags: u32,
    /// Expiry in seconds (0: none; above 30 days: a Unix time), as for `set`: above
    /// [`crate::ttl::MAX_TTL`] this item alone fails with `Error::InvalidArgument`.
    pub ttl: u32,
    /// Whether it is compressed.
    pub compress: Compress,
    /// The CAS unique a `cas` batch ([`Client::store_multi_items`](crate::Client::store_multi_items)
    /// with `StoreCommand::Cas`) compares with; ignored by the other commands.
    pub cas: u64,
    /// `None`: `value` is bytes stored under `flags` (the byte API). `Some(kind)`: `value` is
    /// a typed value of that kind given as its ABI body (UTF-8 text, an integer's decimal
    /// text, `0`/`1`), encoded in the client's value format as
    /// [`Client::store_kind_as`](crate::Client::store_kind_as) encodes it; `flags` unused.
    pub kind: Option<Kind>,
}

impl<'a> SetItem<'a> {
    /// An item with flags 0, the given TTL and the client's compression rule. The key and
    /// the value are anything that is bytes, as in [`Client::set`](crate::Client::set)
    /// (`SetItem::new("k", b"v", 0)`, a `String`, a `Vec<u8>`).
    pub fn new<K, V>(key: &'a K, value: &'a V, ttl: u32) -> SetItem<'a>
    where
        K: AsRef<[u8]> + ?Sized,
        V: AsRef<[u8]> + ?Sized,
    {
        SetItem {
            key: key.as_ref(),
            value: value.as_ref(),
            flags: 0,
            ttl,
            compress: Compress::Auto,
            cas: 0,
            kind: None,
        }
    }

    /// An item of a typed value: `kind` and its ABI body (see [`SetItem::kind`]), the given
    /// TTL and the client's compression rule.
    pub fn typed<K>(key: &'a K, kind: Kind, body: &'a [u8], ttl: u32) -> SetItem<'a>
    where
        K: AsRef<[u8]> + ?Sized,
    {
        SetItem {
            kind: Some(kind),
            ..SetItem::new(key, body, ttl)
        }
    }
}
