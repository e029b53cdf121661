//! One buffer that a multi-key read fills with its small values, and the counted slices of it
//! that the read hands out ([`crate::ValueBytes`]).
//!
//! Why not `Arc<Vec<u8>>`: an `Arc` can only be shared once its vector is complete, so each
//! value's slice had to wait in a list until the end of the read and then be made in a second
//! pass, each with its own atomic increment of the count (about 50 instructions and one locked
//! operation per value of a `get_multi`: docs/performance.md, "Small values share one
//! buffer"). Here the buffer's head is allocated first and never moves while the bytes grow
//! behind it, so a value's slice is made as soon as its bytes are in, and the count is kept
//! with plain loads and stores while the one thread that fills the buffer holds every slice.
//! Once filled ([`SharedFill::finish`]), the bytes never change and the slices are `Send` and
//! `Sync`, counted atomically as an `Arc` is.
#![allow(unsafe_code)] // a counted buffer of our own: raw pointers to its head

use std::ptr::NonNull;
use std::sync::atomic::{fence, AtomicUsize, Ordering};

/// The buffer's head: the count of its holders (the filler and every slice) and its bytes.
struct Head {
    count: AtomicUsize,
    bytes: Vec<u8>,
}

/// The most holders a buffer may have (as `Arc`'s limit): past it the process aborts rather
/// than let the count wrap.
const MAX_COUNT: usize = isize::MAX as usize;

/// The filling side of a shared buffer: appends values and makes their slices. Its own hold
/// on the buffer ends with [`SharedFill::finish`] (or its drop).
pub(crate) struct SharedFill {
    head: NonNull<Head>,
}

/// `len` bytes from `start` of a shared buffer, holding the buffer while it lives.
pub(crate) struct SharedSlice {
    head: NonNull<Head>,
    start: u32,
    len: u32,
}

// SAFETY: a slice only reads its buffer's bytes, which no one changes once the buffer is
// filled (before that, every slice stays on the filling thread: `SharedFill::push`'s
// contract); its count is atomic, as `Arc<Vec<u8>>`'s is, which is `Send` and `Sync`.
unsafe impl Send for SharedSlice {}
// SAFETY: as for `Send`: shared reads of bytes that no longer change, an atomic count.
unsafe impl Sync for SharedSlice {}

impl SharedFill {
    /// An empty buffer with room for `capacity` bytes.
    pub(crate) fn with_capacity(capacity: usize) -> SharedFill {
        let head = Box::new(Head {
            count: AtomicUsize::new(1),
            bytes: Vec::with_capacity(capacity),
        });
        SharedFill {
            head: NonNull::from(Box::leak(head)),
        }
    }

    /// Appends `value` and returns its slice, or `None` (nothing appended) when the buffer
    /// would pass `u32::MAX` bytes.
    ///
    /// # Safety
    ///
    /// Until [`SharedFill::finish`], no slice of this buffer may be read, cloned or leave
    /// the calling thread (it may be dropped): the bytes behind it may move as they grow,
    /// and its count is kept with plain loads and stores.
    #[inline]
    pub(crate) unsafe fn push(&mut self, value: &[u8]) -> Option<SharedSlice> {
        // SAFETY: the filler is the only one to change the head, and by this function's
        // contract no slice reads it meanwhile: this is the only reference.
        let head = unsafe { self.head.as_mut() };
        let start = u32::try_from(head.bytes.len()).ok()?;
        let len = u32::try_from(value.len()).ok()?;
        start.checked_add(len)?;
        head.bytes.extend_from_slice(value);
        // No other thread holds a slice yet (the contract): a plain increment, no lock.
        let count = head.count.load(Ordering::Relaxed);
        if count >= MAX_COUNT {
            std::process::abort();
        }
        head.count.store(count + 1, Ordering::Relaxed);
        Some(SharedSlice {
            head: self.head,
            start,
            len,
        })
    }

    /// Ends the filling: gives back the room the buffer grew and did not use when it is
    /// more than its bytes, returns where the bytes are and how many there are (for
    /// [`crate::heap_guard::Handed::note`]), and drops the filler's hold on the buffer
    /// (freeing it when no slice was made).
    pub(crate) fn finish(mut self) -> (*const u8, usize) {
        // SAFETY: the filler's head, with no slice reading it yet (`push`'s contract).
        let bytes = &mut unsafe { self.head.as_mut() }.bytes;
        if bytes.capacity() > 2 * bytes.len() {
            bytes.shrink_to_fit();
        }
        (bytes.as_ptr(), bytes.len())
        // The filler's hold ends with its drop, here.
    }
}

impl Drop for SharedFill {
    fn drop(&mut self) {
        release(self.head);
    }
}

/// Drops one hold on the buffer at `head`, and frees it with the last.
#[inline]
fn release(head: NonNull<Head>) {
    // SAFETY: the caller held the buffer, so it is still allocated.
    let count = &unsafe { head.as_ref() }.count;
    if count.fetch_sub(1, Ordering::Release) != 1 {
        return;
    }
    // Every other holder's use of the bytes happens before the free (as in `Arc`'s drop).
    fence(Ordering::Acquire);
    // SAFETY: the last hold is gone; the head came from `Box::leak` in `with_capacity`.
    drop(unsafe { Box::from_raw(head.as_ptr()) });
}

impl SharedSlice {
    /// The bytes.
    #[inline]
    pub(crate) fn as_slice(&self) -> &[u8] {
        // SAFETY: this slice holds the buffer, and its bytes no longer change (the filling
        // is over before a slice is read: `SharedFill::push`'s contract).
        let bytes = &unsafe { self.head.as_ref() }.bytes;
        let start = self.start as usize;
        &bytes[start..start + self.len as usize]
    }
}

impl Clone for SharedSlice {
    fn clone(&self) -> SharedSlice {
        // SAFETY: this slice holds the buffer.
        let count = &unsafe { self.head.as_ref() }.count;
        // A new holder from an existing one needs no ordering (as `Arc::clone`).
        if count.fetch_add(1, Ordering::Relaxed) >= MAX_COUNT {
            std::process::abort();
        }
        SharedSlice {
            head: self.head,
            start: self.start,
            len: self.len,
        }
    }
}

impl Drop for SharedSlice {
    #[inline]
    fn drop(&mut self) {
        release(self.head);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The count of the buffer behind `s` (a test's view into the head).
    fn holders(s: &SharedSlice) -> usize {
        // SAFETY: `s` holds the buffer.
        unsafe { s.head.as_ref() }.count.load(Ordering::Relaxed)
    }

    #[test]
    fn slices_read_their_own_bytes_and_the_last_one_frees_the_buffer() {
        let mut fill = SharedFill::with_capacity(4);
        // SAFETY: no slice is read or cloned before `finish`.
        let (one, two, three) = unsafe {
            (
                fill.push(b"one").unwrap(),
                fill.push(b"two").unwrap(),
                fill.push(b"three").unwrap(),
            )
        };
        // SAFETY: as above; dropping before `finish` is allowed.
        let dropped = unsafe { fill.push(b"dropped") }.unwrap();
        drop(dropped);
        let (_, len) = fill.finish();
        assert_eq!(len, 18);
        assert_eq!(one.as_slice(), b"one");
        assert_eq!(two.as_slice(), b"two");
        assert_eq!(three.as_slice(), b"three");
        assert_eq!(
            holders(&one),
            3,
            "the filler's hold and the dropped slice's are gone"
        );
        let copy = three.clone();
        assert_eq!(holders(&one), 4);
        let elsewhere = std::thread::spawn(move || copy.as_slice().to_vec());
        assert_eq!(elsewhere.join().unwrap(), b"three");
        drop((one, two));
        assert_eq!(holders(&three), 1);
        assert_eq!(three.as_slice(), b"three");
        drop(three); // frees (Miri/ASAN would catch a double free or a leak)
    }

    #[test]
    fn an_unused_buffer_is_freed_with_its_filler() {
        let mut fill = SharedFill::with_capacity(1 << 20);
        // SAFETY: the slice is only dropped before `finish`.
        drop(unsafe { fill.push(b"x") });
        drop(fill);
        let fill = SharedFill::with_capacity(0);
        assert_eq!(fill.finish().1, 0);
    }
}
