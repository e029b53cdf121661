//! Value kinds across the C ABI: what a value is (bytes, UTF-8 text, an integer, a boolean, a
//! serialized object of one language), stored and read through the client's value format
//! (`mcpool_config_set_value_format`). The core owns every flag bit and every wire encoding;
//! a binding maps its language's types to a kind and back, nothing more (docs/value-format.md).
//!
//! Across the ABI an `MCPOOL_KIND_INT` travels as its decimal ASCII text (`"-42"`), an
//! `MCPOOL_KIND_BOOL` as `"0"` or `"1"`, every other kind as its bytes.

use super::client::mcpool_client;
use super::commands::store_status;
use super::landing::{landingpad, Failure};
use super::ptr;
use super::status::mcpool_status::{self, MCPOOL_OK, MCPOOL_VALUE_TOO_LARGE};
use mcpool::set_item::Compress;
use mcpool::value::Kind;
use mcpool::StoreCommand;

/// What a value is: one of the `MCPOOL_KIND_*` numbers, which are part of the ABI. A plain
/// `uint32_t` (not a C enum), so that every value a caller can pass is defined behaviour: a
/// number that is not a kind is `MCPOOL_INVALID_ARGUMENT`.
pub type mcpool_kind = u32;
/// Bytes, as given.
pub const MCPOOL_KIND_BYTES: mcpool_kind = 0;
/// UTF-8 text.
pub const MCPOOL_KIND_TEXT: mcpool_kind = 1;
/// An integer; across the ABI its decimal ASCII text (`"-42"`). Written: -2**63..2**64-1 (a
/// signed 64-bit one, or up to memcached's counter limit) in every format with integers, and
/// any size in the formats that write integers as decimal text (`mcpool` and the Python
/// ones); read: any size the format holds (a Python writer's int beyond 64 bits).
pub const MCPOOL_KIND_INT: mcpool_kind = 2;
/// A boolean; across the ABI `"0"` or `"1"`.
pub const MCPOOL_KIND_BOOL: mcpool_kind = 3;
/// A Python pickle (bytes the Python binding pickled or unpickles).
pub const MCPOOL_KIND_PYTHON_PICKLE: mcpool_kind = 4;
/// A Perl Storable image (`Storable::nfreeze`).
pub const MCPOOL_KIND_PERL_STORABLE: mcpool_kind = 5;
/// A Java serialized object (`ObjectOutputStream`).
pub const MCPOOL_KIND_JAVA_SERIALIZED: mcpool_kind = 6;
/// In `kinds` of `mcpool_client_store_multi_kind` only: the item is bytes stored under its
/// `flags[i]`, as `mcpool_client_store_multi` stores it (no kind of its own).
pub const MCPOOL_KIND_RAW: mcpool_kind = u32::MAX;

/// Which store command a call sends: one of the `MCPOOL_STORE_*` numbers, which are part of
/// the ABI. A plain `uint32_t` (not a C enum), as `mcpool_kind`: any other number is
/// `MCPOOL_INVALID_ARGUMENT`.
pub type mcpool_store_op = u32;
/// Store unconditionally.
pub const MCPOOL_STORE_SET: mcpool_store_op = 0;
/// Store only if the key does not exist.
pub const MCPOOL_STORE_ADD: mcpool_store_op = 1;
/// Store only if the key exists.
pub const MCPOOL_STORE_REPLACE: mcpool_store_op = 2;
/// Store only if the item's CAS unique is still `cas`.
pub const MCPOOL_STORE_CAS: mcpool_store_op = 3;
/// Append bytes to an existing value (`mcpool_client_store_multi`; a typed store of
/// `mcpool_client_store_kind` refuses it: `MCPOOL_UNSUPPORTED`).
pub const MCPOOL_STORE_APPEND: mcpool_store_op = 4;
/// Prepend bytes to an existing value (as `MCPOOL_STORE_APPEND`).
pub const MCPOOL_STORE_PREPEND: mcpool_store_op = 5;

/// The kind a caller's `mcpool_kind` names, or `MCPOOL_INVALID_ARGUMENT` (naming `call`)
/// for a number that is not one.
pub(crate) fn kind_arg(call: &str, kind: mcpool_kind) -> Result<Kind, Failure> {
    Kind::from_number(kind).ok_or_else(|| {
        Failure::invalid(format!(
            "{call}: kind {kind} is not an mcpool_kind (MCPOOL_KIND_BYTES {MCPOOL_KIND_BYTES} \
             .. MCPOOL_KIND_JAVA_SERIALIZED {MCPOOL_KIND_JAVA_SERIALIZED})"
        ))
    })
}

/// Each store op's names by its number, single and batch: what messages name (the command
/// the caller ran: `set "k": ...`, `add_multi: ...`), never the C function that carried it
/// (`mcpool_client_store_kind_compress` is a binding's `set`, `add`, …). The one table.
const STORE_OP_NAMES: [(&str, &str); 6] = [
    ("set", "set_multi"),
    ("add", "add_multi"),
    ("replace", "replace_multi"),
    ("cas", "cas_multi"),
    ("append", "append_multi"),
    ("prepend", "prepend_multi"),
];

/// The core's store command a caller's `mcpool_store_op` names (`cas` for CAS), with the
/// operation's name (`set`, `add`, …; with `batch`, `set_multi`, `add_multi`, …), or
/// `MCPOOL_INVALID_ARGUMENT` (naming `call`, the C function) for a number that is not one.
pub(crate) fn store_op_arg(
    call: &str,
    op: mcpool_store_op,
    cas: u64,
    batch: bool,
) -> Result<(StoreCommand, &'static str), Failure> {
    let cmd = match op {
        MCPOOL_STORE_SET => StoreCommand::Set,
        MCPOOL_STORE_ADD => StoreCommand::Add,
        MCPOOL_STORE_REPLACE => StoreCommand::Replace,
        MCPOOL_STORE_CAS => StoreCommand::Cas(cas),
        MCPOOL_STORE_APPEND => StoreCommand::Append,
        MCPOOL_STORE_PREPEND => StoreCommand::Prepend,
        other => {
            return Err(Failure::invalid(format!(
                "{call}: op {other} is not an mcpool_store_op (MCPOOL_STORE_SET \
                 {MCPOOL_STORE_SET} .. MCPOOL_STORE_PREPEND {MCPOOL_STORE_PREPEND})"
            )))
        }
    };
    let (single, multi) = STORE_OP_NAMES[op as usize];
    Ok((cmd, if batch { multi } else { single }))
}

/// Stores a value of `kind` under `key` with the client's value format: the core encodes
/// `data` (`len` bytes: for `MCPOOL_KIND_INT` its decimal ASCII text, for `MCPOOL_KIND_BOOL`
/// `"0"` or `"1"`, otherwise the bytes themselves) in the format's wire form, sets the flags,
/// and compresses per the configuration. `op` is SET, ADD, REPLACE or CAS (CAS 0 is
/// `MCPOOL_INVALID_ARGUMENT`, as `mcpool_client_cas`; `cas` is used only
/// for CAS). Returns `MCPOOL_OK` when stored, `MCPOOL_NOT_STORED` / `MCPOOL_EXISTS` /
/// `MCPOOL_NOT_FOUND` as the plain store commands, `MCPOOL_UNSUPPORTED` (naming the kind and
/// the format) when the format has no such kind or the kind's serialization is not enabled
/// (`mcpool_config_set_serialized`; a kind the format lacks is UNSUPPORTED whatever the data),
/// `MCPOOL_INVALID_ARGUMENT` for an INT or BOOL whose text is not one (an INT above 2**63-1
/// included under a format whose integers are 64-bit signed binary: `whalin`,
/// `spymemcached`), or for TEXT that is not UTF-8. An INT above 2**63-1 or below -2**63
/// (memcached's counter range up to 2**64-1, or beyond 64 bits) is stored as its digits under
/// the format's integer flags in the formats that write integers as decimal text (`mcpool`,
/// `pylibmc`, `python-memcached`, `pymemcache`), as pylibmc and python-memcached store a
/// Python int of any size, so `incr` counts on in memcached's range (the core's rule:
/// `Client::store_int_text_as`).
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
    // SAFETY: forwarded from the caller's promise.
    unsafe {
        store_kind(
            "store_kind",
            client,
            op,
            key,
            key_len,
            kind,
            data,
            len,
            ttl,
            cas,
            Compress::Auto,
        )
    }
}

/// `mcpool_client_store_kind` with this call's compression decision, so that one client
/// serves callers with different compression settings (Whalin's per-`MemCachedClient`
/// `compressEnable` / `compressThreshold`): `compress` 0 never, 1 the client's rule
/// (`MCPOOL_COMPRESS_AUTO`), 2 always (kept only when it shrinks to the compression ratio),
/// 3 (`MCPOOL_COMPRESS_THRESHOLD`) compression on for this value with `threshold` in place
/// of `compression_threshold`, compared as the client's `compression_compare` says (Whalin's
/// preset: above), `MCPOOL_COMPRESS_AT_LEVEL + level` (16..=38) always at that level (one
/// the codec does not take: `MCPOOL_INVALID_ARGUMENT`, nothing sent). `threshold` is read
/// only for 3. Any other `compress` is
/// `MCPOOL_INVALID_ARGUMENT` before any I/O. Everything else as `mcpool_client_store_kind`.
///
/// # Safety
/// As for `mcpool_client_store_kind`.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn mcpool_client_store_kind_compress(
    client: *const mcpool_client,
    op: mcpool_store_op,
    key: *const u8,
    key_len: usize,
    kind: mcpool_kind,
    data: *const u8,
    len: usize,
    ttl: u32,
    cas: u64,
    compress: u8,
    threshold: u64,
) -> mcpool_status {
    let decided = match compress {
        3 => Some(Compress::Threshold(
            usize::try_from(threshold).unwrap_or(usize::MAX),
        )),
        b => Compress::from_byte(b),
    };
    let Some(decided) = decided else {
        return landingpad(|| {
            Err(Failure::invalid(format!(
                "store_kind_compress: compress is {compress}; 0 (never), 1 (the client's \
                 rule), 2 (always), 3 (the given threshold) or 16 + a level (16..=38: \
                 always, at that level)"
            )))
        });
    };
    // SAFETY: forwarded from the caller's promise.
    unsafe {
        store_kind(
            "store_kind_compress",
            client,
            op,
            key,
            key_len,
            kind,
            data,
            len,
            ttl,
            cas,
            decided,
        )
    }
}

/// `compress` of `mcpool_client_store_kind_compress`: compression on for this value, with
/// the call's `threshold` in place of the client's.
pub const MCPOOL_COMPRESS_THRESHOLD: u8 = 3;

/// `compress` of `mcpool_client_store_kind_compress` and `compress[i]` of the batch stores:
/// `MCPOOL_COMPRESS_AT_LEVEL + level` (level 0 to 22, so 16 to 38) compresses whatever the
/// size, as `MCPOOL_COMPRESS_ALWAYS`, at that level on the codec's scale (zlib and gzip 0..9,
/// zstd 1..22) in place of `compression_level`: a per-call level such as pylibmc's
/// `compress_level`. A level the codec does not take is `MCPOOL_INVALID_ARGUMENT` for that
/// value, nothing sent.
pub const MCPOOL_COMPRESS_AT_LEVEL: u8 = 16;
const _: () = assert!(MCPOOL_COMPRESS_AT_LEVEL == Compress::AT_LEVEL);

/// The body of `mcpool_client_store_kind` and `mcpool_client_store_kind_compress`.
///
/// # Safety
/// As for `mcpool_client_store_kind`.
#[allow(clippy::too_many_arguments)]
unsafe fn store_kind(
    call: &str,
    client: *const mcpool_client,
    op: mcpool_store_op,
    key: *const u8,
    key_len: usize,
    kind: mcpool_kind,
    data: *const u8,
    len: usize,
    ttl: u32,
    cas: u64,
    compress: Compress,
) -> mcpool_status {
    landingpad(|| {
        // SAFETY: the caller promises a non-NULL `client` is live.
        let c = unsafe { ptr::handle(client, "client") }?;
        // Messages name the command (`add "k": ...`), not the C function (`call`).
        let (cmd, op_name) = store_op_arg(call, op, cas, false)?;
        // SAFETY: the caller promises `key_len` readable bytes at a non-NULL `key`.
        let key = unsafe { ptr::key(op_name, key, key_len, c.max_key) }?;
        super::commands::value_len_checked(c, op_name, cmd, key, data, len)?;
        // SAFETY: the caller promises `len` readable bytes at a non-NULL `data`.
        let body = unsafe { ptr::bytes(data, len, c.max_input, "value", MCPOOL_VALUE_TOO_LARGE) }?;
        let kind = kind_arg(op_name, kind)?;
        // the core's one rule for a typed value given as its kind and body (a kind the
        // format lacks is UNSUPPORTED whatever the data; an integer of any size)
        let outcome = c
            .client
            .store_kind_as(cmd, key, kind, body, ttl, compress)
            .map_err(|e| Failure::from_error(op_name, Some(key), &e))?;
        Ok(store_status(outcome))
    })
}

/// Writes to `*out_due` whether a value of `len` bytes reaches a caller's compression
/// `threshold`, compared as the client compares its own `compression_threshold`
/// (`compression_compare`: `at-least`, or `above` as the `python-memcached`, `whalin` and
/// `spymemcached` presets): the comparison a binding decides a per-call threshold (pylibmc's
/// and python-memcached's `min_compress_len`) by, before handing the decision
/// (`MCPOOL_COMPRESS_ALWAYS` or `MCPOOL_COMPRESS_NEVER`) to a store. No I/O.
///
/// # Safety
/// `client` is NULL or live; `out_due` is NULL (refused) or valid for one write.
#[no_mangle]
pub unsafe extern "C" fn mcpool_client_compression_due(
    client: *const mcpool_client,
    len: usize,
    threshold: u64,
    out_due: *mut bool,
) -> mcpool_status {
    landingpad(|| {
        // SAFETY: the caller promises a non-NULL `client` is live.
        let c = unsafe { ptr::handle(client, "client") }?;
        ptr::out(out_due, "due")?;
        let due = c
            .client
            .compression_due(len, usize::try_from(threshold).unwrap_or(usize::MAX));
        // SAFETY: checked non-NULL; the caller promises it is writable.
        unsafe { ptr::write(out_due, due) };
        Ok(MCPOOL_OK)
    })
}

/// True when the client's value format stores a value of `kind`
/// (`mcpool_client_store_kind` takes it); false when it has no form for it (the store answers
/// `MCPOOL_UNSUPPORTED`), for an unknown kind and a NULL `client`. It leaves the thread's last
/// error as it was, so that a binding can ask, after a store answered `MCPOOL_UNSUPPORTED`,
/// whether the value was the cause (its language's type error) or the server or protocol
/// (a binary `cas` against a server that keeps no CAS), and still raise the store's message.
///
/// # Safety
/// `client` is NULL or live.
#[no_mangle]
pub unsafe extern "C" fn mcpool_client_stores_kind(
    client: *const mcpool_client,
    kind: mcpool_kind,
) -> bool {
    let mut answer = false;
    landingpad(|| {
        // SAFETY: the caller promises a non-NULL `client` is live; NULL answers false.
        let c = unsafe { ptr::handle(client, "client") };
        if let (Ok(c), Some(kind)) = (c, Kind::from_number(kind)) {
            answer = c.client.kind_flags(kind).is_ok();
        }
        Ok(MCPOOL_OK)
    });
    answer
}

/// Writes to `*out_flags` the flags word the client's value format gives an uncompressed
/// value of `kind`, for the calls that take flags (`mcpool_client_set`, the batch calls):
/// under it a body in the kind's ABI form (an INT as decimal text, a BOOL as `"0"`/`"1"`)
/// is stored exactly as `mcpool_client_store_kind` stores it, the core converting it to the
/// format's wire form (Whalin's and spymemcached's binary Long, Whalin's byte boolean).
/// Compression is still applied by the call (it adds its own bits). `MCPOOL_UNSUPPORTED`
/// (naming the kind and the format) when the format has no such kind, writes it with flags 0
/// (which the byte API takes as bytes: spymemcached's TEXT), or as a Python pickle (a bool
/// under python-memcached and pymemcache); store such a value with `store_kind`.
///
/// # Safety
/// `client` is NULL or live; `out_flags` is NULL (refused) or valid for one write.
#[no_mangle]
pub unsafe extern "C" fn mcpool_client_kind_flags(
    client: *const mcpool_client,
    kind: mcpool_kind,
    out_flags: *mut u32,
) -> mcpool_status {
    landingpad(|| {
        // SAFETY: the caller promises a non-NULL `client` is live.
        let c = unsafe { ptr::handle(client, "client") }?;
        ptr::out(out_flags, "flags")?;
        let flags = c
            .client
            .kind_flags(kind_arg("kind_flags", kind)?)
            .map_err(|e| Failure::from_error("kind_flags", None, &e))?;
        // SAFETY: checked non-NULL; the caller promises it is writable.
        unsafe { ptr::write(out_flags, flags) };
        Ok(MCPOOL_OK)
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
    landingpad(|| {
        // SAFETY: the caller promises a non-NULL `client` is live.
        let c = unsafe { ptr::handle(client, "client") }?;
        ptr::out(out_kind, "kind")?;
        let kind = c
            .client
            .value_kind(flags)
            .map_err(|e| Failure::from_error("flags_kind", None, &e))?;
        // SAFETY: checked non-NULL; the caller promises it is writable.
        unsafe { ptr::write(out_kind, kind.number()) };
        Ok(MCPOOL_OK)
    })
}

/// Writes to `*out_verbatim` whether a value read through this client with these delivered
/// flags came with the body memcached holds (bytes, text, a decimal integer or ASCII
/// boolean: what memcached's incr/decr see, inflation aside), or false for a binary integer
/// or boolean (Whalin's, spymemcached's) that the read turned into its ABI text: a counter
/// reader (Whalin's `getCounter`) must not take those digits for a counter that `incr`
/// refuses. `MCPOOL_VALUE_FORMAT` for flags that mean nothing in the format. No I/O.
///
/// # Safety
/// `client` is NULL or live; `out_verbatim` is NULL (refused) or valid for one write.
#[no_mangle]
pub unsafe extern "C" fn mcpool_client_flags_verbatim(
    client: *const mcpool_client,
    flags: u32,
    out_verbatim: *mut bool,
) -> mcpool_status {
    landingpad(|| {
        // SAFETY: the caller promises a non-NULL `client` is live.
        let c = unsafe { ptr::handle(client, "client") }?;
        ptr::out(out_verbatim, "verbatim")?;
        let verbatim = c
            .client
            .value_body_verbatim(flags)
            .map_err(|e| Failure::from_error("flags_verbatim", None, &e))?;
        // SAFETY: checked non-NULL; the caller promises it is writable.
        unsafe { ptr::write(out_verbatim, verbatim) };
        Ok(MCPOOL_OK)
    })
}

/// The client's value format, by the name `mcpool_config_set_value_format` takes (`mcpool`,
/// `spymemcached`, ...; `legacy-gzip-bit-2`/`legacy-zlib-bit-8` after
/// `mcpool_config_set_compression_format`): the one the options left in force, whichever set
/// it (a preset, the `value_format` option, the core's default `mcpool`). A binding that
/// picks a type mapping by format asks here instead of reading its own copy of the options.
/// NUL-terminated, `*out_len` bytes without the NUL; static (never free it).
///
/// # Safety
/// `client` is NULL or live; each output is NULL (refused) or valid for one write.
#[no_mangle]
pub unsafe extern "C" fn mcpool_client_value_format(
    client: *const mcpool_client,
    out_name: *mut *const std::ffi::c_char,
    out_len: *mut usize,
) -> mcpool_status {
    use mcpool::value::CompressionFormat;
    use mcpool::ValueFormat;
    use std::ffi::CString;
    use std::sync::OnceLock;
    static NAMES: OnceLock<Vec<(ValueFormat, CString)>> = OnceLock::new();
    landingpad(|| {
        // SAFETY: the caller promises a non-NULL `client` is live.
        let c = unsafe { ptr::handle(client, "client") }?;
        ptr::out(out_name, "name")?;
        ptr::out(out_len, "length")?;
        let names = NAMES.get_or_init(|| {
            ValueFormat::ALL
                .into_iter()
                .chain([
                    ValueFormat::Legacy(CompressionFormat::Gzip),
                    ValueFormat::Legacy(CompressionFormat::Zlib),
                ])
                .map(|f| (f, CString::new(f.name()).expect("a format name has no NUL")))
                .collect()
        });
        let format = c.client.config().values.format;
        let name = names
            .iter()
            .find(|(f, _)| *f == format)
            .map(|(_, n)| n.as_c_str())
            .expect("every value format is named");
        // SAFETY: both outputs were checked non-NULL; the caller promises they are writable.
        // The name is static.
        unsafe {
            ptr::write(out_name, name.as_ptr());
            ptr::write(out_len, name.to_bytes().len());
        }
        Ok(MCPOOL_OK)
    })
}
