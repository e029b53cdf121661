//! Exchanges on one connection, per protocol. Each exchange is an encoder (appending to the
//! connection's write buffer) and a receiver (reading exactly its replies); this module picks
//! the protocol's version of each, so the client above is protocol-neutral.

pub(crate) mod binary;
pub(crate) mod meta;
pub(crate) mod text;

use crate::conn::Conn;
use crate::error::Result;
use crate::item::StoreOutcome;
use crate::proto::ascii::{self, StoreCommand};
use crate::proto::Protocol;

/// Collects the outcomes of a quiet pipeline of `n` requests (opaques `0..n`, answered in
/// order, only when something other than success happened). `next_reply` reads one reply and
/// gives `None` at the closing barrier, or `Some((opaque, outcome))`; requests without a reply
/// succeeded (`ok()`). An opaque out of range or out of order is a protocol error: a reply that
/// does not belong to its request is never handed to a caller.
pub(crate) fn collect_quiet<T>(
    conn: &mut Conn,
    n: usize,
    ok: impl Fn() -> T,
    mut next_reply: impl FnMut(&mut Conn) -> Result<Option<(u64, Result<T>)>>,
    out: &mut dyn FnMut(usize, Result<T>),
) -> Result<()> {
    let mut next = 0usize;
    while let Some((opaque, outcome)) = next_reply(conn)? {
        let idx = usize::try_from(opaque).unwrap_or(usize::MAX);
        if idx >= n || idx < next {
            return Err(conn.protocol_error(&format!(
                "reply with opaque {opaque}, which no pending request carries"
            )));
        }
        for j in next..idx {
            out(j, Ok(ok()));
        }
        out(idx, outcome);
        next = idx + 1;
    }
    for j in next..n {
        out(j, Ok(ok()));
    }
    Ok(())
}

/// Receives each hit of a retrieval: (index of the key, data, flags, CAS).
pub(crate) type HitSink<'s> = dyn FnMut(usize, &[u8], u32, Option<u64>) + 's;

/// The keys of one retrieval request, by index: a slice of keys, or a selection of a
/// caller's keys (a multi-get's keys for one server) without a vector of them.
pub(crate) trait Keys {
    /// How many keys.
    fn count(&self) -> usize;
    /// Key `i` (`i < count()`), as sent.
    fn key(&self, i: usize) -> &[u8];
}

impl Keys for [&[u8]] {
    fn count(&self) -> usize {
        self.len()
    }
    fn key(&self, i: usize) -> &[u8] {
        self[i]
    }
}

/// Retrieval requests for `keys` (pipelined, one round trip).
pub(crate) fn encode_retrieval<K: Keys + ?Sized>(
    p: Protocol,
    buf: &mut Vec<u8>,
    cas: bool,
    touch: Option<u32>,
    keys: &K,
) {
    match p {
        Protocol::Text => text::encode_retrieval(buf, cas, touch, keys),
        Protocol::Meta => meta::encode_retrieval(buf, cas, touch, keys),
        Protocol::Binary => binary::encode_retrieval(buf, cas, touch, keys),
    }
}

/// Reads the replies to `encode_retrieval`, handing each hit to `sink`.
pub(crate) fn recv_retrieval<K: Keys + ?Sized>(
    p: Protocol,
    conn: &mut Conn,
    cas: bool,
    keys: &K,
    sink: &mut HitSink<'_>,
) -> Result<()> {
    match p {
        Protocol::Text => text::recv_retrieval(conn, cas, keys, sink),
        Protocol::Meta => meta::recv_retrieval(conn, cas, keys, sink),
        Protocol::Binary => binary::recv_retrieval(conn, cas, keys, sink),
    }
}

/// One single-key read of a pipeline of such reads, tagged with `opaque` where the protocol
/// carries one (meta, binary); text replies name their key, which is checked instead.
pub(crate) fn encode_get_one(p: Protocol, buf: &mut Vec<u8>, cas: bool, key: &[u8], opaque: u32) {
    match p {
        Protocol::Text => text::encode_retrieval(buf, cas, None, &[key][..]),
        Protocol::Meta => meta::encode_get_one(buf, key, cas, opaque),
        Protocol::Binary => binary::encode_get_one(buf, key, opaque),
    }
}

/// Reads the reply to `encode_get_one`, handing a hit to `sink` (index 0).
pub(crate) fn recv_get_one(
    p: Protocol,
    conn: &mut Conn,
    cas: bool,
    key: &[u8],
    opaque: u32,
    sink: &mut HitSink<'_>,
) -> Result<()> {
    match p {
        Protocol::Text => text::recv_retrieval(conn, cas, &[key][..], sink),
        Protocol::Meta => meta::recv_get_one(conn, cas, opaque, sink),
        Protocol::Binary => binary::recv_get_one(conn, cas, opaque, sink),
    }
}

/// One store command; `quiet` asks for no reply on success (text: `noreply`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn encode_store(
    p: Protocol,
    buf: &mut Vec<u8>,
    cmd: StoreCommand,
    key: &[u8],
    flags: u32,
    ttl: u32,
    data: &[u8],
    opaque: u32,
    quiet: bool,
) {
    match p {
        Protocol::Text => text::encode_store(buf, cmd, key, flags, ttl, data, opaque, quiet),
        Protocol::Meta => meta::encode_store(buf, cmd, key, flags, ttl, data, opaque, quiet),
        Protocol::Binary => binary::encode_store(buf, cmd, key, flags, ttl, data, opaque, quiet),
    }
}

/// Reads the reply to one (non-quiet) store command.
pub(crate) fn recv_store(
    p: Protocol,
    conn: &mut Conn,
    cmd: StoreCommand,
    opaque: u32,
) -> Result<StoreOutcome> {
    match p {
        Protocol::Text => text::recv_store(conn, cmd, opaque),
        Protocol::Meta => meta::recv_store(conn, cmd, opaque),
        Protocol::Binary => binary::recv_store(conn, cmd, opaque),
    }
}

/// One delete.
pub(crate) fn encode_delete(p: Protocol, buf: &mut Vec<u8>, key: &[u8], opaque: u32, quiet: bool) {
    match p {
        Protocol::Text => text::encode_delete(buf, key, opaque, quiet),
        Protocol::Meta => meta::encode_delete(buf, key, opaque, quiet),
        Protocol::Binary => binary::encode_delete(buf, key, opaque, quiet),
    }
}

/// Reads the reply to one delete: true if the key existed.
pub(crate) fn recv_delete(p: Protocol, conn: &mut Conn, opaque: u32) -> Result<bool> {
    match p {
        Protocol::Text => text::recv_delete(conn, opaque),
        Protocol::Meta => meta::recv_delete(conn, opaque),
        Protocol::Binary => binary::recv_delete(conn, opaque),
    }
}

/// Whether a batch of stores or deletes is sent quiet and closed by a barrier (meta, binary)
/// rather than answered one by one (text).
pub(crate) fn batches_quietly(p: Protocol) -> bool {
    p != Protocol::Text
}

/// The barrier that closes a quiet batch (text: `version`, meta: `mn`, binary: NOOP).
pub(crate) fn encode_barrier(p: Protocol, buf: &mut Vec<u8>) {
    match p {
        Protocol::Text => ascii::encode_version(buf),
        Protocol::Meta => meta::encode_barrier(buf),
        Protocol::Binary => binary::encode_barrier(buf),
    }
}

/// Reads the outcomes of a batch of `n` stores (see `batches_quietly`).
pub(crate) fn recv_store_batch(
    p: Protocol,
    conn: &mut Conn,
    n: usize,
    out: &mut dyn FnMut(usize, Result<StoreOutcome>),
) -> Result<()> {
    match p {
        Protocol::Text => {
            text::recv_batch(conn, n, out, |c| text::recv_store(c, StoreCommand::Set, 0))
        }
        Protocol::Meta => meta::recv_store_batch(conn, n, out),
        Protocol::Binary => binary::recv_store_batch(conn, n, out),
    }
}

/// Reads the outcomes of a batch of `n` deletes.
pub(crate) fn recv_delete_batch(
    p: Protocol,
    conn: &mut Conn,
    n: usize,
    out: &mut dyn FnMut(usize, Result<bool>),
) -> Result<()> {
    match p {
        Protocol::Text => text::recv_batch(conn, n, out, |c| text::recv_delete(c, 0)),
        Protocol::Meta => meta::recv_delete_batch(conn, n, out),
        Protocol::Binary => binary::recv_delete_batch(conn, n, out),
    }
}

/// Reads the reply to `encode_barrier`.
pub(crate) fn recv_barrier(p: Protocol, conn: &mut Conn) -> Result<()> {
    match p {
        Protocol::Text => text::recv_version(conn).map(drop),
        Protocol::Meta => meta::recv_quiet_batch(conn, 0, || (), |_, _, _| Ok(()), &mut |_, _| {}),
        Protocol::Binary => binary::recv_delete_batch(conn, 0, &mut |_, _| {}),
    }
}

/// One touch.
pub(crate) fn encode_touch(p: Protocol, buf: &mut Vec<u8>, key: &[u8], ttl: u32) {
    match p {
        Protocol::Text => text::encode_touch(buf, key, ttl, 0),
        Protocol::Meta => meta::encode_touch(buf, key, ttl, 0),
        Protocol::Binary => binary::encode_touch(buf, key, ttl, 0),
    }
}

/// Reads the reply to a touch: true if the key existed.
pub(crate) fn recv_touch(p: Protocol, conn: &mut Conn) -> Result<bool> {
    match p {
        Protocol::Text => text::recv_touch(conn, 0),
        Protocol::Meta => meta::recv_touch(conn, 0),
        Protocol::Binary => binary::recv_touch(conn, 0),
    }
}

/// Whether incr/decr can create a missing counter in the same request (meta, binary).
pub(crate) fn arith_creates(p: Protocol) -> bool {
    p != Protocol::Text
}

/// One incr/decr; `init` = (initial value, ttl) creates a missing counter (not on text).
pub(crate) fn encode_arith(
    p: Protocol,
    buf: &mut Vec<u8>,
    incr: bool,
    key: &[u8],
    delta: u64,
    init: Option<(u64, u32)>,
) {
    match p {
        Protocol::Text => text::encode_arith(buf, incr, key, delta, 0),
        Protocol::Meta => meta::encode_arith(buf, incr, key, delta, init, 0),
        Protocol::Binary => binary::encode_arith(buf, incr, key, delta, init, 0),
    }
}

/// Reads the reply to incr/decr: the new value, or `None` if missing.
pub(crate) fn recv_arith(p: Protocol, conn: &mut Conn) -> Result<Option<u64>> {
    match p {
        Protocol::Text => text::recv_arith(conn, 0),
        Protocol::Meta => meta::recv_arith(conn, 0),
        Protocol::Binary => binary::recv_arith(conn, 0),
    }
}

/// flush_all (text form for text and meta).
pub(crate) fn encode_flush(p: Protocol, buf: &mut Vec<u8>, delay: Option<u32>) {
    match p {
        Protocol::Binary => binary::encode_flush(buf, delay),
        _ => ascii::encode_flush_all(buf, delay),
    }
}

/// Reads the reply to flush_all.
pub(crate) fn recv_flush(p: Protocol, conn: &mut Conn) -> Result<()> {
    match p {
        Protocol::Binary => binary::recv_flush(conn),
        _ => text::recv_flush(conn),
    }
}

/// version.
pub(crate) fn encode_version(p: Protocol, buf: &mut Vec<u8>) {
    match p {
        Protocol::Binary => binary::encode_version(buf),
        _ => ascii::encode_version(buf),
    }
}

/// Reads the reply to version.
pub(crate) fn recv_version(p: Protocol, conn: &mut Conn) -> Result<String> {
    match p {
        Protocol::Binary => binary::recv_version(conn),
        _ => text::recv_version(conn),
    }
}

/// stats [group].
pub(crate) fn encode_stats(p: Protocol, buf: &mut Vec<u8>, group: Option<&str>) {
    match p {
        Protocol::Binary => binary::encode_stats(buf, group),
        _ => ascii::encode_stats(buf, group),
    }
}

/// Reads the reply to stats.
pub(crate) fn recv_stats(p: Protocol, conn: &mut Conn) -> Result<Vec<(String, String)>> {
    match p {
        Protocol::Binary => binary::recv_stats(conn),
        _ => text::recv_stats(conn),
    }
}

impl Conn {
    /// One `version` round trip (the alive check).
    pub(crate) fn alive_check(&mut self, p: Protocol) -> Result<String> {
        encode_version(p, self.begin());
        self.send()?;
        let v = recv_version(p, self)?;
        self.finish();
        Ok(v)
    }
}
