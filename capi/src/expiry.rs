//! A binding's signed times checked as given, before a call (the calls take `uint32_t`): so
//! a refused time is named as the caller wrote it, never as the `UINT32_MAX` it would
//! otherwise be saturated or cast to first.

use super::landing::{landingpad, Failure};
use super::ptr;
use super::status::mcpool_status::{self, MCPOOL_OK};
use std::ffi::{c_char, CStr};

/// The time names `mcpool_expiry_checked` takes, as the core's errors name them.
const WHAT: [&str; 4] = ["ttl", "vivify_ttl", "recache_below", "stale_ttl"];

/// Checks a caller's signed time `seconds` for the call `op` (e.g. `"set"`, `"get_lease"`;
/// NULL: none) on `key` (`key_len` bytes; NULL with a length of 0: none) and writes the
/// `uint32_t` the calls take to `*out`. `what` names the time: `"ttl"` (a store's, touch's
/// or counter's expiry: negative is `MCPOOL_EXPIRED_AT_ONCE`, as
/// `mcpool_expiry_from_signed`), or one with no "expired" meaning, which refuses a negative
/// one: `"vivify_ttl"`, `"recache_below"`, `"stale_ttl"` (durations: at most
/// `MCPOOL_RELATIVE_MAX`, 30 days). Above `MCPOOL_MAX_TTL`: `MCPOOL_INVALID_ARGUMENT`, the last error naming
/// the call, the key and the number as given (`set "k": invalid ttl: 4294967296 is above
/// 2147483647, ...`), where a saturated or cast number (`4294967295`) would name another.
/// No I/O. `*out` is written only on `MCPOOL_OK`. `MCPOOL_INVALID_ARGUMENT` for a NULL `out`
/// or `what`, an unknown `what`, or a NULL `key` with a length above 0.
///
/// # Safety
/// `op` and `what` are NULL or NUL-terminated strings; `key` is NULL or valid for `key_len`
/// bytes; `out` is NULL (refused) or valid for one write.
#[no_mangle]
pub unsafe extern "C" fn mcpool_expiry_checked(
    op: *const c_char,
    key: *const u8,
    key_len: usize,
    what: *const c_char,
    seconds: i64,
    out: *mut u32,
) -> mcpool_status {
    landingpad(|| {
        ptr::out(out, "out")?;
        if what.is_null() {
            return Err(Failure::invalid("mcpool_expiry_checked: what is NULL"));
        }
        // SAFETY: `what` is not NULL and the caller promises a NUL-terminated string.
        let given = unsafe { CStr::from_ptr(what) }.to_bytes();
        let Some(what) = WHAT.iter().copied().find(|w| w.as_bytes() == given) else {
            return Err(Failure::invalid(format!(
                "mcpool_expiry_checked: what is {:?}, not one of {WHAT:?}",
                String::from_utf8_lossy(given)
            )));
        };
        let op = if op.is_null() {
            "mcpool_expiry_checked".into()
        } else {
            // SAFETY: `op` is not NULL and the caller promises a NUL-terminated string.
            unsafe { CStr::from_ptr(op) }.to_string_lossy()
        };
        // NULL is "no key" only with a length of 0: NULL with a length is refused, as by
        // every other function (tester finding cteam2 6)
        let key = if key.is_null() && key_len == 0 {
            None
        } else {
            // SAFETY: `ptr::key` refuses a NULL `key`; the caller promises `key_len`
            // readable bytes at a non-NULL one.
            Some(unsafe { ptr::key(&op, key, key_len, mcpool::key::MAX_HASHED_KEY_LEN) }?)
        };
        let t = mcpool::ttl::checked_from_signed(what, seconds)
            .map_err(|e| Failure::from_error(&op, key, &e))?;
        // SAFETY: `out` is not NULL (checked) and the caller promises it is writable.
        unsafe { ptr::write(out, t) };
        Ok(MCPOOL_OK)
    })
}

/// `mcpool_expiry_moment_from_now` refused where it is capped rather than answered: writes
/// the moment to `*out` and answers `MCPOOL_OK`, or, for a duration that ends after
/// `INT64_MAX` (the year 292 billion; `mcpool_expiry_moment_from_now` answers such a one as
/// `INT64_MAX`, a moment the caller never asked for), `MCPOOL_INVALID_ARGUMENT` with the last
/// error naming `op` (NULL: this function) and the duration (`expiry_from_now: invalid
/// duration: 9223372036854775807 is too long: from now it ends after 9223372036854775807,
/// ...`). A moment after 2038 is answered (every call then refuses it as above
/// `MCPOOL_MAX_TTL`). For a binding whose `expiry_from_now` answers a signed 64-bit moment.
/// Reads the system clock. `*out` is written only on `MCPOOL_OK`; a NULL `out` is
/// `MCPOOL_INVALID_ARGUMENT`.
///
/// # Safety
/// `op` is NULL or a NUL-terminated string; `out` is NULL (refused) or valid for one write.
#[no_mangle]
pub unsafe extern "C" fn mcpool_expiry_moment_from_now_checked(
    op: *const c_char,
    seconds: i64,
    out: *mut i64,
) -> mcpool_status {
    landingpad(|| {
        ptr::out(out, "out")?;
        let op = if op.is_null() {
            "mcpool_expiry_moment_from_now_checked".into()
        } else {
            // SAFETY: `op` is not NULL and the caller promises a NUL-terminated string.
            unsafe { CStr::from_ptr(op) }.to_string_lossy()
        };
        let at = mcpool::ttl::moment_from_now_checked(seconds)
            .map_err(|e| Failure::from_error(&op, None, &e))?;
        // SAFETY: `out` is not NULL (checked) and the caller promises it is writable.
        unsafe { ptr::write(out, at) };
        Ok(MCPOOL_OK)
    })
}

/// `mcpool_expiry_checked` for the `ttl` of a store by `op` (an `mcpool_store_op`) of `key`
/// on `client`, as the store itself would take it: a negative time is
/// `MCPOOL_EXPIRED_AT_ONCE`; one above `MCPOOL_MAX_TTL` is `MCPOOL_INVALID_ARGUMENT` naming
/// `call` (NULL: the store's name), the key and the number as given, and for
/// `MCPOOL_STORE_SET` the key is deleted, as a set so refused deletes it (its own round
/// trip; the message says so), so that a binding that checks its caller's time before the
/// store leaves what the store would: no older value to read (the clients it replaces send
/// such a set, which memcached stores already expired). `*out` is written only on
/// `MCPOOL_OK`.
///
/// # Safety
/// `client` is NULL or live; `call` is NULL or a NUL-terminated string; `key` is NULL or
/// valid for `key_len` bytes; `out` is NULL (refused) or valid for one write.
#[no_mangle]
pub unsafe extern "C" fn mcpool_client_store_expiry_checked(
    client: *const super::mcpool_client,
    call: *const c_char,
    op: super::mcpool_store_op,
    key: *const u8,
    key_len: usize,
    seconds: i64,
    out: *mut u32,
) -> mcpool_status {
    landingpad(|| {
        ptr::out(out, "out")?;
        let (cmd, name) =
            super::kinds::store_op_arg("mcpool_client_store_expiry_checked", op, 0, false)?;
        let call = if call.is_null() {
            name.into()
        } else {
            // SAFETY: `call` is not NULL and the caller promises a NUL-terminated string.
            unsafe { CStr::from_ptr(call) }.to_string_lossy()
        };
        // SAFETY: the caller promises a non-NULL `client` is live.
        let c = unsafe { ptr::handle(client, "client") }?;
        // SAFETY: the caller promises `key_len` readable bytes at a non-NULL `key`.
        let key = unsafe { ptr::key(&call, key, key_len, c.max_key) }?;
        let t = c
            .client
            .store_ttl_checked(cmd, key, seconds)
            .map_err(|e| Failure::from_error(&call, Some(key), &e))?;
        // SAFETY: `out` is not NULL (checked) and the caller promises it is writable.
        unsafe { ptr::write(out, t) };
        Ok(MCPOOL_OK)
    })
}

/// `mcpool_client_store_expiry_checked` for a batch of `n` stores by `op` whose keys
/// (`keys[i]`, `key_lens[i]` bytes) share one signed time `seconds` (a binding's
/// `set_multi` given its caller's time), checked before the batch's own call: `MCPOOL_OK`
/// and `*out` written, every `out_statuses[i]` `MCPOOL_OK`, when the time can be taken (no
/// I/O); `MCPOOL_INVALID_ARGUMENT` when it is refused, each `out_statuses[i]` and
/// `mcpool_last_item_error_message(i)` that key's refusal naming `call` (NULL: the store's
/// batch name, `set_multi`, ...), the key and the number as given (a key that cannot be sent,
/// its own error), the last error the first key's; for `MCPOOL_STORE_SET` every valid key
/// deleted in one batch, as `mcpool_client_set_multi` refused for its ttl deletes them, each
/// message saying so and whether the batch's other keys so refused went too. A NULL array
/// (with `n` > 0), a NULL key, or more than `MCPOOL_MAX_MULTI_KEYS` keys fail the whole call
/// before any I/O, nothing written.
///
/// # Safety
/// `client` is NULL or live; `call` is NULL or a NUL-terminated string; `keys` and
/// `key_lens` are NULL or arrays of `n` elements, each key valid for its length; `out` is
/// NULL (refused) or valid for one write; `out_statuses` NULL or room for `n` statuses.
#[no_mangle]
pub unsafe extern "C" fn mcpool_client_store_expiry_checked_multi(
    client: *const super::mcpool_client,
    call: *const c_char,
    op: super::mcpool_store_op,
    keys: *const *const u8,
    key_lens: *const usize,
    n: usize,
    seconds: i64,
    out: *mut u32,
    out_statuses: *mut mcpool_status,
) -> mcpool_status {
    use super::batch::{batch_landingpad, checked_keys, out_n, too_long, write_statuses};
    const FN: &str = "mcpool_client_store_expiry_checked_multi";
    // (a pointer refused names this function: tester finding retest41b 6)
    let named = |f: Failure| Failure {
        message: format!("{FN}: {}", f.message),
        ..f
    };
    batch_landingpad(|| {
        ptr::out(out, "out").map_err(named)?;
        let (cmd, name) = super::kinds::store_op_arg(FN, op, 0, true)?;
        let call = if call.is_null() {
            name.into()
        } else {
            // SAFETY: `call` is not NULL and the caller promises a NUL-terminated string.
            unsafe { CStr::from_ptr(call) }.to_string_lossy()
        };
        // SAFETY: the caller promises a non-NULL `client` is live.
        let c = unsafe { ptr::handle(client, "client") }?;
        // SAFETY: forwarded from the caller's promise.
        let (keys, long) =
            unsafe { checked_keys(keys, key_lens, n, &call, c.max_key) }.map_err(|f| {
                if f.message.starts_with(&*call) {
                    f
                } else {
                    named(f)
                }
            })?;
        out_n(out_statuses, n, "statuses").map_err(named)?;
        // A key too long to read is its own error, never the core's (which would read the
        // empty placeholder as a key).
        let is_long = |i: usize| long.iter().find(|&&(j, _)| j == i).map(|&(_, len)| len);
        let (positions, sent): (Vec<usize>, Vec<&[u8]>) = (0..n)
            .filter(|&i| is_long(i).is_none())
            .map(|i| (i, keys[i]))
            .unzip();
        let (status, statuses): (_, Vec<Result<mcpool_status, Failure>>) =
            match c.client.store_ttl_checked_multi(cmd, &sent, seconds) {
                Ok(t) => {
                    // SAFETY: `out` is not NULL (checked) and the caller promises it is
                    // writable.
                    unsafe { ptr::write(out, t) };
                    (MCPOOL_OK, (0..n).map(|_| Ok(MCPOOL_OK)).collect())
                }
                // An empty batch refused: the time's refusal, no key to name.
                Err(errors) if errors.is_empty() && keys.is_empty() => {
                    return mcpool::ttl::checked_from_signed("ttl", seconds)
                        .map(|_| MCPOOL_OK)
                        .map_err(|e| Failure::from_error(&call, None, &e));
                }
                Err(errors) => {
                    let mut all: Vec<Result<mcpool_status, Failure>> = (0..n)
                        .map(|i| Err(too_long(&call, i, is_long(i).unwrap_or(0))))
                        .collect();
                    for ((&i, k), e) in positions.iter().zip(&sent).zip(&errors) {
                        all[i] = Err(Failure::from_error(&call, Some(k), e));
                    }
                    (mcpool_status::MCPOOL_INVALID_ARGUMENT, all)
                }
            };
        // SAFETY: checked non-NULL when `n` > 0; the caller promises room for `n`.
        unsafe { write_statuses(out_statuses, statuses) };
        Ok(status)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::last_error;

    #[test]
    fn names_the_number_given() {
        let mut t = 7u32;
        // SAFETY: valid strings, key and output.
        let st = unsafe {
            mcpool_expiry_checked(
                c"set".as_ptr(),
                b"k".as_ptr(),
                1,
                c"ttl".as_ptr(),
                1 << 32,
                &mut t,
            )
        };
        assert_eq!(st, mcpool_status::MCPOOL_INVALID_ARGUMENT);
        assert_eq!(t, 7, "not written on a failure");
        let m = last_error::current();
        assert!(
            m.starts_with("set \"k\": invalid ttl: 4294967296 is above 2147483647"),
            "{m}"
        );
        // SAFETY: as above, without a key.
        let st = unsafe {
            mcpool_expiry_checked(
                c"get_lease".as_ptr(),
                std::ptr::null(),
                0,
                c"recache_below".as_ptr(),
                -1,
                &mut t,
            )
        };
        assert_eq!(st, mcpool_status::MCPOOL_INVALID_ARGUMENT);
        assert!(
            last_error::current().starts_with("get_lease: invalid recache_below: -1 is negative")
        );
        // SAFETY: as above.
        let st = unsafe {
            mcpool_expiry_checked(
                std::ptr::null(),
                std::ptr::null(),
                0,
                c"ttl".as_ptr(),
                -1,
                &mut t,
            )
        };
        assert_eq!((st, t), (MCPOOL_OK, mcpool::ttl::EXPIRED_AT_ONCE));
        // SAFETY: as above: a NULL key with a length is refused before anything is read
        // (tester finding cteam2 6: it was taken as no key).
        let st = unsafe {
            mcpool_expiry_checked(
                c"set".as_ptr(),
                std::ptr::null(),
                5,
                c"ttl".as_ptr(),
                5,
                &mut t,
            )
        };
        assert_eq!(st, mcpool_status::MCPOOL_INVALID_ARGUMENT);
        assert_eq!(last_error::current(), "set: key is NULL");
        assert_eq!(t, mcpool::ttl::EXPIRED_AT_ONCE, "not written on a failure");
        // SAFETY: as above; an unknown name is refused.
        let st = unsafe {
            mcpool_expiry_checked(
                std::ptr::null(),
                std::ptr::null(),
                0,
                c"delay".as_ptr(),
                1,
                &mut t,
            )
        };
        assert_eq!(st, mcpool_status::MCPOOL_INVALID_ARGUMENT);
    }
}
