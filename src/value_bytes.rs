//! The bytes of a value read from the cache ([`crate::Item::value`]): a vector of its own, or
//! a slice of one buffer that a multi-key read filled with all its small values. A large
//! value of a multi-key read hands its vector to the value pool when dropped
//! (`crate::value_pool`), for the next large value decoded on any thread.
//!
//! Why: a `get_multi` of 100 small values that gives each its own vector spends about 200
//! instructions of `malloc` and `free` per value, a fifth of the call (docs/performance.md,
//! "Small values share one buffer"). Values of at most [`SHARED_MAX`] bytes read by one
//! call are copied into one buffer instead, and each is a counted reference to it
//! (`crate::shared_buffer`): one buffer per call. The buffer is freed when the last of its values is dropped, so
//! keeping one small value keeps the call's small values (at most [`SHARED_MAX`] bytes per
//! key) alive with it.

use std::borrow::Borrow;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;

use crate::shared_buffer::SharedSlice;

/// The largest value a multi-key read places in its shared buffer; larger ones, and values
/// decoded (inflated) into a vector, keep a vector of their own.
pub const SHARED_MAX: usize = 1024;

/// A value's bytes: dereferences to `[u8]`, compares with byte slices, arrays and vectors,
/// and becomes a `Vec<u8>` with [`ValueBytes::into_vec`] (no copy when it owns its vector).
#[derive(Clone, Default)]
pub struct ValueBytes(Repr);

#[derive(Clone)]
enum Repr {
    Owned(Vec<u8>),
    /// A vector given to `value_pool` when the value is dropped.
    Pooled(Vec<u8>),
    Shared(SharedSlice),
}

impl Default for Repr {
    fn default() -> Repr {
        Repr::Owned(Vec::new())
    }
}

impl Drop for ValueBytes {
    fn drop(&mut self) {
        if let Repr::Pooled(v) = &mut self.0 {
            crate::value_pool::give(std::mem::take(v));
        }
    }
}

impl ValueBytes {
    /// A large value's own vector, handed to the value pool when the value is dropped.
    pub(crate) fn pooled(v: Vec<u8>) -> ValueBytes {
        ValueBytes(Repr::Pooled(v))
    }

    /// A slice of a multi-key read's shared buffer.
    #[inline]
    pub(crate) fn shared(slice: SharedSlice) -> ValueBytes {
        ValueBytes(Repr::Shared(slice))
    }

    /// The bytes as a slice.
    #[inline]
    pub fn as_slice(&self) -> &[u8] {
        match &self.0 {
            Repr::Owned(v) | Repr::Pooled(v) => v,
            Repr::Shared(slice) => slice.as_slice(),
        }
    }

    /// The bytes as a vector of their own: the value's own vector when it has one, else a
    /// copy of its slice of the shared buffer.
    pub fn into_vec(mut self) -> Vec<u8> {
        match &mut self.0 {
            Repr::Owned(v) | Repr::Pooled(v) => std::mem::take(v),
            Repr::Shared(_) => self.as_slice().to_vec(),
        }
    }

    /// True when these bytes are a slice of a buffer shared with other values of the same
    /// read (which stays allocated while any of them is kept).
    pub fn is_shared(&self) -> bool {
        matches!(self.0, Repr::Shared(_))
    }
}

impl Deref for ValueBytes {
    type Target = [u8];
    #[inline]
    fn deref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl AsRef<[u8]> for ValueBytes {
    #[inline]
    fn as_ref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl Borrow<[u8]> for ValueBytes {
    fn borrow(&self) -> &[u8] {
        self.as_slice()
    }
}

impl From<Vec<u8>> for ValueBytes {
    #[inline]
    fn from(v: Vec<u8>) -> ValueBytes {
        ValueBytes(Repr::Owned(v))
    }
}

impl From<&[u8]> for ValueBytes {
    fn from(v: &[u8]) -> ValueBytes {
        ValueBytes(Repr::Owned(v.to_vec()))
    }
}

impl From<ValueBytes> for Vec<u8> {
    fn from(v: ValueBytes) -> Vec<u8> {
        v.into_vec()
    }
}

impl fmt::Debug for ValueBytes {
    /// As a byte string literal, like `b"..."`'s debug form.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "b\"{}\"", self.as_slice().escape_ascii())
    }
}

impl PartialEq for ValueBytes {
    fn eq(&self, other: &ValueBytes) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for ValueBytes {}

impl Hash for ValueBytes {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_slice().hash(state)
    }
}

impl PartialEq<[u8]> for ValueBytes {
    fn eq(&self, other: &[u8]) -> bool {
        self.as_slice() == other
    }
}

impl PartialEq<&[u8]> for ValueBytes {
    fn eq(&self, other: &&[u8]) -> bool {
        self.as_slice() == *other
    }
}

impl<const N: usize> PartialEq<[u8; N]> for ValueBytes {
    fn eq(&self, other: &[u8; N]) -> bool {
        self.as_slice() == other
    }
}

impl<const N: usize> PartialEq<&[u8; N]> for ValueBytes {
    fn eq(&self, other: &&[u8; N]) -> bool {
        self.as_slice() == *other
    }
}

impl PartialEq<Vec<u8>> for ValueBytes {
    fn eq(&self, other: &Vec<u8>) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl PartialEq<ValueBytes> for Vec<u8> {
    fn eq(&self, other: &ValueBytes) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl PartialEq<ValueBytes> for [u8] {
    fn eq(&self, other: &ValueBytes) -> bool {
        self == other.as_slice()
    }
}

impl PartialEq<ValueBytes> for &[u8] {
    fn eq(&self, other: &ValueBytes) -> bool {
        *self == other.as_slice()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shared_buffer::SharedFill;

    #[test]
    #[allow(unsafe_code)] // `SharedFill::push`
    fn shared_slices_read_their_own_bytes() {
        let mut fill = SharedFill::with_capacity(0);
        // SAFETY: the slices are not read before `finish`.
        let (one, two) = unsafe { (fill.push(b"one").unwrap(), fill.push(b"two").unwrap()) };
        fill.finish();
        let (one, two) = (ValueBytes::shared(one), ValueBytes::shared(two));
        assert_eq!(one, b"one");
        assert!(one.is_shared());
        assert_eq!(format!("{two:?}"), "b\"two\"");
        assert_eq!(two.clone().into_vec(), b"two".to_vec());
    }

    #[test]
    fn owned_bytes_become_the_same_vector() {
        let v = b"value".to_vec();
        let ptr = v.as_ptr();
        let owned = ValueBytes::from(v);
        assert!(!owned.is_shared());
        assert_eq!(owned, b"value".to_vec());
        let back = owned.into_vec();
        assert_eq!(back.as_ptr(), ptr, "no copy");
    }

    #[test]
    fn a_pooled_value_becomes_its_vector_or_goes_back_to_the_pool() {
        let v = Vec::with_capacity(64 << 10);
        let ptr = v.as_ptr();
        let pooled = ValueBytes::pooled(v);
        assert!(!pooled.is_shared());
        let back = pooled.into_vec();
        assert_eq!(back.as_ptr(), ptr, "no copy, not pooled");
        let mut v = Vec::with_capacity(64 << 10);
        v.extend_from_slice(b"pooled bytes");
        let pooled = ValueBytes::pooled(v);
        assert_eq!(pooled, b"pooled bytes");
        assert_eq!(pooled.clone(), pooled);
        // Dropped, its vector goes to the pool (or is freed when the pool is busy or full:
        // other tests share it, so only the bytes above are asserted).
        drop(pooled);
    }
}
