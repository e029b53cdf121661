//! What the cache hands back: items and store outcomes.

use crate::value_bytes::ValueBytes;

/// A value read from the cache, with its flags and (for `gets`/`gats`) its CAS value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Item {
    /// The value, decompressed when it was stored compressed: its own vector, or (small
    /// values of one multi-key read) a slice of a buffer they share; see [`ValueBytes`].
    pub value: ValueBytes,
    /// The flags word, without the compression bit that this client manages.
    pub flags: u32,
    /// The CAS unique, when asked for.
    pub cas: Option<u64>,
}

/// How [`crate::Client::get_or_stored`] handed a value out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// As the value format delivers it (as [`crate::Client::get_item`] does).
    Delivered,
    /// As memcached holds it: the format could not deliver it (its body as stored, not
    /// inflated; its flags as stored, compression bits included).
    AsStored,
}

/// An item's metadata, read without its value (meta `mg <key> h l t c s f u`; see
/// [`crate::Client::meta_info`]), which does not count as an access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ItemInfo {
    /// Whether the item had been read before (`h`).
    pub hit_before: bool,
    /// Time since the item was last accessed (`l`), in whole seconds.
    pub last_access: std::time::Duration,
    /// Time left before the item expires (`t`), in whole seconds; `None` when it never
    /// expires (`t-1`).
    pub ttl: Option<std::time::Duration>,
    /// The CAS version (`c`).
    pub cas: u64,
    /// The stored value's size in bytes (`s`), as stored (compressed if it was).
    pub size: u64,
    /// The flags word as stored (`f`), value-format bits included.
    pub flags: u32,
}

/// What a store command did. Only `Stored` means the value is now in the cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StoreOutcome {
    /// The value was stored.
    Stored,
    /// `add` of an existing key, `replace`/`append`/`prepend` of a missing one; also an
    /// `append`/`prepend` that memcached refuses because the item would grow past its item
    /// size limit (`-I`): then the key exists and keeps its value.
    NotStored,
    /// `cas`: the item changed since it was read.
    Exists,
    /// `cas`: the item no longer exists.
    NotFound,
}

impl StoreOutcome {
    /// True for `Stored`.
    pub fn is_stored(self) -> bool {
        self == StoreOutcome::Stored
    }
}

/// What a stampede-protected read found (meta protocol only; see [`crate::Client::get_lease`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Lease {
    /// A fresh value: use it.
    Hit(Item),
    /// This caller won the right to recompute the value and store it; every other caller is
    /// told to wait. `stale` holds the invalidated or expiring value, when there is one.
    Recompute {
        /// The old value, if any, to serve meanwhile.
        stale: Option<Item>,
    },
    /// Another caller is recomputing: serve `stale` if present, or retry shortly.
    Wait {
        /// The old value, if any.
        stale: Option<Item>,
    },
}

impl Lease {
    /// The life, in seconds, of the placeholder a lease read creates on a miss when its
    /// caller names none (the bindings' default `vivify_ttl`: Python, Perl, Java): time
    /// for one recompute, after which another caller may win it.
    pub const DEFAULT_VIVIFY_TTL: u32 = 30;
    /// How long, in seconds, [`crate::Client::invalidate`] keeps an item readable as stale
    /// when its caller names no time (the bindings' default `stale_ttl`).
    pub const DEFAULT_STALE_TTL: u32 = 30;
}
