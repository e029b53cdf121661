//! Values: what a value is ([`Kind`], [`Value`]), how each value format lays it out on the
//! wire ([`ValueFormat`]), compression ([`Codec`], [`Compression`]) and the transcoder that
//! applies them to one value. docs/value-format.md has the tables.

pub mod codec;
pub mod format;
pub mod kind;
pub mod transcode;
mod whole_inflate;

pub use codec::{inflate, inflate_into, Codec, Compression, CompressionFormat, Stream};
pub use format::ValueFormat;
pub use kind::{Kind, Lang, Value};
pub use transcode::{Transcoder, ValueOptions};
