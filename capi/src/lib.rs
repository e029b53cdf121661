//! The C ABI: `libmcpool.so` / `libmcpool.a` and `include/mcpool.h`.
//!
//! Conventions (after rustls-ffi, see `docs/c-abi.md`):
//!
//! - opaque handles (`mcpool_config`, `mcpool_client`, `mcpool_item`, `mcpool_multi`,
//!   `mcpool_server_results`), each created by one function and freed by its `_free`;
//! - names are `mcpool_<object>_<verb>`; the object comes first, outputs last;
//! - every entry point that can fail returns an `mcpool_status`; outputs are written only
//!   when it is `MCPOOL_OK` (or, for results that carry data, the documented success status);
//! - keys and values are `(const uint8_t *, size_t)` pairs: binary-safe, never NUL-terminated;
//! - every pointer is checked for NULL (`MCPOOL_INVALID_ARGUMENT`), and every length against
//!   its limit before its bytes are read or anything sized by it is allocated; that a pointer
//!   is valid for a length within the limit is the caller's promise (no ABI can check it), and
//!   such a length may be read whole;
//! - no panic crosses the boundary (`landing::landingpad`); the detail of the last error
//!   is kept per thread (`last_error`).
//!
//! `unsafe` is confined to this crate, and every block says why it is sound.
#![deny(clippy::undocumented_unsafe_blocks)]
#![deny(unsafe_op_in_unsafe_fn)]
#![allow(non_camel_case_types)]

// Declared in the order of the header's sections.
pub mod batch;
pub mod client;
pub mod commands;
pub mod config;
pub mod expiry;
mod keys;
pub mod kinds;
pub mod landing;
pub mod last_error;
pub mod observe;
pub mod options;
mod ptr;
pub mod status;
pub mod topology;
pub mod values;

#[cfg(test)]
mod alloc_test;
#[cfg(test)]
mod docs_test;

pub use client::mcpool_client;
pub use config::mcpool_config;
pub use kinds::{mcpool_kind, mcpool_store_op};
pub use observe::{mcpool_event, mcpool_metrics};
pub use status::mcpool_status;
pub use values::{mcpool_item, mcpool_multi, mcpool_server_results};
