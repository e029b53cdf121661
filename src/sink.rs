//! Where the values of a read go: a [`Sink`] (after Cache::Memcached::Fast's
//! `result_object`). Every read of the client (one key or many, items, callbacks, the C
//! ABI's reads into the caller's memory) is the read engine (`Client::read`) with a
//! different sink; `get` and `get_multi` are collecting sinks.

use crate::error::Result;
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

/// Collects one item (or miss, or error) per key: `get_multi`, `gets_multi`, and `get`
/// (one key).
pub(crate) struct Items(pub Vec<Result<Option<Item>>>);

impl Items {
    /// For `n` keys.
    pub(crate) fn new(n: usize) -> Items {
        Items((0..n).map(|_| Ok(None)).collect())
    }
}

impl Sink for Items {
    fn value(&mut self, i: usize, value: &[u8], flags: u32, cas: Option<u64>) -> Result<()> {
        self.0[i] = Ok(Some(Item {
            value: value.to_vec(),
            flags,
            cas,
        }));
        Ok(())
    }
    fn result(&mut self, i: usize, result: Result<bool>) {
        match result {
            Ok(true) => {}
            Ok(false) => self.0[i] = Ok(None),
            Err(e) => self.0[i] = Err(e),
        }
    }
}

/// Collects the item of one key read on its own (`get`, `gets`, `gat`): no vector.
pub(crate) struct OneItem(pub Result<Option<Item>>);

impl Sink for OneItem {
    fn value(&mut self, _i: usize, value: &[u8], flags: u32, cas: Option<u64>) -> Result<()> {
        self.0 = Ok(Some(Item {
            value: value.to_vec(),
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
pub(crate) fn deliver<S: Sink + ?Sized>(
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
    // Uncompressed bytes (the common case) go to the sink as they are, from the read buffer.
    if let Some(delivered) = values.passthrough(flags) {
        return sink.value(index, data, delivered, cas);
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
