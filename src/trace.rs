//! The per-operation hook: one [`OpRecord`] per exchange with a server, handed to the
//! handler installed with [`ClientBuilder::on_operation`](crate::ClientBuilder::on_operation),
//! for tracing (an OpenTelemetry span per record: docs/tracing.md) and latency histograms.
//!
//! **One record per server exchange.** A call about one key gives one record. A call that
//! spans servers (`get_multi`, `set_multi`, `delete_multi`, `set_multi_noreply`, and the
//! whole-server commands `flush_all`, `version`, `noop`, `stats`) gives one record per
//! server it talked to, each with that server's share of the keys, its bytes, and the time
//! from the start of the call to the end of that server's reply. Keys that never reached a
//! server add records of their own: one per server that holds some of them but could not be
//! asked (marked dead; under `proxy-pool`, no proxy alive: the first proxy), labelled with
//! that server and with exactly its keys, and at most one without a server for the keys
//! refused before placement (a bad key or value).
//! `incr_or_init` on the text protocol is the exchanges it makes (`incr`, `add`, `incr`).
//!
//! **Cost.** With no handler installed a call pays one branch. With one, it reads the clock
//! twice and calls the handler on the calling thread, after the exchange, once the connection
//! is back in its pool (the handler may issue commands of its own; keep it short: the call
//! returns when it does). A multi-key call, which holds every server's connection at once,
//! hands its records over (unchanged, in order) once all of them are back in their pools.

use crate::error::{Class, Error};
use crate::proto::Protocol;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// What a call was, as its records name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Op {
    /// `get` (and `get_item`, `get_value`).
    Get,
    /// `gets` (a get with the CAS unique).
    Gets,
    /// `gat` (get-and-touch).
    Gat,
    /// `gats` (get-and-touch with the CAS unique).
    Gats,
    /// A multi-key get (`get_multi`, `get_multi_each`, `get_values`).
    GetMulti,
    /// A multi-key `gets`.
    GetsMulti,
    /// A multi-key get-and-touch.
    GatMulti,
    /// A multi-key get-and-touch with CAS uniques.
    GatsMulti,
    /// `set`.
    Set,
    /// `add`.
    Add,
    /// `replace`.
    Replace,
    /// `append`.
    Append,
    /// `prepend`.
    Prepend,
    /// `cas`.
    Cas,
    /// `delete`.
    Delete,
    /// `incr`.
    Incr,
    /// `decr`.
    Decr,
    /// `touch`.
    Touch,
    /// `get_lease` (meta).
    Lease,
    /// `invalidate` (meta).
    Invalidate,
    /// `set_multi` / `set_multi_items` (and `store_multi_items` of `set`).
    SetMulti,
    /// `store_multi_items` of `add` (the bindings' `add_multi`).
    AddMulti,
    /// `store_multi_items` of `replace`.
    ReplaceMulti,
    /// `store_multi_items` of `append`.
    AppendMulti,
    /// `store_multi_items` of `prepend`.
    PrependMulti,
    /// `store_multi_items` of `cas`.
    CasMulti,
    /// `set_multi_noreply`.
    SetMultiNoreply,
    /// `delete_multi`.
    DeleteMulti,
    /// `touch_multi`.
    TouchMulti,
    /// `arith_multi` adding (`incr_multi`).
    IncrMulti,
    /// `arith_multi` subtracting (`decr_multi`).
    DecrMulti,
    /// `flush_all`.
    FlushAll,
    /// `version`.
    Version,
    /// `noop`.
    Noop,
    /// `stats`.
    Stats,
    /// `meta_info` (meta: an item's metadata without its value).
    MetaInfo,
}

impl Op {
    /// The operation's name: `"get"`, `"get_multi"`, `"set"`, … (OpenTelemetry's
    /// `db.operation`).
    pub fn name(self) -> &'static str {
        let n = self.name_nul();
        &n[..n.len() - 1]
    }

    /// [`Op::name`] followed by a NUL byte, static (for C callers).
    pub fn name_nul(self) -> &'static str {
        match self {
            Op::Get => "get\0",
            Op::Gets => "gets\0",
            Op::Gat => "gat\0",
            Op::Gats => "gats\0",
            Op::GetMulti => "get_multi\0",
            Op::GetsMulti => "gets_multi\0",
            Op::GatMulti => "gat_multi\0",
            Op::GatsMulti => "gats_multi\0",
            Op::Set => "set\0",
            Op::Add => "add\0",
            Op::Replace => "replace\0",
            Op::Append => "append\0",
            Op::Prepend => "prepend\0",
            Op::Cas => "cas\0",
            Op::Delete => "delete\0",
            Op::Incr => "incr\0",
            Op::Decr => "decr\0",
            Op::Touch => "touch\0",
            Op::Lease => "get_lease\0",
            Op::Invalidate => "invalidate\0",
            Op::SetMulti => "set_multi\0",
            Op::AddMulti => "add_multi\0",
            Op::ReplaceMulti => "replace_multi\0",
            Op::AppendMulti => "append_multi\0",
            Op::PrependMulti => "prepend_multi\0",
            Op::CasMulti => "cas_multi\0",
            Op::SetMultiNoreply => "set_multi_noreply\0",
            Op::DeleteMulti => "delete_multi\0",
            Op::TouchMulti => "touch_multi\0",
            Op::IncrMulti => "incr_multi\0",
            Op::DecrMulti => "decr_multi\0",
            Op::FlushAll => "flush_all\0",
            Op::Version => "version\0",
            Op::Noop => "noop\0",
            Op::Stats => "stats\0",
            Op::MetaInfo => "meta_info\0",
        }
    }

    /// The batch of store commands `cmd` (`add` → [`Op::AddMulti`], ...).
    pub(crate) fn store_multi(cmd: crate::proto::ascii::StoreCommand) -> Op {
        use crate::proto::ascii::StoreCommand as C;
        match cmd {
            C::Set => Op::SetMulti,
            C::Add => Op::AddMulti,
            C::Replace => Op::ReplaceMulti,
            C::Append => Op::AppendMulti,
            C::Prepend => Op::PrependMulti,
            C::Cas(_) => Op::CasMulti,
        }
    }

    /// The read of `single` key or many, with CAS uniques when `cas`, touching when `touch`.
    pub(crate) fn read(single: bool, cas: bool, touch: bool) -> Op {
        match (single, cas, touch) {
            (true, false, false) => Op::Get,
            (true, true, false) => Op::Gets,
            (true, false, true) => Op::Gat,
            (true, true, true) => Op::Gats,
            (false, false, false) => Op::GetMulti,
            (false, true, false) => Op::GetsMulti,
            (false, false, true) => Op::GatMulti,
            (false, true, true) => Op::GatsMulti,
        }
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How an exchange ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum OpOutcome {
    /// A retrieval found its key (a multi-key record: at least one; see [`OpRecord::hits`]);
    /// `delete`, `touch`, `incr`/`decr` and `invalidate` found theirs.
    Hit,
    /// A retrieval found none of its keys; `delete`/`touch`/`incr`/`decr`/`invalidate` of a
    /// missing key.
    Miss,
    /// A store happened (a multi-key record: every one).
    Stored,
    /// A store did not happen (`add` of an existing key, a CAS conflict, …; a multi-key
    /// record: at least one did not).
    NotStored,
    /// A command without a hit or miss answered (`flush_all`, `version`, `noop`, `stats`,
    /// `set_multi_noreply`).
    Ok,
    /// The exchange failed with an error of this class; the call returned it.
    Error(Class),
    /// The exchange failed with an error of this class (a timeout or the server being
    /// unreachable), and `fail_open` turned it into a miss or a "not stored".
    FailedOpen(Class),
}

impl OpOutcome {
    /// The outcome's name: `"hit"`, `"miss"`, `"stored"`, `"not_stored"`, `"ok"`, `"error"`,
    /// `"failed_open"`.
    pub fn name(self) -> &'static str {
        match self {
            OpOutcome::Hit => "hit",
            OpOutcome::Miss => "miss",
            OpOutcome::Stored => "stored",
            OpOutcome::NotStored => "not_stored",
            OpOutcome::Ok => "ok",
            OpOutcome::Error(_) => "error",
            OpOutcome::FailedOpen(_) => "failed_open",
        }
    }

    /// The error's class for `Error` and `FailedOpen`.
    pub fn error_class(self) -> Option<Class> {
        match self {
            OpOutcome::Error(c) | OpOutcome::FailedOpen(c) => Some(c),
            _ => None,
        }
    }
}

impl fmt::Display for OpOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One exchange with one server (see the module docs), as the handler sees it. Borrowed:
/// valid during the handler's call; copy what is kept.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct OpRecord<'a> {
    /// The operation.
    pub op: Op,
    /// Keys in this exchange (0 for the whole-server commands).
    pub keys: usize,
    /// Keys found (retrievals), stored (stores), or that existed (delete, touch, incr/decr).
    pub hits: usize,
    /// The server's `host:port` label (for keys that reached no server because it is
    /// marked dead: that server); `None` for keys refused before placement.
    pub server: Option<&'a str>,
    /// The client's wire protocol.
    pub protocol: Protocol,
    /// From the start of the call to the end of this exchange.
    pub duration: Duration,
    /// How long before this call of the handler the exchange ended: zero, unless the call
    /// kept the record until its other servers had answered (a call over several servers).
    /// The exchange's span runs from `now - ended_ago - duration` to `now - ended_ago`.
    pub ended_ago: Duration,
    /// How it ended.
    pub outcome: OpOutcome,
    /// The error, for [`OpOutcome::Error`] and [`OpOutcome::FailedOpen`].
    pub error: Option<&'a Error>,
    /// Bytes written to the server for this exchange (0 when it was served on another
    /// caller's connection: docs/handover.md).
    pub bytes_sent: u64,
    /// Bytes read from the server for this exchange (as for `bytes_sent`).
    pub bytes_received: u64,
}

impl OpRecord<'_> {
    /// The server's host and port, split at the last `:` (`None` for a unix socket path or
    /// no server): OpenTelemetry's `net.peer.name` and `net.peer.port`.
    pub fn peer(&self) -> Option<(&str, u16)> {
        let s = self.server?;
        let (host, port) = s.rsplit_once(':')?;
        let port = port.parse().ok()?;
        let host = host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(host);
        Some((host, port))
    }
}

/// The per-operation handler, installed with
/// [`ClientBuilder::on_operation`](crate::ClientBuilder::on_operation).
#[derive(Clone)]
pub struct OpHandler(pub Arc<dyn Fn(&OpRecord<'_>) + Send + Sync>);

impl fmt::Debug for OpHandler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("OpHandler")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(server: Option<&str>) -> OpRecord<'_> {
        OpRecord {
            op: Op::Get,
            keys: 1,
            hits: 0,
            server,
            protocol: Protocol::Text,
            duration: Duration::ZERO,
            ended_ago: Duration::ZERO,
            outcome: OpOutcome::Miss,
            error: None,
            bytes_sent: 0,
            bytes_received: 0,
        }
    }

    #[test]
    fn peers_split_host_and_port() {
        assert_eq!(
            record(Some("127.0.0.1:11211")).peer(),
            Some(("127.0.0.1", 11211))
        );
        assert_eq!(record(Some("[::1]:11311")).peer(), Some(("::1", 11311)));
        assert_eq!(record(Some("/tmp/mc.sock")).peer(), None);
        assert_eq!(record(None).peer(), None);
    }

    #[test]
    fn read_names() {
        assert_eq!(Op::read(true, false, false).name(), "get");
        assert_eq!(Op::read(false, true, false).name(), "gets_multi");
        assert_eq!(Op::read(true, true, true).name(), "gats");
    }
}
