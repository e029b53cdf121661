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

/// The index, in a batch of `n` requests tagged `tag..tag + n`, of the request a reply
/// carrying opaque `opaque` answers; `None` when no request of the batch carries it.
pub(crate) fn tag_index(opaque: Option<u64>, tag: u32, n: usize) -> Option<usize> {
    let i = opaque?.checked_sub(u64::from(tag))?;
    (i < n as u64).then_some(i as usize)
}

/// How many tags (see `Conn::take_tags`) a batch of `n` requests takes: one each, and one
/// for the barrier that closes it (binary NOOP).
pub(crate) fn batch_tags(n: usize) -> usize {
    n + 1
}

/// Collects the outcomes of a quiet pipeline of `n` requests tagged `tag..tag + n`, answered
/// in order, only when something other than success happened. `next_reply` reads one reply
/// and gives `None` at the closing barrier, or `Some((opaque, outcome))`; requests without a
/// reply succeeded (`ok()`). With `closed_by_last`, the last request was sent non-quiet and
/// its reply closes the batch (meta, whose barrier `mn` carries no tag). An opaque that no
/// pending request carries, or one out of order, is a protocol error: a reply that does not
/// belong to its request is never handed to a caller.
pub(crate) fn collect_quiet<T>(
    conn: &mut Conn,
    tag: u32,
    n: usize,
    closed_by_last: bool,
    ok: impl Fn() -> T,
    mut next_reply: impl FnMut(&mut Conn) -> Result<Option<(Option<u64>, Result<T>)>>,
    out: &mut dyn FnMut(usize, Result<T>),
) -> Result<()> {
    if closed_by_last && n == 0 {
        return Ok(()); // nothing was sent
    }
    let mut next = 0usize;
    while let Some((opaque, outcome)) = next_reply(conn)? {
        let idx = match tag_index(opaque, tag, n) {
            Some(i) if i >= next => i,
            _ => {
                return Err(conn.protocol_error(&format!(
                    "reply with opaque {opaque:?}, which no pending request carries \
                     (O{tag} to O{}): a stray or crossed reply",
                    u64::from(tag) + n as u64 - 1
                )))
            }
        };
        for j in next..idx {
            out(j, Ok(ok()));
        }
        out(idx, outcome);
        next = idx + 1;
        if closed_by_last && next == n {
            return Ok(());
        }
    }
    if closed_by_last {
        return Err(conn.protocol_error("a batch closed before the reply to its last request"));
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

/// Retrieval requests for `keys` (pipelined, one round trip), tagged from `tag` on: they
/// take `batch_tags(keys.count())` tags.
pub(crate) fn encode_retrieval<K: Keys + ?Sized>(
    p: Protocol,
    buf: &mut Vec<u8>,
    cas: bool,
    touch: Option<u32>,
    keys: &K,
    tag: u32,
) {
    match p {
        Protocol::Text => text::encode_retrieval(buf, cas, touch, keys),
        Protocol::Meta => meta::encode_retrieval(buf, cas, touch, keys, tag),
        Protocol::Binary => binary::encode_retrieval(buf, cas, touch, keys, tag),
    }
}

/// Reads the replies to `encode_retrieval` (same `touch`, `keys` and `tag`), handing each
/// hit to `sink`.
pub(crate) fn recv_retrieval<K: Keys + ?Sized>(
    p: Protocol,
    conn: &mut Conn,
    cas: bool,
    touch: bool,
    keys: &K,
    tag: u32,
    sink: &mut HitSink<'_>,
) -> Result<()> {
    match p {
        Protocol::Text => text::recv_retrieval(conn, cas, keys, sink),
        Protocol::Meta => meta::recv_retrieval(conn, cas, keys, tag, sink),
        Protocol::Binary => binary::recv_retrieval(conn, cas, touch, keys, tag, sink),
    }
}

/// One single-key read of a pipeline of such reads, tagged with `tag` where the protocol
/// carries one (meta, binary); text replies name their key, which is checked instead.
pub(crate) fn encode_get_one(p: Protocol, buf: &mut Vec<u8>, cas: bool, key: &[u8], tag: u32) {
    match p {
        Protocol::Text => text::encode_retrieval(buf, cas, None, &[key][..]),
        Protocol::Meta => meta::encode_get_one(buf, key, cas, tag),
        Protocol::Binary => binary::encode_get_one(buf, key, tag),
    }
}

/// Reads the reply to `encode_get_one`, handing a hit to `sink` (index 0).
pub(crate) fn recv_get_one(
    p: Protocol,
    conn: &mut Conn,
    cas: bool,
    key: &[u8],
    tag: u32,
    sink: &mut HitSink<'_>,
) -> Result<()> {
    match p {
        Protocol::Text => text::recv_retrieval(conn, cas, &[key][..], sink),
        Protocol::Meta => meta::recv_get_one(conn, cas, tag, sink),
        Protocol::Binary => binary::recv_get_one(conn, cas, tag, sink),
    }
}

/// One store command tagged `tag`; `quiet` asks for no reply on success (text: `noreply`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn encode_store(
    p: Protocol,
    buf: &mut Vec<u8>,
    cmd: StoreCommand,
    key: &[u8],
    flags: u32,
    ttl: u32,
    data: &[u8],
    tag: u32,
    quiet: bool,
) {
    match p {
        Protocol::Text => text::encode_store(buf, cmd, key, flags, ttl, data, tag, quiet),
        Protocol::Meta => meta::encode_store(buf, cmd, key, flags, ttl, data, tag, quiet),
        Protocol::Binary => binary::encode_store(buf, cmd, key, flags, ttl, data, tag, quiet),
    }
}

/// Reads the reply to one (non-quiet) store command tagged `tag`.
pub(crate) fn recv_store(
    p: Protocol,
    conn: &mut Conn,
    cmd: StoreCommand,
    tag: u32,
) -> Result<StoreOutcome> {
    match p {
        Protocol::Text => text::recv_store(conn, cmd, tag),
        Protocol::Meta => meta::recv_store(conn, cmd, tag),
        Protocol::Binary => binary::recv_store(conn, cmd, tag),
    }
}

/// One delete tagged `tag`.
pub(crate) fn encode_delete(p: Protocol, buf: &mut Vec<u8>, key: &[u8], tag: u32, quiet: bool) {
    match p {
        Protocol::Text => text::encode_delete(buf, key, tag, quiet),
        Protocol::Meta => meta::encode_delete(buf, key, tag, quiet),
        Protocol::Binary => binary::encode_delete(buf, key, tag, quiet),
    }
}

/// Reads the reply to one delete: true if the key existed.
pub(crate) fn recv_delete(p: Protocol, conn: &mut Conn, tag: u32) -> Result<bool> {
    match p {
        Protocol::Text => text::recv_delete(conn, tag),
        Protocol::Meta => meta::recv_delete(conn, tag),
        Protocol::Binary => binary::recv_delete(conn, tag),
    }
}

/// Whether a batch of stores or deletes is sent quiet and closed by a barrier (meta, binary)
/// rather than answered one by one (text).
pub(crate) fn batches_quietly(p: Protocol) -> bool {
    p != Protocol::Text
}

/// Whether request `i` of a batch of `n` stores or deletes goes quiet: every one on binary
/// (a NOOP carrying the batch's last tag closes it), every one but the last on meta (its
/// barrier `mn` carries no tag, so the last request is sent non-quiet and its tagged reply
/// closes the batch), none on text.
pub(crate) fn quiet_in_batch(p: Protocol, i: usize, n: usize) -> bool {
    match p {
        Protocol::Text => false,
        Protocol::Meta => i + 1 < n,
        Protocol::Binary => true,
    }
}

/// The barrier that closes a batch whose last tag is `tag`: text `version`, binary a NOOP
/// tagged `tag`; nothing on meta (see `quiet_in_batch`).
pub(crate) fn encode_barrier(p: Protocol, buf: &mut Vec<u8>, tag: u32) {
    match p {
        Protocol::Text => ascii::encode_version(buf),
        Protocol::Meta => {}
        Protocol::Binary => binary::encode_barrier(buf, tag),
    }
}

/// Reads the outcomes of a batch of `n` stores tagged from `tag` on (see `quiet_in_batch`).
pub(crate) fn recv_store_batch(
    p: Protocol,
    conn: &mut Conn,
    tag: u32,
    n: usize,
    out: &mut dyn FnMut(usize, Result<StoreOutcome>),
) -> Result<()> {
    match p {
        Protocol::Text => {
            text::recv_batch(conn, n, out, |c| text::recv_store(c, StoreCommand::Set, 0))
        }
        Protocol::Meta => meta::recv_store_batch(conn, tag, n, out),
        Protocol::Binary => binary::recv_store_batch(conn, tag, n, out),
    }
}

/// Reads the outcomes of a batch of `n` deletes tagged from `tag` on.
pub(crate) fn recv_delete_batch(
    p: Protocol,
    conn: &mut Conn,
    tag: u32,
    n: usize,
    out: &mut dyn FnMut(usize, Result<bool>),
) -> Result<()> {
    match p {
        Protocol::Text => text::recv_batch(conn, n, out, |c| text::recv_delete(c, 0)),
        Protocol::Meta => meta::recv_delete_batch(conn, tag, n, out),
        Protocol::Binary => binary::recv_delete_batch(conn, tag, n, out),
    }
}

/// Reads the reply to `encode_barrier` (same `tag`).
pub(crate) fn recv_barrier(p: Protocol, conn: &mut Conn, tag: u32) -> Result<()> {
    match p {
        Protocol::Text => text::recv_version(conn).map(drop),
        Protocol::Meta => Ok(()),
        Protocol::Binary => binary::recv_delete_batch(conn, tag, 0, &mut |_, _| {}),
    }
}

/// One touch tagged `tag`.
pub(crate) fn encode_touch(p: Protocol, buf: &mut Vec<u8>, key: &[u8], ttl: u32, tag: u32) {
    match p {
        Protocol::Text => text::encode_touch(buf, key, ttl, tag),
        Protocol::Meta => meta::encode_touch(buf, key, ttl, tag),
        Protocol::Binary => binary::encode_touch(buf, key, ttl, tag),
    }
}

/// Reads the reply to a touch: true if the key existed.
pub(crate) fn recv_touch(p: Protocol, conn: &mut Conn, tag: u32) -> Result<bool> {
    match p {
        Protocol::Text => text::recv_touch(conn, tag),
        Protocol::Meta => meta::recv_touch(conn, tag),
        Protocol::Binary => binary::recv_touch(conn, tag),
    }
}

/// Whether incr/decr can create a missing counter in the same request (meta, binary).
pub(crate) fn arith_creates(p: Protocol) -> bool {
    p != Protocol::Text
}

/// One incr/decr tagged `tag`; `init` = (initial value, ttl) creates a missing counter (not
/// on text).
pub(crate) fn encode_arith(
    p: Protocol,
    buf: &mut Vec<u8>,
    incr: bool,
    key: &[u8],
    delta: u64,
    init: Option<(u64, u32)>,
    tag: u32,
) {
    match p {
        Protocol::Text => text::encode_arith(buf, incr, key, delta, tag),
        Protocol::Meta => meta::encode_arith(buf, incr, key, delta, init, tag),
        Protocol::Binary => binary::encode_arith(buf, incr, key, delta, init, tag),
    }
}

/// Reads the reply to incr/decr: the new value, or `None` if missing.
pub(crate) fn recv_arith(
    p: Protocol,
    conn: &mut Conn,
    incr: bool,
    tag: u32,
) -> Result<Option<u64>> {
    match p {
        Protocol::Text => text::recv_arith(conn, tag),
        Protocol::Meta => meta::recv_arith(conn, tag),
        Protocol::Binary => binary::recv_arith(conn, incr, tag),
    }
}

/// flush_all (text form for text and meta).
pub(crate) fn encode_flush(p: Protocol, buf: &mut Vec<u8>, delay: Option<u32>, tag: u32) {
    match p {
        Protocol::Binary => binary::encode_flush(buf, delay, tag),
        _ => ascii::encode_flush_all(buf, delay),
    }
}

/// Reads the reply to flush_all.
pub(crate) fn recv_flush(p: Protocol, conn: &mut Conn, tag: u32) -> Result<()> {
    match p {
        Protocol::Binary => binary::recv_flush(conn, tag),
        _ => text::recv_flush(conn),
    }
}

/// version.
pub(crate) fn encode_version(p: Protocol, buf: &mut Vec<u8>, tag: u32) {
    match p {
        Protocol::Binary => binary::encode_version(buf, tag),
        _ => ascii::encode_version(buf),
    }
}

/// Reads the reply to version.
pub(crate) fn recv_version(p: Protocol, conn: &mut Conn, tag: u32) -> Result<String> {
    match p {
        Protocol::Binary => binary::recv_version(conn, tag),
        _ => text::recv_version(conn),
    }
}

/// stats [group].
pub(crate) fn encode_stats(p: Protocol, buf: &mut Vec<u8>, group: Option<&str>, tag: u32) {
    match p {
        Protocol::Binary => binary::encode_stats(buf, group, tag),
        _ => ascii::encode_stats(buf, group),
    }
}

/// Reads the reply to stats.
pub(crate) fn recv_stats(p: Protocol, conn: &mut Conn, tag: u32) -> Result<Vec<(String, String)>> {
    match p {
        Protocol::Binary => binary::recv_stats(conn, tag),
        _ => text::recv_stats(conn),
    }
}

impl Conn {
    /// One `version` round trip (the alive check).
    pub(crate) fn alive_check(&mut self, p: Protocol) -> Result<String> {
        let tag = self.take_tags(1);
        encode_version(p, self.begin(), tag);
        self.send()?;
        let v = recv_version(p, self, tag)?;
        self.finish();
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::tag_index;

    #[test]
    fn a_reply_belongs_only_to_a_tag_of_its_batch() {
        assert_eq!(tag_index(Some(10), 10, 3), Some(0));
        assert_eq!(tag_index(Some(12), 10, 3), Some(2));
        assert_eq!(tag_index(Some(13), 10, 3), None, "past the batch");
        assert_eq!(tag_index(Some(9), 10, 3), None, "an earlier exchange's");
        assert_eq!(tag_index(Some(0), 10, 3), None);
        assert_eq!(tag_index(None, 0, 3), None, "no tag at all");
        assert_eq!(tag_index(Some(u64::MAX), u32::MAX, 1), None);
        assert_eq!(tag_index(Some(u64::from(u32::MAX)), u32::MAX, 1), Some(0));
    }
}
