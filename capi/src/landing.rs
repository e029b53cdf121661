//! The panic boundary: every entry point runs its body through `landingpad`, which turns
//! a failure into a status and a last-error message, and a panic into `MCPOOL_PANIC`
//! (after sourmash's `landingpad`: a function, not a macro, so rustfmt formats the bodies).

use super::last_error;
use super::status::mcpool_status;
use mcpool::error::Error;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// A failed call: the status to return and the message for the thread's last error.
#[derive(Debug, Clone)]
pub(crate) struct Failure {
    pub status: mcpool_status,
    pub message: String,
    /// The `host:port` of the server the error came from (`Error::server`), for
    /// `mcpool_last_error_server`; `None` for an error of no server's.
    pub server: Option<String>,
    /// The request was sent and its outcome is unknown (`Error::outcome_unknown`), for
    /// `mcpool_last_error_outcome_unknown`.
    pub outcome_unknown: bool,
}

impl Failure {
    /// A failure with its own status and message.
    pub fn new(status: mcpool_status, message: impl Into<String>) -> Failure {
        Failure {
            status,
            message: message.into(),
            server: None,
            outcome_unknown: false,
        }
    }

    /// `MCPOOL_INVALID_ARGUMENT`.
    pub fn invalid(message: impl Into<String>) -> Failure {
        Failure::new(mcpool_status::MCPOOL_INVALID_ARGUMENT, message)
    }

    /// A core error, described with the operation and (when given) the key.
    pub fn from_error(op: &str, key: Option<&[u8]>, e: &Error) -> Failure {
        // A refused key is named once: by the error when it is the caller's key as it went
        // (no prefix added, not sanitized), else as the caller gave it and as it went
        // (tester finding keys2 5: `set "x y": invalid key "x y": ...`).
        let message = match key {
            Some(k) if !e.names_key(k) => {
                format!("{op} {}: {e}", mcpool::key::quoted(k))
            }
            _ => format!("{op}: {e}"),
        };
        Failure::new(mcpool_status::from_error(e), message).on(e)
    }

    /// A core error in its own words, for a call whose caller knows what it called and
    /// that names no key (building a client): no C function's name before it, which would
    /// mean nothing to a binding's user (tester finding retest26 7).
    pub fn of(e: &Error) -> Failure {
        Failure::new(mcpool_status::from_error(e), e.to_string()).on(e)
    }

    /// This failure with the server of `e` (when it has one) and whether its request's
    /// outcome is unknown.
    fn on(mut self, e: &Error) -> Failure {
        self.server = e.server().map(str::to_owned);
        self.outcome_unknown = e.outcome_unknown();
        self
    }

    /// As [`Failure::from_error`], for a key of `len` bytes that is not read (too long to
    /// trust its length): named by its length, as the core's `key::too_long` names it.
    pub fn unread_key(op: &str, len: usize, e: &Error) -> Failure {
        let message = if matches!(e, Error::InvalidKey { .. }) {
            format!("{op}: {e}") // names it by its length
        } else {
            format!("{op} \"<{len} bytes>\": {e}")
        };
        Failure::new(mcpool_status::from_error(e), message).on(e)
    }
}

/// What an entry point's body returns: a status that is an answer (`MCPOOL_OK`,
/// `MCPOOL_NOT_FOUND`, …) or a failure.
pub(crate) type Outcome = Result<mcpool_status, Failure>;

/// Runs `body`, never letting a panic out. A failure or a panic is recorded as the thread's
/// last error and returned as its status.
///
/// `AssertUnwindSafe` is sound here: after a panic the caller only gets a status, and the
/// shared state a body touches (pools, health counters) stays consistent on its own: a
/// connection checked out by the panicking call is dropped, not returned to its pool.
#[inline]
pub(crate) fn landingpad(body: impl FnOnce() -> Outcome) -> mcpool_status {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(status)) => status,
        Ok(Err(f)) => {
            let status = f.status;
            last_error::set_failure(f);
            status
        }
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic payload".into());
            // Dropping the payload could itself panic; keep it out of harm's way.
            std::mem::forget(payload);
            last_error::set(format!("mcpool panicked (a bug, please report): {what}"));
            mcpool_status::MCPOOL_PANIC
        }
    }
}

/// Runs `body` for its side effects in a function that returns nothing (the `_free`
/// functions): a panic is caught and recorded, never propagated.
pub(crate) fn landingpad_void(body: impl FnOnce()) {
    landingpad(|| {
        body();
        Ok(mcpool_status::MCPOOL_OK)
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panics_become_a_status() {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let s = landingpad(|| panic!("on purpose"));
        std::panic::set_hook(prev);
        assert_eq!(s, mcpool_status::MCPOOL_PANIC);
        assert!(last_error::current().contains("on purpose"));
        let s = landingpad(|| Err(Failure::invalid("nope")));
        assert_eq!(s, mcpool_status::MCPOOL_INVALID_ARGUMENT);
        assert_eq!(last_error::current(), "nope");
    }
}
