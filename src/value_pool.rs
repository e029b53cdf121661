//! Buffers of large decoded values, handed back when their value is dropped and reused by
//! the next value decoded on any thread (a [`BufferPool`]).
//!
//! Why: a multi-get of 100 compressed values of 30 KB inflates 3 MB into new vectors per
//! call. glibc serves each thread from an arena of its own, so with 10 threads reading, 10
//! such sets of blocks take turns in the cache (and arenas grow and shrink under them): the
//! plain `get_multi` took 1.38 times the CPU of `get_multi_each` (which inflates into one
//! 30 KB buffer), and less with `MALLOC_ARENA_MAX=1`, where the next call reuses the blocks
//! another thread just freed. Setting the process's allocator is not a library's business;
//! this pool does the same for the values it makes: 1.14 times (docs/performance.md, "Large
//! values reuse freed buffers").

use crate::buffer_pool::BufferPool;

/// The most capacity the pool holds, all buffers together: ten threads' calls of 100 values
/// of 30 KB (16 MiB kept too few of them to help at ten threads; 64 MiB did no better).
const POOL_BYTES: usize = 32 << 20;

/// Buffers smaller than this are freed, not kept (glibc's per-thread cache serves them).
const MIN_POOLED: usize = 4 << 10;

/// Buffers larger than this are freed, not kept.
const MAX_POOLED: usize = 1 << 20;

static POOL: BufferPool = BufferPool::new(MIN_POOLED, MAX_POOLED, POOL_BYTES);

/// An empty vector for a large decoded value: the most recently freed buffer, or a new
/// (unallocated) vector when there is none or the pool is busy.
pub(crate) fn take() -> Vec<u8> {
    POOL.take()
}

/// Keeps `buf` for the next [`take`] when it is 4 KiB to 1 MiB and the pool has room.
pub(crate) fn give(buf: Vec<u8>) {
    POOL.give(buf)
}
