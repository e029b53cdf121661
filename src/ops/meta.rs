//! Exchanges in the meta protocol. Every request carries an opaque token (`O<n>`), a tag
//! unique on its connection (`Conn::take_tags`), and every reply's token is checked, so a
//! reply that does not belong to its request (a stray duplicate, a late reply) is a
//! protocol error (and the connection is dropped), never a value handed to a caller.
//! Batches end with a non-quiet request instead of `mn`, whose reply `MN` carries no tag.

use super::text::unexpected;
use super::{tag_index, HitSink, Keys};
use crate::conn::Conn;
use crate::error::{Error, Result};
use crate::item::StoreOutcome;
use crate::proto::ascii::StoreCommand;
use crate::proto::meta::{self, Command, Flag, Flags, Reply};
use crate::proto::MetaCodec;

fn protocol(server: &str, detail: String) -> Error {
    Error::Protocol {
        server: server.to_owned(),
        detail,
    }
}

/// Checks that a reply carries opaque `want`.
fn check_opaque(server: &str, flags: Flags<'_>, want: u32) -> Result<()> {
    match flags.num(b'O') {
        Ok(Some(o)) if o == u64::from(want) => Ok(()),
        other => Err(protocol(
            server,
            format!("reply carries opaque {other:?}, expected O{want}: a crossed reply"),
        )),
    }
}

/// Reads a reply that is not a meta reply as an error (errors, or anything unexpected).
fn other(server: &str, r: Reply<'_>, asked: &str) -> Error {
    match r {
        Reply::Text(t) => unexpected(server, t, asked),
        r => protocol(server, format!("unexpected reply to {asked}: {r:?}")),
    }
}

/// One `mg` per key, tagged `tag + i`: all quiet but the last, whose reply (hit or miss,
/// carrying the batch's last tag) closes the batch.
pub(crate) fn encode_retrieval<K: Keys + ?Sized>(
    buf: &mut Vec<u8>,
    cas: bool,
    touch: Option<u32>,
    keys: &K,
    tag: u32,
) {
    let n = keys.count();
    for i in 0..n {
        let opaque = tag.wrapping_add(i as u32);
        meta::encode_get(buf, keys.key(i), opaque.into(), cas, touch, i + 1 < n);
    }
}

/// Reads the replies to `encode_retrieval`: hits matched to their key by opaque, in order,
/// up to the reply to the last key.
pub(crate) fn recv_retrieval<K: Keys + ?Sized>(
    conn: &mut Conn,
    cas: bool,
    keys: &K,
    tag: u32,
    sink: &mut HitSink<'_>,
) -> Result<()> {
    let n = keys.count();
    if n == 0 {
        return Ok(()); // nothing was sent
    }
    let mut next = 0usize;
    loop {
        let done = conn.read::<MetaCodec, _>(|r, server| {
            let (f, data) = match r {
                Reply::Value { flags, data } => (flags, Some(data)),
                Reply::Miss(flags) => (flags, None),
                r => return Err(other(server, r, "mg")),
            };
            let f = f.value_flags().map_err(|_| bad(server, "f, c or O"))?;
            let idx = match tag_index(f.opaque, tag, n) {
                Some(i) if i >= next => i,
                _ => {
                    return Err(protocol(
                        server,
                        format!(
                            "reply with opaque {:?}, which no pending request carries \
                             (O{tag} to O{}): a stray or crossed reply",
                            f.opaque,
                            u64::from(tag) + n as u64 - 1
                        ),
                    ))
                }
            };
            if let Some(data) = data {
                let c = if cas {
                    Some(f.cas.ok_or_else(|| bad(server, "c"))?)
                } else {
                    None
                };
                sink(idx, data, f.flags.unwrap_or(0) as u32, c);
            }
            next = idx + 1;
            Ok(next == n)
        })?;
        if done {
            return Ok(());
        }
    }
}

/// One `mg` carrying opaque `opaque` (a tag): a request of a pipeline of single reads
/// (callers' reads a permit holder serves together), each answered in order.
pub(crate) fn encode_get_one(buf: &mut Vec<u8>, key: &[u8], cas: bool, opaque: u32) {
    meta::encode_get(buf, key, opaque.into(), cas, None, false);
}

/// Reads the reply to `encode_get_one`: a hit goes to `sink`; a reply that does not carry
/// `opaque` is a crossed reply.
pub(crate) fn recv_get_one(
    conn: &mut Conn,
    cas: bool,
    opaque: u32,
    sink: &mut HitSink<'_>,
) -> Result<()> {
    conn.read::<MetaCodec, _>(|r, server| match r {
        Reply::Miss(flags) => check_opaque(server, flags, opaque),
        Reply::Value { flags, data } => {
            let f = flags.value_flags().map_err(|_| bad(server, "f, c or O"))?;
            if f.opaque != Some(u64::from(opaque)) {
                return Err(protocol(
                    server,
                    format!(
                        "value with opaque {:?}, expected O{opaque}: a crossed reply",
                        f.opaque
                    ),
                ));
            }
            let c = if cas {
                Some(f.cas.ok_or_else(|| bad(server, "c"))?)
            } else {
                None
            };
            sink(0, data, f.flags.unwrap_or(0) as u32, c);
            Ok(())
        }
        r => Err(other(server, r, "mg")),
    })
}

fn bad(server: &str, flag: &str) -> Error {
    protocol(
        server,
        format!("missing or malformed {flag} flag in an mg reply"),
    )
}

/// `ms` with the mode for `cmd`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn encode_store(
    buf: &mut Vec<u8>,
    cmd: StoreCommand,
    key: &[u8],
    flags: u32,
    ttl: u32,
    data: &[u8],
    opaque: u32,
    quiet: bool,
) {
    let mode: &[u8] = match cmd {
        StoreCommand::Set | StoreCommand::Cas(_) => b"S",
        StoreCommand::Add => b"E",
        StoreCommand::Replace => b"R",
        StoreCommand::Append => b"A",
        StoreCommand::Prepend => b"P",
    };
    let mut f = [
        Flag::Num(b'F', flags.into()),
        Flag::Num(b'T', ttl.into()),
        Flag::Tok(b'M', mode),
        Flag::Num(b'O', opaque.into()),
        Flag::Bare(b'q'),
        Flag::Bare(b'q'),
    ];
    let mut n = 4;
    if let StoreCommand::Cas(c) = cmd {
        f[n] = Flag::Num(b'C', c);
        n += 1;
    }
    if quiet {
        f[n] = Flag::Bare(b'q');
        n += 1;
    }
    meta::encode(buf, Command::Set, key, Some(data), &f[..n]);
}

fn store_outcome(server: &str, r: Reply<'_>, opaque: u32) -> Result<StoreOutcome> {
    let outcome = match r {
        Reply::Header(_) => StoreOutcome::Stored,
        Reply::NotStored(_) => StoreOutcome::NotStored,
        Reply::Exists(_) => StoreOutcome::Exists,
        Reply::NotFound(_) => StoreOutcome::NotFound,
        r => return Err(other(server, r, "ms")),
    };
    check_opaque(server, r.flags(), opaque)?;
    Ok(outcome)
}

/// Reads the reply to one `ms`.
pub(crate) fn recv_store(conn: &mut Conn, _cmd: StoreCommand, opaque: u32) -> Result<StoreOutcome> {
    conn.read::<MetaCodec, _>(|r, server| store_outcome(server, r, opaque))
}

/// `md`.
pub(crate) fn encode_delete(buf: &mut Vec<u8>, key: &[u8], opaque: u32, quiet: bool) {
    let mut f = vec![Flag::Num(b'O', opaque.into())];
    if quiet {
        f.push(Flag::Bare(b'q'));
    }
    meta::encode(buf, Command::Delete, key, None, &f);
}

fn delete_outcome(server: &str, r: Reply<'_>, opaque: u32) -> Result<bool> {
    let found = match r {
        Reply::Header(_) => true,
        Reply::NotFound(_) => false,
        r => return Err(other(server, r, "md")),
    };
    check_opaque(server, r.flags(), opaque)?;
    Ok(found)
}

/// Reads the reply to one `md`.
pub(crate) fn recv_delete(conn: &mut Conn, opaque: u32) -> Result<bool> {
    conn.read::<MetaCodec, _>(|r, server| delete_outcome(server, r, opaque))
}

/// `md <key> I T<ttl>`: mark stale (readers see the old value flagged stale and one of them
/// wins the right to recompute) instead of removing.
pub(crate) fn encode_invalidate(buf: &mut Vec<u8>, key: &[u8], stale_ttl: u32, opaque: u32) {
    let f = [
        Flag::Bare(b'I'),
        Flag::Num(b'T', stale_ttl.into()),
        Flag::Num(b'O', opaque.into()),
    ];
    meta::encode(buf, Command::Delete, key, None, &f);
}

/// `mg <key> T<ttl>` without a value: a touch.
pub(crate) fn encode_touch(buf: &mut Vec<u8>, key: &[u8], ttl: u32, opaque: u32) {
    let f = [Flag::Num(b'T', ttl.into()), Flag::Num(b'O', opaque.into())];
    meta::encode(buf, Command::Get, key, None, &f);
}

/// Reads the reply to a touch.
pub(crate) fn recv_touch(conn: &mut Conn, opaque: u32) -> Result<bool> {
    conn.read::<MetaCodec, _>(|r, server| {
        let found = match r {
            Reply::Header(_) => true,
            Reply::Miss(_) => false,
            r => return Err(other(server, r, "mg (touch)")),
        };
        check_opaque(server, r.flags(), opaque)?;
        Ok(found)
    })
}

/// `ma`, creating the counter with `initial` (and `ttl`) when `init` is given.
pub(crate) fn encode_arith(
    buf: &mut Vec<u8>,
    incr: bool,
    key: &[u8],
    delta: u64,
    init: Option<(u64, u32)>,
    opaque: u32,
) {
    let mut f = vec![
        Flag::Tok(b'M', if incr { b"I" } else { b"D" }),
        Flag::Num(b'D', delta),
        Flag::Bare(b'v'),
        Flag::Num(b'O', opaque.into()),
    ];
    if let Some((initial, ttl)) = init {
        f.push(Flag::Num(b'N', ttl.into()));
        f.push(Flag::Num(b'J', initial));
    }
    meta::encode(buf, Command::Arith, key, None, &f);
}

/// Reads the reply to `ma`: the new value, or `None` if missing.
pub(crate) fn recv_arith(conn: &mut Conn, opaque: u32) -> Result<Option<u64>> {
    conn.read::<MetaCodec, _>(|r, server| match r {
        Reply::Value { flags, data } => {
            check_opaque(server, flags, opaque)?;
            std::str::from_utf8(data)
                .ok()
                .and_then(|s| s.trim().parse().ok())
                .map(Some)
                .ok_or_else(|| protocol(server, format!("ma returned {data:?}, not a number")))
        }
        Reply::NotFound(flags) => {
            check_opaque(server, flags, opaque)?;
            Ok(None)
        }
        r => Err(other(server, r, "ma")),
    })
}

/// Reads the replies of a pipeline of `n` requests tagged `tag..tag + n`, all quiet but the
/// last, up to the reply to the last. Only failures answer a quiet request; one without a
/// reply succeeded (`ok`).
pub(crate) fn recv_quiet_batch<T>(
    conn: &mut Conn,
    tag: u32,
    n: usize,
    ok: impl Fn() -> T,
    outcome: impl Fn(&str, Reply<'_>, u32) -> Result<T>,
    out: &mut dyn FnMut(usize, Result<T>),
) -> Result<()> {
    super::collect_quiet(
        conn,
        tag,
        n,
        true,
        ok,
        |conn| {
            conn.read::<MetaCodec, _>(|r, server| match r {
                Reply::Text(t) => Err(unexpected(server, t, "a pipelined request")),
                Reply::NoOp => Err(protocol(
                    server,
                    "MN, which no request asked for: a stray reply".into(),
                )),
                r => {
                    let o = r.flags().num(b'O').ok().flatten();
                    let opaque = o.and_then(|o| u32::try_from(o).ok()).unwrap_or(u32::MAX);
                    Ok(Some((o, outcome(server, r, opaque))))
                }
            })
        },
        out,
    )
}

/// Store outcomes of an `ms` pipeline (see `recv_quiet_batch`).
pub(crate) fn recv_store_batch(
    conn: &mut Conn,
    tag: u32,
    n: usize,
    out: &mut dyn FnMut(usize, Result<StoreOutcome>),
) -> Result<()> {
    recv_quiet_batch(conn, tag, n, || StoreOutcome::Stored, store_outcome, out)
}

/// Delete outcomes of an `md` pipeline.
pub(crate) fn recv_delete_batch(
    conn: &mut Conn,
    tag: u32,
    n: usize,
    out: &mut dyn FnMut(usize, Result<bool>),
) -> Result<()> {
    recv_quiet_batch(conn, tag, n, || true, delete_outcome, out)
}

/// What a lease read found.
pub(crate) struct LeaseReply {
    pub value: Option<(Vec<u8>, u32, u64)>,
    pub win: bool,
    pub stale: bool,
    pub other_winner: bool,
}

/// `mg <key> v f c N<vivify> [R<recache>] O<tag>`: a read that elects one recomputer.
pub(crate) fn encode_lease(
    buf: &mut Vec<u8>,
    key: &[u8],
    vivify_ttl: u32,
    recache: Option<u32>,
    tag: u32,
) {
    let mut f = vec![
        Flag::Bare(b'v'),
        Flag::Bare(b'f'),
        Flag::Bare(b'c'),
        Flag::Num(b'N', vivify_ttl.into()),
        Flag::Num(b'O', tag.into()),
    ];
    if let Some(r) = recache {
        f.push(Flag::Num(b'R', r.into()));
    }
    meta::encode(buf, Command::Get, key, None, &f);
}

/// Reads the reply to `encode_lease`.
pub(crate) fn recv_lease(conn: &mut Conn, tag: u32) -> Result<LeaseReply> {
    conn.read::<MetaCodec, _>(|r, server| match r {
        Reply::Value { flags, data } => {
            check_opaque(server, flags, tag)?;
            let f = flags.num(b'f').map_err(|_| bad(server, "f"))?.unwrap_or(0) as u32;
            let c = flags.num(b'c').map_err(|_| bad(server, "c"))?.unwrap_or(0);
            let win = flags.has(b'W');
            let stale = flags.has(b'X');
            let other_winner = flags.has(b'Z');
            // A vivified placeholder (miss) is an empty value flagged W or Z, never stale.
            let placeholder = data.is_empty() && (win || other_winner) && !stale;
            Ok(LeaseReply {
                value: (!placeholder).then(|| (data.to_vec(), f, c)),
                win,
                stale,
                other_winner,
            })
        }
        Reply::Miss(flags) => {
            check_opaque(server, flags, tag)?;
            Ok(LeaseReply {
                value: None,
                win: true,
                stale: false,
                other_winner: false,
            })
        }
        r => Err(other(server, r, "mg (lease)")),
    })
}
