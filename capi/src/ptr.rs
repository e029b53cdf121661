//! Checked conversions of the raw pointers that C hands us.

use super::landing::Failure;
use super::status::mcpool_status;
use mcpool::key::MAX_KEY_LEN;

/// A reference from a handle pointer; NULL is `MCPOOL_INVALID_ARGUMENT`.
///
/// # Safety
/// A non-NULL `p` must point to a live `T` made by this library, not used mutably elsewhere
/// for `'a`.
pub(crate) unsafe fn handle<'a, T>(p: *const T, what: &str) -> Result<&'a T, Failure> {
    // SAFETY: the caller promises that a non-NULL `p` points to a live `T`.
    unsafe { p.as_ref() }.ok_or_else(|| Failure::invalid(format!("{what} is NULL")))
}

/// A mutable reference from a handle pointer; NULL is `MCPOOL_INVALID_ARGUMENT`.
///
/// # Safety
/// A non-NULL `p` must point to a live `T` made by this library, used by nobody else for `'a`.
pub(crate) unsafe fn handle_mut<'a, T>(p: *mut T, what: &str) -> Result<&'a mut T, Failure> {
    // SAFETY: the caller promises that a non-NULL `p` points to a live, unshared `T`.
    unsafe { p.as_mut() }.ok_or_else(|| Failure::invalid(format!("{what} is NULL")))
}

/// Checks that an output pointer is not NULL (before any work is done).
pub(crate) fn out<T>(p: *mut T, what: &str) -> Result<(), Failure> {
    if p.is_null() {
        Err(Failure::invalid(format!("output {what} is NULL")))
    } else {
        Ok(())
    }
}

/// Writes an output that [`out`] already checked (or that may be NULL, then nothing is written).
///
/// # Safety
/// A non-NULL `p` must be valid for a write of `T`.
pub(crate) unsafe fn write<T>(p: *mut T, v: T) {
    if !p.is_null() {
        // SAFETY: `p` is not NULL and the caller promises it is valid for writes; `write`
        // does not drop the (possibly uninitialised) old value.
        unsafe { p.write(v) }
    }
}

/// The key of operation `op`: NULL is `MCPOOL_INVALID_ARGUMENT`; longer than `max` (250
/// bytes, or the client's `long_keys = hash` limit, `Client::max_key_len`) is
/// `MCPOOL_INVALID_KEY` without reading it (no prefix or escaping makes a key shorter), its
/// message naming the operation and the key as every keyed failure does
/// (`Failure::from_error`): `get "<251 bytes>": invalid key "<251 bytes>": ...`. Zero length
/// is passed on for the core to refuse as an invalid key.
///
/// # Safety
/// A non-NULL `p` must be valid for reads of `len` bytes for `'a`.
pub(crate) unsafe fn key<'a>(
    op: &str,
    p: *const u8,
    len: usize,
    max: usize,
) -> Result<&'a [u8], Failure> {
    if p.is_null() {
        return Err(Failure::invalid(format!("{op}: key is NULL")));
    }
    let max = max.clamp(MAX_KEY_LEN, mcpool::key::MAX_HASHED_KEY_LEN);
    if len > max {
        return Err(Failure::unread_key(op, len, &mcpool::key::too_long(len)));
    }
    // SAFETY: `p` is not NULL, `len` ≤ 64 KiB so the size fits in isize, and the caller
    // promises `len` readable bytes at `p` for `'a`.
    Ok(unsafe { std::slice::from_raw_parts(p, len) })
}

/// A byte buffer of at most `max` bytes. NULL is allowed only with length 0 (an empty
/// buffer); a longer buffer is refused with `too_long` before it is read.
///
/// # Safety
/// A non-NULL `p` must be valid for reads of `len` bytes for `'a`.
pub(crate) unsafe fn bytes<'a>(
    p: *const u8,
    len: usize,
    max: usize,
    what: &str,
    too_long: mcpool_status,
) -> Result<&'a [u8], Failure> {
    if len == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(Failure::invalid(format!("{what} is NULL")));
    }
    let max = max.min(isize::MAX as usize);
    if len > max {
        return Err(Failure::new(
            too_long,
            format!("{what} of {len} bytes is longer than the limit of {max} bytes"),
        ));
    }
    // SAFETY: `p` is not NULL, `len` ≤ isize::MAX, and the caller promises `len` readable
    // bytes at `p` for `'a`.
    Ok(unsafe { std::slice::from_raw_parts(p, len) })
}

/// A UTF-8 string of at most `max` bytes (names, addresses): as [`bytes`], then decoded.
///
/// # Safety
/// A non-NULL `p` must be valid for reads of `len` bytes for `'a`.
pub(crate) unsafe fn text<'a>(
    p: *const std::ffi::c_char,
    len: usize,
    max: usize,
    what: &str,
) -> Result<&'a str, Failure> {
    // SAFETY: forwarded from the caller's promise.
    unsafe {
        utf8(p, len, max, what, |_| {
            Failure::invalid(format!("{what} is not UTF-8"))
        })
    }
}

/// A server address (`len` bytes of UTF-8, at most `max`): as [`text`], but bytes that are
/// not UTF-8 are a malformed address, `MCPOOL_CONFIG` like every other one.
///
/// # Safety
/// A non-NULL `p` must be valid for reads of `len` bytes for `'a`.
pub(crate) unsafe fn address<'a>(
    p: *const std::ffi::c_char,
    len: usize,
    max: usize,
    what: &str,
) -> Result<&'a str, Failure> {
    // the entry named as every other refused address is, its bytes escaped (`\xe9`)
    let not_utf8 = |b: &[u8]| {
        Failure::new(
            mcpool_status::MCPOOL_CONFIG,
            format!(
                "bad server address \"{}\" ({what}): not UTF-8 (addresses are UTF-8 text)",
                mcpool::address::shown(&b.escape_ascii().to_string())
            ),
        )
    };
    // SAFETY: forwarded from the caller's promise.
    unsafe { utf8(p, len, max, what, not_utf8) }
}

/// [`text`] and [`address`]: NULL and too long are INVALID_ARGUMENT, bytes that are not
/// UTF-8 the caller's `not_utf8`.
///
/// # Safety
/// A non-NULL `p` must be valid for reads of `len` bytes for `'a`.
unsafe fn utf8<'a>(
    p: *const std::ffi::c_char,
    len: usize,
    max: usize,
    what: &str,
    not_utf8: impl FnOnce(&[u8]) -> Failure,
) -> Result<&'a str, Failure> {
    if p.is_null() {
        return Err(Failure::invalid(format!("{what} is NULL")));
    }
    // SAFETY: forwarded from the caller's promise.
    let b = unsafe {
        bytes(
            p.cast(),
            len,
            max,
            what,
            mcpool_status::MCPOOL_INVALID_ARGUMENT,
        )
    }?;
    std::str::from_utf8(b).map_err(|_| not_utf8(b))
}
