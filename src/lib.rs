//! # mcpool
//!
//! A synchronous, pooled memcached client: one core for Rust, C, Python, Perl and Java.
//!
//! ```no_run
//! use mcpool::{Client, StoreOutcome};
//!
//! let client = Client::builder()
//!     .servers(["127.0.0.1:11211", "127.0.0.1:11212"])
//!     .key_prefix("app:")
//!     .build()?;
//! assert_eq!(client.set("user:1", b"alice", 3600)?, StoreOutcome::Stored);
//! assert_eq!(client.get("user:1")?.as_deref(), Some(&b"alice"[..]));
//! assert_eq!(client.add("user:1", b"bob", 0)?, StoreOutcome::NotStored);
//! # Ok::<(), mcpool::Error>(())
//! ```
#![deny(missing_docs)]
// `unsafe` only where a system call or C library needs it (fork detection, the idle-socket
// peek, libdeflate's inflater, the multi-get's shared buffer), each allowed where it stands and each block with its
// `// SAFETY:` line.
#![deny(unsafe_code)]
#![deny(clippy::undocumented_unsafe_blocks)]

pub mod address;
pub mod buffer_pool;
pub mod client;
pub mod config;
mod conn;
mod dialect;
pub mod error;
mod fork;
mod gate;
pub mod health;
pub mod heap_guard;
pub mod item;
pub mod key;
pub mod metrics;
mod multi_get;
mod pool;
pub mod prometheus;
pub mod proto;
mod quiet_threads;
pub mod resolve;
pub mod route;
mod server;
pub mod set_item;
mod shared_buffer;
pub mod sink;
pub mod stale;
pub mod tls;
pub mod trace;
pub mod ttl;
pub mod value;
pub mod value_bytes;
pub(crate) mod value_pool;

pub use address::{ServerAddr, ServerSpec};
pub use client::{Client, PerServer};
pub use config::{ClientBuilder, Config, MAX_ITEM_SIZE, MAX_POOL_SIZE};
pub use conn::set_interrupt_check;
pub use error::{Error, Result};
pub use health::ServerState;
pub use item::{Form, Item, ItemInfo, Lease, StoreOutcome};
pub use key::{Keys, Single};
pub use metrics::{Event, ServerMetrics, ServerReport};
pub use proto::ascii::StoreCommand;
pub use proto::Protocol;
pub use resolve::Resolver;
pub use route::{Distribution, FailoverPolicy, Router};
pub use set_item::{Compress, SetItem};
pub use sink::Sink;
pub use tls::{TlsOptions, TLS_SUPPORTED};
pub use trace::{Op, OpOutcome, OpRecord};
pub use value::{Codec, Compression, CompressionFormat, Kind, Lang, Value, ValueFormat};
pub use value_bytes::ValueBytes;

/// The README's examples, compiled as doc tests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
