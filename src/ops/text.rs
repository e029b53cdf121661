//! Exchanges in the text protocol.

use super::{HitSink, Keys};
use crate::conn::{protocol_error_at, Conn, Scan};
use crate::error::{Error, Result};
use crate::item::StoreOutcome;
use crate::proto::ascii::{self, Reply, StoreCommand};
use crate::proto::{Status, TextCodec};
use std::ops::Range;

/// Key bytes per `get` line: a multi-get of more is sent as several pipelined lines. Large,
/// because every line is answered separately (and read separately): memcached accepts long
/// `get` lines, so 500 keys go in one line and come back in one reply.
pub(crate) const GET_LINE_BYTES: usize = 64 * 1024;

/// Splits `keys` into the index ranges that share one `get` line.
fn get_lines<K: Keys + ?Sized>(keys: &K) -> impl Iterator<Item = Range<usize>> + '_ {
    let n = keys.count();
    let mut start = 0;
    // Up to 261 keys of at most 250 bytes always fit one line: no need to measure them.
    let one_line = n * (crate::key::MAX_KEY_LEN + 1) <= GET_LINE_BYTES;
    std::iter::from_fn(move || {
        if start >= n {
            return None;
        }
        if one_line {
            start = n;
            return Some(0..n);
        }
        let mut bytes = 0;
        let mut end = start;
        while end < n {
            bytes += keys.key(end).len() + 1;
            if bytes > GET_LINE_BYTES && end > start {
                break;
            }
            end += 1;
        }
        let line = start..end;
        start = end;
        Some(line)
    })
}

/// The error for a reply that is not one of those expected for `asked`.
pub(crate) fn unexpected(server: &str, reply: Reply<'_>, asked: &str) -> Error {
    let server = server.to_owned();
    let text = |m: &[u8]| String::from_utf8_lossy(m).into_owned();
    match reply {
        Reply::ServerError(m) => Error::Server {
            server,
            message: text(m),
        },
        Reply::ClientError(m) => Error::Client {
            server,
            message: text(m),
        },
        Reply::Error => Error::Client {
            server,
            message: format!("ERROR (the server did not understand {asked})"),
        },
        other => Error::Protocol {
            server,
            detail: format!("unexpected reply to {asked}: {other:?}"),
        },
    }
}

/// Appends the retrieval lines for `keys` (several lines of at most `GET_LINE_BYTES`).
pub(crate) fn encode_retrieval<K: Keys + ?Sized>(
    buf: &mut Vec<u8>,
    cas: bool,
    touch: Option<u32>,
    keys: &K,
) {
    for line in get_lines(keys) {
        ascii::encode_get(buf, cas, touch, line.map(|i| keys.key(i)));
    }
}

/// Reads the replies to `encode_retrieval(keys)`. Each hit is matched, in order, to the next
/// requested key with that name (the server answers in request order); a value for a key not
/// asked for is a protocol error, so a crossed reply can never reach a caller.
pub(crate) fn recv_retrieval<K: Keys + ?Sized>(
    conn: &mut Conn,
    _cas: bool,
    keys: &K,
    sink: &mut HitSink<'_>,
) -> Result<()> {
    let n = keys.count();
    let mut ends = get_lines(keys).count();
    if ends == 0 {
        return Ok(()); // no key, no request line, no reply
    }
    let mut cursor = 0;
    // Every value that has arrived is parsed in one pass. Most are for the next key asked
    // for (a miss is simply absent): a tight loop compares that key in place; anything else
    // goes through the general parser, one reply at a time.
    conn.scan(|buf, server, max_value| {
        let mut at = 0;
        loop {
            while cursor < n {
                let Some(v) = ascii::value_of(&buf[at..], keys.key(cursor), max_value) else {
                    break;
                };
                sink(cursor, v.data, v.flags, v.cas);
                cursor += 1;
                at += v.used;
            }
            let b = &buf[at..];
            let (reply, used) = match ascii::parse(b, max_value) {
                Ok(Status::Complete(reply, used)) => (reply, used),
                Ok(Status::Partial(hint)) => return Ok(Scan::More(at, hint)),
                Err(e) => return Err(protocol_error_at(server, b, &e.to_string())),
            };
            at += used;
            match reply {
                Reply::End => {
                    ends -= 1;
                    if ends == 0 {
                        return Ok(Scan::Done(at, ()));
                    }
                }
                Reply::Value {
                    key,
                    flags,
                    cas,
                    data,
                } => match (cursor..n).find(|&j| keys.key(j) == key) {
                    Some(j) => {
                        sink(j, data, flags, cas);
                        cursor = j + 1;
                    }
                    None => {
                        return Err(Error::Protocol {
                            server: server.to_owned(),
                            detail: format!(
                                "value for key {:?}, which was not asked for (or out of order)",
                                String::from_utf8_lossy(key)
                            ),
                        })
                    }
                },
                other => return Err(unexpected(server, other, "get")),
            }
        }
    })
}

/// Appends one store command (`quiet` = `noreply`, for bulk loads closed by a barrier).
#[allow(clippy::too_many_arguments)]
pub(crate) fn encode_store(
    buf: &mut Vec<u8>,
    cmd: StoreCommand,
    key: &[u8],
    flags: u32,
    ttl: u32,
    data: &[u8],
    _opaque: u32,
    quiet: bool,
) {
    ascii::encode_store(buf, cmd, key, flags, ttl, data, quiet);
}

/// Reads the reply to one store command.
pub(crate) fn recv_store(
    conn: &mut Conn,
    _cmd: StoreCommand,
    _opaque: u32,
) -> Result<StoreOutcome> {
    conn.read::<TextCodec, _>(|r, server| match r {
        Reply::Stored => Ok(StoreOutcome::Stored),
        Reply::NotStored => Ok(StoreOutcome::NotStored),
        Reply::Exists => Ok(StoreOutcome::Exists),
        Reply::NotFound => Ok(StoreOutcome::NotFound),
        other => Err(unexpected(server, other, "a store command")),
    })
}

/// Appends `delete`.
pub(crate) fn encode_delete(buf: &mut Vec<u8>, key: &[u8], _opaque: u32, quiet: bool) {
    ascii::encode_delete(buf, key, quiet);
}

/// Reads the reply to `delete`: true if deleted, false if not found.
pub(crate) fn recv_delete(conn: &mut Conn, _opaque: u32) -> Result<bool> {
    conn.read::<TextCodec, _>(|r, server| match r {
        Reply::Deleted => Ok(true),
        Reply::NotFound => Ok(false),
        other => Err(unexpected(server, other, "delete")),
    })
}

/// Appends `touch`.
pub(crate) fn encode_touch(buf: &mut Vec<u8>, key: &[u8], ttl: u32, _opaque: u32) {
    ascii::encode_touch(buf, key, ttl);
}

/// Reads the reply to `touch`: true if touched, false if not found.
pub(crate) fn recv_touch(conn: &mut Conn, _opaque: u32) -> Result<bool> {
    conn.read::<TextCodec, _>(|r, server| match r {
        Reply::Touched => Ok(true),
        Reply::NotFound => Ok(false),
        other => Err(unexpected(server, other, "touch")),
    })
}

/// Appends `incr`/`decr` (the text protocol has no initial value: the client adds one).
pub(crate) fn encode_arith(buf: &mut Vec<u8>, incr: bool, key: &[u8], delta: u64, _opaque: u32) {
    ascii::encode_arith(buf, incr, key, delta);
}

/// Reads the reply to `incr`/`decr`: the new value, or `None` if not found.
pub(crate) fn recv_arith(conn: &mut Conn, _opaque: u32) -> Result<Option<u64>> {
    conn.read::<TextCodec, _>(|r, server| match r {
        Reply::Number(n) => Ok(Some(n)),
        Reply::NotFound => Ok(None),
        other => Err(unexpected(server, other, "incr/decr")),
    })
}

/// Reads `OK` (flush_all).
pub(crate) fn recv_flush(conn: &mut Conn) -> Result<()> {
    conn.read::<TextCodec, _>(|r, server| match r {
        Reply::Ok => Ok(()),
        other => Err(unexpected(server, other, "flush_all")),
    })
}

/// Reads `VERSION <text>`.
pub(crate) fn recv_version(conn: &mut Conn) -> Result<String> {
    conn.read::<TextCodec, _>(|r, server| match r {
        Reply::Version(v) => Ok(String::from_utf8_lossy(v).into_owned()),
        other => Err(unexpected(server, other, "version")),
    })
}

/// Reads `STAT name value` lines up to `END`.
pub(crate) fn recv_stats(conn: &mut Conn) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    loop {
        let stat = conn.read::<TextCodec, _>(|r, server| match r {
            Reply::Stat(k, v) => Ok(Some((
                String::from_utf8_lossy(k).into_owned(),
                String::from_utf8_lossy(v).into_owned(),
            ))),
            Reply::End => Ok(None),
            other => Err(unexpected(server, other, "stats")),
        })?;
        match stat {
            Some(kv) => out.push(kv),
            None => return Ok(out),
        }
    }
}

/// Reads every reply of a pipelined batch of `n` commands, in order; `read_one` reads one.
pub(crate) fn recv_batch<T>(
    conn: &mut Conn,
    n: usize,
    out: &mut dyn FnMut(usize, Result<T>),
    mut read_one: impl FnMut(&mut Conn) -> Result<T>,
) -> Result<()> {
    for i in 0..n {
        match read_one(conn) {
            Ok(v) => out(i, Ok(v)),
            Err(e) => {
                // After an error reply the rest of the stream cannot be trusted.
                for j in i..n {
                    out(j, Err(e.clone()));
                }
                return Err(e);
            }
        }
    }
    Ok(())
}
