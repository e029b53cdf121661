//! A process-wide pool of byte buffers: a buffer freed on one thread is reused by the next
//! taker on any thread, most recently freed first.
//!
//! Why: memory just written and freed is still in the cache. A thread that keeps its own
//! buffer (or glibc, which serves each thread from an arena of its own) makes ten threads
//! take turns with ten sets of buffers, each cold by the time its thread runs again. One
//! pool, last in first out, hands the next call the buffer the previous call (on whatever
//! thread) just freed. The core pools its large decoded values (`value_pool`: 1.38 → 1.14
//! times the CPU of the zero-copy read, docs/performance.md "Large values reuse freed
//! buffers"); the C ABI pools its result sets' value buffers.
//!
//! Never waits: a taker or giver that finds the pool locked (another thread, or a fork
//! taken while a thread held it) allocates or frees as if there were no pool. A pool holds
//! buffers of a range of capacities and at most a given number of bytes in all.
//!
//! Public for the C ABI crate (as [`crate::heap_guard`] is), not a feature of its own: Rust
//! callers meet it through `get_multi`'s large values, C callers through
//! `mcpool_client_get_multi`'s result sets; the Python, Perl and Java bindings read through
//! `mcpool_client_get_multi_into`, straight into their own objects, with no buffer of ours
//! in between to pool.

use std::sync::Mutex;

/// A pool of free byte buffers; see the module documentation. Made `const`, for a
/// `static`.
pub struct BufferPool {
    free: Mutex<Free>,
    min: usize,
    max: usize,
    limit: usize,
}

/// The free buffers, most recently freed last, and their capacity in all.
struct Free {
    buffers: Vec<Vec<u8>>,
    bytes: usize,
}

impl BufferPool {
    /// An empty pool that keeps buffers of `min` to `max` bytes of capacity, at most
    /// `limit` bytes of them in all.
    pub const fn new(min: usize, max: usize, limit: usize) -> BufferPool {
        BufferPool {
            free: Mutex::new(Free {
                buffers: Vec::new(),
                bytes: 0,
            }),
            min,
            max,
            limit,
        }
    }

    /// An empty vector: the most recently freed buffer, or a new (unallocated) vector when
    /// there is none or the pool is busy.
    pub fn take(&self) -> Vec<u8> {
        let Ok(mut free) = self.free.try_lock() else {
            return Vec::new();
        };
        match free.buffers.pop() {
            Some(buf) => {
                free.bytes -= buf.capacity();
                buf
            }
            None => Vec::new(),
        }
    }

    /// An empty vector of at least `capacity` bytes: the most recently freed buffer when it
    /// is large enough (a smaller one stays pooled), a new one otherwise. Never copies.
    pub fn take_at_least(&self, capacity: usize) -> Vec<u8> {
        if let Ok(mut free) = self.free.try_lock() {
            if free
                .buffers
                .last()
                .is_some_and(|b| b.capacity() >= capacity)
            {
                if let Some(buf) = free.buffers.pop() {
                    free.bytes -= buf.capacity();
                    return buf;
                }
            }
        }
        Vec::with_capacity(capacity)
    }

    /// Keeps `buf` (emptied) for the next taker when its capacity is in the pool's range and
    /// the pool has room; frees it otherwise.
    pub fn give(&self, mut buf: Vec<u8>) {
        let cap = buf.capacity();
        if !(self.min..=self.max).contains(&cap) {
            return;
        }
        let Ok(mut free) = self.free.try_lock() else {
            return;
        };
        if free.bytes + cap > self.limit || free.buffers.try_reserve(1).is_err() {
            return;
        }
        buf.clear();
        free.buffers.push(buf);
        free.bytes += cap;
    }

    /// How many buffers and bytes of capacity the pool holds now.
    pub fn held(&self) -> (usize, usize) {
        let free = self.free.lock().unwrap_or_else(|e| e.into_inner());
        (free.buffers.len(), free.bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_buffer_given_is_the_first_taken_and_small_or_huge_ones_are_freed() {
        let pool = BufferPool::new(4 << 10, 1 << 20, 32 << 20);
        let a = Vec::<u8>::with_capacity(8 << 10);
        let mut b = Vec::<u8>::with_capacity(16 << 10);
        b.extend_from_slice(b"old bytes");
        let b_ptr = b.as_ptr();
        pool.give(a);
        pool.give(b);
        pool.give(Vec::with_capacity((4 << 10) - 1));
        pool.give(Vec::with_capacity((1 << 20) + 1));
        assert_eq!(pool.held(), (2, (8 << 10) + (16 << 10)));
        let got = pool.take();
        assert_eq!(got.as_ptr(), b_ptr, "most recently freed first");
        assert!(got.is_empty(), "given back empty");
        assert_eq!(pool.take().capacity(), 8 << 10);
        assert_eq!(pool.take().capacity(), 0, "empty pool: a new vector");
        assert_eq!(pool.held(), (0, 0));
    }

    #[test]
    fn take_at_least_passes_a_buffer_too_small_by_without_copying() {
        let pool = BufferPool::new(1, 1 << 20, 1 << 30);
        pool.give(Vec::with_capacity(64 << 10));
        pool.give(Vec::with_capacity(8 << 10));
        let big = pool.take_at_least(16 << 10);
        assert!(big.capacity() >= 16 << 10 && big.is_empty());
        assert_eq!(
            pool.held(),
            (2, (64 << 10) + (8 << 10)),
            "the small one stays"
        );
        let small = pool.take_at_least(8 << 10);
        assert_eq!(small.capacity(), 8 << 10);
        assert_eq!(pool.held(), (1, 64 << 10));
    }

    #[test]
    fn a_pool_holds_at_most_its_bytes() {
        let pool = BufferPool::new(1, 1 << 20, 8 << 20);
        for _ in 0..11 {
            pool.give(Vec::with_capacity(1 << 20));
        }
        assert_eq!(pool.held(), (8, 8 << 20));
    }

    #[test]
    fn a_busy_pool_neither_waits_nor_keeps() {
        let pool = BufferPool::new(1, 1 << 20, 8 << 20);
        let guard = pool.free.lock().unwrap();
        pool.give(Vec::with_capacity(8 << 10));
        assert_eq!(pool.take().capacity(), 0);
        assert_eq!(pool.take_at_least(10).capacity(), 10);
        drop(guard);
        assert_eq!(pool.held(), (0, 0));
    }
}
