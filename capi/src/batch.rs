//! Batched commands (stores and deletes pipelined per server) and reads into the caller's
//! own memory (`mcpool_client_get_into`: the bytes go from the connection's read buffer
//! straight into a buffer the caller allocates, with no intermediate item).

use super::client::mcpool_client;
use super::commands::MCPOOL_MAX_MULTI_KEYS;
use super::keys::CKeys;
use super::kinds::{kind_arg, mcpool_kind, mcpool_store_op, MCPOOL_KIND_RAW};
use super::landing::{landingpad, Failure, Outcome};
use super::last_error;
use super::ptr;
use super::status::mcpool_status::{
    self, MCPOOL_ALLOC_FAILED, MCPOOL_INVALID_KEY, MCPOOL_NOT_FOUND, MCPOOL_OK,
    MCPOOL_VALUE_TOO_LARGE,
};
use mcpool::error::Result as CoreResult;
use mcpool::heap_guard::Handed;
use mcpool::key::{Single, MAX_KEY_LEN};
use mcpool::set_item::{Compress, SetItem};
use mcpool::sink::{Callbacks, Sink};
use mcpool::StoreCommand;
use std::ffi::c_void;

/// [`landingpad`] for a batch call (one that writes a status per item, whose failed items'
/// messages `mcpool_last_item_error_message` gives): the previous batch call's messages are
/// dropped first, so that a call refused as a whole (a NULL array, a bad `op`, too many
/// items: before any I/O, no status written) leaves an empty list, as the header promises
/// ("each replaces the list"), never the messages of an earlier call (tester finding cteam2
/// 1: a refused `set_multi` left the previous call's `invalid key "bad key"` on item 1).
pub(crate) fn batch_landingpad(body: impl FnOnce() -> Outcome) -> mcpool_status {
    last_error::clear_items();
    landingpad(body)
}

/// An array of `n` elements from C; NULL is allowed only when `n` is 0.
///
/// # Safety
/// A non-NULL `p` must be valid for reads of `n` elements for `'a`.
unsafe fn array<'a, T>(p: *const T, n: usize, what: &str) -> Result<&'a [T], Failure> {
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(Failure::invalid(format!("{what} is NULL")));
    }
    // SAFETY: `p` is not NULL, the callers bound `n` by MCPOOL_MAX_MULTI_KEYS (so the size
    // is far below isize::MAX), and the caller promises `n` readable elements.
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

/// Checks an output array of `n` elements before any work is done: NULL is allowed only
/// when `n` is 0, as for the input arrays ([`array`]), so that an empty batch needs no
/// arrays at all on every batch call (tester finding batches 6: `mcpool_client_get_multi`
/// took NULLs with 0 keys, the others refused a NULL statuses array).
pub(crate) fn out_n<T>(p: *mut T, n: usize, what: &str) -> Result<(), Failure> {
    if n == 0 {
        return Ok(());
    }
    ptr::out(p, what)
}

fn check_count(n: usize, op: &str) -> Result<(), Failure> {
    if n > MCPOOL_MAX_MULTI_KEYS {
        return Err(Failure::invalid(format!(
            "{n} keys in one {op}; the limit is {MCPOOL_MAX_MULTI_KEYS}"
        )));
    }
    Ok(())
}

/// Checked keys, and the `(index, length)` of those over 250 bytes.
pub(crate) type CheckedKeys<'a> = (Vec<&'a [u8]>, Vec<(usize, usize)>);

/// The keys of a multi-key call, checked: a NULL array (with `n` > 0) or a NULL key fails the
/// whole call; a key over 250 bytes fails alone (it is passed on empty, which the core
/// refuses without I/O, and its message is replaced by [`too_long`]): returned as
/// `(index, length)` pairs.
///
/// # Safety
/// `keys` and `key_lens` are NULL or arrays of `n` elements; each `keys[i]` is NULL or valid
/// for `key_lens[i]` bytes, for `'a`.
pub(crate) unsafe fn checked_keys<'a>(
    keys: *const *const u8,
    key_lens: *const usize,
    n: usize,
    op: &str,
    max: usize,
) -> Result<CheckedKeys<'a>, Failure> {
    check_count(n, op)?;
    // SAFETY: forwarded from the caller's promise.
    let ptrs = unsafe { array(keys, n, "keys") }?;
    // SAFETY: forwarded from the caller's promise.
    let lens = unsafe { array(key_lens, n, "key_lens") }?;
    let mut checked = Vec::with_capacity(n);
    let mut long = Vec::new();
    for (i, (&p, &len)) in ptrs.iter().zip(lens).enumerate() {
        if p.is_null() {
            return Err(Failure::invalid(format!("key {i} is NULL")));
        }
        if len > max.clamp(MAX_KEY_LEN, mcpool::key::MAX_HASHED_KEY_LEN) {
            long.push((i, len));
            checked.push(&[][..]);
        } else {
            // SAFETY: `p` is not NULL, `len` ≤ 64 KiB, and the caller promises `len` readable
            // bytes at `p`.
            checked.push(unsafe { std::slice::from_raw_parts(p, len) });
        }
    }
    Ok((checked, long))
}

/// The keys of a multi-key call as the core reads them: a NULL array (with `n` > 0) or a
/// NULL key fails the whole call; a key over 250 bytes fails alone (the core's `Keys` gives
/// its error).
///
/// # Safety
/// As for [`checked_keys`].
pub(crate) unsafe fn c_keys<'a>(
    keys: *const *const u8,
    key_lens: *const usize,
    n: usize,
    op: &str,
    max: usize,
) -> Result<CKeys<'a>, Failure> {
    check_count(n, op)?;
    // SAFETY: forwarded from the caller's promise.
    let ptrs = unsafe { array(keys, n, "keys") }?;
    // SAFETY: forwarded from the caller's promise.
    let lens = unsafe { array(key_lens, n, "key_lens") }?;
    if let Some(i) = ptrs.iter().position(|p| p.is_null()) {
        return Err(Failure::invalid(format!("key {i} is NULL")));
    }
    // SAFETY: every pointer is non-NULL (checked above); the caller promises the bytes.
    Ok(unsafe { CKeys::new(ptrs, lens, max) })
}

/// The failure of key number `i`, too long at `len` bytes.
pub(crate) fn too_long(op: &str, i: usize, len: usize) -> Failure {
    Failure::new(
        MCPOOL_INVALID_KEY,
        format!("{op}: {}", super::keys::too_long_at(i, len)),
    )
}

/// Writes each item's status to `out` and records every failure's message (the first as the
/// last error; each by its item for `mcpool_last_item_error_message`).
///
/// # Safety
/// `out` is valid for writes of `statuses.len()` elements.
pub(crate) unsafe fn write_statuses(
    out: *mut mcpool_status,
    statuses: Vec<Result<mcpool_status, Failure>>,
) {
    let mut failed = Vec::new();
    for (i, s) in statuses.into_iter().enumerate() {
        let status = match s {
            Ok(s) => s,
            Err(f) => {
                let status = f.status;
                failed.push((i, f));
                status
            }
        };
        // SAFETY: `i` < the number of statuses, for which the caller promises room.
        unsafe { out.add(i).write(status) };
    }
    last_error::set_items(failed);
}

/// Per-item results of the core, turned into statuses (with the key in each message).
fn statuses<T>(
    op: &str,
    keys: &[&[u8]],
    results: Vec<CoreResult<T>>,
    answer: impl Fn(T) -> mcpool_status,
) -> Vec<Result<mcpool_status, Failure>> {
    results
        .into_iter()
        .zip(keys)
        .map(|(r, k)| {
            r.map(&answer)
                .map_err(|e| Failure::from_error(op, Some(k), &e))
        })
        .collect()
}

/// Stores `n` items unconditionally, pipelined: per server every command is written in one go
/// (quiet requests closed by a barrier on meta and binary), then every reply read. Item `i` is
/// `keys[i]` (`key_lens[i]` bytes) with `values[i]` (`value_lens[i]` bytes; NULL allowed when
/// the length is 0) and `flags[i]` (`flags` may be NULL: all 0), all with expiry `ttl`.
/// Values are compressed as by `mcpool_client_set`.
///
/// Returns `MCPOOL_OK` once every item has its status in `out_statuses[i]` (`MCPOOL_OK`
/// stored, or the item's error: `MCPOOL_INVALID_KEY`, `MCPOOL_VALUE_TOO_LARGE`, a server
/// status); when some item failed, the thread's last error holds the first failure's
/// message. A NULL array (with `n` > 0: an empty batch needs none) or a NULL key or value
/// pointer (with a length) fails the whole call before any I/O, and then nothing is written.
/// At most `MCPOOL_MAX_MULTI_KEYS` items.
///
/// # Safety
/// `client` is NULL or live; `keys`, `key_lens`, `values`, `value_lens` are NULL or arrays of
/// `n` elements, `flags` NULL or an array of `n`, `out_statuses` NULL or room for `n`
/// statuses; each key and value is NULL or valid for its length.
#[no_mangle]
pub unsafe extern "C" fn mcpool_client_set_multi(
    client: *const mcpool_client,
    keys: *const *const u8,
    key_lens: *const usize,
    values: *const *const u8,
    value_lens: *const usize,
    flags: *const u32,
    n: usize,
    ttl: u32,
    out_statuses: *mut mcpool_status,
) -> mcpool_status {
    // SAFETY: forwarded from the caller's promise.
    unsafe {
        store_multi(
            "set_multi",
            StoreCommand::Set,
            client,
            keys,
            key_lens,
            values,
            value_lens,
            flags,
            std::ptr::null(),
            Ttls::All(ttl),
            std::ptr::null(),
            std::ptr::null(),
            n,
            out_statuses,
        )
    }
}

/// Each item's value of a batch store, or the failure that refuses that item alone (a value
/// over the input limit, a key too long to read: `long`); a NULL value with a length fails
/// the whole call.
///
/// # Safety
/// Each `vptrs[i]` is NULL or valid for `vlens[i]` bytes, for `'a`.
unsafe fn item_values<'a>(
    c: &mcpool_client,
    op: &str,
    cmd: StoreCommand,
    keys: &[&[u8]],
    long: &[(usize, usize)],
    vptrs: &[*const u8],
    vlens: &[usize],
) -> Result<Vec<Result<&'a [u8], Failure>>, Failure> {
    let mut values = Vec::with_capacity(vptrs.len());
    for (i, (&p, &len)) in vptrs.iter().zip(vlens).enumerate() {
        // the core's refusal of a value too long to read (a set's key deleted)
        let checked = super::commands::value_len_checked(c, op, cmd, keys[i], p, len);
        // SAFETY: the caller promises `len` readable bytes at a non-NULL `p`.
        let v = match checked.and_then(|()| unsafe {
            ptr::bytes(p, len, c.max_input, "value", MCPOOL_VALUE_TOO_LARGE)
        }) {
            Ok(v) => Ok(v),
            Err(f) if f.status == MCPOOL_VALUE_TOO_LARGE => Err(f),
            Err(f) => return Err(Failure::invalid(format!("value {i}: {}", f.message))),
        };
        let v = match long.iter().find(|&&(j, _)| j == i) {
            Some(&(_, len)) => Err(too_long(op, i, len)),
            None => v,
        };
        values.push(v);
    }
    Ok(values)
}

/// The expiry of each item of a batch store.
#[derive(Clone, Copy)]
enum Ttls {
    /// One expiry for every item.
    All(u32),
    /// `ttls[i]` for item `i` (an array of `n`; NULL: all 0).
    Each(*const u32),
}

/// The body of `mcpool_client_set_multi` and `mcpool_client_set_multi_ttl`.
///
/// # Safety
/// As for `mcpool_client_set_multi_ttl`.
#[allow(clippy::too_many_arguments)]
unsafe fn store_multi(
    op: &str,
    cmd: StoreCommand,
    client: *const mcpool_client,
    keys: *const *const u8,
    key_lens: *const usize,
    values: *const *const u8,
    value_lens: *const usize,
    flags: *const u32,
    kinds: *const mcpool_kind,
    ttls: Ttls,
    cas: *const u64,
    compress: *const u8,
    n: usize,
    out_statuses: *mut mcpool_status,
) -> mcpool_status {
    batch_landingpad(|| {
        // SAFETY: the caller promises a non-NULL `client` is live.
        let c = unsafe { ptr::handle(client, "client") }?;
        out_n(out_statuses, n, "statuses")?;
        // SAFETY: forwarded from the caller's promise.
        let (keys, long) = unsafe { checked_keys(keys, key_lens, n, op, c.max_key) }?;
        // SAFETY: forwarded from the caller's promise.
        let vptrs = unsafe { array(values, n, "values") }?;
        // SAFETY: forwarded from the caller's promise.
        let vlens = unsafe { array(value_lens, n, "value_lens") }?;
        // SAFETY: forwarded from the caller's promise (NULL: all 0).
        let flags = unsafe { optional(flags, n, "flags") }?;
        let (ttl_all, ttl_each) = match ttls {
            Ttls::All(t) => (t, None),
            // SAFETY: forwarded from the caller's promise (NULL: all 0).
            Ttls::Each(p) => (0, unsafe { optional(p, n, "ttls") }?),
        };
        // SAFETY: forwarded from the caller's promise (NULL: bytes under `flags`).
        let kinds = unsafe { optional(kinds, n, "kinds") }?
            .map(|k| {
                k.iter()
                    .map(|&k| match k {
                        MCPOOL_KIND_RAW => Ok(None),
                        k => kind_arg(op, k).map(Some),
                    })
                    .collect::<Result<Vec<_>, _>>()
            })
            .transpose()?;
        // SAFETY: forwarded from the caller's promise (NULL: all 0).
        let cas = unsafe { optional(cas, n, "cas") }?;
        // SAFETY: forwarded from the caller's promise.
        let compress = unsafe { optional(compress, n, "compress") }?;
        let mut decisions = Vec::with_capacity(if compress.is_some() { n } else { 0 });
        for (i, &b) in compress.unwrap_or(&[]).iter().enumerate() {
            decisions.push(Compress::from_byte(b).ok_or_else(|| {
                Failure::invalid(format!(
                    "{op}: compress[{i}] is {b}; 0 (never), 1 (the client's rule), 2 (always) \
                     or 16 + a level (16..=38: always, at that level)"
                ))
            })?);
        }
        let mut refused: Vec<Option<Failure>> = (0..n).map(|_| None).collect();
        let mut items = Vec::with_capacity(n);
        let mut positions = Vec::with_capacity(n);
        // SAFETY: forwarded from the caller's promise.
        let read = unsafe { item_values(c, op, cmd, &keys, &long, vptrs, vlens) }?;
        for (i, v) in read.into_iter().enumerate() {
            let v = match v {
                Ok(v) => v,
                Err(f) => {
                    refused[i] = Some(f);
                    continue;
                }
            };
            items.push(SetItem {
                key: keys[i],
                value: v,
                flags: flags.map_or(0, |f| f[i]),
                ttl: ttl_each.map_or(ttl_all, |t| t[i]),
                compress: decisions.get(i).copied().unwrap_or_default(),
                cas: cas.map_or(0, |c| c[i]),
                kind: kinds.as_ref().and_then(|k| k[i]),
            });
            positions.push(i);
        }
        let sent_keys: Vec<&[u8]> = items.iter().map(|it| it.key).collect();
        let results = statuses(
            op,
            &sent_keys,
            c.client.store_multi_items(cmd, &items),
            super::commands::store_status,
        );
        let mut all: Vec<Result<mcpool_status, Failure>> = refused
            .into_iter()
            .map(|r| r.map_or(Ok(MCPOOL_OK), Err))
            .collect();
        for (pos, r) in positions.into_iter().zip(results) {
            all[pos] = r;
        }
        // SAFETY: checked non-NULL; the caller promises room for `n` statuses.
        unsafe { write_statuses(out_statuses, all) };
        Ok(MCPOOL_OK)
    })
}

/// `compress[i]` of `mcpool_client_set_multi_ttl`: never compress this value.
pub const MCPOOL_COMPRESS_NEVER: u8 = 0;
/// `compress[i]` of `mcpool_client_set_multi_ttl`: the client's rule (on, and at least the
/// compression threshold).
pub const MCPOOL_COMPRESS_AUTO: u8 = 1;
/// `compress[i]` of `mcpool_client_set_multi_ttl`: compress whatever the size.
pub const MCPOOL_COMPRESS_ALWAYS: u8 = 2;

/// An optional array of `n` elements: NULL is `None`.
///
/// # Safety
/// A non-NULL `p` must be valid for reads of `n` elements for `'a`.
unsafe fn optional<'a, T>(p: *const T, n: usize, what: &str) -> Result<Option<&'a [T]>, Failure> {
    if p.is_null() {
        return Ok(None);
    }
    // SAFETY: forwarded from the caller's promise.
    unsafe { array(p, n, what) }.map(Some)
}

/// `mcpool_client_set_multi` with each item's own expiry and compression decision, in one
/// pipelined round trip per server: item `i` expires after `ttls[i]` seconds (`ttls` NULL:
/// all 0, no expiry) and is compressed as `compress[i]` says: 0 never, 1 the client's rule
/// (compression on and at least the compression threshold), 2 always (whatever the size or
/// the on/off setting, kept only when it shrinks to the compression ratio),
/// `MCPOOL_COMPRESS_AT_LEVEL + level` always at that level (a level the codec does not take
/// fails that item, `MCPOOL_INVALID_ARGUMENT`): so a per-call threshold such as pylibmc's
/// `min_compress_len` (decided by `mcpool_client_compression_due`) and its `compress_level`
/// need no second client. `compress` NULL: the client's rule for every item; another byte
/// fails the whole call (`MCPOOL_INVALID_ARGUMENT`) before any I/O. Everything else as `mcpool_client_set_multi`
/// (a batch of one is a single set with these choices).
///
/// # Safety
/// As for `mcpool_client_set_multi`; `ttls` is NULL or an array of `n`, `compress` NULL or
/// an array of `n` bytes.
#[no_mangle]
pub unsafe extern "C" fn mcpool_client_set_multi_ttl(
    client: *const mcpool_client,
    keys: *const *const u8,
    key_lens: *const usize,
    values: *const *const u8,
    value_lens: *const usize,
    flags: *const u32,
    ttls: *const u32,
    n: usize,
    compress: *const u8,
    out_statuses: *mut mcpool_status,
) -> mcpool_status {
    // SAFETY: forwarded from the caller's promise.
    unsafe {
        store_multi(
            "set_multi",
            StoreCommand::Set,
            client,
            keys,
            key_lens,
            values,
            value_lens,
            flags,
            std::ptr::null(),
            Ttls::Each(ttls),
            std::ptr::null(),
            compress,
            n,
            out_statuses,
        )
    }
}

/// Any store command over `n` items in one pipelined round trip per server, as
/// `mcpool_client_set_multi_ttl`: `op` is SET, ADD, REPLACE, APPEND, PREPEND (never
/// compressed; neither the expiry nor `flags[i]` changes the item: memcached keeps the
/// item's, whose flags SET, ADD, REPLACE or CAS set) or CAS, which compares
/// item `i` with `cas[i]` (`cas` NULL: all 0; read only for CAS; an item whose CAS is 0 is
/// `MCPOOL_INVALID_ARGUMENT`, unsent, as `mcpool_client_cas`). Each item's status as the
/// single commands answer: `MCPOOL_OK` stored, `MCPOOL_NOT_STORED` (add of an existing key,
/// replace/append/prepend of a missing one), `MCPOOL_EXISTS` / `MCPOOL_NOT_FOUND` (CAS), or
/// its error. `flags`, `ttls` and `compress` as `mcpool_client_set_multi_ttl` (all may be
/// NULL). Everything else as `mcpool_client_set_multi`.
///
/// # Safety
/// As for `mcpool_client_set_multi_ttl`; `cas` is NULL or an array of `n`.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn mcpool_client_store_multi(
    client: *const mcpool_client,
    op: mcpool_store_op,
    keys: *const *const u8,
    key_lens: *const usize,
    values: *const *const u8,
    value_lens: *const usize,
    flags: *const u32,
    ttls: *const u32,
    cas: *const u64,
    n: usize,
    compress: *const u8,
    out_statuses: *mut mcpool_status,
) -> mcpool_status {
    // The op's batch name, by its number: checked first, as any number may arrive.
    let (cmd, name) = match super::kinds::store_op_arg("store_multi", op, 0, true) {
        Ok(named) => named,
        Err(f) => return batch_landingpad(|| Err(f)),
    };
    // SAFETY: forwarded from the caller's promise.
    unsafe {
        store_multi(
            name,
            cmd,
            client,
            keys,
            key_lens,
            values,
            value_lens,
            flags,
            std::ptr::null(),
            Ttls::Each(ttls),
            cas,
            compress,
            n,
            out_statuses,
        )
    }
}

/// Stores `n` items (`keys[i]`, `values[i]` as `mcpool_client_set_multi` with flags 0: bytes,
/// under the value format's flags for bytes, all with expiry `ttl`) without waiting for each reply: `noreply` on the text protocol, then one
/// barrier round trip per server to learn that every command was read (on meta and binary
/// it is `mcpool_client_set_multi`, every item answered). The fastest bulk load. Returns
/// `MCPOOL_OK`, or the first failure's status (its message the last error): an item
/// refused before sending (a bad or too long key, a value too large) fails alone and the
/// others are sent, and so do the keys of a server marked dead. On text, memcached reports
/// no refusal of a `noreply` store (a value too large for an item): such an item is not
/// stored and the call still returns `MCPOOL_OK`; use `mcpool_client_set_multi` to learn
/// each item's outcome. A NULL array (with `n` > 0) or a NULL key or value pointer (with a
/// length) fails the whole call before any I/O. At most `MCPOOL_MAX_MULTI_KEYS` items.
///
/// # Safety
/// `client` is NULL or live; `keys`, `key_lens`, `values`, `value_lens` are NULL or arrays
/// of `n` elements; each key and value is NULL or valid for its length.
#[no_mangle]
pub unsafe extern "C" fn mcpool_client_set_multi_noreply(
    client: *const mcpool_client,
    keys: *const *const u8,
    key_lens: *const usize,
    values: *const *const u8,
    value_lens: *const usize,
    n: usize,
    ttl: u32,
) -> mcpool_status {
    let op = "set_multi_noreply";
    landingpad(|| {
        // SAFETY: the caller promises a non-NULL `client` is live.
        let c = unsafe { ptr::handle(client, "client") }?;
        // SAFETY: forwarded from the caller's promise.
        let (keys, long) = unsafe { checked_keys(keys, key_lens, n, op, c.max_key) }?;
        // SAFETY: forwarded from the caller's promise.
        let vptrs = unsafe { array(values, n, "values") }?;
        // SAFETY: forwarded from the caller's promise.
        let vlens = unsafe { array(value_lens, n, "value_lens") }?;
        let mut first: Option<Failure> = None;
        let mut items = Vec::with_capacity(n);
        // SAFETY: forwarded from the caller's promise.
        let read = unsafe { item_values(c, op, StoreCommand::Set, &keys, &long, vptrs, vlens) }?;
        for (key, v) in keys.iter().zip(read) {
            match v {
                Ok(v) => items.push((*key, v)),
                Err(f) => {
                    first.get_or_insert(f);
                }
            }
        }
        let sent = c.client.set_multi_noreply(&items, ttl);
        match (first, sent) {
            (Some(f), _) => Err(f),
            (None, Err(e)) => Err(Failure::from_error(op, None, &e)),
            (None, Ok(())) => Ok(MCPOOL_OK),
        }
    })
}

/// `mcpool_client_store_multi` of typed values: item `i` is a value of kind `kinds[i]` given
/// as `mcpool_client_store_kind` takes one (`values[i]`, `value_lens[i]` bytes: the bytes;
/// UTF-8 for `MCPOOL_KIND_TEXT`; an integer's decimal text of any size; `"0"` or `"1"`),
/// encoded in the client's value format with its flags as `mcpool_client_store_kind` encodes
/// it, all in one pipelined round trip per server; an item of kind `MCPOOL_KIND_RAW` is bytes
/// stored under `flags[i]` as `mcpool_client_store_multi` stores it (a binding's own flags,
/// such as a Java transcoder's, in the same batch; `flags` NULL: 0). `op` is any store
/// command (APPEND and PREPEND store bytes: a typed item is `MCPOOL_UNSUPPORTED` there). An
/// item whose kind the format lacks (`MCPOOL_UNSUPPORTED`) or whose data is not one of its
/// kind (`MCPOOL_INVALID_ARGUMENT`) fails alone, unsent; a number in `kinds` that is no
/// `mcpool_kind` nor `MCPOOL_KIND_RAW` fails the whole call before any I/O. `ttls`, `cas`
/// and `compress` as `mcpool_client_store_multi` (each may be NULL); everything else as it.
///
/// # Safety
/// As for `mcpool_client_store_multi`; `kinds` is NULL (refused with `n` > 0) or an array of
/// `n`, `flags` NULL or an array of `n`.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn mcpool_client_store_multi_kind(
    client: *const mcpool_client,
    op: mcpool_store_op,
    keys: *const *const u8,
    key_lens: *const usize,
    kinds: *const mcpool_kind,
    values: *const *const u8,
    value_lens: *const usize,
    flags: *const u32,
    ttls: *const u32,
    cas: *const u64,
    n: usize,
    compress: *const u8,
    out_statuses: *mut mcpool_status,
) -> mcpool_status {
    let (cmd, name) = match super::kinds::store_op_arg("store_multi_kind", op, 0, true) {
        Ok(named) => named,
        Err(f) => return batch_landingpad(|| Err(f)),
    };
    if kinds.is_null() && n > 0 {
        return batch_landingpad(|| Err(Failure::invalid(format!("{name}: kinds is NULL"))));
    }
    // SAFETY: forwarded from the caller's promise.
    unsafe {
        store_multi(
            name,
            cmd,
            client,
            keys,
            key_lens,
            values,
            value_lens,
            flags,
            kinds,
            Ttls::Each(ttls),
            cas,
            compress,
            n,
            out_statuses,
        )
    }
}

/// Deletes `n` keys, pipelined per server as `mcpool_client_set_multi`. Writes each key's
/// status to `out_statuses[i]`: `MCPOOL_OK` (deleted), `MCPOOL_NOT_FOUND`, or its error (the
/// first failure's message is the last error). Returns `MCPOOL_OK` once the statuses are
/// written; a NULL array (with `n` > 0: an empty batch needs none) or key pointer fails the
/// whole call before any I/O.
///
/// # Safety
/// `client` is NULL or live; `keys` and `key_lens` are NULL or arrays of `n` elements; each
/// `keys[i]` is NULL or valid for `key_lens[i]` bytes; `out_statuses` is NULL or has room for
/// `n` statuses.
#[no_mangle]
pub unsafe extern "C" fn mcpool_client_delete_multi(
    client: *const mcpool_client,
    keys: *const *const u8,
    key_lens: *const usize,
    n: usize,
    out_statuses: *mut mcpool_status,
) -> mcpool_status {
    batch_landingpad(|| {
        // SAFETY: the caller promises a non-NULL `client` is live.
        let c = unsafe { ptr::handle(client, "client") }?;
        out_n(out_statuses, n, "statuses")?;
        // SAFETY: forwarded from the caller's promise.
        let keys = unsafe { c_keys(keys, key_lens, n, "delete_multi", c.max_key) }?;
        let all = c
            .client
            .delete_keys(&keys)
            .into_iter()
            .enumerate()
            .map(|(i, r)| {
                r.map(|existed| if existed { MCPOOL_OK } else { MCPOOL_NOT_FOUND })
                    .map_err(|e| Failure::from_error("delete_multi", keys.shown(i), &e))
            })
            .collect();
        // SAFETY: checked non-NULL; the caller promises room for `n` statuses.
        unsafe { write_statuses(out_statuses, all) };
        Ok(MCPOOL_OK)
    })
}

/// Sets the expiry of `n` keys, pipelined per server as `mcpool_client_delete_multi` (one
/// round trip per server): key `i` gets `ttls[i]` seconds (`ttls` NULL: all 0, no expiry).
/// Writes each key's status to `out_statuses[i]`: `MCPOOL_OK` (touched), `MCPOOL_NOT_FOUND`,
/// or its error (the first failure's message is the last error). Returns `MCPOOL_OK` once
/// the statuses are written; a NULL array (with `n` > 0: an empty batch needs none) or key
/// pointer fails the whole call before any I/O.
///
/// # Safety
/// As for `mcpool_client_delete_multi`; `ttls` is NULL or an array of `n`.
#[no_mangle]
pub unsafe extern "C" fn mcpool_client_touch_multi(
    client: *const mcpool_client,
    keys: *const *const u8,
    key_lens: *const usize,
    ttls: *const u32,
    n: usize,
    out_statuses: *mut mcpool_status,
) -> mcpool_status {
    batch_landingpad(|| {
        // SAFETY: the caller promises a non-NULL `client` is live.
        let c = unsafe { ptr::handle(client, "client") }?;
        out_n(out_statuses, n, "statuses")?;
        // SAFETY: forwarded from the caller's promise.
        let (keys, long) = unsafe { checked_keys(keys, key_lens, n, "touch_multi", c.max_key) }?;
        // SAFETY: forwarded from the caller's promise (NULL: all 0).
        let ttls = unsafe { optional(ttls, n, "ttls") }?;
        let items: Vec<(&[u8], u32)> = (0..n)
            .map(|i| (keys[i], ttls.map_or(0, |t| t[i])))
            .collect();
        let mut all = statuses(
            "touch_multi",
            &keys,
            c.client.touch_multi(&items),
            |found| {
                if found {
                    MCPOOL_OK
                } else {
                    MCPOOL_NOT_FOUND
                }
            },
        );
        for (i, len) in long {
            all[i] = Err(too_long("touch_multi", i, len));
        }
        // SAFETY: checked non-NULL; the caller promises room for `n` statuses.
        unsafe { write_statuses(out_statuses, all) };
        Ok(MCPOOL_OK)
    })
}

/// Adds (`incr` true) or subtracts `deltas[i]` to the decimal counter under each of `n` keys,
/// pipelined per server (one round trip per server), as `mcpool_client_incr` /
/// `mcpool_client_decr` do one by one: on `MCPOOL_OK` in `out_statuses[i]` the new value is
/// in `out_values[i]`; `MCPOOL_NOT_FOUND` for a missing key (its value slot is 0); otherwise
/// the key's error (a non-numeric value: `MCPOOL_CLIENT_ERROR`; the first failure's message
/// is the last error). `deltas` NULL: 1 for every key. Returns `MCPOOL_OK` once the statuses
/// are written; a NULL array (with `n` > 0: an empty batch needs none) or key pointer fails
/// the whole call before any I/O.
///
/// # Safety
/// As for `mcpool_client_delete_multi`; `deltas` is NULL or an array of `n`; `out_values`
/// is NULL (refused) or has room for `n` values.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn mcpool_client_arith_multi(
    client: *const mcpool_client,
    incr: bool,
    keys: *const *const u8,
    key_lens: *const usize,
    deltas: *const u64,
    n: usize,
    out_values: *mut u64,
    out_statuses: *mut mcpool_status,
) -> mcpool_status {
    let op = if incr { "incr_multi" } else { "decr_multi" };
    batch_landingpad(|| {
        // SAFETY: the caller promises a non-NULL `client` is live.
        let c = unsafe { ptr::handle(client, "client") }?;
        out_n(out_statuses, n, "statuses")?;
        out_n(out_values, n, "values")?;
        // SAFETY: forwarded from the caller's promise.
        let (keys, long) = unsafe { checked_keys(keys, key_lens, n, op, c.max_key) }?;
        // SAFETY: forwarded from the caller's promise (NULL: all 1).
        let deltas = unsafe { optional(deltas, n, "deltas") }?;
        let items: Vec<(&[u8], u64)> = (0..n)
            .map(|i| (keys[i], deltas.map_or(1, |d| d[i])))
            .collect();
        let results = c.client.arith_multi(incr, &items);
        for (i, r) in results.iter().enumerate() {
            let v = match r {
                Ok(Some(v)) => *v,
                _ => 0,
            };
            // SAFETY: checked non-NULL; the caller promises room for `n` values; `i` < `n`.
            unsafe { out_values.add(i).write(v) };
        }
        let mut all = statuses(op, &keys, results, |v| {
            if v.is_some() {
                MCPOOL_OK
            } else {
                MCPOOL_NOT_FOUND
            }
        });
        for (i, len) in long {
            all[i] = Err(too_long(op, i, len));
        }
        // SAFETY: checked non-NULL; the caller promises room for `n` statuses.
        unsafe { write_statuses(out_statuses, all) };
        Ok(MCPOOL_OK)
    })
}

// ----- reads into the caller's memory -----

/// Asked by `mcpool_client_get_into` for the destination of a value of `len` bytes: return a
/// buffer of at least `len` writable bytes (a binding allocates its string or bytes object
/// there), or NULL to refuse (`MCPOOL_ALLOC_FAILED`). With `len` 0 nothing is written to the
/// result. It runs inside the mcpool call while a connection is checked out: keep it to an
/// allocation, do not call mcpool from it (a call on the same server may wait for the very
/// connection this call holds, and fail with `MCPOOL_POOL_TIMEOUT`).
/// It must return normally: a C++ exception or a `longjmp` out of it is undefined behaviour,
/// which may abort the process or leak memory and leave a connection checked out; catch
/// everything inside it.
pub type mcpool_alloc_callback =
    Option<unsafe extern "C" fn(userdata: *mut c_void, len: usize) -> *mut c_void>;

/// As `mcpool_alloc_callback`, for the multi form: `index` is the key's position in the
/// caller's list, and the value's `flags` and `cas` (0 unless asked for) come along. The
/// same rules: no mcpool call from it, and it must return normally (a C++ exception or a
/// `longjmp` out of it is undefined behaviour, which may abort the process or leak memory
/// and leave connections checked out; catch everything inside it).
pub type mcpool_alloc_multi_callback = Option<
    unsafe extern "C" fn(
        userdata: *mut c_void,
        index: usize,
        len: usize,
        flags: u32,
        cas: u64,
    ) -> *mut c_void,
>;

/// Copies `value` into the buffer `dest` returned by an allocation callback.
///
/// # Safety
/// A non-NULL `dest` is valid for writes of `value.len()` bytes and does not overlap `value`.
unsafe fn fill(dest: *mut c_void, value: &[u8]) -> bool {
    if dest.is_null() {
        return false;
    }
    // SAFETY: the caller promises `value.len()` writable bytes at `dest`, apart from `value`.
    unsafe { std::ptr::copy_nonoverlapping(value.as_ptr(), dest.cast::<u8>(), value.len()) };
    true
}

/// Reads `key` into memory the caller provides: on a hit, calls `alloc(userdata, len)` once
/// and copies the value (decompressed when it was stored compressed) straight from the
/// connection's read buffer into the buffer it returns; no item is made. Returns `MCPOOL_OK`
/// and writes the flags to `*out_flags` and the CAS unique to `*out_cas` (both optional: pass
/// NULL for what you do not need; a non-NULL `out_cas` asks the server for the CAS unique, as
/// `mcpool_client_gets`). `MCPOOL_NOT_FOUND` on a miss (`alloc` is not called);
/// `MCPOOL_ALLOC_FAILED` when `alloc` returned NULL for a non-empty value.
///
/// Ownership: the buffer is the caller's, whatever the status: when the call fails after
/// `alloc` ran (the server broke the reply after the value), its content is unspecified and
/// the caller frees it as it would.
///
/// # Safety
/// `client` is NULL or live; `key` is NULL or valid for `key_len` bytes; `alloc` is NULL
/// (refused) or a valid function as described on `mcpool_alloc_callback`; `out_flags` and
/// `out_cas` are NULL or valid for one write.
#[no_mangle]
pub unsafe extern "C" fn mcpool_client_get_into(
    client: *const mcpool_client,
    key: *const u8,
    key_len: usize,
    alloc: mcpool_alloc_callback,
    userdata: *mut c_void,
    out_flags: *mut u32,
    out_cas: *mut u64,
) -> mcpool_status {
    // SAFETY: the caller's promises are this function's.
    unsafe {
        get_into(
            client,
            key,
            key_len,
            alloc,
            userdata,
            out_flags,
            out_cas,
            std::ptr::null_mut(),
        )
    }
}

/// As `mcpool_client_get_into` (without a CAS unique), for a value of any flags: a value
/// the value format cannot deliver (flags that mean nothing in the format, such as another
/// client's types; a body those flags cannot hold; a compressed body that does not inflate:
/// `MCPOOL_VALUE_FORMAT` or `MCPOOL_DECOMPRESS` from `mcpool_client_get_into`) is handed to
/// `alloc` as memcached holds it, its body not inflated and `*out_flags` its flags as
/// stored (compression bits included), and `*out_as_stored` is set to true (false for a
/// value delivered as `mcpool_client_get_into` delivers it). One read, placed and failed
/// over as `mcpool_client_get`'s. `out_flags` and `out_as_stored` are optional (NULL).
/// Ownership as for `mcpool_client_get_into`.
///
/// # Safety
/// As for `mcpool_client_get_into`; `out_as_stored` is NULL or valid for one write.
#[no_mangle]
pub unsafe extern "C" fn mcpool_client_get_or_stored_into(
    client: *const mcpool_client,
    key: *const u8,
    key_len: usize,
    alloc: mcpool_alloc_callback,
    userdata: *mut c_void,
    out_flags: *mut u32,
    out_as_stored: *mut bool,
) -> mcpool_status {
    let mut as_stored = false;
    // SAFETY: the caller's promises are this function's; `as_stored` is a local.
    let st = unsafe {
        get_into(
            client,
            key,
            key_len,
            alloc,
            userdata,
            out_flags,
            std::ptr::null_mut(),
            &mut as_stored,
        )
    };
    if st == MCPOOL_OK {
        // SAFETY: NULL (skipped) or writable, as the caller promises.
        unsafe { ptr::write(out_as_stored, as_stored) };
    }
    st
}

/// The value handed to an allocation callback by [`get_into`]: whether it was copied, its
/// flags and CAS unique, and whether it came as stored.
struct IntoOne<'a> {
    alloc: unsafe extern "C" fn(*mut c_void, usize) -> *mut c_void,
    userdata: *mut c_void,
    /// Take a value the format cannot deliver as stored (`mcpool_client_get_or_stored_into`).
    or_stored: bool,
    got: Option<(bool, u32, u64)>,
    as_stored: &'a mut bool,
    found: CoreResult<bool>,
}

impl IntoOne<'_> {
    fn fill(&mut self, value: &[u8], flags: u32, cas: Option<u64>) {
        // SAFETY: the caller of `get_into` promises `alloc` is a valid function returning
        // NULL or `value.len()` writable bytes of its own.
        let filled = unsafe { fill((self.alloc)(self.userdata, value.len()), value) };
        self.got = Some((filled || value.is_empty(), flags, cas.unwrap_or(0)));
    }
}

impl Sink for IntoOne<'_> {
    fn value(&mut self, _i: usize, value: &[u8], flags: u32, cas: Option<u64>) -> CoreResult<()> {
        self.fill(value, flags, cas);
        Ok(())
    }
    fn result(&mut self, _i: usize, r: CoreResult<bool>) {
        self.found = r;
    }
    fn undeliverable(
        &mut self,
        _i: usize,
        stored: &[u8],
        stored_flags: u32,
        cas: Option<u64>,
        err: mcpool::Error,
    ) -> CoreResult<()> {
        if !self.or_stored {
            return Err(err);
        }
        *self.as_stored = true;
        self.fill(stored, stored_flags, cas);
        Ok(())
    }
}

/// `mcpool_client_get_into`, and with a non-NULL `as_stored` its `_or_stored` form.
///
/// # Safety
/// As for `mcpool_client_get_into`; `as_stored` is NULL or valid for writes.
#[allow(clippy::too_many_arguments)]
unsafe fn get_into(
    client: *const mcpool_client,
    key: *const u8,
    key_len: usize,
    alloc: mcpool_alloc_callback,
    userdata: *mut c_void,
    out_flags: *mut u32,
    out_cas: *mut u64,
    as_stored: *mut bool,
) -> mcpool_status {
    landingpad(|| {
        // SAFETY: the caller promises a non-NULL `client` is live.
        let c = unsafe { ptr::handle(client, "client") }?;
        // Messages name the command the caller ran: `get` (`gets` when the CAS is asked).
        let op = if out_cas.is_null() { "get" } else { "gets" };
        // SAFETY: the caller promises `key_len` readable bytes at a non-NULL `key`.
        let key = unsafe { ptr::key(op, key, key_len, c.max_key) }?;
        let Some(alloc) = alloc else {
            return Err(Failure::invalid("alloc callback is NULL"));
        };
        let mut unused = false;
        let mut one = IntoOne {
            alloc,
            userdata,
            or_stored: !as_stored.is_null(),
            got: None,
            // SAFETY: NULL, or valid for writes as the caller promises.
            as_stored: unsafe { as_stored.as_mut() }.unwrap_or(&mut unused),
            found: Ok(false),
        };
        c.client
            .read(&Single(key), !out_cas.is_null(), None, &mut one);
        let hit = one
            .found
            .map_err(|e| Failure::from_error(op, Some(key), &e))?;
        match one.got.filter(|_| hit) {
            None => Ok(MCPOOL_NOT_FOUND),
            Some((false, _, _)) => Err(Failure::new(
                MCPOOL_ALLOC_FAILED,
                format!(
                    "{op} {}: the alloc callback returned NULL",
                    mcpool::key::quoted(key)
                ),
            )),
            Some((true, flags, cas)) => {
                // SAFETY: each output is NULL (skipped) or writable, as the caller promises.
                unsafe {
                    ptr::write(out_flags, flags);
                    ptr::write(out_cas, cas);
                }
                Ok(MCPOOL_OK)
            }
        }
    })
}

/// Reads many keys (one round trip per server, as `mcpool_client_get_multi`) into memory the
/// caller provides: for each hit, `alloc(userdata, index, len, flags, cas)` returns the
/// destination and the value is copied there from the connection's read buffer. Hits come
/// in the order the servers' replies are read, not necessarily in key order. Writes each
/// key's status to `out_statuses[i]`: `MCPOOL_OK` (delivered), `MCPOOL_NOT_FOUND`,
/// `MCPOOL_ALLOC_FAILED`, or the key's error (the first failure's message is the last error).
/// Returns `MCPOOL_OK` once the statuses are written. With `with_cas` the CAS uniques are
/// asked for. A NULL array (with `n_keys` > 0) or key pointer fails the whole call before
/// any I/O.
///
/// Ownership: every buffer `alloc` returned is the caller's, whatever the statuses. A
/// buffer holds its key's value only when that key's status is `MCPOOL_OK`: a value is
/// copied as it is read, and its server's exchange can still fail after it (on the text
/// protocol, bytes read past the last reply: a duplicated reply that arrived with the real
/// one, whose stale copy was read first), the key's status then that error and the buffer's
/// bytes not its value (`mcpool_client_get_multi` and `_cb` never hand such a value out).
///
/// # Safety
/// As for `mcpool_client_get_multi`; `alloc` is NULL (refused) or a valid function as
/// described on `mcpool_alloc_multi_callback`; `out_statuses` is NULL or has room for
/// `n_keys` statuses.
#[no_mangle]
pub unsafe extern "C" fn mcpool_client_get_multi_into(
    client: *const mcpool_client,
    keys: *const *const u8,
    key_lens: *const usize,
    n_keys: usize,
    with_cas: bool,
    alloc: mcpool_alloc_multi_callback,
    userdata: *mut c_void,
    out_statuses: *mut mcpool_status,
) -> mcpool_status {
    // SAFETY: forwarded from the caller's promise.
    unsafe {
        multi_into(
            client,
            keys,
            key_lens,
            n_keys,
            with_cas,
            None,
            alloc,
            userdata,
            out_statuses,
        )
    }
}

/// `mcpool_client_get_multi_into` that also sets each found key's expiry to `exptime`
/// (get-and-touch: `gat`/`gats` per key, pipelined per server as the multi get; meta and
/// binary send one touch-read per key, text `gat`/`gats` lines). Statuses, callback and
/// ownership as for `mcpool_client_get_multi_into`.
///
/// # Safety
/// As for `mcpool_client_get_multi_into`.
#[no_mangle]
pub unsafe extern "C" fn mcpool_client_gat_multi_into(
    client: *const mcpool_client,
    exptime: u32,
    keys: *const *const u8,
    key_lens: *const usize,
    n_keys: usize,
    with_cas: bool,
    alloc: mcpool_alloc_multi_callback,
    userdata: *mut c_void,
    out_statuses: *mut mcpool_status,
) -> mcpool_status {
    // SAFETY: forwarded from the caller's promise.
    unsafe {
        multi_into(
            client,
            keys,
            key_lens,
            n_keys,
            with_cas,
            Some(exptime),
            alloc,
            userdata,
            out_statuses,
        )
    }
}

/// The body of the two `_multi_into` reads: `touch` is the get-and-touch expiry.
///
/// # Safety
/// As for `mcpool_client_get_multi_into`.
#[allow(clippy::too_many_arguments)]
unsafe fn multi_into(
    client: *const mcpool_client,
    keys: *const *const u8,
    key_lens: *const usize,
    n_keys: usize,
    with_cas: bool,
    touch: Option<u32>,
    alloc: mcpool_alloc_multi_callback,
    userdata: *mut c_void,
    out_statuses: *mut mcpool_status,
) -> mcpool_status {
    batch_landingpad(|| {
        // SAFETY: the caller promises a non-NULL `client` is live.
        let c = unsafe { ptr::handle(client, "client") }?;
        let Some(alloc) = alloc else {
            return Err(Failure::invalid("alloc callback is NULL"));
        };
        out_n(out_statuses, n_keys, "statuses")?;
        // Messages name the command the caller ran, not this C function.
        let op = match (touch.is_some(), with_cas) {
            (false, false) => "get_multi",
            (false, true) => "gets_multi",
            (true, false) => "gat_multi",
            (true, true) => "gats_multi",
        };
        check_count(n_keys, op)?;
        // SAFETY: forwarded from the caller's promise.
        let ptrs = unsafe { array(keys, n_keys, "keys") }?;
        // SAFETY: forwarded from the caller's promise.
        let lens = unsafe { array(key_lens, n_keys, "key_lens") }?;
        if let Some(i) = ptrs.iter().position(|p| p.is_null()) {
            return Err(Failure::invalid(format!("key {i} is NULL")));
        }
        // Keys are read by index straight from the caller's arrays, and statuses written
        // straight to theirs: nothing is allocated in proportion to the keys (see
        // `multi_get` for why that matters to callers such as Perl).
        // SAFETY: every pointer is non-NULL (checked above) and the caller promises
        // `lens[i]` readable bytes at `ptrs[i]` for the whole call.
        let keys = unsafe { CKeys::new(ptrs, lens, c.max_key) };
        let out = out_statuses;
        // Each failed key's message (mcpool_last_item_error_message); nothing when none fails.
        let mut failed: Vec<(usize, Failure)> = Vec::new();
        // Statuses start as "not refused"; a refused buffer is marked as it happens.
        for i in 0..n_keys {
            // SAFETY: `out` is not NULL (checked) and the caller promises room for `n_keys`
            // statuses; `i` < `n_keys`.
            unsafe { out.add(i).write(MCPOOL_OK) };
        }
        // The values the callback made, kept below the thread's heap guard (the caller frees
        // them together: see mcpool::heap_guard).
        let mut handed = Handed::default();
        let mut fail = |i: usize, failure: Failure| {
            // SAFETY: as above.
            unsafe { out.add(i).write(failure.status) };
            failed.push((i, failure));
        };
        c.client.read(
            &keys,
            with_cas,
            touch,
            &mut Callbacks(
                |i: usize, value: &[u8], flags: u32, cas: Option<u64>| {
                    // SAFETY: the caller promises `alloc` is a valid function returning NULL
                    // or `value.len()` writable bytes of its own.
                    let dest = unsafe { alloc(userdata, i, value.len(), flags, cas.unwrap_or(0)) };
                    handed.note(dest.cast(), value.len());
                    // SAFETY: as above: `dest` is NULL or has room for the value.
                    if !unsafe { fill(dest, value) } && !value.is_empty() {
                        // SAFETY: `i` < `n_keys`, room promised.
                        unsafe { out.add(i).write(MCPOOL_ALLOC_FAILED) };
                    }
                    Ok(())
                },
                |i: usize, r: CoreResult<bool>| match r {
                    Ok(true) => {
                        // SAFETY: `i` < `n_keys`; the status was written above.
                        if unsafe { out.add(i).read() } == MCPOOL_ALLOC_FAILED {
                            // the key quoted, as every other key's message names it
                            // (tester finding cteam2 6: "for key 0", an index)
                            let message = match keys.shown(i) {
                                Some(k) => format!(
                                    "{op} {}: the alloc callback returned NULL",
                                    mcpool::key::quoted(k)
                                ),
                                None => {
                                    format!("{op}: the alloc callback returned NULL for key {i}")
                                }
                            };
                            fail(i, Failure::new(MCPOOL_ALLOC_FAILED, message));
                        }
                    }
                    Ok(false) => {
                        // SAFETY: as above.
                        unsafe { out.add(i).write(MCPOOL_NOT_FOUND) }
                    }
                    Err(e) => fail(i, Failure::from_error(op, keys.shown(i), &e)),
                },
            ),
        );
        handed.guard();
        last_error::set_items(failed);
        Ok(MCPOOL_OK)
    })
}
