//! Buffers of large decoded values, handed back when their value is dropped and reused by
//! the next value decoded on any thread (most recently freed first).
//!
//! Why: a multi-get of 100 compressed values of 30 KB inflates 3 MB into new vectors per
//! call. glibc serves each thread from an arena of its own, so with 10 threads reading, 10
//! such sets of blocks take turns in the cache (and arenas grow and shrink under them): the
//! plain `get_multi` took 1.38 times the CPU of `get_multi_each` (which inflates into one
//! 30 KB buffer), and less with `MALLOC_ARENA_MAX=1`, where the next call reuses the blocks
//! another thread just freed. Setting the process's allocator is not a library's business;
//! this pool does the same for the values it makes: 1.14 times (docs/performance.md, "Large
//! values reuse freed buffers").
//!
//! Never waits: a taker or giver that finds the pool locked (another thread, or a fork
//! taken while a thread held it) allocates or frees as if there were no pool. It holds at
//! most [`POOL_BYTES`] of capacity, buffers of [`MIN_POOLED`] to [`MAX_POOLED`] bytes.

use std::sync::Mutex;

/// The most capacity the pool holds, all buffers together: ten threads' calls of 100 values
/// of 30 KB (16 MiB kept too few of them to help at ten threads; 64 MiB did no better).
pub(crate) const POOL_BYTES: usize = 32 << 20;

/// Buffers smaller than this are freed, not kept (glibc's per-thread cache serves them).
pub(crate) const MIN_POOLED: usize = 4 << 10;

/// Buffers larger than this are freed, not kept.
pub(crate) const MAX_POOLED: usize = 1 << 20;

/// The free buffers, most recently freed last, and their capacity in all.
struct Pool {
    free: Vec<Vec<u8>>,
    bytes: usize,
}

static POOL: Mutex<Pool> = Mutex::new(Pool {
    free: Vec::new(),
    bytes: 0,
});

/// An empty vector for a large decoded value: the most recently freed buffer, or a new
/// (unallocated) vector when there is none or the pool is busy.
pub(crate) fn take() -> Vec<u8> {
    let Ok(mut pool) = POOL.try_lock() else {
        return Vec::new();
    };
    match pool.free.pop() {
        Some(buf) => {
            pool.bytes -= buf.capacity();
            buf
        }
        None => Vec::new(),
    }
}

/// Keeps `buf` (emptied) for the next [`take`] when its capacity is in the pooled range and
/// the pool has room; frees it otherwise.
pub(crate) fn give(mut buf: Vec<u8>) {
    let cap = buf.capacity();
    if !(MIN_POOLED..=MAX_POOLED).contains(&cap) {
        return;
    }
    let Ok(mut pool) = POOL.try_lock() else {
        return;
    };
    if pool.bytes + cap > POOL_BYTES {
        return;
    }
    buf.clear();
    if pool.free.try_reserve(1).is_err() {
        return;
    }
    pool.free.push(buf);
    pool.bytes += cap;
}

/// How many buffers and bytes of capacity the pool holds now.
#[cfg(test)]
fn held() -> (usize, usize) {
    match POOL.lock() {
        Ok(pool) => (pool.free.len(), pool.bytes),
        Err(poisoned) => {
            let pool = poisoned.into_inner();
            (pool.free.len(), pool.bytes)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pool is process-wide: tests that count it run one at a time.
    static SERIAL: Mutex<()> = Mutex::new(());

    fn drain() {
        while take().capacity() > 0 {}
    }

    #[test]
    fn the_last_buffer_given_is_the_first_taken_and_small_or_huge_ones_are_freed() {
        let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        drain();
        let a = Vec::<u8>::with_capacity(8 << 10);
        let mut b = Vec::<u8>::with_capacity(16 << 10);
        b.extend_from_slice(b"old bytes");
        let b_ptr = b.as_ptr();
        give(a);
        give(b);
        give(Vec::with_capacity(MIN_POOLED - 1));
        give(Vec::with_capacity(MAX_POOLED + 1));
        assert_eq!(held(), (2, (8 << 10) + (16 << 10)));
        let got = take();
        assert_eq!(got.as_ptr(), b_ptr, "most recently freed first");
        assert!(got.is_empty(), "given back empty");
        assert_eq!(take().capacity(), 8 << 10);
        assert_eq!(take().capacity(), 0, "empty pool: a new vector");
        assert_eq!(held(), (0, 0));
    }

    #[test]
    fn the_pool_holds_at_most_its_bytes() {
        let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        drain();
        for _ in 0..(POOL_BYTES / MAX_POOLED) + 3 {
            give(Vec::with_capacity(MAX_POOLED));
        }
        let (n, bytes) = held();
        assert_eq!(n, POOL_BYTES / MAX_POOLED);
        assert!(bytes <= POOL_BYTES);
        drain();
    }

    #[test]
    fn a_busy_pool_neither_waits_nor_keeps() {
        let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        drain();
        let guard = POOL.lock().unwrap();
        give(Vec::with_capacity(8 << 10));
        assert_eq!(take().capacity(), 0);
        drop(guard);
        assert_eq!(held(), (0, 0));
    }
}
