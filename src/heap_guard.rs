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
//! The same join costs small values too. A freed block larger than glibc's per-thread cache
//! keeps (1 KiB: a 100-entry result vector, say) that borders the top joins it, and once the
//! top is over 64 KiB glibc consolidates every small freed block into it: the next call's
//! values are then each carved from the top, about three times the cost of reusing a freed
//! one (a `get_multi` of 100 small values: 109.6k instructions per call without the guard,
//! 96.2k with it; `get_multi_each`, no value allocated, 66.3k).
//!
//! A heuristic about glibc's layout, as the Perl binding's hash guard is: with another
//! allocator, or where the block cannot be placed above, nothing changes but the block's
//! 16 KiB per thread. Only reads that hand out at least [`GUARDED_BYTES`] look at it; what
//! a smaller read frees stays in glibc's per-thread cache.

use std::cell::RefCell;

/// The size of a thread's guard block: above glibc's per-thread cache and small bins (a
/// request this size is served from the large bins or the top, not from a recycled small
/// block somewhere below).
const GUARD_SIZE: usize = 16 * 1024;

/// The least a read must hand out before its values are guarded: about the largest block
/// glibc's per-thread cache keeps (1,032 bytes); larger ones may join the top when freed.
pub const GUARDED_BYTES: usize = 1024;

/// How many blocks one read asks for at most before it gives up placing the guard.
const GUARD_TRIES: usize = 8;

/// How many reads skip the guard after a read could not place it (values from an allocator
/// that does not carve from a top below them: mimalloc, Python's object arenas): at most
/// one read in 64 then pays the tries.
const SKIP_AFTER_MISS: u32 = 63;

/// This thread's guard block, kept until a read's values end above it, and how many reads
/// are still to skip it (see [`SKIP_AFTER_MISS`]).
struct Guard {
    block: Option<Vec<u8>>,
    skip: u32,
}

thread_local! {
    static GUARD: RefCell<Guard> = const { RefCell::new(Guard { block: None, skip: 0 }) };
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
    /// the old block stays, and the next 63 reads do not try.
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
            if guard.block.as_ref().is_some_and(above) {
                return;
            }
            if guard.skip > 0 {
                guard.skip -= 1;
                return;
            }
            // Blocks that came from below stay allocated until the loop ends, so that each
            // try takes a different place.
            let mut held = Vec::new();
            for _ in 0..GUARD_TRIES {
                // Capacity only: the block is never read or written.
                let block = Vec::<u8>::with_capacity(GUARD_SIZE);
                if above(&block) {
                    guard.block = Some(block);
                    return;
                }
                held.push(block);
            }
            guard.skip = SKIP_AFTER_MISS;
        });
    }
}

/// Whether this thread's guard block lies above `ptr`; then the skipping after a miss ends
/// (for tests: the next read tries again).
#[cfg(test)]
pub(crate) fn guard_above(ptr: *const u8) -> bool {
    GUARD.with(|cell| {
        let mut g = cell.borrow_mut();
        g.skip = 0;
        g.block
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
            GUARD.with(|cell| assert!(cell.borrow().block.is_none()));
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_read_whose_guard_cannot_be_placed_makes_the_next_63_skip_it() {
        std::thread::spawn(|| {
            // Values noted as ending near the top of the address space: no block lies above.
            let mut h = Handed::default();
            h.note((usize::MAX - 8192) as *const u8, 4096);
            let skip = || GUARD.with(|cell| cell.borrow().skip);
            h.guard();
            assert_eq!(skip(), SKIP_AFTER_MISS, "a miss starts the skipping");
            for left in (0..SKIP_AFTER_MISS).rev() {
                h.guard();
                assert_eq!(skip(), left);
            }
            h.guard();
            assert_eq!(
                skip(),
                SKIP_AFTER_MISS,
                "the 64th read tries again, and misses"
            );
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
                if let Some(b) = cell.borrow().block.as_ref() {
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
