//! Owned results handed to C: a single item, a multi-get result set and per-server results
//! (version, stats). Each is an opaque handle with accessors and one `_free` function; the
//! pointers an accessor returns point into the handle and stay valid until it is freed.

use super::landing::{landingpad, landingpad_void, Failure, Outcome};
use super::ptr;
use super::status::mcpool_status::{self, MCPOOL_NOT_FOUND, MCPOOL_OK, MCPOOL_OUT_OF_RANGE};
use mcpool::buffer_pool::BufferPool;
use mcpool::item::Item;
use mcpool::sink::Sink;
use std::cell::Cell;
use std::ffi::c_char;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::thread::LocalKey;

/// One value read from the cache: its bytes, flags and CAS unique. Made by `mcpool_client_get`
/// and its kin; read with `mcpool_item_data`, `_len`, `_flags`, `_cas`; freed with
/// `mcpool_item_free`. Immutable, so it may be read from any thread.
/// It owns its memory and refers to no client: it stays valid after `mcpool_client_free` of
/// the client that made it, until its own `_free`.
///
/// One allocation: the item's fields, then the value's bytes (copied once, exactly sized).
pub struct mcpool_item {
    len: usize,
    cas: u64,
    flags: u32,
}

impl mcpool_item {
    /// The layout of an item of `len` value bytes; `None` past `isize::MAX`.
    fn layout(len: usize) -> Option<std::alloc::Layout> {
        let size = std::mem::size_of::<mcpool_item>().checked_add(len)?;
        std::alloc::Layout::from_size_align(size, std::mem::align_of::<mcpool_item>()).ok()
    }

    /// A new item holding a copy of `value`: one allocation of its exact size.
    pub(crate) fn new(value: &[u8], flags: u32, cas: Option<u64>) -> *mut mcpool_item {
        // A value in memory is far below isize::MAX, so the layout exists.
        let layout = Self::layout(value.len()).unwrap_or_else(|| {
            std::alloc::handle_alloc_error(std::alloc::Layout::new::<mcpool_item>())
        });
        // SAFETY: the layout has a non-zero size (the header's).
        let p = unsafe { std::alloc::alloc(layout) }.cast::<mcpool_item>();
        if p.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        // SAFETY: `p` is a fresh allocation of the header and `value.len()` bytes after it,
        // aligned for the header; `value` cannot overlap it.
        unsafe {
            p.write(mcpool_item {
                len: value.len(),
                cas: cas.unwrap_or(0),
                flags,
            });
            std::ptr::copy_nonoverlapping(value.as_ptr(), Self::bytes(p), value.len());
        }
        p
    }

    pub(crate) fn into_raw(item: Item) -> *mut mcpool_item {
        Self::new(&item.value, item.flags, item.cas)
    }

    /// Where the value's bytes start.
    ///
    /// # Safety
    /// `item` was made by `mcpool_item::new` and is live.
    unsafe fn bytes(item: *const mcpool_item) -> *mut u8 {
        // SAFETY: the bytes follow the header within the same allocation.
        unsafe {
            item.cast::<u8>()
                .cast_mut()
                .add(std::mem::size_of::<mcpool_item>())
        }
    }

    /// Frees an item.
    ///
    /// # Safety
    /// `item` was made by `mcpool_item::new`, is not used afterwards, and is freed once.
    pub(crate) unsafe fn free(item: *mut mcpool_item) {
        // SAFETY: the caller promises a live item; its length gives the layout it was
        // allocated with.
        unsafe {
            if let Some(layout) = Self::layout((*item).len) {
                std::alloc::dealloc(item.cast(), layout);
            }
        }
    }
}

/// The value's bytes (binary, not NUL-terminated); `mcpool_item_len` bytes are readable.
/// NULL for a NULL item. Ownership: points into `item`; valid until `mcpool_item_free(item)`.
///
/// # Safety
/// `item` is NULL or a live item.
#[no_mangle]
pub unsafe extern "C" fn mcpool_item_data(item: *const mcpool_item) -> *const u8 {
    if item.is_null() {
        return std::ptr::null();
    }
    // SAFETY: the caller promises a non-NULL `item` is live.
    unsafe { mcpool_item::bytes(item) }
}

/// The value's length in bytes (0 for a NULL item).
///
/// # Safety
/// `item` is NULL or a live item.
#[no_mangle]
pub unsafe extern "C" fn mcpool_item_len(item: *const mcpool_item) -> usize {
    // SAFETY: the caller promises a non-NULL `item` is live.
    unsafe { item.as_ref() }.map_or(0, |i| i.len)
}

/// The item's flags, as stored by the writer (the compression bit that mcpool manages is
/// cleared). 0 for a NULL item.
///
/// # Safety
/// `item` is NULL or a live item.
#[no_mangle]
pub unsafe extern "C" fn mcpool_item_flags(item: *const mcpool_item) -> u32 {
    // SAFETY: the caller promises a non-NULL `item` is live.
    unsafe { item.as_ref() }.map_or(0, |i| i.flags)
}

/// The item's CAS unique, for `mcpool_client_cas`: set by `gets`/`gats`, 0 for `get`/`gat`
/// and for a NULL item.
///
/// # Safety
/// `item` is NULL or a live item.
#[no_mangle]
pub unsafe extern "C" fn mcpool_item_cas(item: *const mcpool_item) -> u64 {
    // SAFETY: the caller promises a non-NULL `item` is live.
    unsafe { item.as_ref() }.map_or(0, |i| i.cas)
}

/// Frees an item. NULL is ignored.
///
/// # Safety
/// `item` is NULL or an item not yet freed; it must not be used afterwards.
#[no_mangle]
pub unsafe extern "C" fn mcpool_item_free(item: *mut mcpool_item) {
    landingpad_void(|| {
        if !item.is_null() {
            // SAFETY: made by `mcpool_item::new`, freed once (the caller's promise).
            unsafe { mcpool_item::free(item) };
        }
    })
}

/// Collects the item of one key read on its own (`mcpool_client_get` and its kin): the
/// value copied once, from the read buffer (or the inflated copy) into the item's block.
pub(crate) struct OneItem {
    pub(crate) item: *mut mcpool_item,
    pub(crate) result: mcpool::error::Result<bool>,
    /// Whether the CAS unique is kept (`gets`, `gats`; `get` and `gat` do not ask for it).
    pub(crate) keep_cas: bool,
}

impl OneItem {
    pub(crate) fn new(keep_cas: bool) -> OneItem {
        OneItem {
            item: std::ptr::null_mut(),
            result: Ok(false),
            keep_cas,
        }
    }

    /// The item on a hit (the caller's to free), `None` on a miss, or the key's error.
    pub(crate) fn finish(mut self) -> mcpool::error::Result<Option<*mut mcpool_item>> {
        let item = std::mem::replace(&mut self.item, std::ptr::null_mut());
        match std::mem::replace(&mut self.result, Ok(false)) {
            Ok(true) if !item.is_null() => Ok(Some(item)),
            other => {
                if !item.is_null() {
                    // SAFETY: made by `mcpool_item::new` in `value`, never handed out.
                    unsafe { mcpool_item::free(item) };
                }
                other.map(|_| None)
            }
        }
    }
}

impl Drop for OneItem {
    fn drop(&mut self) {
        if !self.item.is_null() {
            // SAFETY: made by `mcpool_item::new` in `value`, never handed out.
            unsafe { mcpool_item::free(self.item) };
        }
    }
}

impl Sink for OneItem {
    fn value(
        &mut self,
        _i: usize,
        value: &[u8],
        flags: u32,
        cas: Option<u64>,
    ) -> mcpool::error::Result<()> {
        if !self.item.is_null() {
            // SAFETY: made by `mcpool_item::new` below, never handed out.
            unsafe { mcpool_item::free(self.item) };
        }
        self.item = mcpool_item::new(value, flags, cas.filter(|_| self.keep_cas));
        Ok(())
    }
    fn result(&mut self, _i: usize, result: mcpool::error::Result<bool>) {
        self.result = result;
    }
}

/// What one key of a multi-get came to.
#[derive(Clone, Copy)]
enum State {
    Miss,
    /// Its value is `multi.data[at..at + len]`.
    Hit,
    /// Its error is `multi.failures[at]`.
    Failed,
}

/// One key's entry in a multi-get result.
#[derive(Clone, Copy)]
struct Slot {
    at: usize,
    len: usize,
    cas: u64,
    flags: u32,
    state: State,
}

const MISS: Slot = Slot {
    at: 0,
    len: 0,
    cas: 0,
    flags: 0,
    state: State::Miss,
};

/// A hit of a multi-get: its value, flags and CAS unique (0 unless asked for).
pub(crate) type Hit<'m> = (&'m [u8], u32, u64);

/// The result of a multi-get: one entry per key asked, in the caller's order. Made by
/// `mcpool_client_get_multi`; walked with `mcpool_multi_len` and `mcpool_multi_get`; freed
/// with `mcpool_multi_free`. Immutable, so it may be read from any thread. It owns its
/// memory and refers to no client: it stays valid after `mcpool_client_free` of the client
/// that made it, until its own `_free` (which gives its buffer to the process's pool below,
/// not to a client).
///
/// An index of one entry per key and one buffer holding every value, back to back, in the
/// order they arrived (a compressed value is inflated straight into it): at most three
/// allocations per call however many keys. The buffer starts at the size the process's
/// previous result set needed per key, times the keys asked, with an eighth to spare (at
/// least 4 KiB, at most 64 MiB), and grows geometrically past it: a thread that reads
/// alike each call neither grows nor copies its buffer (a 100 × 30 KB multi-get grew it
/// ten times, copying 4 MB). A freed result set's buffer goes to a process-wide pool for
/// the next one on any thread (up to 8 MiB each), its index to the freeing thread's next
/// one (up to 16,384 entries), so a thread that reads alike allocates only the handle.
pub struct mcpool_multi {
    slots: Vec<Slot>,
    data: Vec<u8>,
    failures: Vec<Failure>,
}

/// Bytes of value per key asked in the process's last multi-get (rounded up): the first
/// guess at the next one's buffer, per key. One for the process, not per thread: a thread
/// started for a batch of reads sizes its first buffer from the others' (written only when
/// it changes, so threads reading alike share the cache line without writing it).
static PER_KEY: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// The index of the last result set freed on this thread (see [`SPARE_SLOTS_MAX`]).
    static SPARE_SLOTS: Cell<Vec<Slot>> = const { Cell::new(Vec::new()) };
}

/// Keeps `v` in this thread's spare `cell` when it is larger than the one there and at most
/// `max` long (a thread being torn down, its thread-locals gone, frees it).
fn keep_spare<T>(cell: &'static LocalKey<Cell<Vec<T>>>, v: Vec<T>, max: usize) {
    let _ = cell.try_with(|spare| {
        let kept = spare.take();
        let larger = v.capacity() <= max && v.capacity() > kept.capacity();
        spare.set(if larger { v } else { kept });
    });
}

/// The value buffers of freed result sets, for the next result set on any thread, most
/// recently freed first (up to [`SPARE_DATA_MAX`] each, [`SPARE_DATA_BYTES`] in all).
///
/// A result set's buffer was allocated and freed by every call: at 50 threads, 100 × 30 KB
/// values (3.4 MB a call) made glibc trim its arenas and the next call fault the pages in
/// again, about 100 minor faults a call. Kept by each thread for its next call, it faulted
/// no more, but ten threads' buffers took turns in the cache: 10 threads reading 100
/// compressed 30 KB values a call took 1.2–1.3 times the CPU of the Rust API's `get_multi`
/// (whose values come from one such pool). From one pool, the next call on any thread
/// writes into the buffer the last call freed (docs/performance.md, "The C result set's
/// buffers from one pool").
static SPARE_DATA: BufferPool = BufferPool::new(FIRST_RESERVE, SPARE_DATA_MAX, SPARE_DATA_BYTES);

/// The largest value buffer kept from a freed result set for the next one.
const SPARE_DATA_MAX: usize = 8 << 20;

/// The most capacity [`SPARE_DATA`] holds, all buffers together.
const SPARE_DATA_BYTES: usize = 32 << 20;

/// The longest index (entries) a thread keeps from a freed result set.
const SPARE_SLOTS_MAX: usize = 16 * 1024;

/// The least a result set's value buffer starts with, once a value arrives.
const FIRST_RESERVE: usize = 4096;

/// The most a result set's value buffer starts with from the previous call's size (past it,
/// it grows as values arrive).
const GUESS_MAX: usize = 64 << 20;

impl mcpool_multi {
    /// Room for `n` keys' entries, all misses.
    pub(crate) fn new(n: usize) -> mcpool_multi {
        let mut slots = SPARE_SLOTS.try_with(Cell::take).unwrap_or_default();
        slots.clear();
        slots.resize(n, MISS);
        mcpool_multi {
            slots,
            data: Vec::new(),
            failures: Vec::new(),
        }
    }

    /// Key `i` failed (its status, message and server).
    pub(crate) fn fail(&mut self, i: usize, f: Failure) {
        self.slots[i] = Slot {
            at: self.failures.len(),
            state: State::Failed,
            ..MISS
        };
        self.failures.push(f);
    }

    /// Each entry in key order: `Ok(Some((value, flags, cas)))` a hit, `Ok(None)` a miss,
    /// `Err((status, message))` the key's error.
    pub(crate) fn entry(&self, i: usize) -> Result<Option<Hit<'_>>, Failure> {
        let s = self.slots[i];
        match s.state {
            State::Miss => Ok(None),
            State::Hit => Ok(Some((&self.data[s.at..s.at + s.len], s.flags, s.cas))),
            State::Failed => Err(self.failures[s.at].clone()),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }

    /// The value buffer, given its first capacity (the process's guess) when a value first
    /// arrives: a call that finds nothing allocates none.
    #[inline]
    fn arena_with_guess(&mut self) -> &mut Vec<u8> {
        if self.data.capacity() == 0 {
            let guess = PER_KEY.load(Relaxed).saturating_mul(self.slots.len());
            let guess = guess.saturating_add(guess / 8);
            self.data = SPARE_DATA.take_at_least(guess.clamp(FIRST_RESERVE, GUESS_MAX));
        }
        &mut self.data
    }

    /// The read is over: its bytes per key become the guess for the next one.
    pub(crate) fn done(&self) {
        if let Some(per_key) = self.data.len().checked_div(self.slots.len()) {
            if PER_KEY.load(Relaxed) != per_key + 1 {
                PER_KEY.store(per_key + 1, Relaxed);
            }
        }
    }
}

impl Drop for mcpool_multi {
    /// The buffer goes to the pool of value buffers ([`SPARE_DATA`]), the index to the
    /// thread's spare, for the next result set.
    fn drop(&mut self) {
        SPARE_DATA.give(std::mem::take(&mut self.data));
        keep_spare(
            &SPARE_SLOTS,
            std::mem::take(&mut self.slots),
            SPARE_SLOTS_MAX,
        );
    }
}

impl Sink for mcpool_multi {
    fn value(
        &mut self,
        i: usize,
        value: &[u8],
        flags: u32,
        cas: Option<u64>,
    ) -> mcpool::error::Result<()> {
        let data = self.arena_with_guess();
        let start = data.len();
        data.extend_from_slice(value);
        self.appended(i, start, flags, cas)
    }
    fn result(&mut self, i: usize, result: mcpool::error::Result<bool>) {
        // Errors are recorded by the caller, which words their message.
        if let Ok(false) = result {
            self.slots[i] = MISS;
        }
    }
    #[inline]
    fn arena(&mut self) -> Option<&mut Vec<u8>> {
        Some(self.arena_with_guess())
    }
    #[inline]
    fn appended(
        &mut self,
        i: usize,
        start: usize,
        flags: u32,
        cas: Option<u64>,
    ) -> mcpool::error::Result<()> {
        self.slots[i] = Slot {
            at: start,
            len: self.data.len() - start,
            cas: cas.unwrap_or(0),
            flags,
            state: State::Hit,
        };
        Ok(())
    }
}

/// How many entries (= keys asked) the result set has; 0 for NULL.
///
/// # Safety
/// `multi` is NULL or a live result set.
#[no_mangle]
pub unsafe extern "C" fn mcpool_multi_len(multi: *const mcpool_multi) -> usize {
    // SAFETY: the caller promises a non-NULL `multi` is live.
    unsafe { multi.as_ref() }.map_or(0, |m| m.len())
}

/// The result for key number `index` (0-based, in the order the keys were given).
///
/// Returns `MCPOOL_OK` for a hit and writes its value (binary, `*out_len` bytes, pointing
/// into `multi`, valid until `mcpool_multi_free`), flags and CAS unique (0 unless asked
/// for); `MCPOOL_NOT_FOUND` for a miss; the key's own error status (with the last error set
/// to its message) when that key failed; `MCPOOL_OUT_OF_RANGE` for an index past the end.
/// Every output pointer is required.
///
/// # Safety
/// `multi` is NULL or a live result set; each output is NULL or valid for one write.
#[no_mangle]
pub unsafe extern "C" fn mcpool_multi_get(
    multi: *const mcpool_multi,
    index: usize,
    out_value: *mut *const u8,
    out_len: *mut usize,
    out_flags: *mut u32,
    out_cas: *mut u64,
) -> mcpool_status {
    landingpad(|| {
        // SAFETY: the caller promises a non-NULL `multi` is live.
        let m = unsafe { ptr::handle(multi, "multi") }?;
        ptr::out(out_value, "value")?;
        ptr::out(out_len, "length")?;
        ptr::out(out_flags, "flags")?;
        ptr::out(out_cas, "cas")?;
        let Some(s) = m.slots.get(index) else {
            return Err(out_of_range("multi-get result", index, m.len()));
        };
        match s.state {
            State::Miss => Ok(MCPOOL_NOT_FOUND),
            State::Failed => m.entry(index).map(|_| MCPOOL_OK),
            State::Hit => {
                let value = &m.data[s.at..s.at + s.len];
                // SAFETY: all four outputs were checked non-NULL; the caller promises they
                // are writable.
                unsafe {
                    ptr::write(out_value, value.as_ptr());
                    ptr::write(out_len, value.len());
                    ptr::write(out_flags, s.flags);
                    ptr::write(out_cas, s.cas);
                }
                Ok(MCPOOL_OK)
            }
        }
    })
}

/// Frees a multi-get result set and every value in it. NULL is ignored. The set's value
/// buffer (up to 8 MiB) is kept for the process's next multi-get, its index (up to 16,384
/// entries) for the calling thread's.
///
/// # Safety
/// `multi` is NULL or a result set not yet freed; neither it nor any pointer read from it
/// may be used afterwards.
#[no_mangle]
pub unsafe extern "C" fn mcpool_multi_free(multi: *mut mcpool_multi) {
    landingpad_void(|| {
        if !multi.is_null() {
            // SAFETY: made by `Box::into_raw` in `mcpool_client_get_multi`, freed once.
            drop(unsafe { Box::from_raw(multi) });
        }
    })
}

pub(crate) fn out_of_range(what: &str, index: usize, len: usize) -> Failure {
    Failure::new(
        MCPOOL_OUT_OF_RANGE,
        format!("{what} index {index} is out of range (there are {len})"),
    )
}

/// Text stored with a terminating NUL, so C may use it either with its length or as a string.
pub(crate) struct Text(Vec<u8>);

impl Text {
    pub(crate) fn new(s: &str) -> Text {
        let mut v = Vec::with_capacity(s.len() + 1);
        v.extend_from_slice(s.as_bytes());
        v.push(0);
        Text(v)
    }

    pub(crate) fn ptr(&self) -> *const c_char {
        self.0.as_ptr().cast()
    }

    pub(crate) fn len(&self) -> usize {
        self.0.len() - 1
    }

    /// Hands the text out: `*out_text` points at it (NUL-terminated, valid while its owner
    /// lives) and `*out_len` is its length without the NUL; NULL outputs are refused first.
    ///
    /// # Safety
    /// Each output is NULL or valid for one write.
    pub(crate) unsafe fn write_to(
        &self,
        out_text: *mut *const c_char,
        what: &str,
        out_len: *mut usize,
    ) -> Result<(), Failure> {
        ptr::out(out_text, what)?;
        ptr::out(out_len, "length")?;
        // SAFETY: both outputs were checked non-NULL; the caller promises they are writable.
        unsafe {
            ptr::write(out_text, self.ptr());
            ptr::write(out_len, self.len());
        }
        Ok(())
    }

    /// The text without its NUL (it was made from a `&str`).
    pub(crate) fn as_str(&self) -> &str {
        std::str::from_utf8(&self.0[..self.len()]).unwrap_or_default()
    }
}

/// One server's part of a per-server result.
pub(crate) struct ServerEntry {
    pub label: Text,
    pub result: Result<Vec<(Text, Text)>, (mcpool_status, String)>,
}

/// Per-server results of `mcpool_client_version` and `mcpool_client_stats`: for each server
/// (in configuration order) its `host:port` label, its status, and a list of
/// `(name, value)` text pairs (for version, the single pair `("version", "1.6.21")`).
/// Freed with `mcpool_server_results_free`. Immutable, so it may be read from any thread.
/// It owns its memory and refers to no client: it stays valid after `mcpool_client_free` of
/// the client that made it, until its own `_free`.
pub struct mcpool_server_results {
    pub(crate) servers: Vec<ServerEntry>,
}

/// # Safety
/// `r` is NULL or live.
unsafe fn server<'a>(
    r: *const mcpool_server_results,
    index: usize,
) -> Result<&'a ServerEntry, Failure> {
    // SAFETY: the caller promises a non-NULL `r` is live.
    let r = unsafe { ptr::handle(r, "results") }?;
    r.servers
        .get(index)
        .ok_or_else(|| out_of_range("server", index, r.servers.len()))
}

/// How many servers the results cover; 0 for NULL.
///
/// # Safety
/// `results` is NULL or live.
#[no_mangle]
pub unsafe extern "C" fn mcpool_server_results_len(results: *const mcpool_server_results) -> usize {
    // SAFETY: the caller promises a non-NULL `results` is live.
    unsafe { results.as_ref() }.map_or(0, |r| r.servers.len())
}

/// Server number `index`'s `host:port` label: NUL-terminated, `*out_len` bytes without the
/// NUL, pointing into `results` (valid until it is freed). `MCPOOL_OUT_OF_RANGE` past the end.
///
/// # Safety
/// `results` is NULL or live; each output is NULL or valid for one write.
#[no_mangle]
pub unsafe extern "C" fn mcpool_server_results_label(
    results: *const mcpool_server_results,
    index: usize,
    out_label: *mut *const c_char,
    out_len: *mut usize,
) -> mcpool_status {
    landingpad(|| {
        // SAFETY: forwarded from the caller's promise.
        let s = unsafe { server(results, index) }?;
        // SAFETY: forwarded from the caller's promise.
        unsafe { s.label.write_to(out_label, "label", out_len) }?;
        Ok(MCPOOL_OK)
    })
}

/// Server number `index`'s outcome: `MCPOOL_OK` when it answered, otherwise its error status
/// (and the thread's last error is set to its message). `MCPOOL_OUT_OF_RANGE` past the end.
///
/// # Safety
/// `results` is NULL or live.
#[no_mangle]
pub unsafe extern "C" fn mcpool_server_results_status(
    results: *const mcpool_server_results,
    index: usize,
) -> mcpool_status {
    landingpad(|| {
        // SAFETY: forwarded from the caller's promise.
        match &unsafe { server(results, index) }?.result {
            Ok(_) => Ok(MCPOOL_OK),
            Err((status, message)) => Err(Failure::new(*status, message.clone())),
        }
    })
}

/// How many `(name, value)` pairs server number `index` returned (0 when it failed).
///
/// # Safety
/// `results` is NULL or live; `out_count` is NULL or valid for one write.
#[no_mangle]
pub unsafe extern "C" fn mcpool_server_results_count(
    results: *const mcpool_server_results,
    index: usize,
    out_count: *mut usize,
) -> mcpool_status {
    landingpad(|| {
        // SAFETY: forwarded from the caller's promise.
        let s = unsafe { server(results, index) }?;
        ptr::out(out_count, "count")?;
        let n = s.result.as_ref().map_or(0, Vec::len);
        // SAFETY: checked non-NULL; the caller promises it is writable.
        unsafe { ptr::write(out_count, n) };
        Ok(MCPOOL_OK)
    })
}

/// Pair number `entry` of server number `index`: its name and value, each NUL-terminated
/// with its length (without the NUL) written beside it, pointing into `results` (valid until
/// it is freed). `MCPOOL_OUT_OF_RANGE` when either index is past the end.
///
/// # Safety
/// `results` is NULL or live; each output is NULL or valid for one write.
#[no_mangle]
pub unsafe extern "C" fn mcpool_server_results_entry(
    results: *const mcpool_server_results,
    index: usize,
    entry: usize,
    out_name: *mut *const c_char,
    out_name_len: *mut usize,
    out_value: *mut *const c_char,
    out_value_len: *mut usize,
) -> mcpool_status {
    landingpad(|| -> Outcome {
        // SAFETY: forwarded from the caller's promise.
        let s = unsafe { server(results, index) }?;
        ptr::out(out_name, "name")?;
        ptr::out(out_name_len, "name length")?;
        ptr::out(out_value, "value")?;
        ptr::out(out_value_len, "value length")?;
        let pairs = s.result.as_ref().map_or(&[][..], Vec::as_slice);
        let (name, value) = pairs
            .get(entry)
            .ok_or_else(|| out_of_range("statistics entry", entry, pairs.len()))?;
        // SAFETY: all outputs were checked non-NULL; the caller promises they are writable.
        unsafe {
            ptr::write(out_name, name.ptr());
            ptr::write(out_name_len, name.len());
            ptr::write(out_value, value.ptr());
            ptr::write(out_value_len, value.len());
        }
        Ok(MCPOOL_OK)
    })
}

/// Frees per-server results. NULL is ignored.
///
/// # Safety
/// `results` is NULL or results not yet freed; neither it nor any pointer read from it may
/// be used afterwards.
#[no_mangle]
pub unsafe extern "C" fn mcpool_server_results_free(results: *mut mcpool_server_results) {
    landingpad_void(|| {
        if !results.is_null() {
            // SAFETY: made by `Box::into_raw` in `mcpool_client_version`/`_stats`, freed once.
            drop(unsafe { Box::from_raw(results) });
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A result set of `n` keys, each found with `value_len` bytes of `b'a' + i % 26`.
    fn filled(n: usize, value_len: usize) -> mcpool_multi {
        let mut m = mcpool_multi::new(n);
        for i in 0..n {
            m.value(i, &vec![b'a' + (i % 26) as u8; value_len], i as u32, None)
                .unwrap();
            m.result(i, Ok(true));
        }
        m.done();
        m
    }

    fn assert_values(m: &mcpool_multi, value_len: usize) {
        for i in 0..m.len() {
            let (v, flags, _) = m.entry(i).unwrap().unwrap();
            assert_eq!(v, vec![b'a' + (i % 26) as u8; value_len].as_slice());
            assert_eq!(flags, i as u32);
        }
    }

    /// One test, so that no other test of this module changes the process's size guess
    /// (`PER_KEY`) between its steps.
    #[test]
    fn buffers_are_sized_from_the_previous_call_reused_and_grown() {
        std::thread::spawn(|| {
            // A freed result set's buffer and index serve the next one.
            let first = filled(100, 30_000);
            let (data, slots) = (first.data.as_ptr(), first.slots.as_ptr());
            drop(first);
            let second = filled(100, 30_000);
            assert_eq!(second.data.as_ptr(), data, "the value buffer is reused");
            assert_eq!(second.slots.as_ptr(), slots, "the index is reused");
            assert_values(&second, 30_000);
            // Freed on another thread, the buffer serves this one's next set.
            let data = second.data.as_ptr() as usize;
            std::thread::spawn(move || drop(second)).join().unwrap();
            let second = filled(100, 30_000);
            assert_eq!(second.data.as_ptr() as usize, data, "reused across threads");
            // The same read again while the first is held: one buffer of the guessed size.
            let again = filled(100, 30_000);
            assert_values(&again, 30_000);
            assert!(again.data.capacity() >= 3_000_000 && again.data.capacity() < 3_500_000);
            drop((second, again));
            // Fewer keys and smaller values in a reused buffer: nothing of the old ones shows.
            let small = filled(3, 7);
            assert_eq!(small.len(), 3);
            assert_values(&small, 7);
            assert_eq!(small.data.len(), 21);
            drop(small);
            // Larger values than guessed: the buffer grows, every value intact.
            let larger = filled(100, 70_000);
            assert_values(&larger, 70_000);
            drop(larger);
            // A buffer over 8 MiB is freed, not kept.
            let huge = filled(300, 40_000);
            assert!(huge.data.capacity() > SPARE_DATA_MAX);
            let held = SPARE_DATA.held();
            drop(huge);
            assert_eq!(SPARE_DATA.held(), held);
            // All misses: no buffer at all, and the guess becomes 0 bytes a key.
            let misses = mcpool_multi::new(50);
            misses.done();
            assert_eq!(misses.data.capacity(), 0);
            drop(misses);
            let after = filled(2, 5);
            assert!(after.data.capacity() >= FIRST_RESERVE);
            assert_values(&after, 5);
        })
        .join()
        .unwrap();
    }
}
