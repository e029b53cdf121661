//! `mcpool_client`: the opaque, thread-safe client handle, and what it knows without I/O
//! (its servers, their health, which server a key lives on).

use super::config::mcpool_config;
use super::landing::{landingpad, landingpad_void, Failure};
use super::ptr;
use super::status::mcpool_status::{self, MCPOOL_OK};
use super::values::{out_of_range, Text};
use mcpool::client::Client;
use std::ffi::c_char;

/// A memcached client: a pool of connections per server, shared by every thread that holds
/// the pointer. Created by `mcpool_client_new`, freed by `mcpool_client_free` once no thread
/// uses it any more. Every `mcpool_client_*` function may be called on one handle from many
/// threads at once.
pub struct mcpool_client {
    pub(crate) client: Client,
    /// Every server label handed out so far (`mcpool_client_server_label`): kept until the
    /// client is freed, so a label stays valid across `mcpool_client_set_servers`.
    labels: std::sync::Mutex<Vec<Text>>,
    /// Longest value accepted from C before it is even read: the core's
    /// [`Client::max_value_input_len`] (`max_value_size` counts the bytes sent, after
    /// compression).
    pub(crate) max_input: usize,
    /// Longest key accepted from C before it is read: 250 bytes, more when `long_keys` is
    /// `hash` (the core hashes it down).
    pub(crate) max_key: usize,
}

/// Builds a client from `config` and writes it to `*out`. Does not wait for any server:
/// connections open in the background (the configured min idle) or on first use, so a down
/// server is reported by the calls that need it.
///
/// Returns `MCPOOL_CONFIG` when the configuration is unusable (no servers, min idle above
/// max size, …; the last error says which). A configuration whose last setting of an option
/// that secures the traffic (`tls`, `tls_*`, `sasl_*`, by any setter) was refused builds no
/// client: the status of that refusal (`MCPOOL_UNSUPPORTED` for TLS in a build without it,
/// `MCPOOL_CONFIG` for a bad value), the last error naming the option and why, so that a
/// refusal left unchecked cannot give a client that speaks plain text or logs in as no one.
/// So does a refused name meant for one (`mcpool_option_means_security`: `tls_cafile`,
/// `ssl_ca`, `sasl_user`, `password`, a name not UTF-8 of that family; noted as the option
/// it means, the closest by name) and a refused `libmemcached_config` string asking for TLS
/// or SASL (`--SASL=...`, `--TLS`, `--SSL-CA=...`: libmemcached's strings have no such
/// words). Setting that option again with a value that is taken (or its default) lifts it.
///
/// Ownership: `config` stays the caller's (free it whenever convenient, the client keeps a
/// copy); the caller owns `*out` and frees it with `mcpool_client_free`.
///
/// # Safety
/// `config` is NULL or a live configuration not being changed by another thread; `out` is
/// NULL or valid for a write of one pointer.
#[no_mangle]
pub unsafe extern "C" fn mcpool_client_new(
    config: *const mcpool_config,
    out: *mut *mut mcpool_client,
) -> mcpool_status {
    landingpad(|| {
        // SAFETY: the caller promises a non-NULL `config` is live.
        let cfg = unsafe { ptr::handle(config, "config") }?;
        ptr::out(out, "out")?;
        if let Some(refused) = super::config::refused_security(cfg) {
            return Err(refused);
        }
        let client = cfg.builder.clone().build().map_err(|e| Failure::of(&e))?;
        let labels = std::sync::Mutex::new(Vec::new());
        let max_input = client.max_value_input_len();
        let max_key = client.max_key_len();
        let handle = Box::new(mcpool_client {
            client,
            labels,
            max_input,
            max_key,
        });
        // SAFETY: `out` was checked non-NULL; the caller promises it is writable.
        unsafe { ptr::write(out, Box::into_raw(handle)) };
        Ok(MCPOOL_OK)
    })
}

/// Frees a client: closes its connections and stops its background threads. NULL is ignored.
///
/// Ownership: what the client handed out owns its memory and stays valid: items, multi-get
/// result sets, per-server results and metrics snapshots may be read, and are freed with
/// their own `_free`, after this as before. Only the labels of `mcpool_client_server_label`
/// are freed with the client.
///
/// # Safety
/// `client` is NULL or a client not yet freed, which no other thread is using or will use.
#[no_mangle]
pub unsafe extern "C" fn mcpool_client_free(client: *mut mcpool_client) {
    landingpad_void(|| {
        if !client.is_null() {
            // SAFETY: made by `Box::into_raw` in `mcpool_client_new`, freed once.
            drop(unsafe { Box::from_raw(client) });
        }
    })
}

/// Switches compression on (`on` true) or off for the stores made from now on, at the
/// configured threshold, codec and level (Cache::Memcached::Fast's `enable_compress`). Reads
/// are unchanged. Nothing is rebuilt: connections, server health and metrics are kept. May
/// be called from any thread while others use the client.
///
/// Returns `MCPOOL_OK`, or `MCPOOL_INVALID_ARGUMENT` for a NULL `client`.
///
/// # Safety
/// `client` is NULL or live.
#[no_mangle]
pub unsafe extern "C" fn mcpool_client_set_compression(
    client: *const mcpool_client,
    on: bool,
) -> mcpool_status {
    landingpad(|| {
        // SAFETY: the caller promises a non-NULL `client` is live.
        let c = unsafe { ptr::handle(client, "client") }?;
        c.client.set_compression(on);
        Ok(MCPOOL_OK)
    })
}

/// Writes the number of servers (the current list, see `mcpool_client_set_servers`) to
/// `*out_count`: entries of the list, an address listed twice counted twice (the reports,
/// `mcpool_client_metrics`, have one entry per address).
///
/// # Safety
/// `client` is NULL or live; `out_count` is NULL or valid for one write.
#[no_mangle]
pub unsafe extern "C" fn mcpool_client_server_count(
    client: *const mcpool_client,
    out_count: *mut usize,
) -> mcpool_status {
    landingpad(|| {
        // SAFETY: the caller promises a non-NULL `client` is live.
        let c = unsafe { ptr::handle(client, "client") }?;
        ptr::out(out_count, "count")?;
        // SAFETY: checked non-NULL; the caller promises it is writable.
        unsafe { ptr::write(out_count, c.client.server_labels().len()) };
        Ok(MCPOOL_OK)
    })
}

/// Server number `index`'s label, `host:port` (`[v6]:port`, or the socket path), as written
/// in the configuration: NUL-terminated, `*out_len` bytes without the NUL.
///
/// Ownership: points into the client; valid until `mcpool_client_free` (also after the
/// server list changed). Never free it.
///
/// # Safety
/// `client` is NULL or live; each output is NULL or valid for one write.
#[no_mangle]
pub unsafe extern "C" fn mcpool_client_server_label(
    client: *const mcpool_client,
    index: usize,
    out_label: *mut *const c_char,
    out_len: *mut usize,
) -> mcpool_status {
    landingpad(|| {
        // SAFETY: the caller promises a non-NULL `client` is live.
        let c = unsafe { ptr::handle(client, "client") }?;
        ptr::out(out_label, "label")?;
        ptr::out(out_len, "length")?;
        let current = c.client.server_labels();
        let name = current
            .get(index)
            .ok_or_else(|| out_of_range("server", index, current.len()))?;
        let mut labels = c.labels.lock().unwrap_or_else(|p| p.into_inner());
        let label = match labels.iter().find(|t| t.as_str() == name.as_str()) {
            Some(t) => t,
            None => {
                labels.push(Text::new(name));
                &labels[labels.len() - 1]
            }
        };
        // SAFETY: both outputs were checked non-NULL; the caller promises they are writable.
        // The text's bytes stay where they are (and alive) until the client is freed.
        unsafe {
            ptr::write(out_label, label.ptr());
            ptr::write(out_len, label.len());
        }
        Ok(MCPOOL_OK)
    })
}

/// Server number `index`'s health (an index into the configured list, as
/// `mcpool_client_server_for` gives), without I/O: whether calls may go to it now, its
/// consecutive failures, and while it is marked dead the milliseconds until it is retried
/// (0 otherwise). An address listed more than once is one server: every entry of it answers
/// with the merged state `mcpool_metrics_state` reports (docs/metrics.md).
///
/// # Safety
/// `client` is NULL or live; each output is NULL or valid for one write.
#[no_mangle]
pub unsafe extern "C" fn mcpool_client_server_state(
    client: *const mcpool_client,
    index: usize,
    out_alive: *mut bool,
    out_failures: *mut u32,
    out_retry_in_ms: *mut u64,
) -> mcpool_status {
    landingpad(|| {
        // SAFETY: the caller promises a non-NULL `client` is live.
        let c = unsafe { ptr::handle(client, "client") }?;
        ptr::out(out_alive, "alive")?;
        ptr::out(out_failures, "failures")?;
        ptr::out(out_retry_in_ms, "retry_in_ms")?;
        let st = c
            .client
            .server_state(index)
            .ok_or_else(|| out_of_range("server", index, c.client.server_labels().len()))?;
        let retry = st
            .retry_in
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        // SAFETY: all outputs were checked non-NULL; the caller promises they are writable.
        unsafe {
            ptr::write(out_alive, st.alive);
            ptr::write(out_failures, st.failures);
            ptr::write(out_retry_in_ms, retry);
        }
        Ok(MCPOOL_OK)
    })
}

/// Which server `key` lives on, without any I/O and regardless of health: writes its index
/// (into the configured list; see `mcpool_client_server_label`) to `*out_index`. Applies the
/// key prefix and sanitizing exactly as a command would, so it answers for the same key a
/// command would send. `MCPOOL_INVALID_KEY` for a key no command would accept.
///
/// # Safety
/// `client` is NULL or live; `key` is NULL or valid for `key_len` bytes; `out_index` is NULL
/// or valid for one write.
#[no_mangle]
pub unsafe extern "C" fn mcpool_client_server_for(
    client: *const mcpool_client,
    key: *const u8,
    key_len: usize,
    out_index: *mut usize,
) -> mcpool_status {
    landingpad(|| {
        // SAFETY: the caller promises a non-NULL `client` is live.
        let c = unsafe { ptr::handle(client, "client") }?;
        // SAFETY: the caller promises `key_len` readable bytes at a non-NULL `key`.
        let key = unsafe { ptr::key("server_for", key, key_len, c.max_key) }?;
        ptr::out(out_index, "index")?;
        let idx = c
            .client
            .server_for(key)
            .map_err(|e| Failure::from_error("server_for", Some(key), &e))?;
        // SAFETY: checked non-NULL; the caller promises it is writable.
        unsafe { ptr::write(out_index, idx) };
        Ok(MCPOOL_OK)
    })
}

/// The C interrupt check, if set (see `mcpool_interrupt_check_set`).
static INTERRUPT_CHECK: std::sync::RwLock<Option<extern "C" fn() -> bool>> =
    std::sync::RwLock::new(None);

/// Calls the C interrupt check (the core's check while one is set).
fn interrupt_check() -> bool {
    let check = *INTERRUPT_CHECK.read().unwrap_or_else(|e| e.into_inner());
    check.is_some_and(|f| f())
}

/// Sets (or, with NULL, removes) the process-wide interrupt check. When a signal interrupts
/// a socket read, write or connect (`EINTR`) of any call, in any thread, `check` is called
/// from that thread before the wait goes on (for what is left of its timeout); and while a
/// call waits where a signal does not interrupt it (in line for a pooled connection, for a
/// read another caller serves for it, for a host name's resolution), every 50 ms. When it
/// returns true the call ends with `MCPOOL_INTERRUPTED` (a multi-server call too, whole),
/// its connection closed. It is never called on the common path (a free connection, a
/// reply in time), so it must be cheap when nothing is pending. A binding uses it to run
/// its language's signal handlers (Python: in the main thread, take the GIL, run
/// `PyErr_CheckSignals`, return true when a handler raised). `check` must not call into
/// this library. It must return normally: a C++ exception or a `longjmp` out of it is
/// undefined behaviour, which may abort the process or leak memory and leave a connection
/// checked out; catch everything inside it.
#[no_mangle]
pub extern "C" fn mcpool_interrupt_check_set(check: Option<extern "C" fn() -> bool>) {
    *INTERRUPT_CHECK.write().unwrap_or_else(|e| e.into_inner()) = check;
    mcpool::set_interrupt_check(check.map(|_| interrupt_check as fn() -> bool));
}

/// The major version of this header (`MCPOOL_VERSION_MAJOR.MINOR.PATCH`, the crate's): a
/// program built against it can check it at compile time, and `mcpool_version()` at run time
/// gives the library's.
pub const MCPOOL_VERSION_MAJOR: u32 = 0;
/// The minor version of this header.
pub const MCPOOL_VERSION_MINOR: u32 = 1;
/// The patch version of this header.
pub const MCPOOL_VERSION_PATCH: u32 = 0;

/// The library's version, e.g. `"0.1.0"`: a static NUL-terminated string; never free it.
#[no_mangle]
pub extern "C" fn mcpool_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The header's version macros are the crate's version (tester finding packaging 8: the
    /// header had none), which a version bump must change with it.
    #[test]
    fn the_header_version_is_the_crates() {
        let v = format!("{MCPOOL_VERSION_MAJOR}.{MCPOOL_VERSION_MINOR}.{MCPOOL_VERSION_PATCH}");
        assert_eq!(v, env!("CARGO_PKG_VERSION"));
        // SAFETY: mcpool_version returns a static NUL-terminated string.
        let lib = unsafe { std::ffi::CStr::from_ptr(mcpool_version()) };
        assert_eq!(lib.to_str().unwrap(), v);
    }
}
