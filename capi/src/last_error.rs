//! The thread-local detail of the last error: what failed, on which server, for which key,
//! with the operating system's text when there is one.

use super::landing::{landingpad, Failure};
use super::status::mcpool_status;
use std::cell::{Cell, RefCell};
use std::ffi::{c_char, CString};

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
    /// The server the last error came from (`host:port`), empty when none.
    static LAST_SERVER: RefCell<CString> = RefCell::new(CString::default());
    /// Whether the last error is of a request that was sent and whose outcome is unknown.
    static LAST_OUTCOME_UNKNOWN: Cell<bool> = const { Cell::new(false) };
    /// The failed items of this thread's last batch call, by index, ascending: each one's
    /// message and whether its outcome is unknown.
    static ITEM_ERRORS: RefCell<Vec<(usize, CString, bool)>> = const { RefCell::new(Vec::new()) };
}

/// `message` as a C string; interior NUL bytes are shown as `\0`.
fn c_string(message: String) -> CString {
    c_bytes(message.into_bytes())
}

/// `bytes` as a C string, kept as given (UTF-8 or not) but for interior NUL bytes, shown as
/// `\0`.
fn c_bytes(bytes: Vec<u8>) -> CString {
    CString::new(bytes).unwrap_or_else(|e| {
        let bytes = e.into_vec();
        let mut shown = Vec::with_capacity(bytes.len() + 8);
        for b in bytes {
            match b {
                0 => shown.extend_from_slice(b"\\0"),
                _ => shown.push(b),
            }
        }
        CString::new(shown).unwrap_or_default()
    })
}

/// Records `message` as this thread's last error, of no server. Interior NUL bytes are
/// shown as `\0`.
pub(crate) fn set(message: String) {
    set_c(c_string(message));
}

/// Records failure `f` as this thread's last error: its message, the server it came from
/// and whether its request's outcome is unknown.
pub(crate) fn set_failure(f: Failure) {
    set_c(c_string(f.message));
    detail(f.server, f.outcome_unknown);
}

/// Records the server (`host:port`) and outcome of the last error set.
fn detail(server: Option<String>, outcome_unknown: bool) {
    if let Some(server) = server {
        let _ = LAST_SERVER.try_with(|slot| *slot.borrow_mut() = c_string(server));
    }
    let _ = LAST_OUTCOME_UNKNOWN.try_with(|slot| slot.set(outcome_unknown));
}

/// Records `c` as this thread's last error, of no server, its outcome not unknown.
fn set_c(c: CString) {
    // A thread being torn down has no last error to keep; ignore that case.
    let _ = LAST_ERROR.try_with(|slot| *slot.borrow_mut() = c);
    clear_detail();
}

/// Forgets the server and the outcome of the last error (no allocation).
fn clear_detail() {
    let _ = LAST_SERVER.try_with(|slot| {
        if !slot.borrow().is_empty() {
            *slot.borrow_mut() = CString::default();
        }
    });
    let _ = LAST_OUTCOME_UNKNOWN.try_with(|slot| slot.set(false));
}

/// Records a batch call's failed items (`(index, failure)`, in any order), replacing the
/// last batch call's, and the first item's (the lowest index) as the last error, with its
/// server and outcome. A batch call with no failed item calls it with none: the list is
/// emptied and the last error left as it was.
pub(crate) fn set_items(mut items: Vec<(usize, Failure)>) {
    items.sort_unstable_by_key(|(i, _)| *i);
    let first = items
        .first()
        .map(|(_, f)| (f.server.clone(), f.outcome_unknown));
    let items: Vec<(usize, CString, bool)> = items
        .into_iter()
        .map(|(i, f)| (i, c_string(f.message), f.outcome_unknown))
        .collect();
    if let (Some((_, message, _)), Some((server, outcome_unknown))) = (items.first(), first) {
        set_c(message.clone());
        detail(server, outcome_unknown);
    }
    let _ = ITEM_ERRORS.try_with(|slot| {
        let mut slot = slot.borrow_mut();
        if !(slot.is_empty() && items.is_empty()) {
            *slot = items;
        }
    });
}

/// Empties the list of failed items: done when a batch call starts, so that one refused as
/// a whole before any item was tried leaves no earlier call's messages (no allocation when
/// already empty).
pub(crate) fn clear_items() {
    let _ = ITEM_ERRORS.try_with(|slot| {
        if !slot.borrow().is_empty() {
            *slot.borrow_mut() = Vec::new();
        }
    });
}

/// The message of item `index` of this thread's last batch call, as a NUL-terminated UTF-8
/// string: what made that item fail (e.g. `set_multi "user:7": I/O error talking to
/// 127.0.0.1:11211: ...`), or `""` when it did not fail, when `index` is past that call's
/// items, or when no batch call has run on this thread. `*out_len` (when not NULL) gets its
/// length in bytes, without the NUL.
///
/// A batch call is one that writes a status per item: `mcpool_client_set_multi`,
/// `_set_multi_ttl`, `_store_multi`, `_store_multi_kind`, `_delete_multi`, `_touch_multi`,
/// `_arith_multi`, `_get_multi_into`, `_gat_multi_into` and
/// `mcpool_client_store_expiry_checked_multi`. Each replaces the list, whether
/// or not an item failed, and a call refused as a whole (a NULL array, too many items: no
/// status written, nothing sent) empties it; other calls leave it.
/// `mcpool_last_error_message` holds only the first failure's message; this one answers for
/// every item, so a binding can raise each key's own error.
/// (`mcpool_client_get_multi`'s result set keeps each key's message itself:
/// `mcpool_multi_get` sets it as the last error.)
///
/// Ownership: the string belongs to mcpool and stays valid until this thread's next batch
/// call (the calls above; others, single-key calls included, leave it); copy it to keep it.
/// Never free it. Never NULL.
///
/// # Safety
/// `out_len` is NULL or valid for one write.
#[no_mangle]
pub unsafe extern "C" fn mcpool_last_item_error_message(
    index: usize,
    out_len: *mut usize,
) -> *const c_char {
    let (ptr, len) = ITEM_ERRORS
        .try_with(|slot| {
            let slot = slot.borrow();
            slot.binary_search_by_key(&index, |(i, _, _)| *i)
                .ok()
                .map(|at| (slot[at].1.as_ptr(), slot[at].1.as_bytes().len()))
        })
        .ok()
        .flatten()
        .unwrap_or((c"".as_ptr(), 0));
    if !out_len.is_null() {
        // SAFETY: not NULL, and the caller promises it is valid for one write.
        unsafe { out_len.write(len) };
    }
    ptr
}

/// Whether item `index` of this thread's last batch call failed after its request was sent,
/// so that whether the server applied it is unknown (its message says "the request was
/// sent: whether it was applied is unknown"): read the key back before repeating the write.
/// False when the item did not fail, failed before anything was sent or failed in a way
/// that says the server did not apply it, and when `index` is past that call's items.
/// Replaced as `mcpool_last_item_error_message` is.
#[no_mangle]
pub extern "C" fn mcpool_last_item_outcome_unknown(index: usize) -> bool {
    ITEM_ERRORS
        .try_with(|slot| {
            let slot = slot.borrow();
            slot.binary_search_by_key(&index, |(i, _, _)| *i)
                .is_ok_and(|at| slot[at].2)
        })
        .unwrap_or(false)
}

/// This thread's last error message, for tests.
#[cfg(test)]
pub(crate) fn current() -> String {
    LAST_ERROR.with(|slot| slot.borrow().to_string_lossy().into_owned())
}

/// This thread's last error message, as a NUL-terminated UTF-8 string (or the bytes a
/// binding put back with `mcpool_last_error_restore`, as given); `""` when no call on this
/// thread has failed yet.
///
/// It describes the most recent call on this thread that returned a status of 100 or more
/// (cache answers such as `MCPOOL_NOT_FOUND` leave it unchanged), e.g.
/// `get "user:1": I/O error talking to 127.0.0.1:11211: Connection refused (os error 111)`.
///
/// Ownership: the string belongs to mcpool and stays valid until the next call into mcpool
/// from the same thread; copy it to keep it. Never free it. Never NULL.
#[no_mangle]
pub extern "C" fn mcpool_last_error_message() -> *const c_char {
    LAST_ERROR
        .try_with(|slot| slot.borrow().as_ptr())
        .unwrap_or(c"".as_ptr())
}

/// The length in bytes of `mcpool_last_error_message()`, without its terminating NUL.
#[no_mangle]
pub extern "C" fn mcpool_last_error_length() -> usize {
    LAST_ERROR
        .try_with(|slot| slot.borrow().as_bytes().len())
        .unwrap_or(0)
}

/// The `host:port` of the server this thread's last error came from (a refused connect, a
/// timeout, a server's error reply such as memcached's "object too large for cache"), as a
/// NUL-terminated string; `""` when the last error is of no server's (a bad argument, a
/// value above `max_value_size` refused before anything was sent) or when there is none.
/// After a call with many keys, the server of the first failed key's error (each key's
/// message names its own). `*out_len` (when not NULL)
/// gets its length in bytes, without the NUL.
///
/// It tells apart two errors of one status: `MCPOOL_VALUE_TOO_LARGE` refused by the client
/// (nothing sent: `""`) and by the server (the request was sent and answered: its address),
/// as python-memcached answers 0 for the first and False for the second.
///
/// Ownership: as `mcpool_last_error_message`'s (valid until the next call into mcpool from
/// the same thread; never free it). Never NULL.
///
/// # Safety
/// `out_len` is NULL or valid for one write.
#[no_mangle]
pub unsafe extern "C" fn mcpool_last_error_server(out_len: *mut usize) -> *const c_char {
    let (ptr, len) = LAST_SERVER
        .try_with(|slot| {
            let s = slot.borrow();
            (s.as_ptr(), s.as_bytes().len())
        })
        .unwrap_or((c"".as_ptr(), 0));
    if !out_len.is_null() {
        // SAFETY: not NULL, and the caller promises it is valid for one write.
        unsafe { out_len.write(len) };
    }
    ptr
}

/// Whether this thread's last error is of a request that was sent and whose outcome is
/// unknown: a write that timed out waiting for its reply, or whose connection was closed or
/// reset after it was sent, may or may not have been applied (its message says "the request
/// was sent: whether it was applied is unknown"; Rust's `Error::outcome_unknown`). Read the
/// key back before repeating it: an `incr` or `append` repeated blindly may be applied twice.
/// False for an error before anything was sent (a refused connect, a bad key), for one the
/// server answered, for a read (which changes nothing), after a message put back with
/// `mcpool_last_error_restore`, and when there is no last error. Changes with the last
/// error, as `mcpool_last_error_server` does.
#[no_mangle]
pub extern "C" fn mcpool_last_error_outcome_unknown() -> bool {
    LAST_OUTCOME_UNKNOWN.try_with(Cell::get).unwrap_or(false)
}

/// Marks this thread's last error as one whose request's outcome is unknown (or not), as
/// `mcpool_last_error_outcome_unknown` then answers: for a binding that saved a core error
/// (its message with `mcpool_last_error_message`, this flag with
/// `mcpool_last_error_outcome_unknown`) and put the message back with
/// `mcpool_last_error_restore` (which clears the flag) after running code of its own.
/// Ignored while the last error is empty.
#[no_mangle]
pub extern "C" fn mcpool_last_error_restore_outcome_unknown(outcome_unknown: bool) {
    let empty = LAST_ERROR
        .try_with(|slot| slot.borrow().is_empty())
        .unwrap_or(true);
    let _ = LAST_OUTCOME_UNKNOWN.try_with(|slot| slot.set(outcome_unknown && !empty));
}

/// Empties this thread's last error, so that what it holds afterwards can only come from the
/// calls made since.
///
/// For bindings whose contract is "after a call, the last error is that call's failure or
/// nothing" (Perl's `last_error`): they clear it when a call starts, and after the steps of
/// their own that are allowed to fail (probing what the value format supports).
#[no_mangle]
pub extern "C" fn mcpool_last_error_clear() {
    // Inside the panic boundary, as every entry point: nothing here should panic, but an
    // allocation failure or a bug must never unwind into C.
    super::landing::landingpad_void(clear);
}

/// [`mcpool_last_error_clear`]'s body. Called at the start of every call by such a binding:
/// no allocation when already empty.
fn clear() {
    let _ = LAST_ERROR.try_with(|slot| {
        if !slot.borrow().is_empty() {
            *slot.borrow_mut() = CString::default();
        }
    });
    clear_detail();
}

/// The longest message `mcpool_last_error_restore` takes back (1 MiB): far above any
/// message mcpool writes (a key is at most 250 bytes, a server's reply line is bounded),
/// and low enough that a length above it is refused before anything is read or allocated.
/// A length within it is read whole: the ABI cannot tell how large the caller's buffer is.
pub const MCPOOL_MAX_ERROR_MESSAGE: usize = 1 << 20;

/// Sets this thread's last error to `message` (`len` bytes, UTF-8 or not, kept as given;
/// interior NUL bytes are shown as `\0`) and returns `MCPOOL_OK`. A length of 0 empties it
/// (`message` may then be NULL).
///
/// `MCPOOL_INVALID_ARGUMENT`, before anything is read, when `message` is NULL with a length
/// above 0 or `len` is above `MCPOOL_MAX_ERROR_MESSAGE` (`SIZE_MAX` is refused, never a
/// crash); the last error then says why.
///
/// For a binding that runs user code between a call and the user's look at the last error
/// (Perl's `on_operation` callbacks, which may themselves use the client): it saves the
/// message first and puts it back afterwards, as a signal handler saves and restores `errno`.
///
/// # Safety
/// A non-NULL `message` must be valid for reads of `len` bytes (a length up to
/// `MCPOOL_MAX_ERROR_MESSAGE` is read whole).
#[no_mangle]
pub unsafe extern "C" fn mcpool_last_error_restore(
    message: *const u8,
    len: usize,
) -> mcpool_status {
    landingpad(|| {
        // SAFETY: forwarded from the caller's promise; `ptr::bytes` checks NULL and the
        // length before it reads anything.
        let bytes = unsafe {
            super::ptr::bytes(
                message,
                len,
                MCPOOL_MAX_ERROR_MESSAGE,
                "message",
                mcpool_status::MCPOOL_INVALID_ARGUMENT,
            )
        }?;
        if bytes.is_empty() {
            clear();
        } else {
            set_c(c_bytes(bytes.to_vec()));
        }
        Ok(mcpool_status::MCPOOL_OK)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    #[test]
    fn set_and_read_per_thread() {
        set("boom\0here".into());
        // SAFETY: the pointer is a valid NUL-terminated string until the next set().
        let msg = unsafe { CStr::from_ptr(mcpool_last_error_message()) };
        assert_eq!(msg.to_str().unwrap(), "boom\\0here");
        assert_eq!(mcpool_last_error_length(), "boom\\0here".len());
        std::thread::spawn(|| assert_eq!(mcpool_last_error_length(), 0))
            .join()
            .unwrap();
    }

    #[test]
    fn clear_and_restore() {
        set("first".into());
        mcpool_last_error_clear();
        assert_eq!(mcpool_last_error_length(), 0);
        assert_eq!(current(), "");
        let saved = b"get \"k\": timed out";
        // SAFETY: `saved` is valid for reads of its length.
        unsafe { mcpool_last_error_restore(saved.as_ptr(), saved.len()) };
        assert_eq!(current(), "get \"k\": timed out");
        // SAFETY: NULL is allowed with a length of 0, and empties it.
        let s = unsafe { mcpool_last_error_restore(std::ptr::null(), 0) };
        assert_eq!(s, mcpool_status::MCPOOL_OK);
        assert_eq!(current(), "");
        // misuse F1: NULL with a length, or a length no message has (SIZE_MAX aborted the
        // process: capacity overflow in a function that cannot unwind), is refused before
        // anything is read.
        // SAFETY: NULL and an oversized length are refused before any read.
        let s = unsafe { mcpool_last_error_restore(std::ptr::null(), 5) };
        assert_eq!(s, mcpool_status::MCPOOL_INVALID_ARGUMENT);
        assert!(current().contains("message is NULL"), "{}", current());
        // SAFETY: as above: the length is checked before `saved` is read.
        let s = unsafe { mcpool_last_error_restore(saved.as_ptr(), usize::MAX) };
        assert_eq!(s, mcpool_status::MCPOOL_INVALID_ARGUMENT);
        assert!(current().contains("longer than the limit"), "{}", current());
        // SAFETY: as above.
        let s = unsafe { mcpool_last_error_restore(saved.as_ptr(), MCPOOL_MAX_ERROR_MESSAGE + 1) };
        assert_eq!(s, mcpool_status::MCPOOL_INVALID_ARGUMENT);
        // Bytes that are not UTF-8 come back as given (a NUL as `\0`), not as U+FFFD.
        let raw = b"\xff\xfe\0k";
        // SAFETY: `raw` is valid for reads of its length.
        unsafe { mcpool_last_error_restore(raw.as_ptr(), raw.len()) };
        // SAFETY: the pointer is a valid NUL-terminated string until the next set().
        let back = unsafe { CStr::from_ptr(mcpool_last_error_message()) };
        assert_eq!(back.to_bytes(), b"\xff\xfe\\0k");
        assert_eq!(mcpool_last_error_length(), 5);
    }

    /// compat F5: a value refused by the server and one refused before sending share
    /// `MCPOOL_VALUE_TOO_LARGE`; the server of the last error tells them apart.
    #[test]
    fn server_of_the_last_error() {
        use crate::landing::{landingpad, Failure};
        use mcpool::error::Error;
        let server = || {
            let mut len = usize::MAX;
            // SAFETY: `len` is valid for one write; the string is read before the next call.
            let s = unsafe { CStr::from_ptr(mcpool_last_error_server(&mut len)) };
            assert_eq!(len, s.to_bytes().len());
            s.to_str().unwrap().to_owned()
        };
        let by_server = Error::TooLargeForServer {
            server: "127.0.0.1:11211".into(),
            message: "SERVER_ERROR object too large for cache".into(),
        };
        let by_client = Error::ValueTooLarge {
            len: 9,
            limit: 8,
            max_decompressed: None,
            key_deleted: None,
        };
        let a = landingpad(|| Err(Failure::from_error("set", Some(b"k"), &by_server)));
        assert_eq!(server(), "127.0.0.1:11211");
        let b = landingpad(|| Err(Failure::from_error("set", Some(b"k"), &by_client)));
        assert_eq!(a, b, "one status for both");
        assert_eq!(server(), "");
        landingpad(|| Err(Failure::from_error("set", Some(b"k"), &by_server)));
        let refused = Failure::new(
            mcpool_status::MCPOOL_VALUE_TOO_LARGE,
            "set_multi \"k\": too large",
        );
        set_items(vec![(0, refused)]);
        assert_eq!(
            server(),
            "",
            "a batch's last error names no server of its own"
        );
        landingpad(|| Err(Failure::from_error("set", Some(b"k"), &by_server)));
        mcpool_last_error_clear();
        assert_eq!(server(), "");
        // SAFETY: NULL is allowed.
        assert!(!unsafe { mcpool_last_error_server(std::ptr::null_mut()) }.is_null());
    }

    #[test]
    fn outcome_unknown_goes_with_the_last_error_and_each_item() {
        let timed_out = |sent| mcpool::error::Error::IoTimeout {
            server: "127.0.0.1:11211".into(),
            operation_timeout: false,
            sent,
        };
        landingpad(|| Err(Failure::from_error("incr", Some(b"k"), &timed_out(true))));
        assert!(mcpool_last_error_outcome_unknown());
        // A restored message is the binding's: no outcome of its own.
        let saved = b"incr \"k\": timed out";
        // SAFETY: `saved` is valid for reads of its length.
        unsafe { mcpool_last_error_restore(saved.as_ptr(), saved.len()) };
        assert!(!mcpool_last_error_outcome_unknown());
        mcpool_last_error_restore_outcome_unknown(true);
        assert!(
            mcpool_last_error_outcome_unknown(),
            "put back with the message"
        );
        mcpool_last_error_clear();
        mcpool_last_error_restore_outcome_unknown(true);
        assert!(
            !mcpool_last_error_outcome_unknown(),
            "no last error, no outcome"
        );
        landingpad(|| Err(Failure::from_error("incr", Some(b"k"), &timed_out(false))));
        assert!(!mcpool_last_error_outcome_unknown(), "nothing was sent");
        landingpad(|| Err(Failure::from_error("incr", Some(b"k"), &timed_out(true))));
        mcpool_last_error_clear();
        assert!(!mcpool_last_error_outcome_unknown());
        // Each item keeps its own; the first failed item's is the last error's.
        let item = |sent| Failure::from_error("set_multi", Some(b"k"), &timed_out(sent));
        set_items(vec![(3, item(false)), (1, item(true))]);
        assert!(
            mcpool_last_error_outcome_unknown(),
            "item 1 is the first failed"
        );
        assert!(mcpool_last_item_outcome_unknown(1));
        assert!(!mcpool_last_item_outcome_unknown(3));
        assert!(!mcpool_last_item_outcome_unknown(2), "item 2 did not fail");
        assert!(!mcpool_last_item_outcome_unknown(usize::MAX));
        clear_items();
        assert!(!mcpool_last_item_outcome_unknown(1));
    }
}
