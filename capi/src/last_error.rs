//! The thread-local detail of the last error: what failed, on which server, for which key,
//! with the operating system's text when there is one.

use std::cell::RefCell;
use std::ffi::{c_char, CString};

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

/// Records `message` as this thread's last error. Interior NUL bytes are shown as `\0`.
pub(crate) fn set(message: String) {
    let c = CString::new(message).unwrap_or_else(|e| {
        let text = String::from_utf8_lossy(&e.into_vec()).replace('\0', "\\0");
        CString::new(text).unwrap_or_default()
    });
    // A thread being torn down has no last error to keep; ignore that case.
    let _ = LAST_ERROR.try_with(|slot| *slot.borrow_mut() = c);
}

/// This thread's last error message, for tests.
#[cfg(test)]
pub(crate) fn current() -> String {
    LAST_ERROR.with(|slot| slot.borrow().to_string_lossy().into_owned())
}

/// This thread's last error message, as a NUL-terminated UTF-8 string; `""` when no call
/// on this thread has failed yet.
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

/// Empties this thread's last error, so that what it holds afterwards can only come from the
/// calls made since.
///
/// For bindings whose contract is "after a call, the last error is that call's failure or
/// nothing" (Perl's `last_error`): they clear it when a call starts, and after the steps of
/// their own that are allowed to fail (probing what the value format supports).
#[no_mangle]
pub extern "C" fn mcpool_last_error_clear() {
    // Called at the start of every call by such a binding: no allocation when already empty.
    let _ = LAST_ERROR.try_with(|slot| {
        if !slot.borrow().is_empty() {
            *slot.borrow_mut() = CString::default();
        }
    });
}

/// Sets this thread's last error to `message` (`len` bytes, UTF-8 or not; interior NUL bytes
/// are shown as `\0`). NULL, or a length of 0, empties it.
///
/// For a binding that runs user code between a call and the user's look at the last error
/// (Perl's `on_operation` callbacks, which may themselves use the client): it saves the
/// message first and puts it back afterwards, as a signal handler saves and restores `errno`.
///
/// # Safety
/// A non-NULL `message` must be valid for reads of `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn mcpool_last_error_restore(message: *const u8, len: usize) {
    if message.is_null() || len == 0 {
        mcpool_last_error_clear();
        return;
    }
    // SAFETY: `message` is not NULL and the caller promises `len` readable bytes.
    let bytes = unsafe { std::slice::from_raw_parts(message, len) };
    set(String::from_utf8_lossy(bytes).into_owned());
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
        // SAFETY: NULL is allowed and empties it.
        unsafe { mcpool_last_error_restore(std::ptr::null(), 5) };
        assert_eq!(current(), "");
    }
}
