//! The memcached commands on a `mcpool_client`.
//!
//! Every command takes the client first and its outputs last. Keys are `(key, key_len)`
//! byte pairs (1 to 250 bytes with the prefix, no space or control byte unless sanitizing is
//! on), values `(value, value_len)` byte pairs (binary; NULL allowed when the length is 0).
//! Cache answers are statuses, not errors: `MCPOOL_NOT_FOUND` for a miss, `MCPOOL_NOT_STORED`
//! and `MCPOOL_EXISTS` for stores that did not happen. Outputs are written only on
//! `MCPOOL_OK`.

use super::client::mcpool_client;
use super::keys::CKeys;
use super::landing::{landingpad, Failure, Outcome};
use super::ptr;
use super::status::mcpool_status::{
    self, MCPOOL_EXISTS, MCPOOL_NOT_FOUND, MCPOOL_NOT_STORED, MCPOOL_OK, MCPOOL_VALUE_TOO_LARGE,
};
use super::values::{mcpool_item, mcpool_multi, mcpool_server_results, OneItem, ServerEntry, Text};
use mcpool::client::{Client, PerServer};
use mcpool::error::{Error, Result as CoreResult};
use mcpool::item::{Lease, StoreOutcome};
use mcpool::key::Single;
use mcpool::proto::ascii::StoreCommand;
use mcpool::sink::Sink;
use std::ffi::{c_char, c_void};

/// The largest expiry, in seconds, of every call that takes one (`ttl`, `ttls[i]`,
/// `vivify_ttl_s`, `recache_below_s`, `stale_ttl_s`, `delay_s`): 2^31 - 1. memcached reads
/// a larger one as negative (the item expires at once while the store answers success), so
/// the core refuses it with `MCPOOL_INVALID_ARGUMENT` before anything is sent.
pub const MCPOOL_MAX_TTL: u32 = 2147483647;
const _: () = assert!(MCPOOL_MAX_TTL == mcpool::ttl::MAX_TTL);

/// The expiry that stores an item already expired (30 days and one second: a unix time in
/// 1970 to memcached, on every protocol): what a binding passes for its caller's negative
/// expiry, which memcached's protocol reads as "immediately expired" and the Python and Perl
/// clients send as it is.
pub const MCPOOL_EXPIRED_AT_ONCE: u32 = 2592001;
const _: () = assert!(MCPOOL_EXPIRED_AT_ONCE == mcpool::ttl::EXPIRED_AT_ONCE);

/// The longest expiry memcached reads as seconds from now: 30 days (2592000); above it
/// memcached reads a unix time (`mcpool_expiry_from_now` converts a longer duration).
pub const MCPOOL_RELATIVE_MAX: u32 = 2592000;
const _: () = assert!(MCPOOL_RELATIVE_MAX == mcpool::ttl::RELATIVE_MAX);

/// A signed expiry (seconds, as a binding's language has it) as the `uint32_t` the calls
/// take, by the core's one rule: negative is `MCPOOL_EXPIRED_AT_ONCE` (memcached's
/// "immediately expired", as Cache::Memcached::Fast, python-memcached and spymemcached send
/// it); above `UINT32_MAX` is `UINT32_MAX`, which every call then refuses as above
/// `MCPOOL_MAX_TTL`; any other as it is. Never fails.
#[no_mangle]
pub extern "C" fn mcpool_expiry_from_signed(seconds: i64) -> u32 {
    mcpool::ttl::from_signed(seconds)
}

/// An expiry given as seconds from now (a duration, as CHI's `expires_in` and Django's
/// timeout are) as the `uint32_t` exptime the calls take, by the core's one rule: up to 30
/// days (`MCPOOL_RELATIVE_MAX`) as it is; above, the unix time it ends at (memcached reads an
/// exptime above 30 days as a unix time, so the seconds themselves would be a moment in 1970
/// and expire the item at once); 0 or less is `MCPOOL_EXPIRED_AT_ONCE` (never 0, which means
/// "never expires"). A moment after 2038 is above `MCPOOL_MAX_TTL`, which every call then
/// refuses. Reads the system clock, as memcached compares with its own. Never fails.
#[no_mangle]
pub extern "C" fn mcpool_expiry_from_now(seconds: i64) -> u32 {
    mcpool::ttl::from_now(seconds)
}

/// `mcpool_expiry_from_now`'s expiry before it is fitted to `uint32_t`, for a binding that
/// hands it on as a signed time (`mcpool_expiry_checked`,
/// `mcpool_client_store_expiry_checked`): the same number up to `UINT32_MAX`; a moment after
/// 2106 stays the number it is (at most `INT64_MAX`), so its refusal names the moment asked,
/// never the saturated 4294967295. Reads the system clock. Never fails.
#[no_mangle]
pub extern "C" fn mcpool_expiry_moment_from_now(seconds: i64) -> i64 {
    mcpool::ttl::moment_from_now(seconds)
}

/// A fractional number of seconds (a binding's floating-point expiry, duration or delay) as
/// the whole seconds `mcpool_expiry_from_signed`, `mcpool_expiry_from_now` and
/// `mcpool_delay_from_signed` take, by the core's one rule for fractions: a positive
/// fraction rounds up (0 < t < 1 is 1 second, never 0, which memcached reads as "never
/// expires") but never across the 30-day line (2592000 < t < 2592001 is 2592000, where
/// 2592001 would be a unix time in 1970), a negative one rounds down (it stays negative:
/// expired at once), 0 and -0 are 0; NaN and anything beyond `INT64_MAX` are `INT64_MAX`
/// (refused by every call once mapped), anything below `INT64_MIN` is `INT64_MIN`. Never
/// fails.
#[no_mangle]
pub extern "C" fn mcpool_whole_seconds(seconds: f64) -> i64 {
    mcpool::ttl::whole_seconds(seconds)
}

/// A signed `flush_all` delay (seconds) as the `uint32_t` `mcpool_client_flush_all` and
/// `mcpool_client_flush_all_each` take, by the core's rule: negative is 0, flush now (a
/// delay in the past, as Cache::Memcached::Fast and pylibmc send -1); above `UINT32_MAX` is
/// `UINT32_MAX`, refused as above `MCPOOL_MAX_TTL`; any other as it is. Never fails.
#[no_mangle]
pub extern "C" fn mcpool_delay_from_signed(seconds: i64) -> u32 {
    mcpool::ttl::delay_from_signed(seconds)
}

/// Most keys in one multi-get call.
pub const MCPOOL_MAX_MULTI_KEYS: usize = 1 << 20;

/// Longest statistics group name, in bytes.
const MAX_STATS_GROUP: usize = 64;

/// The client and the key of keyed command `op`, checked.
///
/// # Safety
/// `client` is NULL or live; `key` is NULL or valid for `key_len` bytes, for `'a`.
unsafe fn keyed<'a>(
    op: &str,
    client: *const mcpool_client,
    key: *const u8,
    key_len: usize,
) -> Result<(&'a mcpool_client, &'a [u8]), Failure> {
    // SAFETY: the caller promises a non-NULL `client` is live.
    let c = unsafe { ptr::handle(client, "client") }?;
    // SAFETY: the caller promises `key_len` readable bytes at a non-NULL `key`.
    let k = unsafe { ptr::key(op, key, key_len, c.max_key) }?;
    Ok((c, k))
}

/// A value of `cmd` (the call `op`) on `key`, refused before it is read when even
/// compression could not make it storable: the core's refusal ([`value_len_checked`]).
///
/// # Safety
/// `value` is NULL or valid for `value_len` bytes, for `'a`.
unsafe fn value<'a>(
    c: &mcpool_client,
    op: &str,
    cmd: StoreCommand,
    key: &[u8],
    value: *const u8,
    value_len: usize,
) -> Result<&'a [u8], Failure> {
    value_len_checked(c, op, cmd, key, value, value_len)?;
    // SAFETY: forwarded from the caller's promise.
    unsafe {
        ptr::bytes(
            value,
            value_len,
            c.max_input,
            "value",
            MCPOOL_VALUE_TOO_LARGE,
        )
    }
}

/// Refuses a caller's value of `len` bytes at `p` (not NULL: a NULL one is the caller's
/// mistake, [`ptr::bytes`]'s error) longer than the client takes, before a byte of it is
/// read: the core's refusal, which names the option to raise and, for a `set`, deletes the
/// key as every refused set does (tester finding bigvalues 1: the C ABI refused it itself,
/// so an old value stayed to be read after a failed set on every binding).
pub(crate) fn value_len_checked(
    c: &mcpool_client,
    op: &str,
    cmd: StoreCommand,
    key: &[u8],
    p: *const u8,
    len: usize,
) -> Result<(), Failure> {
    if p.is_null() || len <= c.max_input {
        return Ok(());
    }
    c.client
        .check_value_len(cmd, key, len)
        .map_err(|e| Failure::from_error(op, Some(key), &e))
}

fn core<T>(op: &str, key: &[u8], r: CoreResult<T>) -> Result<T, Failure> {
    r.map_err(|e| Failure::from_error(op, Some(key), &e))
}

pub(crate) fn store_status(o: StoreOutcome) -> mcpool_status {
    match o {
        StoreOutcome::Stored => MCPOOL_OK,
        StoreOutcome::NotStored => MCPOOL_NOT_STORED,
        StoreOutcome::Exists => MCPOOL_EXISTS,
        StoreOutcome::NotFound => MCPOOL_NOT_FOUND,
    }
}

// ----- retrieval -----

/// The shared body of get, gets, gat and gats: a read of one key (with CAS uniques when
/// `cas`, get-and-touch with `touch`) straight into a new item (one allocation, the value
/// copied once); `keep_cas` says whether the item keeps the CAS unique read.
///
/// # Safety
/// As for `mcpool_client_get`.
#[allow(clippy::too_many_arguments)]
unsafe fn retrieve(
    op: &str,
    client: *const mcpool_client,
    key: *const u8,
    key_len: usize,
    out_item: *mut *mut mcpool_item,
    cas: bool,
    touch: Option<u32>,
    keep_cas: bool,
) -> mcpool_status {
    landingpad(|| {
        // SAFETY: forwarded from the caller's promise.
        let (c, key) = unsafe { keyed(op, client, key, key_len) }?;
        ptr::out(out_item, "item")?;
        let mut one = OneItem::new(keep_cas);
        c.client.read(&Single(key), cas, touch, &mut one);
        match core(op, key, one.finish())? {
            None => Ok(MCPOOL_NOT_FOUND),
            Some(item) => {
                // SAFETY: checked non-NULL; the caller promises it is writable.
                unsafe { ptr::write(out_item, item) };
                Ok(MCPOOL_OK)
            }
        }
    })
}

/// Reads `key`. On a hit returns `MCPOOL_OK` and writes a new item (value and flags; CAS 0)
/// to `*out_item`; on a miss returns `MCPOOL_NOT_FOUND` and writes nothing.
///
/// Ownership: the caller owns `*out_item` and frees it with `mcpool_item_free`; the item
/// stays valid after `mcpool_client_free` (it owns its memory).
///
/// # Safety
/// `client` is NULL or live; `key` is NULL or valid for `key_len` bytes; `out_item` is NULL
/// or valid for a write of one pointer.
#[no_mangle]
pub unsafe extern "C" fn mcpool_client_get(
    client: *const mcpool_client,
    key: *const u8,
    key_len: usize,
    out_item: *mut *mut mcpool_item,
) -> mcpool_status {
    // SAFETY: forwarded from the caller's promise.
    unsafe { retrieve("get", client, key, key_len, out_item, false, None, false) }
}

/// Like `mcpool_client_get`, and the item carries its CAS unique (`mcpool_item_cas`) for
/// `mcpool_client_cas`.
///
/// # Safety
/// As for `mcpool_client_get`.
#[no_mangle]
pub unsafe extern "C" fn mcpool_client_gets(
    client: *const mcpool_client,
    key: *const u8,
    key_len: usize,
    out_item: *mut *mut mcpool_item,
) -> mcpool_status {
    // SAFETY: forwarded from the caller's promise.
    unsafe { retrieve("gets", client, key, key_len, out_item, true, None, true) }
}

/// Get-and-touch: like `mcpool_client_get`, and sets the item's expiry to `ttl` seconds
/// (0 = never; above 30 days a unix time).
///
/// # Safety
/// As for `mcpool_client_get`.
#[no_mangle]
pub unsafe extern "C" fn mcpool_client_gat(
    client: *const mcpool_client,
    key: *const u8,
    key_len: usize,
    ttl: u32,
    out_item: *mut *mut mcpool_item,
) -> mcpool_status {
    // SAFETY: forwarded from the caller's promise.
    unsafe {
        retrieve(
            "gat",
            client,
            key,
            key_len,
            out_item,
            false,
            Some(ttl),
            false,
        )
    }
}

/// Get-and-touch with the CAS unique: like `mcpool_client_gat`, and the item carries its
/// CAS unique.
///
/// # Safety
/// As for `mcpool_client_get`.
#[no_mangle]
pub unsafe extern "C" fn mcpool_client_gats(
    client: *const mcpool_client,
    key: *const u8,
    key_len: usize,
    ttl: u32,
    out_item: *mut *mut mcpool_item,
) -> mcpool_status {
    // SAFETY: forwarded from the caller's promise.
    unsafe {
        retrieve(
            "gats",
            client,
            key,
            key_len,
            out_item,
            true,
            Some(ttl),
            true,
        )
    }
}

/// Called once per hit by `mcpool_client_get_multi_cb`, in the order the keys were given:
/// `index` is the key's position, `key`/`key_len` the caller's own key, and the value bytes
/// (binary, `value_len` of them) are valid only during the call: copy what you keep.
/// `cas` is 0 unless asked for. The callback must not free the client. It must return
/// normally: a C++ exception or a `longjmp` out of it is undefined behaviour, which may abort
/// the process or leak memory and leave a connection checked out; catch everything inside it.
pub type mcpool_hit_callback = Option<
    unsafe extern "C" fn(
        userdata: *mut c_void,
        index: usize,
        key: *const u8,
        key_len: usize,
        value: *const u8,
        value_len: usize,
        flags: u32,
        cas: u64,
    ),
>;

/// The checked keys of a multi-get and the results of the call.
///
/// # Safety
/// `keys` and `key_lens` are NULL or arrays of `n_keys` elements; each `keys[i]` is NULL or
/// valid for `key_lens[i]` bytes, for `'a`.
unsafe fn multi<'a>(
    c: &mcpool_client,
    keys: *const *const u8,
    key_lens: *const usize,
    n_keys: usize,
    with_cas: bool,
) -> Result<(CKeys<'a>, mcpool_multi), Failure> {
    if n_keys > MCPOOL_MAX_MULTI_KEYS {
        return Err(Failure::invalid(format!(
            "{n_keys} keys in one multi-get; the limit is {MCPOOL_MAX_MULTI_KEYS}"
        )));
    }
    let (ptrs, lens): (&[*const u8], &[usize]) = if n_keys == 0 {
        (&[], &[])
    } else if keys.is_null() || key_lens.is_null() {
        return Err(Failure::invalid("keys or key_lens is NULL"));
    } else {
        // SAFETY: both are non-NULL and the caller promises `n_keys` elements each;
        // `n_keys` ≤ 2^20 keeps the sizes far below isize::MAX.
        unsafe {
            (
                std::slice::from_raw_parts(keys, n_keys),
                std::slice::from_raw_parts(key_lens, n_keys),
            )
        }
    };
    if let Some(i) = ptrs.iter().position(|p| p.is_null()) {
        return Err(Failure::invalid(format!("key {i} is NULL")));
    }
    // SAFETY: every pointer is non-NULL (checked above) and the caller promises
    // `lens[i]` readable bytes at `ptrs[i]` for the whole call.
    let keys = unsafe { CKeys::new(ptrs, lens, c.max_key) };
    let op = if with_cas { "gets_multi" } else { "get_multi" };
    // The result set is the engine's sink: each value is decoded straight onto its one
    // buffer (inflated into it when stored compressed); each key's error is worded here.
    let mut set = Failing {
        multi: mcpool_multi::new(n_keys),
        keys: &keys,
        op,
    };
    c.client.read(&keys, with_cas, None, &mut set);
    let Failing { multi, .. } = set;
    multi.done();
    Ok((keys, multi))
}

/// The result set as a sink, wording each key's error as the C ABI does.
struct Failing<'k, 'a> {
    multi: mcpool_multi,
    keys: &'k CKeys<'a>,
    op: &'static str,
}

impl Sink for Failing<'_, '_> {
    #[inline]
    fn value(&mut self, i: usize, value: &[u8], flags: u32, cas: Option<u64>) -> CoreResult<()> {
        self.multi.value(i, value, flags, cas)
    }
    fn result(&mut self, i: usize, r: CoreResult<bool>) {
        match r {
            Err(e) => {
                let f = Failure::from_error(self.op, self.keys.shown(i), &e);
                self.multi.fail(i, f);
            }
            ok => self.multi.result(i, ok),
        }
    }
    #[inline]
    fn arena(&mut self) -> Option<&mut Vec<u8>> {
        self.multi.arena()
    }
    #[inline]
    fn appended(&mut self, i: usize, start: usize, flags: u32, cas: Option<u64>) -> CoreResult<()> {
        self.multi.appended(i, start, flags, cas)
    }
}

/// Reads many keys at once: one round trip per server, every server's request written
/// before any reply is read. Writes a result set with one entry per key, in the order
/// given, to `*out_multi`; walk it with `mcpool_multi_len` / `mcpool_multi_get`.
///
/// `keys[i]` has `key_lens[i]` bytes; at most `MCPOOL_MAX_MULTI_KEYS` keys; both arrays may
/// be NULL when `n_keys` is 0. With `with_cas`, the entries carry CAS uniques (`gets`).
/// Returns `MCPOOL_OK` whenever the set was made, even if some keys missed or failed: each
/// entry has its own status. A NULL key pointer fails the whole call.
///
/// Ownership: the caller owns `*out_multi` and frees it with `mcpool_multi_free`; the set
/// stays valid after `mcpool_client_free` (it owns its memory).
///
/// # Safety
/// `client` is NULL or live; `keys` and `key_lens` are NULL or arrays of `n_keys` elements;
/// each `keys[i]` is NULL or valid for `key_lens[i]` bytes; `out_multi` is NULL or valid for
/// a write of one pointer.
#[no_mangle]
pub unsafe extern "C" fn mcpool_client_get_multi(
    client: *const mcpool_client,
    keys: *const *const u8,
    key_lens: *const usize,
    n_keys: usize,
    with_cas: bool,
    out_multi: *mut *mut mcpool_multi,
) -> mcpool_status {
    landingpad(|| {
        // SAFETY: the caller promises a non-NULL `client` is live.
        let c = unsafe { ptr::handle(client, "client") }?;
        ptr::out(out_multi, "multi")?;
        // SAFETY: forwarded from the caller's promise.
        let (_, set) = unsafe { multi(c, keys, key_lens, n_keys, with_cas) }?;
        let m = Box::into_raw(Box::new(set));
        // SAFETY: checked non-NULL; the caller promises it is writable.
        unsafe { ptr::write(out_multi, m) };
        Ok(MCPOOL_OK)
    })
}

/// Reads many keys at once (as `mcpool_client_get_multi`) and calls `on_hit(userdata, …)`
/// for each hit, in key order, with a value that is valid only during that call: nothing is
/// left to free.
///
/// Returns `MCPOOL_OK` when every key was answered (hit or miss); otherwise the status of
/// the first key that failed, with its message as the last error (the hits of the other
/// keys are still delivered).
///
/// # Safety
/// As for `mcpool_client_get_multi`; `on_hit` is a valid function (NULL is refused) and
/// `userdata` is whatever it expects.
#[no_mangle]
pub unsafe extern "C" fn mcpool_client_get_multi_cb(
    client: *const mcpool_client,
    keys: *const *const u8,
    key_lens: *const usize,
    n_keys: usize,
    with_cas: bool,
    on_hit: mcpool_hit_callback,
    userdata: *mut c_void,
) -> mcpool_status {
    landingpad(|| {
        // SAFETY: the caller promises a non-NULL `client` is live.
        let c = unsafe { ptr::handle(client, "client") }?;
        let Some(on_hit) = on_hit else {
            return Err(Failure::invalid("on_hit callback is NULL"));
        };
        // SAFETY: forwarded from the caller's promise.
        let (checked, set) = unsafe { multi(c, keys, key_lens, n_keys, with_cas) }?;
        let mut first_failure = None;
        for i in 0..set.len() {
            match set.entry(i) {
                Ok(Some((v, flags, cas))) => {
                    let key = checked.shown(i).unwrap_or_default();
                    // SAFETY: the caller promises `on_hit` is a valid function that does not
                    // unwind; every pointer passed is valid for the length beside it.
                    unsafe {
                        on_hit(
                            userdata,
                            i,
                            key.as_ptr(),
                            key.len(),
                            v.as_ptr(),
                            v.len(),
                            flags,
                            cas,
                        )
                    };
                }
                Ok(None) => {}
                Err(f) => {
                    first_failure.get_or_insert(f);
                }
            }
        }
        first_failure.map_or(Ok(MCPOOL_OK), Err)
    })
}

// ----- storage -----

/// The shared body of the store commands.
///
/// # Safety
/// As for `mcpool_client_set`.
#[allow(clippy::too_many_arguments)]
unsafe fn store(
    op: &str,
    cmd: StoreCommand,
    client: *const mcpool_client,
    key: *const u8,
    key_len: usize,
    val: *const u8,
    value_len: usize,
    flags: u32,
    ttl: u32,
) -> mcpool_status {
    landingpad(|| -> Outcome {
        // SAFETY: forwarded from the caller's promise.
        let (c, key) = unsafe { keyed(op, client, key, key_len) }?;
        // SAFETY: forwarded from the caller's promise.
        let v = unsafe { value(c, op, cmd, key, val, value_len) }?;
        let outcome = core(op, key, c.client.store(cmd, key, v, flags, ttl))?;
        Ok(store_status(outcome))
    })
}

/// Stores `value` under `key` unconditionally, with the caller's `flags` (read back as given,
/// or refused with `MCPOOL_VALUE_FORMAT`: under the `mcpool` value format application flags
/// are 16 bits, 0..=65535, and a wider word must be a kind's flags from
/// `mcpool_client_kind_flags`; on the wire the format marks its values, `0x01000000` + the
/// application flags, so another client (libmemcached) sees flags 7 as 0x01000007: for the
/// word on the wire exactly as given, any 32 bits, use the `libmemcached` value format or
/// preset; docs/value-format.md) and `ttl` seconds (0 =
/// never expires; above 30 days a unix time; above `MCPOOL_MAX_TTL`, which memcached would
/// read as negative, `MCPOOL_INVALID_ARGUMENT` and nothing is sent). Values at or above the
/// compression threshold are compressed. `MCPOOL_OK` when stored. A value too large
/// (`MCPOOL_VALUE_TOO_LARGE`: longer once compressed than `max_value_size`, or longer as
/// given than both it and `max_decompressed_size`, refused before a byte of it is read, its
/// message naming the option to raise) is not sent, and the key is deleted, as memcached
/// deletes it when it refuses a set as too large: no older value is left to read (every
/// set: the batches, `mcpool_client_store_kind`; add, replace, append, prepend and cas leave
/// the key alone).
///
/// Under a kind's flags `value` is that kind's body as `mcpool_client_get` hands it out (an
/// int as decimal text, a bool as `"0"`/`"1"`): a get's body and flags stored back are the
/// same value, the core writing the format's wire form (Whalin's and spymemcached's binary
/// integers, Whalin's byte boolean); a body the flags cannot hold (not decimal text, outside
/// the type's range) is `MCPOOL_VALUE_FORMAT` and nothing is sent. The same for every call
/// that takes flags (`_set_multi*`, `_store_multi`, `_set_with_version`).
///
/// # Safety
/// `client` is NULL or live; `key` is NULL or valid for `key_len` bytes; `value` is NULL or
/// valid for `value_len` bytes (NULL only with length 0).
#[no_mangle]
pub unsafe extern "C" fn mcpool_client_set(
    client: *const mcpool_client,
    key: *const u8,
    key_len: usize,
    value: *const u8,
    value_len: usize,
    flags: u32,
    ttl: u32,
) -> mcpool_status {
    // SAFETY: forwarded from the caller's promise.
    unsafe {
        store(
            "set",
            StoreCommand::Set,
            client,
            key,
            key_len,
            value,
            value_len,
            flags,
            ttl,
        )
    }
}

/// Stores `value` under `key` as a counter for `incr`/`decr` (Whalin's `storeCounter`):
/// memcached's decimal text with raw flags 0 whatever the value format, never compressed,
/// the same form `mcpool_client_incr_or_init` creates. `value` is unsigned 64-bit, as
/// memcached's counters (0 to 2^64 - 1; incr then wraps to 0): a binding whose integers are
/// signed refuses a negative one before the call (a -1 cast to `uint64_t` would store
/// 18446744073709551615). `ttl` as for `mcpool_client_set`. `MCPOOL_OK` when stored.
///
/// # Safety
/// `client` is NULL or live; `key` is NULL or valid for `key_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn mcpool_client_set_counter(
    client: *const mcpool_client,
    key: *const u8,
    key_len: usize,
    value: u64,
    ttl: u32,
) -> mcpool_status {
    landingpad(|| -> Outcome {
        // SAFETY: forwarded from the caller's promise.
        let (c, key) = unsafe { keyed("set_counter", client, key, key_len) }?;
        let outcome = core("set_counter", key, c.client.set_counter(key, value, ttl))?;
        Ok(store_status(outcome))
    })
}

/// Stores only if `key` does not exist yet: `MCPOOL_OK`, or `MCPOOL_NOT_STORED`.
///
/// # Safety
/// As for `mcpool_client_set`.
#[no_mangle]
pub unsafe extern "C" fn mcpool_client_add(
    client: *const mcpool_client,
    key: *const u8,
    key_len: usize,
    value: *const u8,
    value_len: usize,
    flags: u32,
    ttl: u32,
) -> mcpool_status {
    // SAFETY: forwarded from the caller's promise.
    unsafe {
        store(
            "add",
            StoreCommand::Add,
            client,
            key,
            key_len,
            value,
            value_len,
            flags,
            ttl,
        )
    }
}

/// Stores only if `key` exists: `MCPOOL_OK`, or `MCPOOL_NOT_STORED`.
///
/// # Safety
/// As for `mcpool_client_set`.
#[no_mangle]
pub unsafe extern "C" fn mcpool_client_replace(
    client: *const mcpool_client,
    key: *const u8,
    key_len: usize,
    value: *const u8,
    value_len: usize,
    flags: u32,
    ttl: u32,
) -> mcpool_status {
    // SAFETY: forwarded from the caller's promise.
    unsafe {
        store(
            "replace",
            StoreCommand::Replace,
            client,
            key,
            key_len,
            value,
            value_len,
            flags,
            ttl,
        )
    }
}

/// Appends `value` to an existing item (never compressed; flags and expiry unchanged):
/// `MCPOOL_OK`, or `MCPOOL_NOT_STORED` when `key` is missing.
///
/// # Safety
/// As for `mcpool_client_set`.
#[no_mangle]
pub unsafe extern "C" fn mcpool_client_append(
    client: *const mcpool_client,
    key: *const u8,
    key_len: usize,
    value: *const u8,
    value_len: usize,
) -> mcpool_status {
    // SAFETY: forwarded from the caller's promise.
    unsafe {
        store(
            "append",
            StoreCommand::Append,
            client,
            key,
            key_len,
            value,
            value_len,
            0,
            0,
        )
    }
}

/// Prepends `value` to an existing item (never compressed; flags and expiry unchanged):
/// `MCPOOL_OK`, or `MCPOOL_NOT_STORED` when `key` is missing.
///
/// # Safety
/// As for `mcpool_client_set`.
#[no_mangle]
pub unsafe extern "C" fn mcpool_client_prepend(
    client: *const mcpool_client,
    key: *const u8,
    key_len: usize,
    value: *const u8,
    value_len: usize,
) -> mcpool_status {
    // SAFETY: forwarded from the caller's promise.
    unsafe {
        store(
            "prepend",
            StoreCommand::Prepend,
            client,
            key,
            key_len,
            value,
            value_len,
            0,
            0,
        )
    }
}

/// Compare-and-swap: stores only if the item's CAS unique is still `cas` (from
/// `mcpool_item_cas` after `mcpool_client_gets`). `MCPOOL_OK` when stored, `MCPOOL_EXISTS`
/// when someone changed it since, `MCPOOL_NOT_FOUND` when it is gone. A `cas` of 0 (no item
/// has it; the binary protocol would read it as "no CAS" and store unconditionally) is
/// `MCPOOL_INVALID_ARGUMENT` before anything is sent, on every protocol.
///
/// # Safety
/// As for `mcpool_client_set`.
#[no_mangle]
pub unsafe extern "C" fn mcpool_client_cas(
    client: *const mcpool_client,
    key: *const u8,
    key_len: usize,
    value: *const u8,
    value_len: usize,
    flags: u32,
    ttl: u32,
    cas: u64,
) -> mcpool_status {
    let cmd = StoreCommand::Cas(cas);
    // SAFETY: forwarded from the caller's promise.
    unsafe {
        store(
            "cas", cmd, client, key, key_len, value, value_len, flags, ttl,
        )
    }
}

// ----- deletion, arithmetic, touch -----

/// Deletes `key`: `MCPOOL_OK`, or `MCPOOL_NOT_FOUND` when it did not exist.
///
/// # Safety
/// `client` is NULL or live; `key` is NULL or valid for `key_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn mcpool_client_delete(
    client: *const mcpool_client,
    key: *const u8,
    key_len: usize,
) -> mcpool_status {
    landingpad(|| {
        // SAFETY: forwarded from the caller's promise.
        let (c, key) = unsafe { keyed("delete", client, key, key_len) }?;
        let existed = core("delete", key, c.client.delete(key))?;
        Ok(if existed { MCPOOL_OK } else { MCPOOL_NOT_FOUND })
    })
}

/// Sets a new expiry on `key`, `ttl` seconds: `MCPOOL_OK`, or `MCPOOL_NOT_FOUND`.
///
/// # Safety
/// `client` is NULL or live; `key` is NULL or valid for `key_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn mcpool_client_touch(
    client: *const mcpool_client,
    key: *const u8,
    key_len: usize,
    ttl: u32,
) -> mcpool_status {
    landingpad(|| {
        // SAFETY: forwarded from the caller's promise.
        let (c, key) = unsafe { keyed("touch", client, key, key_len) }?;
        let existed = core("touch", key, c.client.touch(key, ttl))?;
        Ok(if existed { MCPOOL_OK } else { MCPOOL_NOT_FOUND })
    })
}

/// The shared body of incr and decr.
///
/// # Safety
/// As for `mcpool_client_incr`.
unsafe fn arith(
    op: &str,
    client: *const mcpool_client,
    key: *const u8,
    key_len: usize,
    out_value: *mut u64,
    run: impl FnOnce(&Client, &[u8]) -> CoreResult<Option<u64>>,
) -> mcpool_status {
    landingpad(|| {
        // SAFETY: forwarded from the caller's promise.
        let (c, key) = unsafe { keyed(op, client, key, key_len) }?;
        ptr::out(out_value, "value")?;
        match core(op, key, run(&c.client, key))? {
            None => Ok(MCPOOL_NOT_FOUND),
            Some(n) => {
                // SAFETY: checked non-NULL; the caller promises it is writable.
                unsafe { ptr::write(out_value, n) };
                Ok(MCPOOL_OK)
            }
        }
    })
}

/// Adds `delta` to the decimal number stored at `key` (wrapping at 2^64 as memcached does)
/// and writes the new value to `*out_value`. `MCPOOL_NOT_FOUND` when `key` is missing;
/// `MCPOOL_CLIENT_ERROR` when the value is not a number.
///
/// # Safety
/// `client` is NULL or live; `key` is NULL or valid for `key_len` bytes; `out_value` is NULL
/// or valid for one write.
#[no_mangle]
pub unsafe extern "C" fn mcpool_client_incr(
    client: *const mcpool_client,
    key: *const u8,
    key_len: usize,
    delta: u64,
    out_value: *mut u64,
) -> mcpool_status {
    // SAFETY: forwarded from the caller's promise.
    unsafe {
        arith("incr", client, key, key_len, out_value, |c, k| {
            c.incr(k, delta)
        })
    }
}

/// Subtracts `delta` (memcached stops at 0) and writes the new value to `*out_value`.
/// `MCPOOL_NOT_FOUND` when `key` is missing.
///
/// # Safety
/// As for `mcpool_client_incr`.
#[no_mangle]
pub unsafe extern "C" fn mcpool_client_decr(
    client: *const mcpool_client,
    key: *const u8,
    key_len: usize,
    delta: u64,
    out_value: *mut u64,
) -> mcpool_status {
    // SAFETY: forwarded from the caller's promise.
    unsafe {
        arith("decr", client, key, key_len, out_value, |c, k| {
            c.decr(k, delta)
        })
    }
}

/// Increments, or creates the counter with `initial` (and `ttl`) when it is missing
/// (SockIOPool's `addOrIncr`); writes the counter's new value to `*out_value`.
///
/// # Safety
/// As for `mcpool_client_incr`.
#[no_mangle]
pub unsafe extern "C" fn mcpool_client_incr_or_init(
    client: *const mcpool_client,
    key: *const u8,
    key_len: usize,
    delta: u64,
    initial: u64,
    ttl: u32,
    out_value: *mut u64,
) -> mcpool_status {
    let run = |c: &Client, k: &[u8]| c.incr_or_init(k, delta, initial, ttl).map(Some);
    // SAFETY: forwarded from the caller's promise.
    unsafe { arith("incr_or_init", client, key, key_len, out_value, run) }
}

/// Decrements, or creates the counter with `initial` (and `ttl`) when it is missing
/// (`addOrDecr`); writes the counter's new value to `*out_value`.
///
/// # Safety
/// As for `mcpool_client_incr`.
#[no_mangle]
pub unsafe extern "C" fn mcpool_client_decr_or_init(
    client: *const mcpool_client,
    key: *const u8,
    key_len: usize,
    delta: u64,
    initial: u64,
    ttl: u32,
    out_value: *mut u64,
) -> mcpool_status {
    let run = |c: &Client, k: &[u8]| c.decr_or_init(k, delta, initial, ttl).map(Some);
    // SAFETY: forwarded from the caller's promise.
    unsafe { arith("decr_or_init", client, key, key_len, out_value, run) }
}

// ----- stampede protection (meta protocol) -----

/// What `mcpool_client_get_lease` found. Stable numbers, never reused.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum mcpool_lease {
    /// A fresh value: use it (the item is written).
    MCPOOL_LEASE_HIT = 0,
    /// This caller won the right to recompute the value and store it (with an ordinary set);
    /// every other caller is told to wait. The item, when written, is the stale value.
    MCPOOL_LEASE_RECOMPUTE = 1,
    /// Another caller is recomputing: serve the stale item if one is written, or retry
    /// shortly.
    MCPOOL_LEASE_WAIT = 2,
}

/// The `vivify_ttl_s` of `mcpool_client_get_lease` for a caller that names none (the
/// default of the Python, Perl and Java bindings): 30 seconds.
pub const MCPOOL_LEASE_DEFAULT_VIVIFY_TTL: u32 = 30;
const _: () = assert!(MCPOOL_LEASE_DEFAULT_VIVIFY_TTL == mcpool::Lease::DEFAULT_VIVIFY_TTL);

/// The `stale_ttl_s` of `mcpool_client_invalidate` for a caller that names none (the
/// default of the Python, Perl and Java bindings): 30 seconds.
pub const MCPOOL_LEASE_DEFAULT_STALE_TTL: u32 = 30;
const _: () = assert!(MCPOOL_LEASE_DEFAULT_STALE_TTL == mcpool::Lease::DEFAULT_STALE_TTL);

/// A read that protects against stampedes (meta protocol only): on a miss, or when the value
/// expires within `recache_below_s` seconds (0: never early), or was invalidated
/// (`mcpool_client_invalidate`), exactly one caller gets `MCPOOL_LEASE_RECOMPUTE` and the
/// others `MCPOOL_LEASE_WAIT`. A miss creates a placeholder for `vivify_ttl_s` seconds (at
/// least 1), so the election holds that long. That empty placeholder is a miss for this
/// client's plain reads (`mcpool_client_get` and the other gets: the core reads memcached's
/// flag on it); `add` is `MCPOOL_NOT_STORED` until the winner's set replaces it; text or
/// binary protocol clients read it as an empty value. A stale value may be empty (an
/// item of 0 bytes, not NULL). An empty value stored under flags 0 whose token a lease with
/// `recache_below_s` took answers as a placeholder does, and is taken for one (a miss);
/// docs/protocols.md, "Leases".
///
/// Returns `MCPOOL_OK` and writes the outcome to `*out_lease` and to `*out_item` the value
/// (for a hit), the stale value (for recompute or wait, when there is one), or NULL (none).
/// `MCPOOL_UNSUPPORTED` on the text and binary protocols.
///
/// Ownership: the caller owns a non-NULL `*out_item` and frees it with `mcpool_item_free`;
/// the item stays valid after `mcpool_client_free` (it owns its memory). The item carries its CAS unique.
///
/// # Safety
/// `client` is NULL or live; `key` is NULL or valid for `key_len` bytes; `out_lease` and
/// `out_item` are NULL or valid for one write.
#[no_mangle]
pub unsafe extern "C" fn mcpool_client_get_lease(
    client: *const mcpool_client,
    key: *const u8,
    key_len: usize,
    vivify_ttl_s: u32,
    recache_below_s: u32,
    out_lease: *mut mcpool_lease,
    out_item: *mut *mut mcpool_item,
) -> mcpool_status {
    landingpad(|| {
        // SAFETY: forwarded from the caller's promise.
        let (c, key) = unsafe { keyed("get_lease", client, key, key_len) }?;
        ptr::out(out_lease, "lease")?;
        ptr::out(out_item, "item")?;
        let recache = (recache_below_s > 0).then_some(recache_below_s);
        let lease = core(
            "get_lease",
            key,
            c.client.get_lease(key, vivify_ttl_s, recache),
        )?;
        let (outcome, item) = match lease {
            Lease::Hit(item) => (mcpool_lease::MCPOOL_LEASE_HIT, Some(item)),
            Lease::Recompute { stale } => (mcpool_lease::MCPOOL_LEASE_RECOMPUTE, stale),
            Lease::Wait { stale } => (mcpool_lease::MCPOOL_LEASE_WAIT, stale),
        };
        let item = item.map_or(std::ptr::null_mut(), mcpool_item::into_raw);
        // SAFETY: both outputs were checked non-NULL; the caller promises they are writable.
        unsafe {
            ptr::write(out_lease, outcome);
            ptr::write(out_item, item);
        }
        Ok(MCPOOL_OK)
    })
}

/// Marks `key` stale instead of deleting it (meta protocol only): readers through
/// `mcpool_client_get_lease` keep getting the old value, as a stale item with
/// `MCPOOL_LEASE_RECOMPUTE` for one of them and `MCPOOL_LEASE_WAIT` for the others, for
/// `stale_ttl_s` seconds. `MCPOOL_OK`, or `MCPOOL_NOT_FOUND` when the key did not exist;
/// `MCPOOL_UNSUPPORTED` on the text and binary protocols.
///
/// # Safety
/// `client` is NULL or live; `key` is NULL or valid for `key_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn mcpool_client_invalidate(
    client: *const mcpool_client,
    key: *const u8,
    key_len: usize,
    stale_ttl_s: u32,
) -> mcpool_status {
    landingpad(|| {
        // SAFETY: forwarded from the caller's promise.
        let (c, key) = unsafe { keyed("invalidate", client, key, key_len) }?;
        let existed = core("invalidate", key, c.client.invalidate(key, stale_ttl_s))?;
        Ok(if existed { MCPOOL_OK } else { MCPOOL_NOT_FOUND })
    })
}

/// `mcpool_client_set` that gives the item the CAS version `version` instead of the
/// server's next one (meta `E` flag): for writers that keep several pools consistent.
/// `MCPOOL_OK` when stored. Meta protocol and memcached 1.6.27 or later only:
/// `MCPOOL_UNSUPPORTED` on the text and binary protocols, and from an older server (the
/// message names the version it reports; nothing was stored). A `version` of 0 is
/// `MCPOOL_INVALID_ARGUMENT` before anything is sent (memcached never gives an item CAS 0,
/// as for `cas`; so on every `_with_version` call).
///
/// # Safety
/// As for `mcpool_client_set`.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn mcpool_client_set_with_version(
    client: *const mcpool_client,
    key: *const u8,
    key_len: usize,
    val: *const u8,
    value_len: usize,
    flags: u32,
    ttl: u32,
    version: u64,
) -> mcpool_status {
    landingpad(|| -> Outcome {
        // SAFETY: forwarded from the caller's promise.
        let (c, key) = unsafe { keyed("set_with_version", client, key, key_len) }?;
        // SAFETY: forwarded from the caller's promise.
        let v = unsafe {
            value(
                c,
                "set_with_version",
                StoreCommand::Set,
                key,
                val,
                value_len,
            )
        }?;
        let stored = c
            .client
            .store_with_version(StoreCommand::Set, key, v, flags, ttl, version);
        Ok(store_status(core("set_with_version", key, stored)?))
    })
}

/// `mcpool_client_delete` with an explicit CAS version (meta `md` with `E`): `MCPOOL_OK`
/// when `key` existed and was deleted, `MCPOOL_NOT_FOUND` when it did not. Meta protocol
/// and memcached 1.6.27 or later only: `MCPOOL_UNSUPPORTED` on the text and binary
/// protocols, and from an older server (the message names the version it reports; nothing
/// was deleted).
///
/// # Safety
/// As for `mcpool_client_delete`.
#[no_mangle]
pub unsafe extern "C" fn mcpool_client_delete_with_version(
    client: *const mcpool_client,
    key: *const u8,
    key_len: usize,
    version: u64,
) -> mcpool_status {
    landingpad(|| {
        // SAFETY: forwarded from the caller's promise.
        let (c, key) = unsafe { keyed("delete_with_version", client, key, key_len) }?;
        let existed = core(
            "delete_with_version",
            key,
            c.client.delete_with_version(key, version),
        )?;
        Ok(if existed { MCPOOL_OK } else { MCPOOL_NOT_FOUND })
    })
}

/// `mcpool_client_incr` (`incr` true) or `mcpool_client_decr` (`incr` false) that gives the
/// counter the CAS version `version` (meta `ma` with `E`); writes the new value to
/// `*out_value`. `MCPOOL_NOT_FOUND` when `key` is missing, `MCPOOL_CLIENT_ERROR` when the
/// value is not a number. Meta protocol and memcached 1.6.27 or later only:
/// `MCPOOL_UNSUPPORTED` on the text and binary protocols, and from an older server (the
/// message names the version it reports; nothing was changed).
///
/// # Safety
/// As for `mcpool_client_incr`.
#[no_mangle]
pub unsafe extern "C" fn mcpool_client_arith_with_version(
    client: *const mcpool_client,
    incr: bool,
    key: *const u8,
    key_len: usize,
    delta: u64,
    version: u64,
    out_value: *mut u64,
) -> mcpool_status {
    let op = if incr {
        "incr_with_version"
    } else {
        "decr_with_version"
    };
    let run = |c: &Client, k: &[u8]| c.arith_with_version(incr, k, delta, version);
    // SAFETY: forwarded from the caller's promise.
    unsafe { arith(op, client, key, key_len, out_value, run) }
}

/// An item's metadata, read without its value by `mcpool_client_meta_info`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct mcpool_item_info {
    /// 1 when the item had been read before, else 0.
    pub hit_before: u8,
    /// Seconds since the item was last accessed.
    pub last_access_s: u64,
    /// Seconds before the item expires; -1 when it never expires.
    pub ttl_s: i64,
    /// The CAS version.
    pub cas: u64,
    /// The stored value's size in bytes (as stored: compressed if it was).
    pub size: u64,
    /// The flags word as stored (value-format bits included).
    pub flags: u32,
}

/// Reads `key`'s metadata without its value (meta `mg <key> h l t c s f u`; the read is not
/// an access). `MCPOOL_OK` and `*out_info` written; `MCPOOL_NOT_FOUND` for a miss (nothing
/// written); `MCPOOL_UNSUPPORTED` on the text and binary protocols.
///
/// # Safety
/// `client` is NULL or live; `key` is NULL or valid for `key_len` bytes; `out_info` is NULL
/// or valid for one write.
#[no_mangle]
pub unsafe extern "C" fn mcpool_client_meta_info(
    client: *const mcpool_client,
    key: *const u8,
    key_len: usize,
    out_info: *mut mcpool_item_info,
) -> mcpool_status {
    landingpad(|| {
        // SAFETY: forwarded from the caller's promise.
        let (c, key) = unsafe { keyed("meta_info", client, key, key_len) }?;
        ptr::out(out_info, "info")?;
        let Some(i) = core("meta_info", key, c.client.meta_info(key))? else {
            return Ok(MCPOOL_NOT_FOUND);
        };
        let info = mcpool_item_info {
            hit_before: u8::from(i.hit_before),
            last_access_s: i.last_access.as_secs(),
            ttl_s: i
                .ttl
                .map_or(-1, |t| i64::try_from(t.as_secs()).unwrap_or(i64::MAX)),
            cas: i.cas,
            size: i.size,
            flags: i.flags,
        };
        // SAFETY: checked non-NULL; the caller promises it is writable.
        unsafe { ptr::write(out_info, info) };
        Ok(MCPOOL_OK)
    })
}

// ----- whole-server commands -----

/// Invalidates every item on every server: now (`delay_s` 0) or after `delay_s` seconds.
/// Tries every server; returns the first failure. A delay above `MCPOOL_MAX_TTL` is
/// `MCPOOL_INVALID_ARGUMENT`, nothing sent.
///
/// # Safety
/// `client` is NULL or live.
#[no_mangle]
pub unsafe extern "C" fn mcpool_client_flush_all(
    client: *const mcpool_client,
    delay_s: u32,
) -> mcpool_status {
    landingpad(|| {
        // SAFETY: the caller promises a non-NULL `client` is live.
        let c = unsafe { ptr::handle(client, "client") }?;
        c.client
            .flush_all((delay_s > 0).then_some(delay_s))
            .map_err(|e| Failure::from_error("flush_all", None, &e))?;
        Ok(MCPOOL_OK)
    })
}

/// Invalidates every item on one server, `index` in the configuration order (as
/// `mcpool_client_server_for` and `mcpool_client_server_label` number them), now (`delay_s`
/// 0) or after `delay_s` seconds: Whalin's `flushAll(String[] servers)`. Returns `MCPOOL_OK`
/// once it answered, its error otherwise; `MCPOOL_OUT_OF_RANGE` for an index past the list
/// (as `mcpool_client_server_label`), `MCPOOL_INVALID_ARGUMENT` for a delay above
/// `MCPOOL_MAX_TTL`, nothing sent.
///
/// # Safety
/// `client` is NULL or live.
#[no_mangle]
pub unsafe extern "C" fn mcpool_client_flush_server(
    client: *const mcpool_client,
    index: usize,
    delay_s: u32,
) -> mcpool_status {
    landingpad(|| {
        // SAFETY: the caller promises a non-NULL `client` is live.
        let c = unsafe { ptr::handle(client, "client") }?;
        let servers = c.client.server_labels().len();
        if index >= servers {
            return Err(super::values::out_of_range("server", index, servers));
        }
        c.client
            .flush_server(index, (delay_s > 0).then_some(delay_s))
            .map_err(|e| Failure::from_error("flush_server", None, &e))?;
        Ok(MCPOOL_OK)
    })
}

/// Invalidates every item on every server, now (`delay_s` 0) or after `delay_s` seconds,
/// and writes each server's outcome to `*out_results`: a server that was flushed has status
/// `MCPOOL_OK` and no pairs; one that failed has its status (`mcpool_server_results_status`,
/// which also sets the last error to its message). Returns `MCPOOL_OK`
/// whenever the results were made. `mcpool_client_flush_all` is the same, reduced to the
/// first failure. A delay above `MCPOOL_MAX_TTL` is `MCPOOL_INVALID_ARGUMENT` for the whole
/// call, nothing sent and `*out_results` not written (as `mcpool_client_flush_all`).
///
/// Ownership: the caller owns `*out_results` and frees it with `mcpool_server_results_free`;
/// the results stay valid after `mcpool_client_free` (they own their memory).
///
/// # Safety
/// `client` is NULL or live; `out_results` is NULL or valid for a write of one pointer.
#[no_mangle]
pub unsafe extern "C" fn mcpool_client_flush_all_each(
    client: *const mcpool_client,
    delay_s: u32,
    out_results: *mut *mut mcpool_server_results,
) -> mcpool_status {
    landingpad(|| {
        // SAFETY: the caller promises a non-NULL `client` is live.
        let c = unsafe { ptr::handle(client, "client") }?;
        ptr::out(out_results, "results")?;
        // A delay memcached cannot honour is the caller's mistake, refused as a whole before
        // any server is asked, as `mcpool_client_flush_all` and `_flush_server` refuse it:
        // not spread over the servers' entries, which a caller that checks only the status
        // would read as flushed (tester finding cteam2 4).
        // (named as the call: retest32 5)
        mcpool::ttl::check("delay", delay_s)
            .map_err(|e| Failure::from_error("flush_all_each", None, &e))?;
        let r = per_server(
            "flush_all",
            c.client.flush_all_each((delay_s > 0).then_some(delay_s)),
            |()| Vec::new(),
        );
        // SAFETY: checked non-NULL; the caller promises it is writable.
        unsafe { ptr::write(out_results, r) };
        Ok(MCPOOL_OK)
    })
}

fn per_server<T>(
    op: &str,
    results: PerServer<T>,
    pairs: impl Fn(T) -> Vec<(Text, Text)>,
) -> *mut mcpool_server_results {
    let servers = results
        .into_iter()
        .map(|(label, r)| ServerEntry {
            label: Text::new(&label),
            result: r.map(&pairs).map_err(|e| {
                let f = Failure::from_error(op, None, &e);
                (f.status, f.message)
            }),
        })
        .collect();
    Box::into_raw(Box::new(mcpool_server_results { servers }))
}

/// Asks every server for its version. Writes per-server results to `*out_results`: each
/// server that answered has one pair, `("version", "<its version>")`; each that failed has
/// its status (`mcpool_server_results_status`). Returns `MCPOOL_OK` whenever the results
/// were made.
///
/// Ownership: the caller owns `*out_results` and frees it with `mcpool_server_results_free`;
/// the results stay valid after `mcpool_client_free` (they own their memory).
///
/// # Safety
/// `client` is NULL or live; `out_results` is NULL or valid for a write of one pointer.
#[no_mangle]
pub unsafe extern "C" fn mcpool_client_version(
    client: *const mcpool_client,
    out_results: *mut *mut mcpool_server_results,
) -> mcpool_status {
    landingpad(|| {
        // SAFETY: the caller promises a non-NULL `client` is live.
        let c = unsafe { ptr::handle(client, "client") }?;
        ptr::out(out_results, "results")?;
        let r = per_server("version", c.client.version(), |v| {
            vec![(Text::new("version"), Text::new(&v))]
        });
        // SAFETY: checked non-NULL; the caller promises it is writable.
        unsafe { ptr::write(out_results, r) };
        Ok(MCPOOL_OK)
    })
}

/// A no-op round trip to every server (meta `mn`, binary NOOP, text `version` with its
/// answer dropped). Writes per-server results to `*out_results`: a server that answered has
/// status `MCPOOL_OK` and no pairs; one that failed has its status
/// (`mcpool_server_results_status`). Returns `MCPOOL_OK` whenever the results were made.
///
/// Ownership: the caller owns `*out_results` and frees it with `mcpool_server_results_free`;
/// the results stay valid after `mcpool_client_free` (they own their memory).
///
/// # Safety
/// `client` is NULL or live; `out_results` is NULL or valid for a write of one pointer.
#[no_mangle]
pub unsafe extern "C" fn mcpool_client_noop(
    client: *const mcpool_client,
    out_results: *mut *mut mcpool_server_results,
) -> mcpool_status {
    landingpad(|| {
        // SAFETY: the caller promises a non-NULL `client` is live.
        let c = unsafe { ptr::handle(client, "client") }?;
        ptr::out(out_results, "results")?;
        let r = per_server("noop", c.client.noop(), |()| Vec::new());
        // SAFETY: checked non-NULL; the caller promises it is writable.
        unsafe { ptr::write(out_results, r) };
        Ok(MCPOOL_OK)
    })
}

/// Asks every server for its statistics: the general ones when `group` is NULL with
/// `group_len` 0, else a group such as `"items"`, `"slabs"`, `"settings"` (`group_len`
/// bytes, at most 64, no NUL needed). Writes per-server results of `(name, value)` pairs to
/// `*out_results`. Returns `MCPOOL_OK` whenever the results were made (each server's own
/// status in them), `MCPOOL_INVALID_ARGUMENT` for a group that is not UTF-8 or that cannot be
/// sent (empty, or with a space or control byte such as CR LF), before any I/O and with
/// nothing written.
///
/// Ownership: the caller owns `*out_results` and frees it with `mcpool_server_results_free`;
/// the results stay valid after `mcpool_client_free` (they own their memory).
///
/// # Safety
/// `client` is NULL or live; `group` is NULL or valid for `group_len` bytes; `out_results`
/// is NULL or valid for a write of one pointer.
#[no_mangle]
pub unsafe extern "C" fn mcpool_client_stats(
    client: *const mcpool_client,
    group: *const c_char,
    group_len: usize,
    out_results: *mut *mut mcpool_server_results,
) -> mcpool_status {
    landingpad(|| {
        // SAFETY: the caller promises a non-NULL `client` is live.
        let c = unsafe { ptr::handle(client, "client") }?;
        let group = if group.is_null() && group_len == 0 {
            None
        } else {
            // SAFETY: the caller promises `group_len` readable bytes at a non-NULL `group`.
            Some(unsafe { ptr::text(group, group_len, MAX_STATS_GROUP, "stats group") }?)
        };
        ptr::out(out_results, "results")?;
        let results = c.client.stats(group);
        // The core refuses a group it will not send (empty, a space or control byte: a CR LF
        // would start another command) with one invalid-argument error per server, before
        // any I/O: a bad argument of this call, not the servers' answers.
        if group.is_some()
            && results
                .iter()
                .all(|(_, r)| matches!(r, Err(Error::InvalidArgument { .. })))
        {
            if let Some((_, Err(e))) = results.first() {
                return Err(Failure::invalid(format!("stats: {e}")));
            }
        }
        let r = per_server("stats", results, |pairs| {
            pairs
                .iter()
                .map(|(n, v)| (Text::new(n), Text::new(v)))
                .collect()
        });
        // SAFETY: checked non-NULL; the caller promises it is writable.
        unsafe { ptr::write(out_results, r) };
        Ok(MCPOOL_OK)
    })
}
