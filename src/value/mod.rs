//! Values: what a value is ([`Kind`], [`Value`]), how each value format lays it out on the
//! wire ([`ValueFormat`]), compression ([`Codec`], [`Compression`]) and the transcoder that
//! applies them to one value. docs/value-format.md has the tables.

mod client;
pub mod codec;
pub mod format;
pub mod kind;
pub mod transcode;

pub use codec::{inflate, inflate_into, Codec, Compression, CompressionFormat, Stream};
pub use format::ValueFormat;
pub use kind::{Kind, Lang, Value};
pub use transcode::{Transcoder, ValueOptions};
