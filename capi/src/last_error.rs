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
}
