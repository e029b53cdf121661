//! Where the values of a read go: a [`Sink`] (after Cache::Memcached::Fast's
//! `result_object`). Every read of the client (one key or many, items, callbacks, the C
//! ABI's reads into the caller's memory) is the read engine (`Client::read`) with a
//! different sink; `get` and `get_multi` are collecting sinks.

use crate::error::Result;
use crate::heap_guard::Handed;
use crate::item::Item;
use crate::value::Transcoder;

/// Receives a read's results: each value found, while it is still in the connection's read
/// buffer, then each key's result.
pub trait Sink {
    /// Key `i` (its index in the caller's [`crate::key::Keys`]) was found: its value
    /// (borrowed: from the read buffer, or, when it was stored compressed, from the inflated
    /// copy), its flags (without the compression bit) and its CAS unique when asked for.
    /// Values come in the order the servers' replies are read. An error fails key `i` alone:
    /// its result is then that error.
    fn value(&mut self, i: usize, value: &[u8], flags: u32, cas: Option<u64>) -> Result<()>;

    /// Key `i`'s result, once every value has been delivered, in key order, once per key:
    /// `Ok(true)` a hit (delivered), `Ok(false)` a miss, or the key's error (its own, its
    /// server's, or the one [`Sink::value`] returned).
    fn result(&mut self, i: usize, result: Result<bool>);

    /// A sink that keeps the values it is given in one buffer of its own (an arena) returns
    /// it here, and each value is then decoded straight onto its end (a compressed value
    /// inflated into it, no scratch copy), followed by [`Sink::appended`] instead of
    /// [`Sink::value`]. The default, `None`, hands values to [`Sink::value`].
    #[inline]
    fn arena(&mut self) -> Option<&mut Vec<u8>> {
        None
    }

    /// Key `i`'s value was decoded onto the arena (see [`Sink::arena`]): it is the arena's
    /// bytes from `start` to its end; flags and CAS as for [`Sink::value`]. An error fails
    /// key `i` alone (the sink then takes the bytes back off the arena itself).
    #[inline]
    fn appended(&mut self, i: usize, start: usize, flags: u32, cas: Option<u64>) -> Result<()> {
        let _ = (i, start, flags, cas);
        Ok(())
    }

    /// A sink that keeps each value as a vector of its own says so here: a value that must
    /// be decoded first (inflated, an integer's text) is then decoded straight into a new
    /// vector that [`Sink::value_owned`] takes, instead of into the thread's scratch buffer
    /// and copied from there. Uncompressed values still come through [`Sink::value`].
    #[inline]
    fn owns_values(&self) -> bool {
        false
    }

    /// Key `i`'s decoded value, as a vector the sink keeps (see [`Sink::owns_values`]);
    /// flags and CAS as for [`Sink::value`]. The default hands it to [`Sink::value`].
    #[inline]
    fn value_owned(
        &mut self,
        i: usize,
        value: Vec<u8>,
        flags: u32,
        cas: Option<u64>,
    ) -> Result<()> {
        self.value(i, &value, flags, cas)
    }
}

/// A sink made of two callbacks: `value` for each value, `result` for each key's result.
pub struct Callbacks<V, R>(pub V, pub R);

impl<V, R> Sink for Callbacks<V, R>
where
    V: FnMut(usize, &[u8], u32, Option<u64>) -> Result<()>,
    R: FnMut(usize, Result<bool>),
{
    #[inline]
    fn value(&mut self, i: usize, value: &[u8], flags: u32, cas: Option<u64>) -> Result<()> {
        (self.0)(i, value, flags, cas)
    }
    #[inline]
    fn result(&mut self, i: usize, result: Result<bool>) {
        (self.1)(i, result)
    }
}

/// Collects one item (or miss, or error) per key: `get_multi`, `gets_multi`.
///
/// The entries are gathered in the thread's reused staging vector and moved into the
/// returned one (sized exactly) at the end: its allocation is then the call's last, after
/// every value's, which keeps glibc serving each value's small block from the blocks the
/// previous call's values freed (a large allocation first would consolidate them, and every
/// value would then take malloc's slow path: about 40% of a 100-key call's instructions).
/// The values it made and the returned vector are kept below the thread's heap guard
/// ([`crate::heap_guard`]): freeing that vector beside the top would consolidate them too.
pub(crate) struct Items {
    staged: Vec<Result<Option<Item>>>,
    handed: Handed,
}

thread_local! {
    /// The staging vector of [`Items`], reused by each `get_multi` on the thread.
    static STAGED: std::cell::Cell<Vec<Result<Option<Item>>>> =
        const { std::cell::Cell::new(Vec::new()) };
}

/// The most entries a thread's staging vector keeps between calls (56 bytes each).
const STAGED_KEEP: usize = 4096;

impl Items {
    /// For `n` keys.
    pub(crate) fn new(n: usize) -> Items {
        let mut staged = STAGED.take();
        staged.clear();
        staged.resize_with(n, || Ok(None));
        Items {
            staged,
            handed: Handed::default(),
        }
    }

    /// The results, one per key in key order, in a vector of their exact size.
    pub(crate) fn finish(mut self) -> Vec<Result<Option<Item>>> {
        let out: Vec<_> = self.staged.drain(..).collect();
        // The returned vector is handed out too: the guard goes above it as well.
        let mut handed = self.handed;
        handed.note(out.as_ptr().cast(), std::mem::size_of_val(out.as_slice()));
        handed.guard();
        if self.staged.capacity() <= STAGED_KEEP {
            STAGED.set(std::mem::take(&mut self.staged));
        }
        out
    }
}

impl Sink for Items {
    #[inline]
    fn value(&mut self, i: usize, value: &[u8], flags: u32, cas: Option<u64>) -> Result<()> {
        self.value_owned(i, value.to_vec(), flags, cas)
    }
    #[inline]
    fn owns_values(&self) -> bool {
        true
    }
    #[inline]
    fn value_owned(
        &mut self,
        i: usize,
        value: Vec<u8>,
        flags: u32,
        cas: Option<u64>,
    ) -> Result<()> {
        self.handed.note(value.as_ptr(), value.len());
        self.staged[i] = Ok(Some(Item { value, flags, cas }));
        Ok(())
    }
    #[inline]
    fn result(&mut self, i: usize, result: Result<bool>) {
        match result {
            Ok(true) => {}
            Ok(false) => self.staged[i] = Ok(None),
            Err(e) => self.staged[i] = Err(e),
        }
    }
}

/// Collects the item of one key read on its own (`get`, `gets`, `gat`): no vector.
pub(crate) struct OneItem(pub Result<Option<Item>>);

impl Sink for OneItem {
    fn value(&mut self, i: usize, value: &[u8], flags: u32, cas: Option<u64>) -> Result<()> {
        self.value_owned(i, value.to_vec(), flags, cas)
    }
    fn owns_values(&self) -> bool {
        true
    }
    fn value_owned(
        &mut self,
        _i: usize,
        value: Vec<u8>,
        flags: u32,
        cas: Option<u64>,
    ) -> Result<()> {
        self.0 = Ok(Some(Item { value, flags, cas }));
        Ok(())
    }
    fn result(&mut self, _i: usize, result: Result<bool>) {
        match result {
            Ok(true) => {}
            Ok(false) => self.0 = Ok(None),
            Err(e) => self.0 = Err(e),
        }
    }
}

/// Hands each value to `f` and collects each key's result (`get_multi_each`).
pub(crate) struct Each<F> {
    pub f: F,
    pub results: Vec<Result<bool>>,
}

impl<F: FnMut(usize, &[u8], u32, Option<u64>)> Sink for Each<F> {
    #[inline]
    fn value(&mut self, i: usize, value: &[u8], flags: u32, cas: Option<u64>) -> Result<()> {
        (self.f)(i, value, flags, cas);
        Ok(())
    }
    fn result(&mut self, _i: usize, result: Result<bool>) {
        self.results.push(result);
    }
}

/// Decodes a value read for key `index` (`key`, for messages) by the client's value format
/// (`values`: inflated when its flags say so, integers and booleans in their ABI text) and
/// hands it to `sink`, or fails with the key's error: the one place a read's value is
/// decoded before a sink sees it.
#[inline]
pub(crate) fn deliver<S: Sink + ?Sized>(
    sink: &mut S,
    values: &Transcoder<'_>,
    key: &[u8],
    index: usize,
    data: &[u8],
    flags: u32,
    cas: Option<u64>,
) -> Result<()> {
    if let Some(arena) = sink.arena() {
        // Onto the sink's own buffer: copied, or inflated straight into it.
        let start = arena.len();
        let delivered = values.decode_append(key, data, flags, arena)?;
        return sink.appended(index, start, delivered, cas);
    }
    // Uncompressed bytes (the common case) go to the sink as they are, from the read buffer.
    if let Some(delivered) = values.passthrough(flags) {
        return sink.value(index, data, delivered, cas);
    }
    if sink.owns_values() {
        return deliver_owned(sink, values, key, index, data, flags, cas);
    }
    deliver_decoded(sink, values, key, index, data, flags, cas)
}

/// [`deliver`] of a value that must be decoded first (inflated, an integer's or a
/// boolean's text): through the thread's scratch buffer.
#[inline(never)]
fn deliver_decoded<S: Sink + ?Sized>(
    sink: &mut S,
    values: &Transcoder<'_>,
    key: &[u8],
    index: usize,
    data: &[u8],
    flags: u32,
    cas: Option<u64>,
) -> Result<()> {
    thread_local! {
        /// Inflated values handed to sinks: one buffer per thread, reused, so a stream of
        /// compressed values costs no allocation (and no heap growth and trim) each.
        static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    SCRATCH.with(|cell| {
        // A sink that reads again on this thread finds the buffer busy: inflate aside.
        let mut fresh = Vec::new();
        let mut guard = cell.try_borrow_mut();
        let buf = match guard.as_deref_mut() {
            Ok(b) => b,
            Err(_) => &mut fresh,
        };
        let (body, delivered_flags, _) = values.decode(key, data, flags, buf)?;
        let delivered = sink.value(index, &body, delivered_flags, cas);
        drop(body);
        if buf.capacity() > 4 << 20 {
            *buf = Vec::new();
        }
        delivered
    })
}

/// [`deliver`] of a value that must be decoded first, for a sink that keeps its values
/// ([`Sink::owns_values`]): instead of [`deliver_decoded`]'s scratch buffer, the value is
/// decoded (inflated) straight into a vector of its own, which the inflater sizes from the
/// thread's previous value (`value::codec`) and which is trimmed to its length (glibc
/// shrinks a block in place): one allocation and no copy per value.
fn deliver_owned<S: Sink + ?Sized>(
    sink: &mut S,
    values: &Transcoder<'_>,
    key: &[u8],
    index: usize,
    data: &[u8],
    flags: u32,
    cas: Option<u64>,
) -> Result<()> {
    let mut owned = Vec::new();
    let delivered = values.decode_append(key, data, flags, &mut owned)?;
    if owned.capacity() > owned.len() {
        owned.shrink_to_fit();
    }
    sink.value_owned(index, owned, delivered, cas)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_guard_lies_above_a_get_multis_returned_vector() {
        std::thread::spawn(|| {
            // 100 small values and their 5.6 KB vector: the vector, freed beside the top,
            // would consolidate the freed values into it (crate::heap_guard). Other tests'
            // threads may share this thread's malloc arena and leave free blocks above the
            // vector that a guard try takes: up to 3 reads, each placing it anew.
            let mut placed = false;
            for _ in 0..3 {
                let mut items = Items::new(100);
                for i in 0..100 {
                    items.value(i, &[b'v'; 40], 0, None).unwrap();
                    items.result(i, Ok(true));
                }
                let out = items.finish();
                assert_eq!(out.len(), 100);
                assert!(out
                    .iter()
                    .all(|r| matches!(r, Ok(Some(it)) if it.value == [b'v'; 40])));
                let end = out.as_ptr_range().end.cast::<u8>();
                placed = crate::heap_guard::guard_above(end);
                if placed {
                    break;
                }
            }
            if cfg!(all(target_os = "linux", target_env = "gnu")) {
                assert!(placed, "glibc: the guard lies above the returned vector");
            }
        })
        .join()
        .unwrap();
    }
}
