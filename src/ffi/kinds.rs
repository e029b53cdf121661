//! Value kinds across the C ABI: what a value is (bytes, UTF-8 text, an integer, a boolean, a
//! serialized object of one language), stored and read through the client's value format
//! (`mcpool_config_set_value_format`). The core owns every flag bit and every wire encoding;
//! a binding maps its language's types to a kind and back, nothing more (docs/value-format.md).
//!
//! Across the ABI an `MCPOOL_KIND_INT` travels as its decimal ASCII text (`"-42"`), an
//! `MCPOOL_KIND_BOOL` as `"0"` or `"1"`, every other kind as its bytes.

use super::client::mcpool_client;
use super::landing::{landingpad, Failure};
use super::ptr;
use super::status::mcpool_status::{self, MCPOOL_UNSUPPORTED};

/// What a value is. The numbers are part of the ABI.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum mcpool_kind {
    /// Bytes, as given.
    MCPOOL_KIND_BYTES = 0,
    /// UTF-8 text.
    MCPOOL_KIND_TEXT = 1,
    /// A signed 64-bit integer; across the ABI its decimal ASCII text (`"-42"`).
    MCPOOL_KIND_INT = 2,
    /// A boolean; across the ABI `"0"` or `"1"`.
    MCPOOL_KIND_BOOL = 3,
    /// A Python pickle (bytes the Python binding pickled or unpickles).
    MCPOOL_KIND_PYTHON_PICKLE = 4,
    /// A Perl Storable image (`Storable::nfreeze`).
    MCPOOL_KIND_PERL_STORABLE = 5,
    /// A Java serialized object (`ObjectOutputStream`).
    MCPOOL_KIND_JAVA_SERIALIZED = 6,
}

/// Which store command `mcpool_client_store_kind` sends. The numbers are part of the ABI.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum mcpool_store_op {
    /// Store unconditionally.
    MCPOOL_STORE_SET = 0,
    /// Store only if the key does not exist.
    MCPOOL_STORE_ADD = 1,
    /// Store only if the key exists.
    MCPOOL_STORE_REPLACE = 2,
    /// Store only if the item's CAS unique is still `cas`.
    MCPOOL_STORE_CAS = 3,
}

/// Stores a value of `kind` under `key` with the client's value format: the core encodes
/// `data` (`len` bytes: for `MCPOOL_KIND_INT` its decimal ASCII text, for `MCPOOL_KIND_BOOL`
/// `"0"` or `"1"`, otherwise the bytes themselves) in the format's wire form, sets the flags,
/// and compresses per the configuration. `op` is SET, ADD, REPLACE or CAS (`cas` is used only
/// for CAS). Returns `MCPOOL_OK` when stored, `MCPOOL_NOT_STORED` / `MCPOOL_EXISTS` /
/// `MCPOOL_NOT_FOUND` as the plain store commands, `MCPOOL_UNSUPPORTED` (naming the kind and
/// the format) when the format has no such kind or the kind's serialization is not enabled
/// (`mcpool_config_set_serialized`), `MCPOOL_INVALID_ARGUMENT` for an INT or BOOL whose text is
/// not one, or for TEXT that is not UTF-8.
///
/// # Safety
/// `client` is NULL or live; `key` is NULL or valid for `key_len` bytes; `data` is NULL or
/// valid for `len` bytes (NULL only with length 0).
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn mcpool_client_store_kind(
    client: *const mcpool_client,
    op: mcpool_store_op,
    key: *const u8,
    key_len: usize,
    kind: mcpool_kind,
    data: *const u8,
    len: usize,
    ttl: u32,
    cas: u64,
) -> mcpool_status {
    let _ = (op, key, key_len, kind, data, len, ttl, cas);
    landingpad(|| {
        // SAFETY: the caller promises a non-NULL `client` is live.
        let _c = unsafe { ptr::handle(client, "client") }?;
        Err(Failure::new(
            MCPOOL_UNSUPPORTED,
            "store_kind: not implemented yet",
        ))
    })
}

/// Writes to `*out_flags` the flags word the client's value format gives an uncompressed
/// value of `kind`, for the batch calls (`mcpool_client_set_multi` and its kin), which take
/// flags: for the kinds whose wire body is their ABI body (BYTES, TEXT, and the serialized
/// kinds; INT and BOOL too where the format stores them as their decimal text, as `mcpool`
/// does). Compression is still applied by the batch call (it adds its own bits).
/// `MCPOOL_UNSUPPORTED` (naming the kind and the format) when the format has no such kind or
/// stores it in another form than its ABI body.
///
/// # Safety
/// `client` is NULL or live; `out_flags` is NULL (refused) or valid for one write.
#[no_mangle]
pub unsafe extern "C" fn mcpool_client_kind_flags(
    client: *const mcpool_client,
    kind: mcpool_kind,
    out_flags: *mut u32,
) -> mcpool_status {
    let _ = kind;
    landingpad(|| {
        // SAFETY: the caller promises a non-NULL `client` is live.
        let _c = unsafe { ptr::handle(client, "client") }?;
        ptr::out(out_flags, "flags")?;
        Err(Failure::new(
            MCPOOL_UNSUPPORTED,
            "kind_flags: not implemented yet",
        ))
    })
}

/// Writes to `*out_kind` the kind of a value read through this client, from the flags the
/// read delivered (`mcpool_item_flags`, `mcpool_multi_get`, the `_into` and callback reads).
/// Every read already decoded the value (inflated, INT and BOOL turned into their ABI text)
/// and refused values whose flags mean nothing in the format, so this cannot fail for a
/// delivered value; for any other flags word it returns `MCPOOL_VALUE_FORMAT` naming them.
///
/// # Safety
/// `client` is NULL or live; `out_kind` is NULL (refused) or valid for one write.
#[no_mangle]
pub unsafe extern "C" fn mcpool_client_flags_kind(
    client: *const mcpool_client,
    flags: u32,
    out_kind: *mut mcpool_kind,
) -> mcpool_status {
    let _ = flags;
    landingpad(|| {
        // SAFETY: the caller promises a non-NULL `client` is live.
        let _c = unsafe { ptr::handle(client, "client") }?;
        ptr::out(out_kind, "kind")?;
        Err(Failure::new(
            mcpool_status::MCPOOL_UNSUPPORTED,
            "flags_kind: not implemented yet",
        ))
    })
}
