//! Where the values of a read go: a [`Sink`] (after Cache::Memcached::Fast's
//! `result_object`). Every read of the client (one key or many, items, callbacks, the C
//! ABI's reads into the caller's memory) is the read engine (`Client::read`) with a
//! different sink; `get` and `get_multi` are collecting sinks.

use crate::error::{Error, Result};
use crate::heap_guard::Handed;
use crate::item::Item;
use crate::shared_buffer::SharedFill;
use crate::value::Transcoder;
use crate::value_bytes::{ValueBytes, SHARED_MAX};
use crate::value_pool;

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

    /// Key `i`'s value is one the client's value format cannot deliver (`err`: flags that
    /// mean nothing in the format, a body those flags cannot hold, a compressed body that
    /// does not inflate). The default fails key `i` with `err`. A sink that takes such a
    /// value as memcached holds it ([`crate::Client::get_or_stored`]) receives here the
    /// body as read (not inflated) and the flags as stored (compression bits included),
    /// and CAS as for [`Sink::value`].
    #[inline]
    fn undeliverable(
        &mut self,
        i: usize,
        stored: &[u8],
        stored_flags: u32,
        cas: Option<u64>,
        err: Error,
    ) -> Result<()> {
        let _ = (i, stored, stored_flags, cas);
        Err(err)
    }
}

/// True for the errors of a value the format cannot deliver (see [`Sink::undeliverable`]).
fn is_undeliverable(e: &Error) -> bool {
    matches!(e, Error::ValueFormat(_) | Error::Decompress(_))
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
/// Values of at most [`SHARED_MAX`] bytes that come as they were stored are copied one
/// after another into one buffer, which each such item's [`ValueBytes`] then shares: one
/// buffer per call instead of one allocation per value (`crate::value_bytes`,
/// `crate::shared_buffer`). Larger values, and values decoded into a vector of their own,
/// keep that vector. The entries are written in place in the returned vector as the values
/// come. The values it made and that vector are kept below the thread's heap guard
/// ([`crate::heap_guard`]): freed beside the top of the heap, they would join it, and glibc
/// would hand the pages back and consolidate its small free blocks.
pub(crate) struct Items {
    out: Vec<Result<Option<Item>>>,
    /// The small values, one after another.
    shared: SharedFill,
    handed: Handed,
}

thread_local! {
    /// How many bytes of small values the thread's last `get_multi` shared: the next call's
    /// buffer starts at that size rather than growing to it.
    static SHARED_LEN: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

impl Items {
    /// For `n` keys.
    pub(crate) fn new(n: usize) -> Items {
        let shared_len = SHARED_LEN.get();
        let mut out = Vec::with_capacity(n);
        out.resize_with(n, || Ok(None));
        Items {
            out,
            shared: SharedFill::with_capacity(shared_len.min(n.saturating_mul(SHARED_MAX))),
            handed: Handed::default(),
        }
    }

    /// The results, one per key in key order.
    pub(crate) fn finish(self) -> Vec<Result<Option<Item>>> {
        let Items {
            out,
            shared,
            mut handed,
        } = self;
        let (bytes, shared_len) = shared.finish();
        SHARED_LEN.set(shared_len);
        handed.note(bytes, shared_len);
        // The returned vector is handed out too: the guard goes above it as well.
        handed.note(out.as_ptr().cast(), std::mem::size_of_val(out.as_slice()));
        handed.guard();
        out
    }
}

impl Sink for Items {
    #[inline]
    #[allow(unsafe_code)] // `SharedFill::push`
    fn value(&mut self, i: usize, value: &[u8], flags: u32, cas: Option<u64>) -> Result<()> {
        let slice = if value.len() <= SHARED_MAX {
            // SAFETY: the slice goes into `out`, which no one reads, clones or sends before
            // `finish` has finished the buffer; `result` may drop it (an error replacing it).
            unsafe { self.shared.push(value) }
        } else {
            None
        };
        let Some(slice) = slice else {
            let mut own = value_pool::take();
            own.extend_from_slice(value);
            return self.value_owned(i, own, flags, cas);
        };
        self.out[i] = Ok(Some(Item {
            value: ValueBytes::shared(slice),
            flags,
            cas,
        }));
        Ok(())
    }
    #[inline]
    fn owns_values(&self) -> bool {
        true
    }
    #[inline]
    fn value_owned(
        &mut self,
        i: usize,
        mut value: Vec<u8>,
        flags: u32,
        cas: Option<u64>,
    ) -> Result<()> {
        self.handed.note(value.as_ptr(), value.len());
        let value = if value.len() > SHARED_MAX {
            // Its room is kept: the vector goes back to the pool when the value is dropped.
            ValueBytes::pooled(value)
        } else {
            value.shrink_to_fit();
            value.into()
        };
        self.out[i] = Ok(Some(Item { value, flags, cas }));
        Ok(())
    }
    #[inline]
    fn result(&mut self, i: usize, result: Result<bool>) {
        match result {
            Ok(true) => {}
            Ok(false) => self.out[i] = Ok(None),
            Err(e) => self.out[i] = Err(e),
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
        mut value: Vec<u8>,
        flags: u32,
        cas: Option<u64>,
    ) -> Result<()> {
        // Handed to the caller as it is (`get`): no room beyond the value.
        value.shrink_to_fit();
        self.0 = Ok(Some(Item {
            value: value.into(),
            flags,
            cas,
        }));
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
        return match values.decode_append(key, data, flags, arena) {
            Ok(delivered) => sink.appended(index, start, delivered, cas),
            Err(e) => undeliverable(sink, index, data, flags, cas, e),
        };
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

/// A value the format could not decode (`e`): to [`Sink::undeliverable`] when `e` says
/// the value cannot be delivered, else `e` itself.
#[cold]
fn undeliverable<S: Sink + ?Sized>(
    sink: &mut S,
    index: usize,
    data: &[u8],
    flags: u32,
    cas: Option<u64>,
    e: Error,
) -> Result<()> {
    if is_undeliverable(&e) {
        sink.undeliverable(index, data, flags, cas, e)
    } else {
        Err(e)
    }
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
        let (body, delivered_flags, _) = match values.decode(key, data, flags, buf) {
            Ok(decoded) => decoded,
            Err(e) => return undeliverable(sink, index, data, flags, cas, e),
        };
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
/// decoded (inflated) straight into a vector of its own (for a compressed value, the most
/// recently freed buffer of the value pool when there is one, `crate::value_pool`), with
/// room the inflater sizes from the thread's previous value (`value::codec`): one
/// allocation at most and no copy per value. A value that needed less than half the room is
/// copied out and the room pooled. Other decoded values (an integer's or a boolean's text)
/// are small and never touch the pool's lock.
fn deliver_owned<S: Sink + ?Sized>(
    sink: &mut S,
    values: &Transcoder<'_>,
    key: &[u8],
    index: usize,
    data: &[u8],
    flags: u32,
    cas: Option<u64>,
) -> Result<()> {
    let mut owned = if values.inflates(flags) {
        value_pool::take()
    } else {
        Vec::new()
    };
    let delivered = match values.decode_append(key, data, flags, &mut owned) {
        Ok(delivered) => delivered,
        Err(e) => {
            value_pool::give(owned);
            return undeliverable(sink, index, data, flags, cas, e);
        }
    };
    if owned.len() < owned.capacity() / 2 {
        let exact = owned.as_slice().to_vec();
        value_pool::give(owned);
        owned = exact;
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
