//! The keys of a multi-key call as C gives them (arrays of pointers and lengths), read
//! through the core's `Keys`: each key, or, for one over 250 bytes, its error. Nothing is
//! copied and nothing allocated per key.

use mcpool::error::Result;
use mcpool::key::{self, Keys, MAX_KEY_LEN};

/// `n` keys: `ptrs[i]` holds `lens[i]` bytes.
pub(crate) struct CKeys<'a> {
    ptrs: &'a [*const u8],
    lens: &'a [usize],
    /// Longest key read (the client's `max_key`, at most 64 KiB).
    max: usize,
}

impl<'a> CKeys<'a> {
    /// # Safety
    /// `ptrs` and `lens` have the same length; every `ptrs[i]` is non-NULL and valid for
    /// reads of `lens[i]` bytes for `'a`. Keys longer than `max` (clamped to 250 ..= 64 KiB)
    /// are refused unread.
    pub(crate) unsafe fn new(ptrs: &'a [*const u8], lens: &'a [usize], max: usize) -> CKeys<'a> {
        CKeys {
            ptrs,
            lens,
            max: max.clamp(MAX_KEY_LEN, key::MAX_HASHED_KEY_LEN),
        }
    }

    /// Key `i` for messages: `None` when it is refused (its error names it).
    pub(crate) fn shown(&self, i: usize) -> Option<&[u8]> {
        self.key(i).ok()
    }
}

impl Keys for CKeys<'_> {
    #[inline]
    fn count(&self) -> usize {
        self.ptrs.len()
    }

    #[inline]
    fn key(&self, i: usize) -> Result<&[u8]> {
        let len = self.lens[i];
        if len > self.max {
            // Not one byte of it is read: C callers' lengths are not trusted that far.
            return Err(too_long_at(i, len));
        }
        // SAFETY: `ptrs[i]` is valid for `len` ≤ 64 KiB bytes for 'a (see `new`).
        Ok(unsafe { std::slice::from_raw_parts(self.ptrs[i], len) })
    }
}

/// The error of key number `i` (0-based) of a batch, too long at `len` bytes and not read:
/// named by its length and its position, since its bytes are not shown (tester finding
/// keys2 5: a `get_multi` of hundreds of keys did not say which).
pub(crate) fn too_long_at(i: usize, len: usize) -> mcpool::Error {
    match key::too_long(len) {
        mcpool::Error::InvalidKey { key, reason } => mcpool::Error::InvalidKey {
            key: format!("{key} (key number {i})"),
            reason,
        },
        other => other,
    }
}
