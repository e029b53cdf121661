//! `mcpool_config`: an opaque builder for a client's configuration.
//!
//! Every setter checks its value at once (a bad address or name fails the setter, not the
//! later `mcpool_client_new`) and leaves the configuration unchanged on failure.

use super::landing::{landingpad, landingpad_void, Failure, Outcome};
use super::ptr;
use super::status::mcpool_status::{self, MCPOOL_OK};
use mcpool::address::ServerSpec;
use mcpool::config::{options, ClientBuilder};
use mcpool::key::MAX_KEY_LEN;
use mcpool::value::{CompressionFormat, Kind};
use std::ffi::c_char;
use std::time::Duration;

/// Longest server address, distribution, failover or format name accepted, in bytes.
const MAX_NAME_LEN: usize = 4096;

/// A client configuration being built: servers, placement, pool, timeouts, compression.
/// Create with `mcpool_config_new`, free with `mcpool_config_free`. Not thread-safe: set it
/// up from one thread, then build any number of clients from it.
pub struct mcpool_config {
    pub(crate) builder: ClientBuilder,
    /// The arguments that set each option (`mcpool_config_set_as`).
    pub(crate) given: mcpool::config::options::GivenAs,
    /// The options that secure the traffic (`OptionSpec::secures_traffic`) whose last setting
    /// was refused, with the refusal: `mcpool_client_new` refuses while one is here (tester
    /// finding secure 1: a TLS setter refused by a build without TLS, unchecked, left a
    /// configuration that built a plain-text client).
    pub(crate) refused: Vec<(&'static str, Failure)>,
}

/// Runs `set`, the whole of a setter of option `name` to `value` (reading its arguments
/// included), and notes in `config` how it ended when the setting was meant to secure the
/// traffic (the core's `options::secured_by`: a `tls`/`tls_*`/`sasl_*` option, a misspelt
/// name of that family such as `tls_cafile`, recorded under the option it means, or a
/// `libmemcached_config` string that asks for TLS or SASL): a refusal is kept (replacing an
/// earlier one of that option), an accepted setting of an option forgets that option's.
/// Returns what `set` returned.
///
/// # Safety
/// `config` is NULL or a live `mcpool_config` that no other thread is using while `set`
/// does not hold it.
pub(crate) unsafe fn noting(
    config: *mut mcpool_config,
    name: &str,
    value: &[u8],
    set: impl FnOnce() -> Outcome,
) -> Outcome {
    let r = set();
    let option = match &r {
        Ok(_) => options::option(name).map(|o| o.name),
        Err(_) => options::secured_by(name, value),
    };
    let Some(option) = option else {
        return r;
    };
    // SAFETY: forwarded from the caller's promise (NULL is answered as `None`).
    let Ok(cfg) = (unsafe { ptr::handle_mut(config, "config") }) else {
        return r;
    };
    cfg.refused.retain(|(n, _)| *n != option);
    if let Err(f) = &r {
        cfg.refused.push((option, f.clone()));
    }
    r
}

/// The refusal `mcpool_client_new` answers for a configuration one of whose options that
/// secure the traffic was refused when set ([`noting`]), or `None`.
pub(crate) fn refused_security(cfg: &mcpool_config) -> Option<Failure> {
    let (name, f) = cfg.refused.first()?;
    Some(Failure::new(
        f.status,
        format!(
            "this configuration's {name} was refused when it was set ({}): a client built \
             without it would not secure its traffic as asked (plain text, or no SASL \
             login), so none is built; set {name} again with a value this build takes",
            f.message
        ),
    ))
}

/// Applies `f` to the configuration behind `config`.
///
/// # Safety
/// `config` is NULL or a live `mcpool_config` that no other thread is using.
pub(crate) unsafe fn update_builder(
    config: *mut mcpool_config,
    f: impl FnOnce(ClientBuilder) -> Result<ClientBuilder, Failure>,
) -> Outcome {
    // SAFETY: forwarded from the caller's promise.
    let cfg = unsafe { ptr::handle_mut(config, "config") }?;
    let builder = f(cfg.builder.clone())?;
    cfg.builder = builder;
    Ok(MCPOOL_OK)
}

/// The name the rest of this file uses.
use update_builder as update;

/// Applies a typed value to the option `name` of the core's option table: the typed setters
/// below are thin wrappers over this, so each range check lives in the table once. A bad
/// value is `MCPOOL_CONFIG`, as the same value given by name (`mcpool_config_set`): one rule
/// on every path (a NULL pointer stays `MCPOOL_INVALID_ARGUMENT`); TLS without the feature
/// `MCPOOL_UNSUPPORTED`.
///
/// # Safety
/// `config` is NULL or a live configuration that no other thread is using.
unsafe fn set_typed(
    config: *mut mcpool_config,
    name: &str,
    value: options::Value<'_>,
) -> mcpool_status {
    // SAFETY: forwarded from the caller's promise.
    landingpad(|| unsafe { noting(config, name, &[], || set_option(config, name, value)) })
}

/// [`set_typed`] inside the caller's landing pad.
///
/// # Safety
/// As [`set_typed`].
unsafe fn set_option(config: *mut mcpool_config, name: &str, value: options::Value<'_>) -> Outcome {
    let row = options::option(name)
        .ok_or_else(|| Failure::new(mcpool_status::MCPOOL_PANIC, format!("no option {name}")))?;
    // SAFETY: forwarded from the caller's promise.
    unsafe {
        update(config, |b| {
            row.set_value(b, value)
                .map_err(|e| super::options::option_failure(&e))
        })
    }
}

/// A typed setter of a millisecond duration.
///
/// # Safety
/// As [`set_typed`].
unsafe fn set_ms(config: *mut mcpool_config, name: &str, ms: u64) -> mcpool_status {
    let d = options::Value::Duration(Duration::from_millis(ms));
    // SAFETY: forwarded from the caller's promise.
    unsafe { set_typed(config, name, d) }
}

/// A typed setter of a count or size.
///
/// # Safety
/// As [`set_typed`].
unsafe fn set_int(config: *mut mcpool_config, name: &str, n: u64) -> mcpool_status {
    let v = options::Value::Integer(n);
    // SAFETY: forwarded from the caller's promise.
    unsafe { set_typed(config, name, v) }
}

/// A typed setter of a boolean.
///
/// # Safety
/// As [`set_typed`].
unsafe fn set_bool(config: *mut mcpool_config, name: &str, on: bool) -> mcpool_status {
    let v = options::Value::Bool(on);
    // SAFETY: forwarded from the caller's promise.
    unsafe { set_typed(config, name, v) }
}

/// Refuses a NULL configuration before any other argument is looked at, so that a NULL
/// `config` is `MCPOOL_INVALID_ARGUMENT` whatever else is wrong (a bad name, a bad address).
fn require(config: *mut mcpool_config) -> Result<(), Failure> {
    if config.is_null() {
        Err(Failure::invalid("config is NULL"))
    } else {
        Ok(())
    }
}

/// Creates a configuration with every default (no servers yet) and writes it to `*out`.
///
/// Ownership: the caller owns `*out` and frees it with `mcpool_config_free`.
///
/// # Safety
/// `out` is NULL (refused) or valid for a write of one pointer.
#[no_mangle]
pub unsafe extern "C" fn mcpool_config_new(out: *mut *mut mcpool_config) -> mcpool_status {
    landingpad(|| {
        ptr::out(out, "out")?;
        let cfg = Box::new(mcpool_config {
            builder: ClientBuilder::new(),
            given: Default::default(),
            refused: Vec::new(),
        });
        // SAFETY: `out` was checked non-NULL; the caller promises it is writable.
        unsafe { ptr::write(out, Box::into_raw(cfg)) };
        Ok(MCPOOL_OK)
    })
}

/// Frees a configuration made by `mcpool_config_new`. NULL is ignored. Clients built from
/// it are unaffected.
///
/// # Safety
/// `config` is NULL or a configuration not yet freed; it must not be used afterwards.
#[no_mangle]
pub unsafe extern "C" fn mcpool_config_free(config: *mut mcpool_config) {
    landingpad_void(|| {
        if !config.is_null() {
            // SAFETY: made by `Box::into_raw` in `mcpool_config_new`, freed only once (the
            // caller's promise).
            drop(unsafe { Box::from_raw(config) });
        }
    })
}

/// Adds a server: `host:port`, `[v6]:port`, `host` (port 11211), `host:port:weight`,
/// `host:port:name` or a unix socket path starting with `/`, given as `addr_len` bytes of
/// UTF-8 (no NUL needed), with a placement `weight` of at least 1. A third field of digits is
/// a weight, read exactly as the `servers` option and the CLI's `--servers` read it (any other
/// third field is a name): `weight` 1, the usual value, leaves a weight in the address in
/// force, and another `weight` must equal it. Server order matters: it decides placement.
///
/// Returns `MCPOOL_CONFIG` for a malformed address (not UTF-8, a NUL, control byte or space
/// in it, port 0, a `:` field beyond `host:port:name`, a relative socket path, a weight field
/// of 0 or over 4294967295), a `weight` of 0 (as a weight field of 0 or
/// `mcpool_client_set_servers`'s weight of 0), or a weight in the address that differs from a
/// `weight` other than 1, the last error naming the entry; `MCPOOL_INVALID_ARGUMENT` for a
/// NULL `config` or `addr`. Weights so large that the placement table would hold more
/// than 4194304 entries (`cache-memcached` and the other modulo profiles repeat a server
/// `weight` times, `cmf-ketama` makes `points × weight` points) make `mcpool_client_new`
/// return `MCPOOL_CONFIG`.
///
/// # Safety
/// `config` is NULL or a live configuration; `addr` is NULL or valid for `addr_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn mcpool_config_add_server(
    config: *mut mcpool_config,
    addr: *const c_char,
    addr_len: usize,
    weight: u32,
) -> mcpool_status {
    landingpad(|| {
        require(config)?;
        if addr.is_null() {
            return Err(Failure::invalid("server address is NULL".to_owned()));
        }
        // SAFETY: the caller promises `addr_len` readable bytes at a non-NULL `addr`. Too
        // long (no server has such an address) is a bad address, MCPOOL_CONFIG as every other.
        let addr = unsafe { ptr::address(addr, addr_len, MAX_NAME_LEN, "server address") }
            .map_err(|f| bad_value(f, addr_len))?;
        // A weight of 0 is the core's configuration error (ServerSpec::parse_entry), as in
        // the address, `mcpool_client_set_servers` and every binding's server list.
        let spec = ServerSpec::parse_with_weight(addr, weight)
            .map_err(|e| Failure::new(mcpool_status::MCPOOL_CONFIG, e.to_string()))?;
        // SAFETY: the caller promises `config` is NULL or live and unshared.
        unsafe { update(config, |b| Ok(b.server_spec(spec))) }
    })
}

/// Splits a server list written as one string (`list`, `list_len` bytes of UTF-8) at any of
/// the bytes of `separators` (`separators_len` ASCII bytes: `","` as the `servers` option and
/// the CLI's `--servers` split, `",;"` as Django's `LOCATION` is split), as the core splits
/// its own: entries trimmed, empty ones dropped; a list holding an address with a
/// `user:password@` is refused, `MCPOOL_CONFIG`, its message showing nothing before the
/// list's last `@` (a password may hold a separator: `bob:Se,cret@h:1`). Writes each entry as two byte offsets into `list`, its
/// start and end, to `bounds[2i]` and `bounds[2i + 1]`, for as many entries as `bounds_len`
/// (a count of `size_t`s) holds; `*out_n` gets the number of entries: call again with a
/// larger array when it is larger than `bounds_len / 2`. Returns `MCPOOL_OK`, `MCPOOL_CONFIG`
/// (nothing written) for a list holding a `user:password@`, or `MCPOOL_INVALID_ARGUMENT` for
/// a NULL with a length, a NULL `out_n`, a list not UTF-8 or a separator not ASCII. No I/O,
/// no client.
///
/// # Safety
/// `list` is NULL or valid for `list_len` bytes, `separators` NULL or valid for
/// `separators_len` bytes, `bounds` NULL or valid for `bounds_len` writable `size_t`s,
/// `out_n` NULL (refused) or valid for one write.
#[no_mangle]
pub unsafe extern "C" fn mcpool_server_list_split(
    list: *const c_char,
    list_len: usize,
    separators: *const c_char,
    separators_len: usize,
    bounds: *mut usize,
    bounds_len: usize,
    out_n: *mut usize,
) -> mcpool_status {
    landingpad(|| {
        ptr::out(out_n, "out_n")?;
        if bounds.is_null() && bounds_len > 0 {
            return Err(Failure::invalid("bounds is NULL"));
        }
        let bytes = |p: *const c_char, n: usize, what: &str| {
            // SAFETY: the caller promises `n` readable bytes at a non-NULL `p` (NULL only
            // with 0); the length is bounded by what the caller holds.
            unsafe {
                ptr::bytes(
                    p.cast(),
                    n,
                    usize::MAX,
                    what,
                    mcpool_status::MCPOOL_INVALID_ARGUMENT,
                )
            }
        };
        let text = std::str::from_utf8(bytes(list, list_len, "list")?)
            .map_err(|_| Failure::invalid("list is not UTF-8"))?;
        let seps = bytes(separators, separators_len, "separators")?;
        if !seps.is_ascii() {
            return Err(Failure::invalid("separators must be ASCII"));
        }
        let seps: Vec<char> = seps.iter().map(|&b| char::from(b)).collect();
        let entries = mcpool::ServerSpec::split_list_on(text, &seps)
            .map_err(|e| Failure::new(mcpool_status::MCPOOL_CONFIG, e.to_string()))?;
        let mut n = 0;
        for entry in entries {
            if 2 * n + 1 < bounds_len {
                let start = entry.as_ptr() as usize - text.as_ptr() as usize;
                // SAFETY: `bounds` is non-NULL (bounds_len > 0 here) and valid for
                // `bounds_len` writes, as the caller promises; 2n + 1 < bounds_len.
                unsafe {
                    ptr::write(bounds.add(2 * n), start);
                    ptr::write(bounds.add(2 * n + 1), start + entry.len());
                }
            }
            n += 1;
        }
        // SAFETY: `out_n` was checked non-NULL.
        unsafe { ptr::write(out_n, n) };
        Ok(MCPOOL_OK)
    })
}

/// Writes the server address `addr` (`addr_len` bytes, any bytes) as the core's errors show
/// it, for a binding's own messages that name an address (a bad weight beside it, a list
/// given as one string): a `user:password@` before a host replaced by `<userinfo hidden>@`
/// (no address form takes one; it may be a password), bytes that are not UTF-8 escaped
/// (`\xe9`); anything else as given. `*out_len` gets the length of that text; at most
/// `buf_len` bytes of it are written to `buf` (no NUL): call again with a larger buffer when
/// `*out_len` is larger. Returns `MCPOOL_OK`, or `MCPOOL_INVALID_ARGUMENT` for a NULL `addr`
/// with a length, a NULL `buf` with a `buf_len`, or a NULL `out_len`. No I/O, no client.
///
/// # Safety
/// `addr` is NULL or valid for `addr_len` bytes; `buf` is NULL or valid for `buf_len`
/// writable bytes; `out_len` is NULL (refused) or valid for one write.
#[no_mangle]
pub unsafe extern "C" fn mcpool_address_shown(
    addr: *const c_char,
    addr_len: usize,
    buf: *mut c_char,
    buf_len: usize,
    out_len: *mut usize,
) -> mcpool_status {
    landingpad(|| {
        ptr::out(out_len, "out_len")?;
        if buf.is_null() && buf_len > 0 {
            return Err(Failure::invalid("buf is NULL"));
        }
        // SAFETY: the caller promises `addr_len` readable bytes at a non-NULL `addr` (NULL
        // only with 0); the length is bounded by what the caller holds.
        let given = unsafe {
            ptr::bytes(
                addr.cast(),
                addr_len,
                usize::MAX,
                "addr",
                mcpool_status::MCPOOL_INVALID_ARGUMENT,
            )
        }?;
        let text = match std::str::from_utf8(given) {
            Ok(t) => mcpool::address::shown(t).into_owned(),
            Err(_) => mcpool::address::shown(&given.escape_ascii().to_string()).into_owned(),
        };
        let n = text.len().min(buf_len);
        // SAFETY: `buf` is non-NULL when `n` > 0 (checked) and has room for `buf_len` >= `n`
        // bytes, as the caller promises; `out_len` was checked non-NULL.
        unsafe {
            if n > 0 {
                std::ptr::copy_nonoverlapping(text.as_ptr(), buf.cast::<u8>(), n);
            }
            ptr::write(out_len, text.len());
        }
        Ok(MCPOOL_OK)
    })
}

/// A name or address refused as read (too long, not UTF-8): a bad value of its option,
/// MCPOOL_CONFIG as `mcpool_config_set` gives; a length no buffer has (above `isize::MAX`)
/// stays the caller's bad argument.
fn bad_value(f: Failure, len: usize) -> Failure {
    if len > isize::MAX as usize {
        f
    } else {
        Failure::new(mcpool_status::MCPOOL_CONFIG, f.message)
    }
}

/// The text of an option value given by pointer and length: NULL with length 0 is the empty
/// text, as `mcpool_config_set` reads it (retest46 3: these setters refused it, and a TLS
/// option so refused then blocked every build); NULL with a length is the caller's bad
/// argument (`MCPOOL_INVALID_ARGUMENT`); too long or not UTF-8 a bad value (`bad_value`).
///
/// # Safety
/// A non-NULL `p` must be valid for reads of `len` bytes for `'a`.
unsafe fn value_text<'a>(p: *const c_char, len: usize, what: &str) -> Result<&'a str, Failure> {
    if p.is_null() {
        if len == 0 {
            return Ok("");
        }
        return Err(Failure::invalid(format!("{what} is NULL")));
    }
    // SAFETY: forwarded from the caller's promise.
    unsafe { ptr::text(p, len, MAX_NAME_LEN, what) }.map_err(|f| bad_value(f, len))
}

/// Sets a named option (a distribution, a policy, a format) from its name, through the
/// option table: `MCPOOL_CONFIG` for an unknown name.
///
/// # Safety
/// As for the setters that call it.
unsafe fn set_named(
    config: *mut mcpool_config,
    name: *const c_char,
    name_len: usize,
    option: &str,
) -> mcpool_status {
    landingpad(|| {
        require(config)?;
        // SAFETY: the caller promises `name_len` readable bytes at a non-NULL `name`. A name
        // too long or not UTF-8 is a bad value of the option, as `mcpool_config_set` says
        // (MCPOOL_CONFIG); only NULL is the caller's bad argument.
        let name = unsafe { value_text(name, name_len, option) }?;
        let value = options::Value::Text(name);
        // SAFETY: the caller promises `config` is NULL or live and unshared.
        Ok(unsafe { set_typed(config, option, value) })
    })
}

/// Sets the placement profile by name, e.g. `"cache-memcached"` (the default),
/// `"libmemcached-ketama"`, `"whalin-consistent"`, `"cmf-ketama:150"` (points at most
/// 4194304): see the CLI's `--distribution` list; or `"proxy-pool"` (every key to the first
/// healthy server, for a list of proxies: docs/placement.md). Returns `MCPOOL_CONFIG` for an
/// unknown name.
///
/// # Safety
/// `config` is NULL or a live configuration; `name` is NULL or valid for `name_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn mcpool_config_set_distribution(
    config: *mut mcpool_config,
    name: *const c_char,
    name_len: usize,
) -> mcpool_status {
    // SAFETY: forwarded from the caller's promise.
    unsafe { set_named(config, name, name_len, "distribution") }
}

/// Sets what happens to a key whose server is dead, by name: `"fail-fast"` (the default:
/// the call fails with `MCPOOL_SERVER_DEAD`), `"rehash"` or `"eject"`.
/// Returns `MCPOOL_CONFIG` for an unknown name.
///
/// # Safety
/// `config` is NULL or a live configuration; `name` is NULL or valid for `name_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn mcpool_config_set_failover(
    config: *mut mcpool_config,
    name: *const c_char,
    name_len: usize,
) -> mcpool_status {
    // SAFETY: forwarded from the caller's promise.
    unsafe { set_named(config, name, name_len, "failover") }
}

/// Legacy: selects mcpool's value layout before value formats, by compression name:
/// `"gzip"` (compression marked by flag bit 2) or `"zlib"` (bit 8); the flags are otherwise
/// the caller's and every value is bytes. It replaces the value format (the later of this
/// and `mcpool_config_set_value_format` wins); new code sets a value format instead
/// (docs/value-format.md). Returns `MCPOOL_CONFIG` for an unknown name.
///
/// # Safety
/// `config` is NULL or a live configuration; `name` is NULL or valid for `name_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn mcpool_config_set_compression_format(
    config: *mut mcpool_config,
    name: *const c_char,
    name_len: usize,
) -> mcpool_status {
    landingpad(|| {
        require(config)?;
        // SAFETY: the caller promises `name_len` readable bytes at a non-NULL `name`.
        let name = unsafe { value_text(name, name_len, "compression format") }?;
        let f: CompressionFormat = name.parse().map_err(|e: mcpool::Error| {
            Failure::new(mcpool_status::MCPOOL_CONFIG, e.to_string())
        })?;
        // SAFETY: the caller promises `config` is NULL or live and unshared.
        unsafe { update(config, |b| Ok(b.compression_format(f))) }
    })
}

/// Sets the wire protocol by name: `"text"` (the default; also `"ascii"`), `"meta"` or
/// `"binary"`. Returns `MCPOOL_CONFIG` for an unknown name.
///
/// # Safety
/// `config` is NULL or a live configuration; `name` is NULL or valid for `name_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn mcpool_config_set_protocol(
    config: *mut mcpool_config,
    name: *const c_char,
    name_len: usize,
) -> mcpool_status {
    // SAFETY: forwarded from the caller's promise.
    unsafe { set_named(config, name, name_len, "protocol") }
}

/// Authenticates every connection with SASL PLAIN (`username_len` and `password_len` bytes
/// of UTF-8, no NUL needed; at most 4096 each, any character but NUL and a line break; both
/// or neither empty). The values go through the `sasl_username` and `sasl_password` rows of
/// `mcpool_config_set`: a bad one, or only one of them empty, is `MCPOOL_CONFIG` and the
/// configuration is unchanged (neither is kept). SASL needs the binary protocol
/// (`mcpool_client_new` refuses it on another, `MCPOOL_CONFIG`) and a server started with
/// SASL (`-S`). The configuration keeps a copy; the caller's buffers may be reused at once.
///
/// # Safety
/// `config` is NULL or a live configuration; `username` and `password` are NULL or valid
/// for their lengths.
#[no_mangle]
pub unsafe extern "C" fn mcpool_config_set_sasl_plain(
    config: *mut mcpool_config,
    username: *const c_char,
    username_len: usize,
    password: *const c_char,
    password_len: usize,
) -> mcpool_status {
    // A refusal is noted: the client is not built without the SASL login asked for.
    let set = || {
        require(config)?;
        // SAFETY: the caller promises `username_len` readable bytes at a non-NULL
        // `username`. Too long or not UTF-8 is a bad value (MCPOOL_CONFIG), as by name.
        let user = unsafe { value_text(username, username_len, "username") }?;
        // SAFETY: the caller promises `password_len` readable bytes at a non-NULL
        // `password`.
        let pass = unsafe { value_text(password, password_len, "password") }?;
        if user.is_empty() != pass.is_empty() {
            return Err(Failure::new(
                mcpool_status::MCPOOL_CONFIG,
                "sasl_plain: a user name and a password, both or neither empty".to_owned(),
            ));
        }
        // The option table's rows, so that the same values are refused as by name; both
        // in one update, so that a refused password leaves the user name unset too
        // (tester finding cuser2 1: the user was kept, and the build then said it lacked
        // a password).
        let row = |name| {
            options::option(name).ok_or_else(|| {
                Failure::new(mcpool_status::MCPOOL_PANIC, format!("no option {name}"))
            })
        };
        let (user_row, pass_row) = (row("sasl_username")?, row("sasl_password")?);
        // SAFETY: the caller promises `config` is NULL or live and unshared.
        unsafe {
            update(config, |b| {
                let b = user_row
                    .set_value(b, options::Value::Text(user))
                    .map_err(|e| super::options::option_failure(&e))?;
                pass_row
                    .set_value(b, options::Value::Text(pass))
                    .map_err(|e| super::options::option_failure(&e))
            })
        }
    };
    // SAFETY: the caller promises `config` is NULL or live and unshared.
    landingpad(|| unsafe {
        noting(config, "sasl_password", &[], || {
            noting(config, "sasl_username", &[], set)
        })
    })
}

/// Sets the namespace prepended to every key (binary, at most 250 bytes; one that begins or
/// ends with white space is refused, `MCPOOL_CONFIG` as for any bad option value: never
/// trimmed). Default: none.
/// `prefix` may be NULL when `prefix_len` is 0 (no prefix).
///
/// # Safety
/// `config` is NULL or a live configuration; `prefix` is NULL or valid for `prefix_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn mcpool_config_set_key_prefix(
    config: *mut mcpool_config,
    prefix: *const u8,
    prefix_len: usize,
) -> mcpool_status {
    landingpad(|| {
        require(config)?;
        // SAFETY: the caller promises `prefix_len` readable bytes at a non-NULL `prefix`.
        let p = unsafe {
            ptr::bytes(
                prefix,
                prefix_len,
                MAX_KEY_LEN,
                "key prefix",
                mcpool_status::MCPOOL_CONFIG,
            )
        }?;
        if let Some(why) = mcpool::key::key_prefix_problem(p) {
            return Err(Failure::new(
                mcpool_status::MCPOOL_CONFIG,
                format!("key prefix {:?}: {why}", String::from_utf8_lossy(p)),
            ));
        }
        // SAFETY: the caller promises `config` is NULL or live and unshared.
        unsafe { update(config, |b| Ok(b.key_prefix(p))) }
    })
}

/// Connections per server opened when the client is built (in the background) and kept
/// idle (SockIOPool's `initConn`/`minConn`). Default 0: lazy, each connection opened by the
/// first call that needs it, and no background thread before the first call. Must not exceed
/// the max size (checked by `mcpool_client_new`).
///
/// # Safety
/// `config` is NULL (refused) or a live configuration no other thread is using.
#[no_mangle]
pub unsafe extern "C" fn mcpool_config_set_min_idle(
    config: *mut mcpool_config,
    n: u32,
) -> mcpool_status {
    // SAFETY: forwarded from the caller's promise.
    unsafe { set_int(config, "min_idle", u64::from(n)) }
}

/// Most connections per server, at least 1. Default 16 (SockIOPool's `maxConn`).
///
/// # Safety
/// `config` is NULL (refused) or a live configuration no other thread is using.
#[no_mangle]
pub unsafe extern "C" fn mcpool_config_set_max_size(
    config: *mut mcpool_config,
    n: u32,
) -> mcpool_status {
    // SAFETY: forwarded from the caller's promise.
    unsafe { set_int(config, "max_size", u64::from(n)) }
}

/// Close connections idle for longer than `ms` milliseconds; 0 keeps them forever.
/// Default 300000 (5 minutes).
///
/// # Safety
/// `config` is NULL (refused) or a live configuration no other thread is using.
#[no_mangle]
pub unsafe extern "C" fn mcpool_config_set_idle_timeout_ms(
    config: *mut mcpool_config,
    ms: u64,
) -> mcpool_status {
    // SAFETY: forwarded from the caller's promise.
    unsafe { set_ms(config, "idle_timeout", ms) }
}

/// Close connections older than `ms` milliseconds (none is checked out again); 0 means no limit
/// (the default).
///
/// # Safety
/// `config` is NULL (refused) or a live configuration no other thread is using.
#[no_mangle]
pub unsafe extern "C" fn mcpool_config_set_max_lifetime_ms(
    config: *mut mcpool_config,
    ms: u64,
) -> mcpool_status {
    // SAFETY: forwarded from the caller's promise.
    unsafe { set_ms(config, "max_lifetime", ms) }
}

/// Connect timeout in milliseconds, above 0. Default 1000.
///
/// # Safety
/// `config` is NULL (refused) or a live configuration no other thread is using.
#[no_mangle]
pub unsafe extern "C" fn mcpool_config_set_connect_timeout_ms(
    config: *mut mcpool_config,
    ms: u64,
) -> mcpool_status {
    // SAFETY: forwarded from the caller's promise.
    unsafe { set_ms(config, "connect_timeout", ms) }
}

/// Timeout of each socket read or write in milliseconds, above 0. Default 1000.
///
/// # Safety
/// `config` is NULL (refused) or a live configuration no other thread is using.
#[no_mangle]
pub unsafe extern "C" fn mcpool_config_set_io_timeout_ms(
    config: *mut mcpool_config,
    ms: u64,
) -> mcpool_status {
    // SAFETY: forwarded from the caller's promise.
    unsafe { set_ms(config, "io_timeout", ms) }
}

/// How long a call waits for a free pooled connection, in milliseconds, above 0.
/// Default 5000.
///
/// # Safety
/// `config` is NULL (refused) or a live configuration no other thread is using.
#[no_mangle]
pub unsafe extern "C" fn mcpool_config_set_pool_timeout_ms(
    config: *mut mcpool_config,
    ms: u64,
) -> mcpool_status {
    // SAFETY: forwarded from the caller's promise.
    unsafe { set_ms(config, "pool_timeout", ms) }
}

/// TCP_NODELAY (Nagle off). Default true.
///
/// # Safety
/// `config` is NULL (refused) or a live configuration no other thread is using.
#[no_mangle]
pub unsafe extern "C" fn mcpool_config_set_nodelay(
    config: *mut mcpool_config,
    on: bool,
) -> mcpool_status {
    // SAFETY: forwarded from the caller's promise.
    unsafe { set_bool(config, "nodelay", on) }
}

/// A `version` round trip on every checkout of a pooled connection. Default false.
///
/// # Safety
/// `config` is NULL (refused) or a live configuration no other thread is using.
#[no_mangle]
pub unsafe extern "C" fn mcpool_config_set_test_on_check_out(
    config: *mut mcpool_config,
    on: bool,
) -> mcpool_status {
    // SAFETY: forwarded from the caller's promise.
    unsafe { set_bool(config, "test_on_check_out", on) }
}

/// Consecutive failures that mark a server dead, at least 1. Default 2.
///
/// # Safety
/// `config` is NULL (refused) or a live configuration no other thread is using.
#[no_mangle]
pub unsafe extern "C" fn mcpool_config_set_failure_limit(
    config: *mut mcpool_config,
    n: u32,
) -> mcpool_status {
    // SAFETY: forwarded from the caller's promise.
    unsafe { set_int(config, "failure_limit", u64::from(n)) }
}

/// First wait, in milliseconds, before a dead server is tried again (it doubles per
/// failed retry). Default 1000.
///
/// # Safety
/// `config` is NULL (refused) or a live configuration no other thread is using.
#[no_mangle]
pub unsafe extern "C" fn mcpool_config_set_retry_timeout_ms(
    config: *mut mcpool_config,
    ms: u64,
) -> mcpool_status {
    // SAFETY: forwarded from the caller's promise.
    unsafe { set_ms(config, "retry_timeout", ms) }
}

/// Cap on the doubling retry wait, in milliseconds. Default 30000.
///
/// # Safety
/// `config` is NULL (refused) or a live configuration no other thread is using.
#[no_mangle]
pub unsafe extern "C" fn mcpool_config_set_retry_timeout_max_ms(
    config: *mut mcpool_config,
    ms: u64,
) -> mcpool_status {
    // SAFETY: forwarded from the caller's promise.
    unsafe { set_ms(config, "retry_timeout_max", ms) }
}

/// Compress large values. Default true.
///
/// # Safety
/// `config` is NULL (refused) or a live configuration no other thread is using.
#[no_mangle]
pub unsafe extern "C" fn mcpool_config_set_compression(
    config: *mut mcpool_config,
    on: bool,
) -> mcpool_status {
    // SAFETY: forwarded from the caller's promise.
    unsafe { set_bool(config, "compression", on) }
}

/// Values of at least `bytes` bytes are compressed. Default 30720 (SockIOPool's).
///
/// # Safety
/// `config` is NULL (refused) or a live configuration no other thread is using.
#[no_mangle]
pub unsafe extern "C" fn mcpool_config_set_compression_threshold(
    config: *mut mcpool_config,
    bytes: usize,
) -> mcpool_status {
    // SAFETY: forwarded from the caller's promise.
    unsafe { set_int(config, "compression_threshold", bytes as u64) }
}

/// Keep a compressed value only when `compressed / original <= ratio`, with `ratio` from 0
/// to 1 (0: never, no value is compressed); anything else is `MCPOOL_CONFIG`. Default 0.8.
///
/// # Safety
/// `config` is NULL (refused) or a live configuration no other thread is using.
#[no_mangle]
pub unsafe extern "C" fn mcpool_config_set_compression_ratio(
    config: *mut mcpool_config,
    ratio: f64,
) -> mcpool_status {
    // SAFETY: forwarded from the caller's promise.
    unsafe { set_typed(config, "compression_ratio", options::Value::Fraction(ratio)) }
}

/// Refuse to inflate a value beyond `bytes` bytes. Default 67108864 (64 MiB).
///
/// # Safety
/// `config` is NULL (refused) or a live configuration no other thread is using.
#[no_mangle]
pub unsafe extern "C" fn mcpool_config_set_max_decompressed_size(
    config: *mut mcpool_config,
    bytes: usize,
) -> mcpool_status {
    // SAFETY: forwarded from the caller's promise.
    unsafe { set_int(config, "max_decompressed_size", bytes as u64) }
}

/// URL-encode every key as Whalin's `sanitizeKeys` does (all bytes but `A-Z a-z 0-9 . - * _`
/// as `%XX`, space as `+`: `user:1` is sent as `user%3A1`), so that keys with spaces or
/// control bytes can be stored. Default: the distribution's (on for the Whalin profiles, off
/// otherwise).
///
/// # Safety
/// `config` is NULL (refused) or a live configuration no other thread is using.
#[no_mangle]
pub unsafe extern "C" fn mcpool_config_set_sanitize_keys(
    config: *mut mcpool_config,
    on: bool,
) -> mcpool_status {
    // SAFETY: forwarded from the caller's promise.
    unsafe { set_bool(config, "sanitize_keys", on) }
}

/// Largest value sent, in bytes, from 1 to 1073741824 (1 GiB, memcached's own
/// largest item; above it `MCPOOL_CONFIG`). Default 1048576 (memcached's `-I`
/// default). A value to store is checked as sent, after compression: one that compresses
/// below this is stored, one that does not is refused (`MCPOOL_VALUE_TOO_LARGE`), and one
/// larger than `max_decompressed_size` too is refused before any compressing. Reads are
/// not held to it: a read takes a value up to the larger of this and
/// `max_decompressed_size`, so one another client stored under a larger limit is read.
///
/// # Safety
/// `config` is NULL (refused) or a live configuration no other thread is using.
#[no_mangle]
pub unsafe extern "C" fn mcpool_config_set_max_value_size(
    config: *mut mcpool_config,
    bytes: usize,
) -> mcpool_status {
    // SAFETY: forwarded from the caller's promise.
    unsafe { set_int(config, "max_value_size", bytes as u64) }
}

/// One deadline for a whole operation, in milliseconds: the pool wait, the connect and every
/// write and read together; whichever phase is running when it passes reports its own
/// timeout status (`MCPOOL_POOL_TIMEOUT`, `MCPOOL_CONNECT_TIMEOUT`, `MCPOOL_IO_TIMEOUT`).
/// 0 means none (only the per-phase timeouts apply). Default 5000.
///
/// # Safety
/// `config` is NULL (refused) or a live configuration no other thread is using.
#[no_mangle]
pub unsafe extern "C" fn mcpool_config_set_operation_timeout_ms(
    config: *mut mcpool_config,
    ms: u64,
) -> mcpool_status {
    // SAFETY: forwarded from the caller's promise.
    unsafe { set_ms(config, "operation_timeout", ms) }
}

// ----- TLS (cargo feature `tls`) -----

/// Whether this libmcpool was built with TLS (the cargo feature `tls`). Without it every
/// `mcpool_config_set_tls_*` setter returns `MCPOOL_UNSUPPORTED`.
#[no_mangle]
pub extern "C" fn mcpool_tls_supported() -> bool {
    mcpool::TLS_SUPPORTED
}

/// Speaks TLS to every TCP server (unix-socket servers stay plain text: memcached has no TLS
/// on sockets) and verifies their certificates against the CA certificates
/// in the PEM file at `path` (`path_len` bytes of UTF-8, no NUL needed). The file is read
/// when the client is built: a missing or bad file makes `mcpool_client_new` return
/// `MCPOOL_CONFIG`. `MCPOOL_UNSUPPORTED` without the `tls` feature (`mcpool_tls_supported`).
///
/// # Safety
/// `config` is NULL or a live configuration; `path` is NULL or valid for `path_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn mcpool_config_set_tls_ca_file(
    config: *mut mcpool_config,
    path: *const c_char,
    path_len: usize,
) -> mcpool_status {
    let set = || {
        require(config)?;
        // SAFETY: the caller promises `path_len` readable bytes at a non-NULL `path`.
        let path = unsafe { value_text(path, path_len, "TLS CA file") }?;
        // SAFETY: the caller promises `config` is NULL or live and unshared.
        unsafe { set_option(config, "tls_ca_file", options::Value::Text(path)) }
    };
    // SAFETY: as above.
    landingpad(|| unsafe { noting(config, "tls_ca_file", &[], set) })
}

/// Speaks TLS and presents a client certificate: the PEM certificate chain at `chain_path`
/// and its PEM private key at `key_path` (UTF-8 paths with their lengths). Read when the
/// client is built (`MCPOOL_CONFIG` then if unusable). `MCPOOL_UNSUPPORTED` without `tls`.
///
/// # Safety
/// `config` is NULL or a live configuration; each path is NULL or valid for its length.
#[no_mangle]
pub unsafe extern "C" fn mcpool_config_set_tls_client_cert(
    config: *mut mcpool_config,
    chain_path: *const c_char,
    chain_path_len: usize,
    key_path: *const c_char,
    key_path_len: usize,
) -> mcpool_status {
    let set = || {
        require(config)?;
        // SAFETY: the caller promises `chain_path_len` readable bytes at a non-NULL pointer.
        let chain = unsafe { value_text(chain_path, chain_path_len, "TLS chain") }?;
        // SAFETY: the caller promises `key_path_len` readable bytes at a non-NULL pointer.
        let key = unsafe { value_text(key_path, key_path_len, "TLS key") }?;
        // SAFETY: the caller promises `config` is NULL or live and unshared.
        unsafe { set_option(config, "tls_client_cert", options::Value::Text(chain)) }?;
        // SAFETY: as above.
        unsafe { set_option(config, "tls_client_key", options::Value::Text(key)) }
    };
    // SAFETY: as above.
    landingpad(|| unsafe {
        noting(config, "tls_client_key", &[], || {
            noting(config, "tls_client_cert", &[], set)
        })
    })
}

/// Speaks TLS and verifies the server certificates against `name` (UTF-8, `name_len` bytes)
/// instead of each server's host. `MCPOOL_UNSUPPORTED` without `tls`.
///
/// # Safety
/// `config` is NULL or a live configuration; `name` is NULL or valid for `name_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn mcpool_config_set_tls_server_name(
    config: *mut mcpool_config,
    name: *const c_char,
    name_len: usize,
) -> mcpool_status {
    let set = || {
        require(config)?;
        // SAFETY: the caller promises `name_len` readable bytes at a non-NULL `name`.
        let name = unsafe { value_text(name, name_len, "TLS server name") }?;
        // SAFETY: the caller promises `config` is NULL or live and unshared.
        unsafe { set_option(config, "tls_server_name", options::Value::Text(name)) }
    };
    // SAFETY: as above.
    landingpad(|| unsafe { noting(config, "tls_server_name", &[], set) })
}

/// Speaks TLS; with `skip` true, does not verify the servers' certificates at all (no CA
/// file needed). Only for tests against throwaway certificates: anyone on the path can then
/// read and alter the traffic. With `skip` true, `MCPOOL_UNSUPPORTED` without `tls`; false,
/// the default, changes nothing and is accepted in any build.
///
/// # Safety
/// `config` is NULL (refused) or a live configuration no other thread is using.
#[no_mangle]
pub unsafe extern "C" fn mcpool_config_set_tls_insecure_skip_verify(
    config: *mut mcpool_config,
    skip: bool,
) -> mcpool_status {
    let v = options::Value::Bool(skip);
    // SAFETY: forwarded from the caller's promise.
    unsafe { set_typed(config, "tls_insecure_skip_verify", v) }
}

/// Sets the value format (the flag layout and wire encodings of every kind) by name:
/// `"mcpool"` (the default: mcpool's cross-language layout), or a legacy client's:
/// `"pylibmc"`, `"python-memcached"`, `"pymemcache"`, `"cache-memcached-fast"`,
/// `"cache-memcached"`, `"whalin"`, `"spymemcached"`, `"libmemcached"` (bytes only, flags
/// the caller's). Every program sharing a fleet uses the same one (docs/value-format.md).
/// Returns `MCPOOL_CONFIG` for an unknown name.
///
/// # Safety
/// `config` is NULL or a live configuration; `name` is NULL or valid for `name_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn mcpool_config_set_value_format(
    config: *mut mcpool_config,
    name: *const c_char,
    name_len: usize,
) -> mcpool_status {
    // SAFETY: forwarded from the caller's promise.
    unsafe { set_named(config, name, name_len, "value_format") }
}

/// Sets the compression level on the codec's own scale: zlib and gzip 0 (store) to 9 (best),
/// default 6; zstd 1 to 22, default 3. Checked against the codec when the client is built.
///
/// # Safety
/// `config` is NULL or a live configuration.
#[no_mangle]
pub unsafe extern "C" fn mcpool_config_set_compression_level(
    config: *mut mcpool_config,
    level: i32,
) -> mcpool_status {
    let text = level.to_string();
    let v = options::Value::Text(&text);
    // SAFETY: forwarded from the caller's promise.
    unsafe { set_typed(config, "compression_level", v) }
}

/// Sets the compression codec by name: `"zlib"`, `"gzip"` or `"zstd"` (zstd only in the
/// `mcpool` value format: a legacy format cannot mark it, and building the client fails).
/// The default is the value format's own (`mcpool`: zlib). Returns `MCPOOL_CONFIG` for an
/// unknown name.
///
/// # Safety
/// `config` is NULL or a live configuration; `name` is NULL or valid for `name_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn mcpool_config_set_compression_codec(
    config: *mut mcpool_config,
    name: *const c_char,
    name_len: usize,
) -> mcpool_status {
    // SAFETY: forwarded from the caller's promise.
    unsafe { set_named(config, name, name_len, "compression_codec") }
}

/// Enables (or disables) reading and writing one serialized kind (`MCPOOL_KIND_PYTHON_PICKLE`,
/// `MCPOOL_KIND_PERL_STORABLE`, `MCPOOL_KIND_JAVA_SERIALIZED`). Off by default: a value the
/// format marks as serialized is then a `MCPOOL_VALUE_FORMAT` error on every read (naming the
/// key, the flags and the kind), never bytes; storing one is `MCPOOL_UNSUPPORTED`. Another
/// kind is `MCPOOL_INVALID_ARGUMENT`.
///
/// # Safety
/// `config` is NULL or a live configuration.
#[no_mangle]
pub unsafe extern "C" fn mcpool_config_set_serialized(
    config: *mut mcpool_config,
    kind: super::kinds::mcpool_kind,
    on: bool,
) -> mcpool_status {
    landingpad(|| {
        require(config)?;
        let kind = super::kinds::kind_arg("set_serialized", kind)?;
        let Kind::Serialized(lang) = kind else {
            return Err(Failure::invalid(format!(
                "set_serialized: {kind} is not a serialized kind"
            )));
        };
        // SAFETY: the caller promises `config` is NULL or live and unshared.
        unsafe { update(config, |b| Ok(b.serialized(lang, on))) }
    })
}
