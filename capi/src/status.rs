//! `mcpool_status`: the result of every call, with stable numeric values.

use mcpool::error::{Class, Error};
use std::ffi::c_char;

/// The result of a call. The numbers are part of the ABI: they never change and a retired
/// value is never given to another status.
///
/// - `0..=99`: the call reached an answer. `MCPOOL_OK` is success; the others are cache
///   answers (a miss, a store that did not happen), not errors, and set no last error.
/// - `100..=199`: the caller's input was refused before any I/O, or the caller ended the
///   call (`MCPOOL_INTERRUPTED`), closed the client (`MCPOOL_CLOSED`) or forked inside it
///   (`MCPOOL_FORKED`).
/// - `200..=299`: the server or the network failed; the last error names the server.
/// - `900..`: a bug in mcpool (a caught panic) or an error this version cannot name.
///
/// Every status other than `0..=99` sets the thread's last error message
/// (`mcpool_last_error_message`).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum mcpool_status {
    /// Success.
    MCPOOL_OK = 0,
    /// A miss: the key does not exist (get, gets, gat, delete, touch, incr, decr), or a
    /// `cas` whose item is gone.
    MCPOOL_NOT_FOUND = 1,
    /// A store condition failed: `add` of an existing key, `replace`/`append`/`prepend` of a
    /// missing one.
    MCPOOL_NOT_STORED = 2,
    /// `cas`: the item changed since it was read.
    MCPOOL_EXISTS = 3,
    /// A NULL pointer where one is required, a length out of range, or
    /// an expiry (TTL, stale time, flush delay) above 2^31 - 1, which memcached would read as
    /// negative and expire at once: refused before anything is sent.
    MCPOOL_INVALID_ARGUMENT = 100,
    /// The key was refused before any byte was sent: empty, longer than 250 bytes (with the
    /// prefix), or, on the text protocol, containing a space or control byte (docs/keys.md).
    MCPOOL_INVALID_KEY = 101,
    /// The value (after compression) is larger than the configured item size limit.
    MCPOOL_VALUE_TOO_LARGE = 102,
    /// The configuration is unusable (no servers, a malformed address, an unknown name).
    MCPOOL_CONFIG = 103,
    /// An index beyond the end of a list (server, result set, statistics).
    MCPOOL_OUT_OF_RANGE = 104,
    /// The operation needs another protocol than the configured one.
    MCPOOL_UNSUPPORTED = 105,
    /// The caller's allocation callback returned NULL (`mcpool_client_get_into` and its multi
    /// form): the value was read and dropped, the connection is still usable.
    MCPOOL_ALLOC_FAILED = 106,
    /// A signal interrupted a socket read or write and the interrupt check
    /// (`mcpool_interrupt_check_set`) asked to end the call. The connection was closed (a
    /// late reply never reaches another call); the server is not blamed.
    MCPOOL_INTERRUPTED = 107,
    /// The client was closed (`mcpool_client_close`): a call waiting for a pooled connection,
    /// or made after the close, ends with this before anything is sent. The server is not
    /// blamed.
    MCPOOL_CLOSED = 108,
    /// The process forked during the call (a callback of the call called `fork()`) and this
    /// is the child: the call's connections are the parent's, and the child neither reads
    /// nor writes them; the keys whose reply it would have to read from such a connection
    /// fail with this (never as misses; the multi-gets into the caller's memory, `_into` and
    /// `_cb`, report every key of such a server with it, including values already handed to
    /// the callback: read none of them). A server whose whole reply the parent had already
    /// read before the fork is answered from that copy, as usual (its values are the
    /// server's, right). The server is not blamed; the child's next calls open connections
    /// of their own.
    MCPOOL_FORKED = 109,
    /// The key's server is marked dead and not yet due for a retry.
    MCPOOL_SERVER_DEAD = 200,
    /// No pooled connection became free within the pool timeout.
    MCPOOL_POOL_TIMEOUT = 201,
    /// Connecting did not finish within the connect timeout.
    MCPOOL_CONNECT_TIMEOUT = 202,
    /// A read or write did not finish within the I/O timeout.
    MCPOOL_IO_TIMEOUT = 203,
    /// Any other socket error (refused, reset, closed mid-reply); the message has the OS text.
    MCPOOL_IO = 204,
    /// The server answered `SERVER_ERROR`; the message has its text.
    MCPOOL_SERVER_ERROR = 205,
    /// The server answered `CLIENT_ERROR` or `ERROR` (for example incr of a non-number).
    MCPOOL_CLIENT_ERROR = 206,
    /// The server's reply was not valid for the request.
    MCPOOL_PROTOCOL = 207,
    /// A value marked compressed could not be decompressed.
    MCPOOL_DECOMPRESS = 208,
    /// SASL authentication was refused by the server.
    MCPOOL_AUTH = 209,
    /// A value's flags mean nothing in the client's value format, or mark a kind this reader
    /// cannot deliver (a serialized object with its deserialization off, an integer whose body
    /// is not one); the message names the key, the flags and the format.
    MCPOOL_VALUE_FORMAT = 210,
    /// A bug: mcpool panicked. The panic was caught; the message says where.
    MCPOOL_PANIC = 900,
    /// An error this version of the C ABI has no status for.
    MCPOOL_UNKNOWN_ERROR = 999,
}

/// What kind of outcome a status is: the one map from statuses to a binding's error classes
/// (`mcpool_status_class`; docs/errors.md has the classes per language).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum mcpool_class {
    /// `MCPOOL_OK`.
    MCPOOL_CLASS_OK = 0,
    /// A miss: `MCPOOL_NOT_FOUND`.
    MCPOOL_CLASS_MISS = 1,
    /// A store that did not happen: `MCPOOL_NOT_STORED`, `MCPOOL_EXISTS`.
    MCPOOL_CLASS_NOT_STORED = 2,
    /// The caller's input was refused (`MCPOOL_INVALID_ARGUMENT`, `MCPOOL_INVALID_KEY`,
    /// `MCPOOL_VALUE_TOO_LARGE`, `MCPOOL_OUT_OF_RANGE`, `MCPOOL_ALLOC_FAILED`), or the server
    /// said the request was wrong (`MCPOOL_CLIENT_ERROR`).
    MCPOOL_CLASS_CLIENT_ERROR = 3,
    /// The server failed or sent something unusable: `MCPOOL_SERVER_ERROR`, `MCPOOL_PROTOCOL`,
    /// `MCPOOL_DECOMPRESS`, `MCPOOL_VALUE_FORMAT` (a value the format cannot read or write).
    MCPOOL_CLASS_SERVER_ERROR = 4,
    /// `MCPOOL_POOL_TIMEOUT`, `MCPOOL_CONNECT_TIMEOUT`, `MCPOOL_IO_TIMEOUT`.
    MCPOOL_CLASS_TIMEOUT = 5,
    /// The server cannot be reached: `MCPOOL_SERVER_DEAD`, `MCPOOL_IO`, `MCPOOL_AUTH`.
    MCPOOL_CLASS_CONNECTION = 6,
    /// The configuration is unusable or lacks what the call needs: `MCPOOL_CONFIG`,
    /// `MCPOOL_UNSUPPORTED`.
    MCPOOL_CLASS_CONFIGURATION = 7,
    /// A bug (`MCPOOL_PANIC`), `MCPOOL_UNKNOWN_ERROR`, or a number that is no status.
    MCPOOL_CLASS_INTERNAL = 8,
}

impl mcpool_class {
    /// The C class of a core class.
    pub fn from_class(c: Class) -> mcpool_class {
        use mcpool_class::*;
        match c {
            Class::Ok => MCPOOL_CLASS_OK,
            Class::Miss => MCPOOL_CLASS_MISS,
            Class::NotStored => MCPOOL_CLASS_NOT_STORED,
            Class::ClientError => MCPOOL_CLASS_CLIENT_ERROR,
            Class::ServerError => MCPOOL_CLASS_SERVER_ERROR,
            Class::Timeout => MCPOOL_CLASS_TIMEOUT,
            Class::Connection => MCPOOL_CLASS_CONNECTION,
            Class::Configuration => MCPOOL_CLASS_CONFIGURATION,
            _ => MCPOOL_CLASS_INTERNAL,
        }
    }
}

/// Every status, in numeric order.
const ALL: [mcpool_status; 27] = [
    mcpool_status::MCPOOL_OK,
    mcpool_status::MCPOOL_NOT_FOUND,
    mcpool_status::MCPOOL_NOT_STORED,
    mcpool_status::MCPOOL_EXISTS,
    mcpool_status::MCPOOL_INVALID_ARGUMENT,
    mcpool_status::MCPOOL_INVALID_KEY,
    mcpool_status::MCPOOL_VALUE_TOO_LARGE,
    mcpool_status::MCPOOL_CONFIG,
    mcpool_status::MCPOOL_OUT_OF_RANGE,
    mcpool_status::MCPOOL_UNSUPPORTED,
    mcpool_status::MCPOOL_ALLOC_FAILED,
    mcpool_status::MCPOOL_INTERRUPTED,
    mcpool_status::MCPOOL_CLOSED,
    mcpool_status::MCPOOL_FORKED,
    mcpool_status::MCPOOL_SERVER_DEAD,
    mcpool_status::MCPOOL_POOL_TIMEOUT,
    mcpool_status::MCPOOL_CONNECT_TIMEOUT,
    mcpool_status::MCPOOL_IO_TIMEOUT,
    mcpool_status::MCPOOL_IO,
    mcpool_status::MCPOOL_SERVER_ERROR,
    mcpool_status::MCPOOL_CLIENT_ERROR,
    mcpool_status::MCPOOL_PROTOCOL,
    mcpool_status::MCPOOL_DECOMPRESS,
    mcpool_status::MCPOOL_AUTH,
    mcpool_status::MCPOOL_VALUE_FORMAT,
    mcpool_status::MCPOOL_PANIC,
    mcpool_status::MCPOOL_UNKNOWN_ERROR,
];

impl mcpool_status {
    /// The status for a core error.
    pub fn from_error(e: &Error) -> mcpool_status {
        use mcpool_status::*;
        match e {
            Error::InvalidKey { .. } => MCPOOL_INVALID_KEY,
            Error::InvalidArgument { .. } => MCPOOL_INVALID_ARGUMENT,
            Error::ValueTooLarge { .. } | Error::TooLargeForServer { .. } => MCPOOL_VALUE_TOO_LARGE,
            Error::Config(_) => MCPOOL_CONFIG,
            Error::ServerDead { .. } => MCPOOL_SERVER_DEAD,
            Error::PoolTimeout { .. } => MCPOOL_POOL_TIMEOUT,
            Error::ConnectTimeout { .. } => MCPOOL_CONNECT_TIMEOUT,
            Error::IoTimeout { .. } => MCPOOL_IO_TIMEOUT,
            Error::Io { .. } => MCPOOL_IO,
            Error::Server { .. } => MCPOOL_SERVER_ERROR,
            Error::Client { .. } => MCPOOL_CLIENT_ERROR,
            Error::Protocol { .. } => MCPOOL_PROTOCOL,
            Error::Decompress(_) => MCPOOL_DECOMPRESS,
            Error::Auth { .. } => MCPOOL_AUTH,
            Error::Unsupported(_) => MCPOOL_UNSUPPORTED,
            Error::ValueFormat(_) => MCPOOL_VALUE_FORMAT,
            Error::Interrupted { .. } => MCPOOL_INTERRUPTED,
            Error::Closed => MCPOOL_CLOSED,
            Error::Forked => MCPOOL_FORKED,
            #[allow(unreachable_patterns)]
            _ => MCPOOL_UNKNOWN_ERROR,
        }
    }

    /// The status's class: the core's [`Error::class`] for the statuses an error becomes,
    /// the answers' own classes for the rest. One exhaustive match: a new status must say
    /// its class here.
    pub fn class(self) -> Class {
        use mcpool_status::*;
        match self {
            MCPOOL_OK => Class::Ok,
            MCPOOL_NOT_FOUND => Class::Miss,
            MCPOOL_NOT_STORED | MCPOOL_EXISTS => Class::NotStored,
            MCPOOL_INVALID_ARGUMENT
            | MCPOOL_INVALID_KEY
            | MCPOOL_VALUE_TOO_LARGE
            | MCPOOL_OUT_OF_RANGE
            | MCPOOL_ALLOC_FAILED
            | MCPOOL_INTERRUPTED
            | MCPOOL_CLOSED
            | MCPOOL_FORKED
            | MCPOOL_CLIENT_ERROR => Class::ClientError,
            MCPOOL_CONFIG | MCPOOL_UNSUPPORTED => Class::Configuration,
            MCPOOL_SERVER_DEAD | MCPOOL_IO | MCPOOL_AUTH => Class::Connection,
            MCPOOL_POOL_TIMEOUT | MCPOOL_CONNECT_TIMEOUT | MCPOOL_IO_TIMEOUT => Class::Timeout,
            MCPOOL_SERVER_ERROR | MCPOOL_PROTOCOL | MCPOOL_DECOMPRESS | MCPOOL_VALUE_FORMAT => {
                Class::ServerError
            }
            MCPOOL_PANIC | MCPOOL_UNKNOWN_ERROR => Class::Internal,
        }
    }

    /// The core's fail-open decision for the error this status stands for
    /// (`Error::fails_open`: its class fails open, and it is not a refused authentication).
    pub fn fails_open(self) -> bool {
        self != mcpool_status::MCPOOL_AUTH && self.class().fails_open()
    }

    /// True for the statuses that are answers rather than errors (`0..=99`).
    pub fn is_answer(self) -> bool {
        (self as u32) < 100
    }

    /// The status's name as a NUL-terminated string, e.g. `"MCPOOL_NOT_FOUND\0"`.
    fn name_nul(self) -> &'static str {
        use mcpool_status::*;
        match self {
            MCPOOL_OK => "MCPOOL_OK\0",
            MCPOOL_NOT_FOUND => "MCPOOL_NOT_FOUND\0",
            MCPOOL_NOT_STORED => "MCPOOL_NOT_STORED\0",
            MCPOOL_EXISTS => "MCPOOL_EXISTS\0",
            MCPOOL_INVALID_ARGUMENT => "MCPOOL_INVALID_ARGUMENT\0",
            MCPOOL_INVALID_KEY => "MCPOOL_INVALID_KEY\0",
            MCPOOL_VALUE_TOO_LARGE => "MCPOOL_VALUE_TOO_LARGE\0",
            MCPOOL_CONFIG => "MCPOOL_CONFIG\0",
            MCPOOL_OUT_OF_RANGE => "MCPOOL_OUT_OF_RANGE\0",
            MCPOOL_UNSUPPORTED => "MCPOOL_UNSUPPORTED\0",
            MCPOOL_ALLOC_FAILED => "MCPOOL_ALLOC_FAILED\0",
            MCPOOL_INTERRUPTED => "MCPOOL_INTERRUPTED\0",
            MCPOOL_CLOSED => "MCPOOL_CLOSED\0",
            MCPOOL_FORKED => "MCPOOL_FORKED\0",
            MCPOOL_SERVER_DEAD => "MCPOOL_SERVER_DEAD\0",
            MCPOOL_POOL_TIMEOUT => "MCPOOL_POOL_TIMEOUT\0",
            MCPOOL_CONNECT_TIMEOUT => "MCPOOL_CONNECT_TIMEOUT\0",
            MCPOOL_IO_TIMEOUT => "MCPOOL_IO_TIMEOUT\0",
            MCPOOL_IO => "MCPOOL_IO\0",
            MCPOOL_SERVER_ERROR => "MCPOOL_SERVER_ERROR\0",
            MCPOOL_CLIENT_ERROR => "MCPOOL_CLIENT_ERROR\0",
            MCPOOL_PROTOCOL => "MCPOOL_PROTOCOL\0",
            MCPOOL_DECOMPRESS => "MCPOOL_DECOMPRESS\0",
            MCPOOL_AUTH => "MCPOOL_AUTH\0",
            MCPOOL_VALUE_FORMAT => "MCPOOL_VALUE_FORMAT\0",
            MCPOOL_PANIC => "MCPOOL_PANIC\0",
            MCPOOL_UNKNOWN_ERROR => "MCPOOL_UNKNOWN_ERROR\0",
        }
    }

    /// The status's name, e.g. `"MCPOOL_NOT_FOUND"`.
    pub fn name(self) -> &'static str {
        let n = self.name_nul();
        &n[..n.len() - 1]
    }
}

/// The name of a status as a static NUL-terminated string, e.g. `"MCPOOL_NOT_FOUND"`;
/// `"MCPOOL_UNRECOGNIZED_STATUS"` for a number that is no status.
///
/// Takes the number rather than the enum so that any value from C is accepted.
/// Ownership: the string is static; never free it.
#[no_mangle]
pub extern "C" fn mcpool_status_name(status: u32) -> *const c_char {
    let name = ALL
        .iter()
        .find(|s| **s as u32 == status)
        .map_or("MCPOOL_UNRECOGNIZED_STATUS\0", |s| s.name_nul());
    name.as_ptr().cast()
}

/// True for the statuses that the `fail_open` option turns into a miss or a "not stored"
/// (the core's `Error::fails_open`: timeouts and unreachable servers, not a refused
/// authentication); false for every other status and for a number that is no status. For a
/// binding that must decide itself; with `fail_open` set the core already answered.
#[no_mangle]
pub extern "C" fn mcpool_status_fails_open(status: u32) -> bool {
    ALL.iter()
        .find(|s| **s as u32 == status)
        .is_some_and(|s| s.fails_open())
}

/// The class of a status (`mcpool_class`): what a binding maps to its language's result or
/// exception. Takes the number, so any value from C is accepted: a number that is no status
/// is `MCPOOL_CLASS_INTERNAL`. Pass an `mcpool_status` as it is.
#[no_mangle]
pub extern "C" fn mcpool_status_class(status: u32) -> mcpool_class {
    ALL.iter()
        .find(|s| **s as u32 == status)
        .map_or(mcpool_class::MCPOOL_CLASS_INTERNAL, |s| {
            mcpool_class::from_class(s.class())
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    #[test]
    fn names_and_numbers_are_stable() {
        let mut seen = std::collections::HashSet::new();
        for s in ALL {
            assert!(seen.insert(s as u32), "{s:?} reuses a number");
            // SAFETY: `mcpool_status_name` returns a static NUL-terminated string.
            let name = unsafe { CStr::from_ptr(mcpool_status_name(s as u32)) };
            assert_eq!(name.to_str().unwrap(), s.name());
            assert_eq!(format!("{s:?}"), s.name());
        }
        assert_eq!(mcpool_status::MCPOOL_NOT_FOUND as u32, 1);
        assert_eq!(mcpool_status::MCPOOL_INVALID_ARGUMENT as u32, 100);
        assert_eq!(mcpool_status::MCPOOL_IO as u32, 204);
        assert_eq!(mcpool_status::MCPOOL_UNSUPPORTED as u32, 105);
        assert_eq!(mcpool_status::MCPOOL_ALLOC_FAILED as u32, 106);
        assert_eq!(mcpool_status::MCPOOL_INTERRUPTED as u32, 107);
        // SAFETY: as above.
        let unknown = unsafe { CStr::from_ptr(mcpool_status_name(12345)) };
        assert_eq!(unknown.to_str().unwrap(), "MCPOOL_UNRECOGNIZED_STATUS");
    }

    #[test]
    fn every_error_has_the_class_of_its_status() {
        let server = || "127.0.0.1:1".to_owned();
        let errors = [
            Error::InvalidKey {
                key: "k".into(),
                reason: "r",
            },
            Error::InvalidArgument {
                what: "ttl",
                reason: "r".into(),
            },
            Error::ValueTooLarge {
                len: 2,
                limit: 1,
                max_decompressed: None,
                key_deleted: None,
            },
            Error::TooLargeForServer {
                server: server(),
                message: "object too large for cache".into(),
            },
            Error::Config("c".into()),
            Error::ServerDead {
                server: server(),
                cause: String::new(),
            },
            Error::PoolTimeout {
                server: server(),
                operation_timeout: false,
            },
            Error::ConnectTimeout {
                server: server(),
                operation_timeout: false,
                resolving: false,
            },
            Error::IoTimeout {
                server: server(),
                operation_timeout: false,
                sent: false,
            },
            Error::Io {
                server: server(),
                source: std::io::Error::other("x"),
            },
            Error::Server {
                server: server(),
                message: "m".into(),
            },
            Error::Client {
                server: server(),
                message: "m".into(),
            },
            Error::Protocol {
                server: server(),
                detail: "d".into(),
            },
            Error::Auth {
                server: server(),
                message: "m".into(),
            },
            Error::Unsupported("u".into()),
            Error::Decompress("d".into()),
            Error::ValueFormat("v".into()),
            Error::Interrupted { sent: false },
            Error::Interrupted { sent: true },
        ];
        for e in &errors {
            assert_eq!(mcpool_status::from_error(e).class(), e.class(), "{e:?}");
            let s = mcpool_status::from_error(e);
            assert_eq!(mcpool_status_fails_open(s as u32), e.fails_open(), "{e:?}");
        }
        use mcpool_class::*;
        use mcpool_status::*;
        for (s, c) in [
            (MCPOOL_OK, MCPOOL_CLASS_OK),
            (MCPOOL_NOT_FOUND, MCPOOL_CLASS_MISS),
            (MCPOOL_EXISTS, MCPOOL_CLASS_NOT_STORED),
            (MCPOOL_PROTOCOL, MCPOOL_CLASS_SERVER_ERROR),
            (MCPOOL_DECOMPRESS, MCPOOL_CLASS_SERVER_ERROR),
            (MCPOOL_VALUE_TOO_LARGE, MCPOOL_CLASS_CLIENT_ERROR),
            (MCPOOL_INVALID_ARGUMENT, MCPOOL_CLASS_CLIENT_ERROR),
            (MCPOOL_IO_TIMEOUT, MCPOOL_CLASS_TIMEOUT),
            (MCPOOL_SERVER_DEAD, MCPOOL_CLASS_CONNECTION),
            (MCPOOL_CONFIG, MCPOOL_CLASS_CONFIGURATION),
            (MCPOOL_PANIC, MCPOOL_CLASS_INTERNAL),
        ] {
            assert_eq!(mcpool_status_class(s as u32), c, "{s:?}");
        }
        assert_eq!(mcpool_status_class(12345), MCPOOL_CLASS_INTERNAL);
    }
}
