//! Exchanges on one connection in the text protocol: each is an encoder (appending to the
//! connection's write buffer) and a receiver (reading exactly its replies).

use crate::conn::Conn;
use crate::error::{Error, Result};
use crate::item::StoreOutcome;
use crate::proto::ascii::{self, Reply};

/// Keys per `get` line; a multi-get of more keys is sent as several pipelined lines.
pub(crate) const KEYS_PER_GET: usize = 100;

/// Receives each hit of a retrieval: (index of the key, data, flags, CAS).
pub(crate) type HitSink<'s> = dyn FnMut(usize, &[u8], u32, Option<u64>) + 's;

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

/// Appends the retrieval lines for `keys` (several lines of at most `KEYS_PER_GET` keys).
pub(crate) fn encode_retrieval(buf: &mut Vec<u8>, cas: bool, touch: Option<u32>, keys: &[&[u8]]) {
    for chunk in keys.chunks(KEYS_PER_GET) {
        ascii::encode_get(buf, cas, touch, chunk.iter().copied());
    }
}

/// Reads the replies to `encode_retrieval(keys)`. Each hit is matched, in order, to the next
/// requested key with that name (the server answers in request order); a value for a key not
/// asked for is a protocol error, so a crossed reply can never reach a caller.
pub(crate) fn recv_retrieval(
    conn: &mut Conn,
    keys: &[&[u8]],
    sink: &mut HitSink<'_>,
) -> Result<()> {
    let mut ends = keys.len().div_ceil(KEYS_PER_GET);
    let mut cursor = 0;
    while ends > 0 {
        let next = conn.read_ascii(|reply, server| match reply {
            Reply::End => Ok(None),
            Reply::Value {
                key,
                flags,
                cas,
                data,
            } => match keys[cursor..].iter().position(|k| *k == key) {
                Some(off) => {
                    sink(cursor + off, data, flags, cas);
                    Ok(Some(cursor + off + 1))
                }
                None => Err(Error::Protocol {
                    server: server.to_owned(),
                    detail: format!(
                        "value for key {:?}, which was not asked for (or out of order)",
                        String::from_utf8_lossy(key)
                    ),
                }),
            },
            other => Err(unexpected(server, other, "get")),
        })?;
        match next {
            None => ends -= 1,
            Some(n) => cursor = n,
        }
    }
    Ok(())
}

/// Reads the reply to one store command.
pub(crate) fn recv_store(conn: &mut Conn) -> Result<StoreOutcome> {
    conn.read_ascii(|r, server| match r {
        Reply::Stored => Ok(StoreOutcome::Stored),
        Reply::NotStored => Ok(StoreOutcome::NotStored),
        Reply::Exists => Ok(StoreOutcome::Exists),
        Reply::NotFound => Ok(StoreOutcome::NotFound),
        other => Err(unexpected(server, other, "a store command")),
    })
}

/// Reads the reply to `delete`: true if deleted, false if not found.
pub(crate) fn recv_delete(conn: &mut Conn) -> Result<bool> {
    conn.read_ascii(|r, server| match r {
        Reply::Deleted => Ok(true),
        Reply::NotFound => Ok(false),
        other => Err(unexpected(server, other, "delete")),
    })
}

/// Reads the reply to `touch`: true if touched, false if not found.
pub(crate) fn recv_touch(conn: &mut Conn) -> Result<bool> {
    conn.read_ascii(|r, server| match r {
        Reply::Touched => Ok(true),
        Reply::NotFound => Ok(false),
        other => Err(unexpected(server, other, "touch")),
    })
}

/// Reads the reply to `incr`/`decr`: the new value, or `None` if not found.
pub(crate) fn recv_arith(conn: &mut Conn) -> Result<Option<u64>> {
    conn.read_ascii(|r, server| match r {
        Reply::Number(n) => Ok(Some(n)),
        Reply::NotFound => Ok(None),
        other => Err(unexpected(server, other, "incr/decr")),
    })
}

/// Reads `OK` (flush_all).
pub(crate) fn recv_ok(conn: &mut Conn) -> Result<()> {
    conn.read_ascii(|r, server| match r {
        Reply::Ok => Ok(()),
        other => Err(unexpected(server, other, "flush_all")),
    })
}

/// Reads `VERSION <text>`.
pub(crate) fn recv_version(conn: &mut Conn) -> Result<String> {
    conn.read_ascii(|r, server| match r {
        Reply::Version(v) => Ok(String::from_utf8_lossy(v).into_owned()),
        other => Err(unexpected(server, other, "version")),
    })
}

/// Reads `STAT name value` lines up to `END`.
pub(crate) fn recv_stats(conn: &mut Conn) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    loop {
        let stat = conn.read_ascii(|r, server| match r {
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

impl Conn {
    /// One `version` round trip (the alive check).
    pub(crate) fn version(&mut self) -> Result<String> {
        ascii::encode_version(self.begin());
        self.send()?;
        let v = recv_version(self)?;
        self.finish();
        Ok(v)
    }
}
