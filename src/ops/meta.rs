//! Exchanges in the meta protocol. Every request carries an opaque token (`O<n>`) and every
//! reply's token is checked, so a reply that does not belong to its request is a protocol
//! error (and the connection is dropped), never a value handed to a caller.

use super::text::unexpected;
use super::{HitSink, Keys};
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

/// One `mg` per key (quiet, closed by `mn`, when there are several).
pub(crate) fn encode_retrieval<K: Keys + ?Sized>(
    buf: &mut Vec<u8>,
    cas: bool,
    touch: Option<u32>,
    keys: &K,
) {
    let quiet = keys.count() > 1;
    for i in 0..keys.count() {
        meta::encode_get(buf, keys.key(i), i as u64, cas, touch, quiet);
    }
    if quiet {
        meta::encode_noop(buf);
    }
}

/// Reads the replies to `encode_retrieval`: hits matched to their key by opaque, in order.
pub(crate) fn recv_retrieval<K: Keys + ?Sized>(
    conn: &mut Conn,
    cas: bool,
    keys: &K,
    sink: &mut HitSink<'_>,
) -> Result<()> {
    let quiet = keys.count() > 1;
    let mut next = 0usize;
    loop {
        let done = conn.read::<MetaCodec, _>(|r, server| {
            let hit = match r {
                Reply::NoOp if quiet => return Ok(true),
                Reply::Value { flags, data } => Some((flags, data)),
                Reply::Miss(flags) if !quiet => {
                    check_opaque(server, flags, 0)?;
                    return Ok(true);
                }
                r => return Err(other(server, r, "mg")),
            };
            let Some((flags, data)) = hit else {
                return Ok(false);
            };
            let f = flags.value_flags().map_err(|_| bad(server, "f, c or O"))?;
            let o = f.opaque.unwrap_or(u64::MAX);
            let idx = usize::try_from(o).unwrap_or(usize::MAX);
            if idx >= keys.count() || idx < next {
                return Err(protocol(
                    server,
                    format!("value with opaque {o}, which no pending request carries"),
                ));
            }
            let c = if cas {
                Some(f.cas.ok_or_else(|| bad(server, "c"))?)
            } else {
                None
            };
            sink(idx, data, f.flags.unwrap_or(0) as u32, c);
            next = idx + 1;
            Ok(!quiet)
        })?;
        if done {
            return Ok(());
        }
    }
}

/// One `mg` carrying opaque `opaque`: a request of a pipeline of single reads (callers'
/// reads a permit holder serves together), each answered in order.
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

/// `mn`.
pub(crate) fn encode_barrier(buf: &mut Vec<u8>) {
    meta::encode_noop(buf);
}

/// Reads the replies of a quiet pipeline of `n` requests (opaques `0..n`) up to `mn`.
/// Only failures answer; a request without a reply succeeded (`ok`).
pub(crate) fn recv_quiet_batch<T>(
    conn: &mut Conn,
    n: usize,
    ok: impl Fn() -> T,
    outcome: impl Fn(&str, Reply<'_>, u32) -> Result<T>,
    out: &mut dyn FnMut(usize, Result<T>),
) -> Result<()> {
    super::collect_quiet(
        conn,
        n,
        ok,
        |conn| {
            conn.read::<MetaCodec, _>(|r, server| match r {
                Reply::NoOp => Ok(None),
                Reply::Text(t) => Err(unexpected(server, t, "a pipelined request")),
                r => {
                    let o = r.flags().num(b'O').ok().flatten().unwrap_or(u64::MAX);
                    let opaque = u32::try_from(o).unwrap_or(u32::MAX);
                    Ok(Some((o, outcome(server, r, opaque))))
                }
            })
        },
        out,
    )
}

/// Store outcomes of a quiet `ms` pipeline.
pub(crate) fn recv_store_batch(
    conn: &mut Conn,
    n: usize,
    out: &mut dyn FnMut(usize, Result<StoreOutcome>),
) -> Result<()> {
    recv_quiet_batch(conn, n, || StoreOutcome::Stored, store_outcome, out)
}

/// Delete outcomes of a quiet `md` pipeline.
pub(crate) fn recv_delete_batch(
    conn: &mut Conn,
    n: usize,
    out: &mut dyn FnMut(usize, Result<bool>),
) -> Result<()> {
    recv_quiet_batch(conn, n, || true, delete_outcome, out)
}

/// What a lease read found.
pub(crate) struct LeaseReply {
    pub value: Option<(Vec<u8>, u32, u64)>,
    pub win: bool,
    pub stale: bool,
    pub other_winner: bool,
}

/// `mg <key> v f c N<vivify> [R<recache>] O0`: a read that elects one recomputer.
pub(crate) fn encode_lease(buf: &mut Vec<u8>, key: &[u8], vivify_ttl: u32, recache: Option<u32>) {
    let mut f = vec![
        Flag::Bare(b'v'),
        Flag::Bare(b'f'),
        Flag::Bare(b'c'),
        Flag::Num(b'N', vivify_ttl.into()),
        Flag::Num(b'O', 0),
    ];
    if let Some(r) = recache {
        f.push(Flag::Num(b'R', r.into()));
    }
    meta::encode(buf, Command::Get, key, None, &f);
}

/// Reads the reply to `encode_lease`.
pub(crate) fn recv_lease(conn: &mut Conn) -> Result<LeaseReply> {
    conn.read::<MetaCodec, _>(|r, server| match r {
        Reply::Value { flags, data } => {
            check_opaque(server, flags, 0)?;
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
            check_opaque(server, flags, 0)?;
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
