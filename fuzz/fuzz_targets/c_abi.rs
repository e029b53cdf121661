#![no_main]
//! The C ABI's entry points on arbitrary bytes: configuration strings of any content and
//! length, keys of any content and length, NULL pointers, unknown status codes. Never a
//! panic or crash; every failure is a status. Traffic goes only to 127.0.0.1:1 (refused), so
//! a key that passes validation costs one refused connect before the server is marked dead.
use libfuzzer_sys::fuzz_target;

// The C ABI crate (capi/) builds only a cdylib and a staticlib, so its sources are compiled
// into this target as a module: the very functions libmcpool exports.
#[allow(dead_code, unused_imports)]
#[path = "../../capi/src/lib.rs"]
mod capi;

use capi::client::*;
use capi::commands::*;
use capi::config::*;
use capi::last_error::*;
use capi::options::*;
use capi::status::*;
use capi::{mcpool_client, mcpool_config, mcpool_item, mcpool_status};
use std::ptr::{null, null_mut};
use std::sync::OnceLock;

struct Shared(*mut mcpool_client);
// SAFETY: the client handle is documented as safe to share between threads.
unsafe impl Send for Shared {}
// SAFETY: as above.
unsafe impl Sync for Shared {}

fn client() -> *mut mcpool_client {
    static CLIENT: OnceLock<Shared> = OnceLock::new();
    CLIENT
        .get_or_init(|| {
            let mut cfg: *mut mcpool_config = null_mut();
            // SAFETY: valid out-pointers and a live config throughout.
            unsafe {
                assert_eq!(mcpool_config_new(&mut cfg), mcpool_status::MCPOOL_OK);
                let addr = b"127.0.0.1:1";
                mcpool_config_add_server(cfg, addr.as_ptr().cast(), addr.len(), 1);
                mcpool_config_set_min_idle(cfg, 0);
                mcpool_config_set_failure_limit(cfg, 1);
                mcpool_config_set_retry_timeout_ms(cfg, 3_600_000);
                let mut c: *mut mcpool_client = null_mut();
                assert_eq!(mcpool_client_new(cfg, &mut c), mcpool_status::MCPOOL_OK);
                mcpool_config_free(cfg);
                Shared(c)
            }
        })
        .0
}

fuzz_target!(|data: &[u8]| {
    let mut parts = data.split(|&b| b == 0xfe);
    let mut next = || parts.next().unwrap_or(&[]);
    let (server, dist, failover, protocol, prefix, key) =
        (next(), next(), next(), next(), next(), next());
    let code = u32::from_le_bytes([data.first().copied().unwrap_or(0), 0, 0, 0]).wrapping_mul(7);
    // SAFETY: every pointer is NULL or valid for the length passed with it; handles are
    // live until freed exactly once.
    unsafe {
        let mut cfg: *mut mcpool_config = null_mut();
        assert_eq!(mcpool_config_new(&mut cfg), mcpool_status::MCPOOL_OK);
        // Parsed only: this configuration never becomes a client, so no traffic.
        let weight = u32::from(data.len() as u8 % 3);
        let _ = mcpool_config_add_server(cfg, server.as_ptr().cast(), server.len(), weight);
        let _ = mcpool_config_add_server(cfg, null(), server.len(), 1);
        let _ = mcpool_config_set_distribution(cfg, dist.as_ptr().cast(), dist.len());
        let _ = mcpool_config_set_failover(cfg, failover.as_ptr().cast(), failover.len());
        let _ = mcpool_config_set_protocol(cfg, protocol.as_ptr().cast(), protocol.len());
        let _ = mcpool_config_set_key_prefix(cfg, prefix.as_ptr(), prefix.len());
        let _ = mcpool_config_set_key_prefix(null_mut(), prefix.as_ptr(), prefix.len());
        // Options by name: any bytes as a name, and any bytes as the value of a real option.
        let _ = mcpool_config_set(
            cfg,
            dist.as_ptr().cast(),
            dist.len(),
            prefix.as_ptr().cast(),
            prefix.len(),
        );
        let option = mcpool_option_name(
            usize::from(data.first().copied().unwrap_or(0)) % mcpool_option_count(),
        );
        let name = std::ffi::CStr::from_ptr(option).to_bytes();
        let _ = mcpool_config_set(
            cfg,
            name.as_ptr().cast(),
            name.len(),
            failover.as_ptr().cast(),
            failover.len(),
        );
        let _ = mcpool_config_set(cfg, name.as_ptr().cast(), name.len(), null(), failover.len());
        mcpool_config_free(cfg);

        let c = client();
        let mut index = 0usize;
        let _ = mcpool_client_server_for(c, key.as_ptr(), key.len(), &mut index);
        let _ = mcpool_client_server_for(c, null(), key.len(), &mut index);
        let _ = mcpool_client_server_for(null(), key.as_ptr(), key.len(), &mut index);
        let mut item: *mut mcpool_item = null_mut();
        let st = mcpool_client_get(c, key.as_ptr(), key.len(), &mut item);
        assert_ne!(
            st,
            mcpool_status::MCPOOL_OK,
            "nothing can be found at 127.0.0.1:1"
        );
        assert!(item.is_null(), "no output on failure");
        let _ = mcpool_client_get(c, key.as_ptr(), usize::MAX, null_mut());
        let _ = mcpool_client_set(
            c,
            key.as_ptr(),
            key.len(),
            prefix.as_ptr(),
            prefix.len(),
            0,
            0,
        );
        let _ = mcpool_status_name(code);
        let _ = mcpool_status_class(code);
        let _ = mcpool_last_error_length();
        let _ = mcpool_last_error_message();
    }
});
