//! # mcpool
//!
//! A synchronous, pooled memcached client: one core for Rust, C, Python, Perl and Java.
#![deny(missing_docs)]

pub mod address;
pub mod error;
pub mod key;
pub mod proto;
pub mod route;
pub mod value;

pub use address::{ServerAddr, ServerSpec};
pub use error::{Error, Result};
pub use route::{Distribution, FailoverPolicy, Router};
