//! Exchanges in the binary protocol. Every request carries an opaque, a tag unique on its
//! connection (`Conn::take_tags`), and every response's opaque and opcode are checked, so a
//! stray or late response is a protocol error, never a value handed to a caller.

use super::{tag_index, HitSink, Keys};
use crate::conn::Conn;
use crate::error::{Error, Result};
use crate::item::StoreOutcome;
use crate::proto::ascii::StoreCommand;
use crate::proto::binary::{self, op, status, Response};
use crate::proto::BinaryCodec;

fn protocol(server: &str, detail: String) -> Error {
    Error::Protocol {
        server: server.to_owned(),
        detail,
    }
}

/// The error for a non-OK status that is not a cache-level answer.
fn status_error(server: &str, r: &Response<'_>) -> Error {
    let text = String::from_utf8_lossy(r.value).into_owned();
    let server = server.to_owned();
    match r.status {
        status::NON_NUMERIC => Error::Client {
            server,
            message: "cannot increment or decrement non-numeric value".into(),
        },
        status::INVALID_ARGUMENTS | status::UNKNOWN_COMMAND | status::AUTH_ERROR => Error::Client {
            server,
            message: format!("status 0x{:02x}: {text}", r.status),
        },
        status::VALUE_TOO_LARGE => Error::Server {
            server,
            message: format!("object too large for cache ({text})"),
        },
        _ => Error::Server {
            server,
            message: format!("status 0x{:02x}: {text}", r.status),
        },
    }
}

fn check(server: &str, r: &Response<'_>, opcode: u8, opaque: u32) -> Result<()> {
    if r.opaque != opaque || r.opcode != opcode {
        return Err(protocol(
            server,
            format!(
                "response opcode 0x{:02x} opaque {} does not answer request 0x{opcode:02x} opaque {opaque}: a crossed reply",
                r.opcode, r.opaque
            ),
        ));
    }
    Ok(())
}

/// GET/GAT for one key (tagged `tag`); GETKQ/GATKQ per key (tagged `tag + i`) closed by a
/// NOOP tagged `tag + n` for several.
pub(crate) fn encode_retrieval<K: Keys + ?Sized>(
    buf: &mut Vec<u8>,
    _cas: bool,
    touch: Option<u32>,
    keys: &K,
    tag: u32,
) {
    let extras = touch.map(binary::u32_extras);
    let extras: &[u8] = extras.as_ref().map_or(&[], |e| &e[..]);
    let n = keys.count();
    if n == 1 {
        let opcode = if touch.is_some() { op::GAT } else { op::GET };
        binary::encode(buf, opcode, keys.key(0), extras, b"", tag, 0);
        return;
    }
    let opcode = if touch.is_some() {
        op::GATKQ
    } else {
        op::GETKQ
    };
    for i in 0..n {
        let opaque = tag.wrapping_add(i as u32);
        binary::encode(buf, opcode, keys.key(i), extras, b"", opaque, 0);
    }
    encode_barrier(buf, tag.wrapping_add(n as u32));
}

/// Reads the responses to `encode_retrieval` (same `touch`, `keys` and `tag`).
pub(crate) fn recv_retrieval<K: Keys + ?Sized>(
    conn: &mut Conn,
    cas: bool,
    touch: bool,
    keys: &K,
    tag: u32,
    sink: &mut HitSink<'_>,
) -> Result<()> {
    let n = keys.count();
    let single = n == 1;
    let opcode = match (single, touch) {
        (true, false) => op::GET,
        (true, true) => op::GAT,
        (false, false) => op::GETKQ,
        (false, true) => op::GATKQ,
    };
    let mut next = 0usize;
    loop {
        let done = conn.read::<BinaryCodec, _>(|r, server| {
            if !single && r.opcode == op::NOOP {
                check(server, &r, op::NOOP, tag.wrapping_add(n as u32))?;
                return Ok(true);
            }
            let idx = match tag_index(Some(r.opaque.into()), tag, n) {
                Some(i) if i >= next && r.opcode == opcode => i,
                _ => {
                    return Err(protocol(
                        server,
                        format!(
                            "response opcode 0x{:02x} opaque {} answers no pending request \
                             (0x{opcode:02x}, opaques {tag} to {}): a stray or crossed reply",
                            r.opcode,
                            r.opaque,
                            u64::from(tag) + n as u64 - 1
                        ),
                    ))
                }
            };
            if !single && r.key != keys.key(idx) {
                return Err(protocol(
                    server,
                    format!(
                        "value for key {:?} under opaque {}: a crossed reply",
                        String::from_utf8_lossy(r.key),
                        r.opaque
                    ),
                ));
            }
            match r.status {
                status::OK => {
                    sink(idx, r.value, r.flags(), cas.then_some(r.cas));
                    next = idx + 1;
                    Ok(single)
                }
                status::KEY_NOT_FOUND if single => Ok(true),
                _ => Err(status_error(server, &r)),
            }
        })?;
        if done {
            return Ok(());
        }
    }
}

/// One `GET` carrying `opaque`: a request of a pipeline of single reads (callers' reads a
/// permit holder serves together), each answered in order.
pub(crate) fn encode_get_one(buf: &mut Vec<u8>, key: &[u8], opaque: u32) {
    binary::encode(buf, op::GET, key, &[], b"", opaque, 0);
}

/// Reads the response to `encode_get_one`: a hit goes to `sink`; a response that does not
/// carry `opaque` is a crossed reply.
pub(crate) fn recv_get_one(
    conn: &mut Conn,
    cas: bool,
    opaque: u32,
    sink: &mut HitSink<'_>,
) -> Result<()> {
    conn.read::<BinaryCodec, _>(|r, server| {
        check(server, &r, op::GET, opaque)?;
        match r.status {
            status::OK => {
                sink(0, r.value, r.flags(), cas.then_some(r.cas));
                Ok(())
            }
            status::KEY_NOT_FOUND => Ok(()),
            _ => Err(status_error(server, &r)),
        }
    })
}

fn store_opcode(cmd: StoreCommand, quiet: bool) -> u8 {
    match (cmd, quiet) {
        (StoreCommand::Set | StoreCommand::Cas(_), false) => op::SET,
        (StoreCommand::Set | StoreCommand::Cas(_), true) => op::SETQ,
        (StoreCommand::Add, false) => op::ADD,
        (StoreCommand::Add, true) => op::ADDQ,
        (StoreCommand::Replace, false) => op::REPLACE,
        (StoreCommand::Replace, true) => op::REPLACEQ,
        (StoreCommand::Append, false) => op::APPEND,
        (StoreCommand::Append, true) => op::APPENDQ,
        (StoreCommand::Prepend, false) => op::PREPEND,
        (StoreCommand::Prepend, true) => op::PREPENDQ,
    }
}

/// One store packet.
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
    let cas = if let StoreCommand::Cas(c) = cmd { c } else { 0 };
    let extras = binary::store_extras(flags, ttl);
    let extras: &[u8] = match cmd {
        StoreCommand::Append | StoreCommand::Prepend => &[],
        _ => &extras,
    };
    binary::encode(
        buf,
        store_opcode(cmd, quiet),
        key,
        extras,
        data,
        opaque,
        cas,
    );
}

fn store_outcome(server: &str, r: &Response<'_>, cmd: StoreCommand) -> Result<StoreOutcome> {
    Ok(match (r.status, cmd) {
        (status::OK, _) => StoreOutcome::Stored,
        (status::KEY_EXISTS, StoreCommand::Cas(_)) => StoreOutcome::Exists,
        (status::KEY_NOT_FOUND, StoreCommand::Cas(_)) => StoreOutcome::NotFound,
        (status::KEY_EXISTS | status::KEY_NOT_FOUND | status::NOT_STORED, _) => {
            StoreOutcome::NotStored
        }
        _ => return Err(status_error(server, r)),
    })
}

/// Reads the response to one store packet.
pub(crate) fn recv_store(conn: &mut Conn, cmd: StoreCommand, opaque: u32) -> Result<StoreOutcome> {
    conn.read::<BinaryCodec, _>(|r, server| {
        check(server, &r, store_opcode(cmd, false), opaque)?;
        store_outcome(server, &r, cmd)
    })
}

/// DELETE / DELETEQ.
pub(crate) fn encode_delete(buf: &mut Vec<u8>, key: &[u8], opaque: u32, quiet: bool) {
    let opcode = if quiet { op::DELETEQ } else { op::DELETE };
    binary::encode(buf, opcode, key, &[], b"", opaque, 0);
}

fn delete_outcome(server: &str, r: &Response<'_>) -> Result<bool> {
    match r.status {
        status::OK => Ok(true),
        status::KEY_NOT_FOUND => Ok(false),
        _ => Err(status_error(server, r)),
    }
}

/// Reads the response to DELETE.
pub(crate) fn recv_delete(conn: &mut Conn, opaque: u32) -> Result<bool> {
    conn.read::<BinaryCodec, _>(|r, server| {
        check(server, &r, op::DELETE, opaque)?;
        delete_outcome(server, &r)
    })
}

/// TOUCH.
pub(crate) fn encode_touch(buf: &mut Vec<u8>, key: &[u8], ttl: u32, opaque: u32) {
    binary::encode(
        buf,
        op::TOUCH,
        key,
        &binary::u32_extras(ttl),
        b"",
        opaque,
        0,
    );
}

/// Reads the response to TOUCH.
pub(crate) fn recv_touch(conn: &mut Conn, opaque: u32) -> Result<bool> {
    conn.read::<BinaryCodec, _>(|r, server| {
        check(server, &r, op::TOUCH, opaque)?;
        delete_outcome(server, &r)
    })
}

/// INCREMENT / DECREMENT, creating the counter with `initial` when `init` is given.
pub(crate) fn encode_arith(
    buf: &mut Vec<u8>,
    incr: bool,
    key: &[u8],
    delta: u64,
    init: Option<(u64, u32)>,
    opaque: u32,
) {
    let (initial, ttl) = init.unwrap_or((0, u32::MAX));
    let opcode = if incr { op::INCREMENT } else { op::DECREMENT };
    let extras = binary::arith_extras(delta, initial, ttl);
    binary::encode(buf, opcode, key, &extras, b"", opaque, 0);
}

/// Reads the response to INCREMENT (`incr`) or DECREMENT.
pub(crate) fn recv_arith(conn: &mut Conn, incr: bool, opaque: u32) -> Result<Option<u64>> {
    let opcode = if incr { op::INCREMENT } else { op::DECREMENT };
    conn.read::<BinaryCodec, _>(|r, server| {
        check(server, &r, opcode, opaque)?;
        match r.status {
            status::OK if r.value.len() == 8 => Ok(Some(u64::from_be_bytes(
                r.value.try_into().unwrap_or([0; 8]),
            ))),
            status::OK => Err(protocol(server, "incr/decr value is not 8 bytes".into())),
            status::KEY_NOT_FOUND => Ok(None),
            _ => Err(status_error(server, &r)),
        }
    })
}

/// FLUSH.
pub(crate) fn encode_flush(buf: &mut Vec<u8>, delay: Option<u32>, tag: u32) {
    let extras = delay.map(binary::u32_extras);
    binary::encode(
        buf,
        op::FLUSH,
        b"",
        extras.as_ref().map_or(&[], |e| &e[..]),
        b"",
        tag,
        0,
    );
}

/// Reads the response to FLUSH.
pub(crate) fn recv_flush(conn: &mut Conn, tag: u32) -> Result<()> {
    conn.read::<BinaryCodec, _>(|r, server| {
        check(server, &r, op::FLUSH, tag)?;
        match r.status {
            status::OK => Ok(()),
            _ => Err(status_error(server, &r)),
        }
    })
}

/// VERSION.
pub(crate) fn encode_version(buf: &mut Vec<u8>, tag: u32) {
    binary::encode(buf, op::VERSION, b"", &[], b"", tag, 0);
}

/// Reads the response to VERSION.
pub(crate) fn recv_version(conn: &mut Conn, tag: u32) -> Result<String> {
    conn.read::<BinaryCodec, _>(|r, server| {
        check(server, &r, op::VERSION, tag)?;
        match r.status {
            status::OK => Ok(String::from_utf8_lossy(r.value).into_owned()),
            _ => Err(status_error(server, &r)),
        }
    })
}

/// STAT [group].
pub(crate) fn encode_stats(buf: &mut Vec<u8>, group: Option<&str>, tag: u32) {
    binary::encode(
        buf,
        op::STAT,
        group.unwrap_or("").as_bytes(),
        &[],
        b"",
        tag,
        0,
    );
}

/// Reads STAT responses up to the empty one that ends them.
pub(crate) fn recv_stats(conn: &mut Conn, tag: u32) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    loop {
        let stat = conn.read::<BinaryCodec, _>(|r, server| {
            check(server, &r, op::STAT, tag)?;
            if r.status != status::OK {
                return Err(status_error(server, &r));
            }
            Ok((!r.key.is_empty()).then(|| {
                (
                    String::from_utf8_lossy(r.key).into_owned(),
                    String::from_utf8_lossy(r.value).into_owned(),
                )
            }))
        })?;
        match stat {
            Some(kv) => out.push(kv),
            None => return Ok(out),
        }
    }
}

/// NOOP tagged `tag`, closing a quiet pipeline.
pub(crate) fn encode_barrier(buf: &mut Vec<u8>, tag: u32) {
    binary::encode(buf, op::NOOP, b"", &[], b"", tag, 0);
}

/// Reads the responses of a quiet pipeline of `n` packets with opcode `opcode`, tagged
/// `tag..tag + n`, up to the NOOP tagged `tag + n`.
fn recv_quiet_batch<T>(
    conn: &mut Conn,
    tag: u32,
    n: usize,
    opcode: u8,
    ok: impl Fn() -> T,
    outcome: impl Fn(&str, &Response<'_>) -> Result<T>,
    out: &mut dyn FnMut(usize, Result<T>),
) -> Result<()> {
    super::collect_quiet(
        conn,
        tag,
        n,
        false,
        ok,
        |conn| {
            conn.read::<BinaryCodec, _>(|r, server| {
                if r.opcode == op::NOOP {
                    check(server, &r, op::NOOP, tag.wrapping_add(n as u32))?;
                    return Ok(None);
                }
                if r.opcode != opcode {
                    return Err(protocol(
                        server,
                        format!(
                            "response opcode 0x{:02x} opaque {} in a pipeline of 0x{opcode:02x}: \
                             a stray or crossed reply",
                            r.opcode, r.opaque
                        ),
                    ));
                }
                Ok(Some((Some(u64::from(r.opaque)), outcome(server, &r))))
            })
        },
        out,
    )
}

/// Store outcomes of a quiet SETQ pipeline.
pub(crate) fn recv_store_batch(
    conn: &mut Conn,
    tag: u32,
    n: usize,
    out: &mut dyn FnMut(usize, Result<StoreOutcome>),
) -> Result<()> {
    recv_quiet_batch(
        conn,
        tag,
        n,
        op::SETQ,
        || StoreOutcome::Stored,
        |s, r| store_outcome(s, r, StoreCommand::Set),
        out,
    )
}

/// Delete outcomes of a quiet DELETEQ pipeline (with `n` 0: just the NOOP tagged `tag`).
pub(crate) fn recv_delete_batch(
    conn: &mut Conn,
    tag: u32,
    n: usize,
    out: &mut dyn FnMut(usize, Result<bool>),
) -> Result<()> {
    recv_quiet_batch(conn, tag, n, op::DELETEQ, || true, delete_outcome, out)
}

/// SASL PLAIN authentication on a fresh connection.
pub(crate) fn sasl_plain(conn: &mut Conn, user: &str, password: &str) -> Result<()> {
    let mut token = Vec::with_capacity(user.len() + password.len() + 2);
    token.push(0);
    token.extend_from_slice(user.as_bytes());
    token.push(0);
    token.extend_from_slice(password.as_bytes());
    let tag = conn.take_tags(1);
    binary::encode(conn.begin(), op::SASL_AUTH, b"PLAIN", &[], &token, tag, 0);
    conn.send()?;
    conn.read::<BinaryCodec, _>(|r, server| {
        check(server, &r, op::SASL_AUTH, tag)?;
        match r.status {
            status::OK => Ok(()),
            _ => Err(Error::Auth {
                server: server.to_owned(),
                message: String::from_utf8_lossy(r.value).into_owned(),
            }),
        }
    })?;
    conn.finish();
    Ok(())
}
