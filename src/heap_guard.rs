//! A block kept above the values a multi-key read hands out, so that freeing them does not
//! shrink the heap.
//!
//! Why: a caller frees a multi-get's values together, soon after the call. With glibc's
//! malloc, values that border the top of the heap join it when freed; once the top is over
//! the trim threshold (128 KiB by default) glibc gives its pages back to the kernel
//! (`madvise`, `brk`), and the next call's values fault every page in again: 721 minor page
//! faults per `get_multi` of 100 values of 30 KB, up to half of the call's time in
//! `mcpool bench bulk` (docs/performance.md). A block of this thread's kept above the values stops the join:
//! the freed values become one free chunk below it, which the next call's values are carved
//! from, with no system call and no fault.
//!
//! A heuristic about glibc's layout, as the Perl binding's hash guard is: with another
//! allocator, or where the block cannot be placed above, nothing changes but the block's
//! 16 KiB per thread. Only reads that hand out at least [`GUARDED_BYTES`] look at it; a
//! smaller read cannot grow the top past the trim threshold by itself.

use std::cell::RefCell;

/// The size of a thread's guard block: above glibc's per-thread cache and small bins (a
/// request this size is served from the large bins or the top, not from a recycled small
/// block somewhere below).
const GUARD_SIZE: usize = 16 * 1024;

/// The least a read must hand out before its values are guarded (half glibc's default trim
/// threshold).
pub const GUARDED_BYTES: usize = 64 * 1024;

/// How many blocks one read asks for at most before it gives up placing the guard.
const GUARD_TRIES: usize = 8;

thread_local! {
    /// This thread's guard block, kept until a read's values end above it.
    static GUARD: RefCell<Option<Vec<u8>>> = const { RefCell::new(None) };
}

/// The memory one read handed out to its caller: where its highest value ends and how many
/// bytes it holds. Note each value with [`Handed::note`], then call [`Handed::guard`] once
/// the read has made every value.
#[derive(Clone, Copy, Debug, Default)]
pub struct Handed {
    end: usize,
    bytes: usize,
}

impl Handed {
    /// A value of `len` bytes was made at `ptr` for the caller.
    #[inline]
    pub fn note(&mut self, ptr: *const u8, len: usize) {
        self.bytes += len;
        self.end = self.end.max((ptr as usize).saturating_add(len));
    }

    /// Keeps this thread's guard block above the values noted, when they add up to
    /// [`GUARDED_BYTES`] or more. When the block is below them, a new one is asked for: a
    /// free chunk below the values may serve the first requests (one the values were too
    /// large for), so up to 8 blocks are held until one comes from above them.
    /// The ones below are then freed, and so is the old block; when none came from above,
    /// the old block stays.
    pub fn guard(self) {
        if self.bytes < GUARDED_BYTES {
            return;
        }
        let above = |b: &Vec<u8>| b.as_ptr() as usize >= self.end;
        // A thread being torn down (its thread-locals gone) has nothing to keep.
        let _ = GUARD.try_with(|cell| {
            let Ok(mut guard) = cell.try_borrow_mut() else {
                return;
            };
            if guard.as_ref().is_some_and(above) {
                return;
            }
            // Blocks that came from below stay allocated until the loop ends, so that each
            // try takes a different place.
            let mut held = Vec::new();
            for _ in 0..GUARD_TRIES {
                // Capacity only: the block is never read or written.
                let block = Vec::<u8>::with_capacity(GUARD_SIZE);
                if above(&block) {
                    *guard = Some(block);
                    return;
                }
                held.push(block);
            }
        });
    }
}

/// Whether this thread's guard block lies above `ptr` (for tests).
#[cfg(test)]
fn guard_above(ptr: *const u8) -> bool {
    GUARD.with(|cell| {
        cell.borrow()
            .as_ref()
            .is_some_and(|b| b.as_ptr() as usize >= ptr as usize)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_read_makes_no_guard() {
        std::thread::spawn(|| {
            let v = vec![1u8; 1000];
            let mut h = Handed::default();
            h.note(v.as_ptr(), v.len());
            h.guard();
            GUARD.with(|cell| assert!(cell.borrow().is_none()));
        })
        .join()
        .unwrap();
    }

    #[test]
    fn the_guard_ends_up_above_a_large_reads_values() {
        std::thread::spawn(|| {
            let values: Vec<Vec<u8>> = (0..50).map(|_| vec![7u8; 30_000]).collect();
            let mut h = Handed::default();
            for v in &values {
                h.note(v.as_ptr(), v.len());
            }
            h.guard();
            // Under glibc the block comes from the top of the heap, above every value; with
            // another allocator it may not, and then no block is kept at all.
            let top = values.iter().map(|v| v.as_ptr()).max().unwrap();
            GUARD.with(|cell| {
                if let Some(b) = cell.borrow().as_ref() {
                    assert!(b.as_ptr() as usize > top as usize);
                }
            });
            if cfg!(all(target_os = "linux", target_env = "gnu")) {
                assert!(guard_above(top), "glibc: the guard lies above the values");
            }
        })
        .join()
        .unwrap();
    }
}
