//! Options by name: `mcpool_config_set` and the table behind it (`mcpool_option_count`,
//! `mcpool_option_name`, `mcpool_option_doc`, `mcpool_option_find`, ...), read from the
//! core's one option table (`mcpool::config::options`). A binding that forwards names and values through these
//! reaches every option, including ones added after it was written.

use super::config::{mcpool_config, update_builder};
use super::landing::{landingpad, Failure};
use super::ptr;
use super::status::mcpool_status;
use mcpool::config::options::{self, OPTIONS};
use mcpool::error::Error;
use std::ffi::{c_char, CString};
use std::sync::OnceLock;

/// Longest option name or value accepted, in bytes (a server list of many servers fits).
const MAX_OPTION_LEN: usize = 1 << 16;

/// The status of a core error from the option table: `MCPOOL_UNSUPPORTED` for TLS without
/// the feature, `MCPOOL_CONFIG` for everything else.
pub(crate) fn option_failure(e: &Error) -> Failure {
    let status = match e {
        Error::Unsupported(_) => mcpool_status::MCPOOL_UNSUPPORTED,
        _ => mcpool_status::MCPOOL_CONFIG,
    };
    let message = match e {
        Error::Config(m) => m.clone(),
        other => other.to_string(),
    };
    Failure::new(status, message)
}

/// Sets the option `name` (`name_len` bytes) to `value` (`value_len` bytes, its text form),
/// both `const char *` as every name of the C ABI (a string literal goes as it is, in C and
/// C++: tester finding cteam 2), UTF-8 with no NUL needed (`key_prefix`'s value may be any bytes, as
/// `mcpool_config_set_key_prefix` takes them: the protocol's key rule checks them when the
/// client is built), from the core's option table (`mcpool_option_name`). Value
/// forms: durations `250ms`, `1.5s`, `2s`, `500us` or a bare number of milliseconds (`0` where
/// the option documents "none"); booleans `true`/`false`/`1`/`0`/`yes`/`no`/`on`/`off`; counts
/// and sizes as decimal integers; `servers` as `host:port[:weight]`, comma-separated (replaces
/// the servers added so far); `preset` the name of a legacy client's defaults
/// (`pylibmc`, `whalin`, ...: set it first, later options override it). `-` in a name is read
/// as `_`. A name or value is at most 65536 bytes: a longer one is `MCPOOL_CONFIG` before it
/// is read; one within the limit is read whole (checked as UTF-8) before the name is looked
/// up, so each buffer must hold its length.
///
/// Returns `MCPOOL_OK`, or `MCPOOL_CONFIG` (the configuration unchanged) for an unknown name
/// (the last error lists close names) or a bad value (the last error names the option, the
/// value and the accepted form); `MCPOOL_UNSUPPORTED` for a TLS option without the `tls`
/// feature; `MCPOOL_INVALID_ARGUMENT` for a NULL `config`, `name`, or `value` with a length.
///
/// # Safety
/// `config` is NULL or a live configuration no other thread is using; `name` and `value`
/// are NULL or valid for their lengths.
#[no_mangle]
pub unsafe extern "C" fn mcpool_config_set(
    config: *mut mcpool_config,
    name: *const c_char,
    name_len: usize,
    value: *const c_char,
    value_len: usize,
) -> mcpool_status {
    let (name_p, value_p) = (name.cast::<u8>(), value.cast::<u8>());
    landingpad(|| {
        if config.is_null() {
            return Err(Failure::invalid("config is NULL"));
        }
        let set = || {
            // SAFETY: the caller promises `name_len` readable bytes at a non-NULL `name`.
            let name = unsafe { text(name_p, name_len, "option name", "") }?;
            // SAFETY: the caller promises `value_len` readable bytes at a non-NULL `value`.
            let value = unsafe { value_of(value_p, value_len, name) }?;
            // SAFETY: the caller promises `config` is live and unshared.
            unsafe {
                update_builder(config, |b| {
                    options::set_bytes(b, name, value).map_err(|e| option_failure(&e))
                })
            }
        };
        // SAFETY: as above.
        unsafe { noting_as_given(config, name_p, name_len, value_p, value_len, set) }
    })
}

/// [`super::config::noting`] for a setting by name: the name and value as the caller gave
/// them, read leniently (bytes that are not UTF-8 replaced; NULL or over the limit: empty),
/// so that a setting refused for its very bytes (`"tls_ca_file\xff"`) is noted too.
///
/// # Safety
/// As `mcpool_config_set`: `config` is live and unshared; `name` and `value` are NULL or
/// valid for their lengths.
unsafe fn noting_as_given(
    config: *mut mcpool_config,
    name: *const u8,
    name_len: usize,
    value: *const u8,
    value_len: usize,
    set: impl FnOnce() -> super::landing::Outcome,
) -> super::landing::Outcome {
    let lenient = |p: *const u8, len: usize| -> &[u8] {
        // SAFETY: the caller promises `len` readable bytes at a non-NULL `p`; NULL and
        // lengths over the limit are refused by `bytes` before anything is read.
        unsafe { ptr::bytes(p, len, MAX_OPTION_LEN, "", mcpool_status::MCPOOL_CONFIG) }
            .unwrap_or(&[])
    };
    let name = String::from_utf8_lossy(lenient(name, name_len));
    // SAFETY: forwarded from the caller's promise.
    unsafe { super::config::noting(config, &name, lenient(value, value_len), set) }
}

/// `mcpool_config_set` as the caller's argument `given` (`given_len` bytes of UTF-8: the
/// name the binding's user wrote, e.g. Python's `min_compress_len` or Perl's
/// `compress_threshold`, which the binding translates into one or more core options): the
/// core's rule for an option given twice. When another argument (another name, or another
/// spelling of the same name) set this option already through this call, it is
/// `MCPOOL_CONFIG` naming both ("option compression given twice (as compression and
/// min_compress_len)") and the configuration is unchanged, whatever the values; the same
/// argument may set several options, and an option again. A preset's settings are not
/// arguments (not counted); `mcpool_config_set` counts nothing. Otherwise as
/// `mcpool_config_set`.
///
/// # Safety
/// As `mcpool_config_set`; `given` is NULL or valid for `given_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn mcpool_config_set_as(
    config: *mut mcpool_config,
    given: *const c_char,
    given_len: usize,
    name: *const c_char,
    name_len: usize,
    value: *const c_char,
    value_len: usize,
) -> mcpool_status {
    let (given, name_p, value_p) = (given.cast::<u8>(), name.cast::<u8>(), value.cast::<u8>());
    landingpad(|| {
        let set = || {
            // SAFETY: the caller promises `given_len` readable bytes at a non-NULL `given`.
            let given = unsafe { text(given, given_len, "argument name", "") }?;
            // SAFETY: the caller promises `name_len` readable bytes at a non-NULL `name`.
            let name = unsafe { text(name_p, name_len, "option name", "") }?;
            // SAFETY: the caller promises `value_len` readable bytes at a non-NULL `value`.
            let value = unsafe { value_of(value_p, value_len, name) }?;
            // SAFETY: the caller promises `config` is live and unshared.
            let cfg = unsafe { ptr::handle_mut(config, "config") }?;
            let mut sources = cfg.given.clone();
            let b = sources
                .set_bytes(cfg.builder.clone(), given, name, value)
                .map_err(|e| option_failure(&e))?;
            cfg.builder = b;
            cfg.given = sources;
            Ok(mcpool_status::MCPOOL_OK)
        };
        // SAFETY: as above.
        unsafe { noting_as_given(config, name_p, name_len, value_p, value_len, set) }
    })
}

/// The value of option `option` from C: its bytes for an option that takes bytes (the key
/// prefix, `OptionSpec::takes_bytes`: not UTF-8, a control byte, as the C setter takes
/// them), else its text as [`text`] reads it.
///
/// # Safety
/// `p` is NULL or valid for `len` bytes for `'a`.
unsafe fn value_of<'a>(p: *const u8, len: usize, option: &str) -> Result<&'a [u8], Failure> {
    if options::option(option).is_some_and(|o| o.takes_bytes()) {
        if p.is_null() && len == 0 {
            return Ok(&[]);
        }
        // SAFETY: forwarded from the caller's promise.
        return unsafe {
            ptr::bytes(
                p,
                len,
                MAX_OPTION_LEN,
                "option value",
                mcpool_status::MCPOOL_CONFIG,
            )
        };
    }
    // SAFETY: forwarded from the caller's promise.
    unsafe { text(p, len, "option value", option) }.map(str::as_bytes)
}

/// Text from C: a NULL pointer with a length is `MCPOOL_INVALID_ARGUMENT` (NULL with length
/// 0 is the empty text); too long or not UTF-8 is `MCPOOL_CONFIG`, naming `option` if given.
///
/// # Safety
/// `p` is NULL or valid for `len` bytes for `'a`.
unsafe fn text<'a>(p: *const u8, len: usize, what: &str, option: &str) -> Result<&'a str, Failure> {
    if p.is_null() {
        if len == 0 {
            return Ok("");
        }
        return Err(Failure::invalid(format!("{what} is NULL")));
    }
    // SAFETY: forwarded from the caller's promise.
    unsafe { ptr::text(p.cast(), len, MAX_OPTION_LEN, what) }.map_err(|f| {
        // a name that is no option is that error, whatever the value (tester finding
        // retest14 6: "server" with a value not UTF-8 was "option value is not UTF-8")
        if let Err(e) = (!option.is_empty())
            .then(|| options::find(option))
            .transpose()
        {
            return option_failure(&e);
        }
        let message = if option.is_empty() {
            f.message
        } else if len <= MAX_OPTION_LEN
            && options::option(option).is_some_and(|o| o.name == "servers")
        {
            // a server list that is not UTF-8 is named, its bytes escaped, as an address
            // given alone is (tester finding retest13 5); no other option's value is shown
            // here (one may be a secret)
            // SAFETY: non-NULL (checked above), `len` readable bytes as the caller promises,
            // and within the limit `ptr::text` read it under.
            let given = unsafe { std::slice::from_raw_parts(p, len) };
            format!(
                "option {option}: {} (\"{}\")",
                f.message,
                mcpool::address::shown(&given.escape_ascii().to_string())
            )
        } else {
            format!("option {option}: {}", f.message)
        };
        Failure::new(mcpool_status::MCPOOL_CONFIG, message)
    })
}

/// One row of the table as NUL-terminated strings.
struct CRow {
    name: CString,
    doc: CString,
    doc_seconds: CString,
    default: CString,
}

/// The table's names, summaries and defaults as NUL-terminated strings, made once per
/// process.
fn c_table() -> &'static [CRow] {
    static TABLE: OnceLock<Vec<CRow>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let nul_free = |s: &str| CString::new(s.replace('\0', " ")).unwrap_or_default();
        OPTIONS
            .iter()
            .map(|o| CRow {
                name: nul_free(o.name),
                doc: nul_free(&o.summary()),
                doc_seconds: nul_free(&o.summary_with(true)),
                default: nul_free(o.default),
            })
            .collect()
    })
}

/// How many options `mcpool_config_set` knows (including `preset`); they are numbered from
/// 0 for `mcpool_option_name` and `mcpool_option_doc`.
#[no_mangle]
pub extern "C" fn mcpool_option_count() -> usize {
    OPTIONS.len()
}

/// The name of option `i` (e.g. `"io_timeout"`), a static NUL-terminated string; NULL when
/// `i` is not below `mcpool_option_count()`. Never free it.
#[no_mangle]
pub extern "C" fn mcpool_option_name(i: usize) -> *const c_char {
    c_table()
        .get(i)
        .map_or(std::ptr::null(), |r| r.name.as_ptr())
}

/// One line about option `i`: its type, the unit of a bare number, the accepted values, its
/// default and what it does, e.g. `"duration, ms for a bare number; default 1s: time allowed
/// for each socket read or write"`. A static NUL-terminated string; NULL past the end.
#[no_mangle]
pub extern "C" fn mcpool_option_doc(i: usize) -> *const c_char {
    c_table()
        .get(i)
        .map_or(std::ptr::null(), |r| r.doc.as_ptr())
}

/// `mcpool_option_doc` as a binding whose language gives durations as numbers of seconds
/// (Python's `timeout=0.5`, Perl's `io_timeout => 2`) shows it: a duration's unit is
/// `"seconds for a number"` (`"duration, seconds for a number; default 1s: ..."`), every
/// other row as `mcpool_option_doc` gives it. A static NUL-terminated string; NULL past
/// the end. Never free it.
#[no_mangle]
pub extern "C" fn mcpool_option_doc_seconds(i: usize) -> *const c_char {
    c_table()
        .get(i)
        .map_or(std::ptr::null(), |r| r.doc_seconds.as_ptr())
}

/// The default of option `i` in its own text form (e.g. `"1s"`, `"true"`, `""`): setting
/// it with `mcpool_config_set` changes nothing. A static NUL-terminated string; NULL past
/// the end. Never free it.
#[no_mangle]
pub extern "C" fn mcpool_option_default(i: usize) -> *const c_char {
    c_table()
        .get(i)
        .map_or(std::ptr::null(), |r| r.default.as_ptr())
}

/// Which option `name` (`name_len` bytes, UTF-8) is, by the rule `mcpool_config_set` reads
/// names with (surrounding space ignored, case ignored, `-` read as `_`: `"IO-Timeout"` is
/// `io_timeout`): writes its number (for `mcpool_option_name`, `mcpool_option_is_duration`,
/// ...) to `*out_index`. A binding that converts values by option (a number of seconds for a
/// duration) asks here rather than keep its own list of names or spelling rule. `name_len`
/// is at most 65536: a longer name is `MCPOOL_CONFIG` before it is read; one within the limit
/// is read whole (checked as UTF-8) before it is looked up, so `name` must hold `name_len`
/// bytes.
///
/// Returns `MCPOOL_OK`; `MCPOOL_CONFIG` for an unknown name (the last error lists the close
/// names, as `mcpool_config_set` does; `*out_index` untouched) or a name that is not UTF-8;
/// `MCPOOL_INVALID_ARGUMENT` for a NULL `out_index`, or a NULL `name` with a length.
///
/// # Safety
/// `name` is NULL or valid for `name_len` bytes; `out_index` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn mcpool_option_find(
    name: *const c_char,
    name_len: usize,
    out_index: *mut usize,
) -> mcpool_status {
    let name = name.cast::<u8>();
    landingpad(|| {
        ptr::out(out_index, "out_index")?;
        // SAFETY: the caller promises `name_len` readable bytes at a non-NULL `name`.
        let name = unsafe { text(name, name_len, "option name", "") }?;
        let i = options::find(name).map_err(|e| option_failure(&e))?;
        // SAFETY: `out_index` was checked non-NULL; the caller promises it is writable.
        unsafe { ptr::write(out_index, i) };
        Ok(mcpool_status::MCPOOL_OK)
    })
}

/// True when `name` (`name_len` bytes; bytes that are not UTF-8 read as replaced) names or
/// nearly names an option that secures the traffic, as the core decides it
/// (`options::means_security`): any name beginning with `tls`, `ssl` or `sasl` or having
/// one of them as a word (case ignored, `-` read as `_`: `tls_cafile`, `SSL-CA`,
/// `use_tls`), pylibmc's `username` and `password`, `passwd`, another client's name of such
/// an option (`ca_file`, `ssl_certfile`), and a name that is no option within two letters
/// of such an option's (`tsl_ca_file`). A binding that only warns of an unknown name (Perl, as
/// Cache::Memcached::Fast) refuses such a one instead: warned about, the client would talk
/// plain text. False for a NULL `name` or one over 65536 bytes.
///
/// # Safety
/// `name` is NULL or valid for `name_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn mcpool_option_means_security(
    name: *const c_char,
    name_len: usize,
) -> bool {
    let name = name.cast::<u8>();
    let mut answer = false;
    landingpad(|| {
        // SAFETY: the caller promises `name_len` readable bytes at a non-NULL `name`; NULL
        // and lengths over the limit are refused before anything is read.
        let bytes = unsafe {
            ptr::bytes(
                name,
                name_len,
                MAX_OPTION_LEN,
                "",
                mcpool_status::MCPOOL_CONFIG,
            )
        };
        answer = bytes.is_ok_and(|b| options::means_security(&String::from_utf8_lossy(b)));
        Ok(mcpool_status::MCPOOL_OK)
    });
    answer
}

/// True when option `i` takes a duration (`250ms`, `1.5s`, or a bare number of
/// milliseconds), e.g. `io_timeout`; false for every other type and past the end. A binding
/// whose language writes durations in seconds converts a number for these options only.
#[no_mangle]
pub extern "C" fn mcpool_option_is_duration(i: usize) -> bool {
    OPTIONS.get(i).is_some_and(|o| o.kind.is_duration())
}

/// True when option `i` holds a secret (`sasl_password`): a binding never shows its value,
/// in an error or a printed configuration, only its length (`<redacted, N bytes>`, as the
/// core's messages do); false for every other option and past the end.
#[no_mangle]
pub extern "C" fn mcpool_option_is_secret(i: usize) -> bool {
    OPTIONS.get(i).is_some_and(|o| options::is_secret(o.name))
}

/// True when option `i` takes any bytes as its value, not only UTF-8 text (`key_prefix`: a
/// namespace is bytes as a key is, checked by the protocol's key rule when the client is
/// built): a binding passes such a value to `mcpool_config_set` as given; false for every
/// other option and past the end.
#[no_mangle]
pub extern "C" fn mcpool_option_takes_bytes(i: usize) -> bool {
    OPTIONS.get(i).is_some_and(|o| o.takes_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{mcpool_config_free, mcpool_config_new};
    use std::ffi::CStr;

    /// Names are found by the core's one rule, whatever their case or `-`/`_`, and a
    /// duration is told from a number that is not one.
    #[test]
    fn find_by_any_spelling_and_is_duration() {
        let find = |n: &str| {
            let mut i = usize::MAX;
            // SAFETY: `n` is valid for its length; `i` is a valid out pointer.
            let st = unsafe { mcpool_option_find(n.as_ptr().cast(), n.len(), &mut i) };
            (st, i)
        };
        let (st, io) = find("io_timeout");
        assert_eq!(st, mcpool_status::MCPOOL_OK);
        for n in ["io-timeout", "IO_TIMEOUT", "Io-Timeout", " io_timeout "] {
            assert_eq!(find(n), (mcpool_status::MCPOOL_OK, io), "{n}");
        }
        assert!(mcpool_option_is_duration(io));
        let (_, max_size) = find("Max-Size");
        assert_eq!(OPTIONS[max_size].name, "max_size");
        assert!(!mcpool_option_is_duration(max_size));
        assert!(!mcpool_option_is_duration(OPTIONS.len()));
        // the secret: the password only
        let (_, password) = find("SASL-Password");
        assert!(mcpool_option_is_secret(password));
        let secrets = (0..OPTIONS.len())
            .filter(|&i| mcpool_option_is_secret(i))
            .count();
        assert_eq!(secrets, 1);
        assert!(!mcpool_option_is_secret(OPTIONS.len()));
        assert_eq!(find("io_timout").0, mcpool_status::MCPOOL_CONFIG);
        assert!(crate::last_error::current().contains("io_timeout"));
        // SAFETY: a NULL out pointer is refused before anything is written.
        let st = unsafe { mcpool_option_find(b"x".as_ptr().cast(), 1, std::ptr::null_mut()) };
        assert_eq!(st, mcpool_status::MCPOOL_INVALID_ARGUMENT);
    }

    /// Issue 17's proof: every option of the core's table, found only through
    /// `mcpool_option_count`/`mcpool_option_name`, is set by name to its default's text form,
    /// and a bad value for each is `MCPOOL_CONFIG` naming it. An option added to the table
    /// passes this (and the C test) without a line of ABI or binding code.
    #[test]
    fn every_option_by_name_through_the_abi() {
        let n = mcpool_option_count();
        assert_eq!(n, OPTIONS.len());
        assert!(mcpool_option_name(n).is_null() && mcpool_option_doc(n).is_null());
        for i in 0..n {
            // SAFETY: non-NULL results are static NUL-terminated strings.
            let (name, default, doc) = unsafe {
                (
                    CStr::from_ptr(mcpool_option_name(i)).to_str().unwrap(),
                    CStr::from_ptr(mcpool_option_default(i)).to_str().unwrap(),
                    CStr::from_ptr(mcpool_option_doc(i)).to_str().unwrap(),
                )
            };
            assert!(doc.contains("default"), "{name}: {doc}");
            let mut cfg = std::ptr::null_mut();
            // SAFETY: `cfg` is a valid out pointer; the configuration is freed below.
            unsafe {
                assert_eq!(mcpool_config_new(&mut cfg), mcpool_status::MCPOOL_OK);
                let set = |v: &[u8]| {
                    mcpool_config_set(
                        cfg,
                        name.as_ptr().cast(),
                        name.len(),
                        v.as_ptr().cast(),
                        v.len(),
                    )
                };
                assert_eq!(
                    set(default.as_bytes()),
                    mcpool_status::MCPOOL_OK,
                    "{name}={default:?}"
                );
                // A NUL byte: no option takes it (a SASL credential takes any other byte)
                // but the key prefix, bytes as a key is (its protocol's rule at build).
                let bad: &[u8] = if name == "key_prefix" {
                    assert_eq!(set(b"\x00bad"), mcpool_status::MCPOOL_OK);
                    b"\x00bad "
                } else {
                    b"\x00bad"
                };
                assert_eq!(set(bad), mcpool_status::MCPOOL_CONFIG, "{name}");
                let msg = crate::last_error::current();
                assert!(msg.contains(&format!("option {name}")), "{msg}");
                mcpool_config_free(cfg);
            }
        }
    }
}
