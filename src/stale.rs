//! Stale data after a server returns (option `on_server_return`, docs/failover.md): with
//! `eject` or `rehash` failover, the keys of a dead server are written to other servers
//! meanwhile; when it answers again, its own copies of those keys are older than the ones
//! written elsewhere, and reads go back to it. Before a returning server serves any call it
//! is cleaned: `flush` sends it `flush_all`; `delete-written` deletes the keys written
//! elsewhere while it was away (remembered per server, at most `written_while_away_max`;
//! past that the return falls back to `flush_all`, counted as `away_overflows`). A server
//! dropped from the list (`set_servers`) while away and not yet cleaned is remembered by its
//! address; added back, it is returning and is flushed (with `delete-written` too: the keys
//! written while it was out of the list are not known). Until the
//! clean-up succeeds the server serves nothing, and a failed clean-up counts as a failure of
//! the server (it stays dead). With `fail-fast` nothing is written elsewhere, so there is
//! nothing to clean.
//!
//! The copies written elsewhere are cleaned too: each server remembers the keys of other
//! servers written to it (`hosted`), and deletes them before it next serves once any server
//! of the client has returned or been marked dead since (a shared count of those placement
//! changes), or when it returns itself.
//! Without this a second outage read them back: a key rewritten on its own server between
//! two outages read its first outage's value during the second.

use crate::client::topology::Siblings;
use crate::conn::Conn;
use crate::dialect::{batch_tags, Dialect, Outcome, Request};
use crate::error::{Error, Result};
use crate::metrics::Counters;
use std::collections::HashSet;
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};

/// What happens to a server that was marked dead when it answers again (option
/// `on_server_return`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OnServerReturn {
    /// Nothing: it serves at once, with whatever it still holds (the default).
    #[default]
    Keep,
    /// `flush_all` before it serves.
    Flush,
    /// Delete the keys written to other servers while it was away before it serves.
    DeleteWritten,
}

impl FromStr for OnServerReturn {
    type Err = Error;
    fn from_str(s: &str) -> Result<OnServerReturn> {
        match s.trim().to_ascii_lowercase().as_str() {
            "keep" => Ok(OnServerReturn::Keep),
            "flush" => Ok(OnServerReturn::Flush),
            "delete-written" | "delete_written" => Ok(OnServerReturn::DeleteWritten),
            _ => Err(Error::Config(format!(
                "unknown on_server_return policy {s:?} (keep, flush, delete-written)"
            ))),
        }
    }
}

/// The default bound of the keys remembered per server while it is away.
pub const DEFAULT_WRITTEN_WHILE_AWAY_MAX: usize = 10_000;

/// The clean-up settings every server of a client shares: the policy, the bound, and the
/// count of returns cleaned and markings dead so far (a change of it tells each server to
/// delete the copies it holds for others).
#[derive(Clone, Debug)]
pub(crate) struct ReturnPolicy {
    policy: OnServerReturn,
    max: usize,
    returns: Arc<AtomicU64>,
}

impl ReturnPolicy {
    /// The settings of one client (`on_server_return`, `written_while_away_max`).
    pub(crate) fn new(policy: OnServerReturn, max: usize) -> ReturnPolicy {
        ReturnPolicy {
            policy,
            max,
            returns: Arc::default(),
        }
    }

    /// One server's guard under these settings.
    pub(crate) fn guard(&self) -> AwayGuard {
        AwayGuard {
            policy: self.policy,
            max: self.max,
            returns: self.returns.clone(),
            pending: AtomicBool::new(false),
            moved_pending: AtomicBool::new(false),
            hosted_pending: AtomicBool::new(false),
            hosted_since: AtomicU64::new(0),
            state: Mutex::new(Away::default()),
            siblings: Mutex::new(None),
            cleaning: Mutex::new(false),
            cleaned: Condvar::new(),
        }
    }
}

/// Deletes per pipelined round trip of a clean-up.
const DELETE_BATCH: usize = 256;

/// One server's clean-up state (present only with a policy other than `keep` and a
/// failover policy other than `fail-fast`).
#[derive(Debug)]
pub(crate) struct AwayGuard {
    policy: OnServerReturn,
    max: usize,
    /// Returns cleaned and markings dead by any server of the client ([`ReturnPolicy`]):
    /// each changes placement.
    returns: Arc<AtomicU64>,
    /// Set when the server is marked dead; cleared by a successful clean-up. Read on every
    /// checkout (one relaxed load when nothing is pending).
    pending: AtomicBool,
    /// Set when a key of this server, alive, was written to another one because `eject`
    /// placed it there while another server was dead (see [`AwayGuard::moved_off`]);
    /// cleared by the clean-up.
    moved_pending: AtomicBool,
    /// Set when a key of another server was written here ([`AwayGuard::hosted`]); cleared
    /// by the clean-up that deletes it.
    hosted_pending: AtomicBool,
    /// `returns` when the first of the hosted keys was recorded: once it changes, they are
    /// deleted.
    hosted_since: AtomicU64,
    state: Mutex<Away>,
    /// The client's list and this server's place in it: when another entry is the same
    /// memcached (an address listed twice, or under two spellings), its return flushes
    /// under `delete-written` ([`Siblings::shared_now`]).
    siblings: Mutex<Option<Siblings>>,
    /// True while a caller cleans (its I/O under way), with the condition its end signals.
    cleaning: Mutex<bool>,
    cleaned: Condvar,
}

/// Keys remembered for a clean-up, at most `written_while_away_max`: past it the list is
/// dropped and the clean-up flushes instead (`overflowed`, metric `away_overflows`).
#[derive(Debug, Default)]
struct KeyList {
    keys: HashSet<Box<[u8]>>,
    overflowed: bool,
}

impl KeyList {
    /// Remembers `wire` (or overflows past `max`); false when it was there already or the
    /// list had overflowed before.
    fn add(&mut self, wire: &[u8], max: usize) -> bool {
        if self.overflowed || self.keys.contains(wire) {
            return false;
        }
        if self.keys.len() >= max {
            // past the bound: the clean-up flushes (the keys are no longer needed)
            self.overflowed = true;
            self.keys = HashSet::new();
        } else {
            self.keys.insert(wire.into());
        }
        true
    }
}

#[derive(Debug, Default)]
struct Away {
    /// Keys of this server written elsewhere while it was away.
    keys: KeyList,
    /// Keys of this server written elsewhere by an ejection while it was alive.
    moved: KeyList,
    /// Keys of other servers written here (their server dead, or moved by an ejection).
    hosted: KeyList,
    /// The hosted keys of the last clean-up, deleted once more at the next: a key is
    /// recorded when its server is picked, before its write is sent, so a clean-up between
    /// the two (this server's own checkout, in the same call) deleted nothing of it; the
    /// second deletion finds it (tester finding failover3 1).
    hosted_prev: HashSet<Box<[u8]>>,
    /// The server was dropped from the list while away and added back
    /// ([`AwayGuard::left_while_away`]): its return flushes.
    left_list: bool,
}

impl AwayGuard {
    fn lock(&self) -> std::sync::MutexGuard<'_, Away> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The server was marked dead (the first time since it was last healthy, or again after
    /// a retry failed): from now on it must be cleaned before it serves again. The keys
    /// written elsewhere are forgotten only when its last clean-up ran: a clean-up that
    /// found nothing to delete and cleared the flag before the retry's own request failed,
    /// or a marking that comes before the clean-up (a late answer on an old connection
    /// counted as a return), must not lose what the outage wrote elsewhere (tester findings
    /// failover2 1 and 3). Every marking changes placement under `eject` and `rehash`: the
    /// servers holding copies for others delete them before they next serve (a copy
    /// written in an earlier period would otherwise be read back, finding 2).
    pub(crate) fn server_down(&self) {
        let mut s = self.lock();
        if !self.pending.load(Ordering::Acquire) {
            // the last outage was cleaned (or there was none): a new list
            s.keys = KeyList::default();
        }
        self.pending.store(true, Ordering::Release);
        drop(s);
        self.returns.fetch_add(1, Ordering::AcqRel);
    }

    /// The server is about to be marked dead: the placement changes with the marking, so
    /// the copies other servers hold are due from now, before any call is placed by the new
    /// table (tester finding retest28 1: a read placed by it between the marking and
    /// [`AwayGuard::server_down`]'s count was served a copy of an earlier period, an older
    /// acknowledged value). `server_down` counts the change again, after it: harmless.
    pub(crate) fn marking(&self) {
        self.returns.fetch_add(1, Ordering::AcqRel);
    }

    /// True while the server was marked dead and its return's clean-up has not run: what
    /// `set_servers` remembers of a server it drops.
    pub(crate) fn is_away(&self) -> bool {
        self.pending.load(Ordering::Acquire)
    }

    /// The client's list and this server's place in it (see `siblings`): set when the list
    /// is built or changed.
    pub(crate) fn set_siblings(&self, siblings: Siblings) {
        *self.siblings.lock().unwrap_or_else(|p| p.into_inner()) = Some(siblings);
    }

    /// Whether another entry of the list is this server's memcached, as known now.
    fn shared_now(&self) -> bool {
        self.siblings
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .is_some_and(Siblings::shared_now)
    }

    /// This (new) server's address was dropped from the list while away and not cleaned,
    /// and is now added back: it is returning, and is flushed before it serves (the keys
    /// written while it was out of the list were never recorded).
    pub(crate) fn left_while_away(&self) {
        let mut s = self.lock();
        s.left_list = true;
        self.pending.store(true, Ordering::Release);
    }

    /// A write of `wire`, whose server this is, went to another server because this one is
    /// dead.
    pub(crate) fn written_elsewhere(&self, wire: &[u8]) {
        if self.policy != OnServerReturn::DeleteWritten || !self.pending.load(Ordering::Acquire) {
            return;
        }
        self.lock().keys.add(wire, self.max);
    }

    /// A write of `wire`, whose server this is and which is alive, went to another server:
    /// under `eject` the table without a dead server places some keys of live servers
    /// elsewhere. When the dead server returns, the key comes back here, where the copy is
    /// older: it is deleted before this server next serves (with either policy: this server
    /// is alive, so it is never flushed for it, except past `written_while_away_max`).
    pub(crate) fn moved_off(&self, wire: &[u8]) {
        if self.lock().moved.add(wire, self.max) {
            self.moved_pending.store(true, Ordering::Release);
        }
    }

    /// A write of `wire`, whose own server is another one (dead, or alive and moved off by
    /// an ejection), was placed on this server. Once the outage ends the key reads from its
    /// own server again, and this copy would come back at the next outage: it is deleted
    /// before this server next serves after a return (or after its own return).
    pub(crate) fn hosted(&self, wire: &[u8]) {
        let mut s = self.lock();
        if !self.hosted_pending.load(Ordering::Acquire) {
            // (nothing recorded: the key is new to the list)
            self.hosted_since
                .store(self.returns.load(Ordering::Acquire), Ordering::Release);
        }
        if s.hosted.add(wire, self.max) {
            self.hosted_pending.store(true, Ordering::Release);
        }
    }

    /// True when the copies this server holds for others are due for deletion: a server
    /// returned since the first was written.
    #[inline]
    fn hosted_due(&self) -> bool {
        self.hosted_pending.load(Ordering::Acquire)
            && self.returns.load(Ordering::Acquire) != self.hosted_since.load(Ordering::Acquire)
    }

    /// True while the server must be cleaned before it serves.
    #[inline]
    pub(crate) fn is_pending(&self) -> bool {
        self.pending.load(Ordering::Acquire)
            || self.moved_pending.load(Ordering::Acquire)
            || self.hosted_due()
    }

    /// Cleans the returning server on `conn`. One caller at a time cleans; another one
    /// cleaning now is waited for at most `wait` (else an I/O timeout of the server's: its
    /// clean-up did not finish in the caller's time; `cut` when the operation's deadline
    /// set `wait`). What to do is read under the state's
    /// lock and the I/O is done without it, so that a write recording a key meanwhile
    /// (`written_elsewhere`, `hosted`, `moved_off`) never waits for a clean-up's I/O on a
    /// server that may be frozen (tester finding threads 2: calls waited on the lock past
    /// their operation_timeout); a key recorded during the I/O stays for the next clean-up.
    /// The server's return counts as cleaned only while `still_current()` (no marking dead
    /// since the caller's checkout): a clean-up that raced with a new marking leaves it due
    /// again, since a write this call then makes to it would be older than the ones the new
    /// outage sends elsewhere (tester finding threads 1: such a write, acknowledged, was
    /// read back after its key was rewritten elsewhere). On an error nothing is forgotten:
    /// the next checkout tries again.
    pub(crate) fn clean(
        &self,
        conn: &mut Conn,
        dialect: &Dialect,
        counters: &Counters,
        (wait, cut): (std::time::Duration, bool),
        still_current: &dyn Fn() -> bool,
    ) -> Result<()> {
        let Some(_turn) = self.take_turn(wait) else {
            return Err(Error::IoTimeout {
                server: conn.server().to_string(),
                operation_timeout: cut,
                sent: false,
            });
        };
        // (asked before the state's lock: it reads each entry's resolved addresses)
        let shared = self.policy == OnServerReturn::DeleteWritten
            && self.pending.load(Ordering::Acquire)
            && self.shared_now();
        let plan = {
            let s = self.lock();
            let returning = self.pending.load(Ordering::Acquire);
            // Its own return also deletes the copies it holds for others: their servers
            // may still be dead, and the later values went elsewhere meanwhile.
            let hosted =
                self.hosted_pending.load(Ordering::Acquire) && (returning || self.hosted_due());
            if !returning && !hosted && !self.moved_pending.load(Ordering::Acquire) {
                return Ok(()); // another caller cleaned it meanwhile
            }
            let overflow =
                s.keys.overflowed || s.moved.overflowed || (hosted && s.hosted.overflowed);
            let flush = s.moved.overflowed
                || (hosted && s.hosted.overflowed)
                || (returning
                    && (self.policy == OnServerReturn::Flush
                        || s.keys.overflowed
                        || s.left_list
                        || shared));
            let mut deleted: Vec<Box<[u8]>> = Vec::new();
            if !flush {
                let written = s.keys.keys.iter().filter(|_| returning);
                let held = s
                    .hosted
                    .keys
                    .iter()
                    .chain(&s.hosted_prev)
                    .filter(|_| hosted);
                deleted = written
                    .chain(s.moved.keys.iter())
                    .chain(held)
                    .cloned()
                    .collect();
            }
            let hosted_before = if hosted {
                s.hosted.keys.clone()
            } else {
                HashSet::new()
            };
            Plan {
                returning,
                hosted,
                flush,
                overflow,
                deleted,
                hosted_before,
            }
        };
        if plan.flush {
            dialect
                .exchange(conn, &Request::Flush { delay: None }, &mut |_, _, _, _| {})
                .and_then(|o| o.done())
                .map_err(|e| refused(e, "flush_all", counters))?;
            if plan.returning {
                Counters::bump(&counters.returns_flushed);
            }
            if plan.overflow {
                Counters::bump(&counters.away_overflows);
            }
        } else {
            let keys: Vec<&[u8]> = plan.deleted.iter().map(|k| &k[..]).collect();
            for chunk in keys.chunks(DELETE_BATCH) {
                delete_all(conn, dialect, chunk).map_err(|e| refused(e, "delete", counters))?;
            }
            counters
                .stale_deleted
                .fetch_add(keys.len() as u64, Ordering::Relaxed);
        }
        let mut s = self.lock();
        // What was flushed or deleted is forgotten; a key recorded during the I/O stays.
        let forget = |list: &mut KeyList| {
            if plan.flush {
                *list = KeyList::default();
            } else {
                for k in &plan.deleted {
                    list.keys.remove(k);
                }
            }
        };
        if plan.returning {
            forget(&mut s.keys);
            let all_done = s.keys.keys.is_empty() && !s.keys.overflowed;
            if all_done && still_current() {
                s.left_list = false;
                self.pending.store(false, Ordering::Release);
                // Every server holding copies for others deletes them before it next serves.
                self.returns.fetch_add(1, Ordering::AcqRel);
            }
        }
        if plan.hosted {
            // The keys just deleted (or flushed) are deleted once more at the next change
            // (see `hosted_prev`), then forgotten; one recorded during the I/O stays in the
            // list, due at the next change.
            let now = std::mem::take(&mut s.hosted);
            if now.overflowed {
                s.hosted.overflowed = true;
            } else {
                s.hosted.keys = (now.keys.into_iter())
                    .filter(|k| !plan.hosted_before.contains(k))
                    .collect();
            }
            s.hosted_prev = plan.hosted_before;
            let again =
                !s.hosted_prev.is_empty() || !s.hosted.keys.is_empty() || s.hosted.overflowed;
            self.hosted_since
                .store(self.returns.load(Ordering::Acquire), Ordering::Release);
            self.hosted_pending.store(again, Ordering::Release);
        }
        forget(&mut s.moved);
        let moved_left = !s.moved.keys.is_empty() || s.moved.overflowed;
        self.moved_pending.store(moved_left, Ordering::Release);
        Ok(())
    }

    /// The turn to clean, waiting at most `wait` for another caller's clean-up; `None` when
    /// the time ran out first.
    fn take_turn(&self, wait: std::time::Duration) -> Option<Turn<'_>> {
        let start = std::time::Instant::now();
        let mut busy = self.cleaning.lock().unwrap_or_else(|p| p.into_inner());
        // Bounded: each turn waits for what is left of `wait`, and ends the loop once none is.
        while *busy {
            let left = wait.checked_sub(start.elapsed()).filter(|l| !l.is_zero())?;
            busy = self
                .cleaned
                .wait_timeout(busy, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        *busy = true;
        Some(Turn(self))
    }
}

/// A clean-up's decisions, read under the state's lock before its I/O.
struct Plan {
    /// The server's own return is cleaned.
    returning: bool,
    /// The copies it holds for others are deleted.
    hosted: bool,
    /// By `flush_all` (else by deleting `deleted`).
    flush: bool,
    /// A list overflowed `written_while_away_max` (counted as `away_overflows`).
    overflow: bool,
    /// The keys deleted (none when flushing).
    deleted: Vec<Box<[u8]>>,
    /// With `hosted`, the copies held for others as they were before the I/O.
    hosted_before: HashSet<Box<[u8]>>,
}

/// One caller's turn to clean ([`AwayGuard::take_turn`]): given back when dropped, waking
/// the callers waiting for it.
struct Turn<'a>(&'a AwayGuard);

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        *self.0.cleaning.lock().unwrap_or_else(|p| p.into_inner()) = false;
        self.0.cleaned.notify_all();
    }
}

/// A clean-up the server answered with an error instead of doing it (memcached `-F`
/// refuses `flush_all`; a `SERVER_ERROR`; a reply that is no answer): the server cannot
/// serve before its clean-up, so this is a failure of the server as a broken connection is
/// (it is marked dead again and retried later, its keys served elsewhere meanwhile), said
/// as the clean-up's (tester finding hostile3 2: the reply failed every call of the server
/// while it stayed alive, and its keys never moved), counted in `cleanups_refused` (under
/// failover no call shows the error: tester finding retest31 7). Other errors are returned
/// as they are.
fn refused(e: Error, request: &str, counters: &Counters) -> Error {
    let (server, said) = match e {
        Error::Server { server, message } => (server, format!("SERVER_ERROR {message}")),
        Error::Client { server, message } => (server, message),
        Error::Protocol { server, detail } => (server, detail),
        e => return e,
    };
    // (failover hides the error from the calls: the metric shows it)
    Counters::bump(&counters.cleanups_refused);
    Error::Io {
        server,
        source: std::io::Error::other(format!(
            "on_server_return's clean-up ({request}) was refused: {said}; the server stays \
             dead until it accepts it"
        )),
    }
}

/// Deletes `keys` in one pipelined round trip (a missing key is fine).
fn delete_all(conn: &mut Conn, dialect: &Dialect, keys: &[&[u8]]) -> Result<()> {
    let n = keys.len();
    if n == 0 {
        return Ok(());
    }
    let like: Request<'_> = Request::Delete {
        key: b"",
        quiet: false,
        version: None,
    };
    let tag = conn.take_tags(batch_tags(n));
    let buf = conn.begin();
    for (k, key) in keys.iter().enumerate() {
        let req: Request<'_> = Request::Delete {
            key,
            quiet: false,
            version: None,
        };
        dialect.encode(buf, &req, tag.wrapping_add(k as u32));
    }
    if dialect.batches_tagged() {
        dialect.encode_barrier(buf, tag.wrapping_add(n as u32));
    }
    conn.send()?;
    let mut first: Option<Error> = None;
    dialect.read_batch(conn, &like, tag, n, &mut |_, r: Result<Outcome>| {
        if let Err(e) = r {
            first.get_or_insert(e);
        }
    })?;
    conn.finish_read_whole()?;
    first.map_or(Ok(()), Err)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tester finding failover2 3: a marking that comes before the last outage's clean-up
    /// (a late answer on an old connection counted as a return, then a new failure) cleared
    /// the keys written elsewhere, and the return served their older values.
    #[test]
    fn a_marking_before_the_clean_up_keeps_the_keys_written_elsewhere() {
        let g = ReturnPolicy::new(OnServerReturn::DeleteWritten, 10).guard();
        g.server_down();
        g.written_elsewhere(b"k");
        g.server_down();
        assert!(
            g.lock().keys.keys.contains(&b"k"[..]),
            "kept for the clean-up"
        );
        assert!(g.is_pending());
    }

    /// The count moves before the marking is seen (`marking`): the copies held for others
    /// are due at once (tester finding retest28 1).
    #[test]
    fn the_copies_held_for_others_are_due_before_a_marking_is_seen() {
        let p = ReturnPolicy::new(OnServerReturn::Flush, 10);
        let (dead, holder) = (p.guard(), p.guard());
        holder.hosted(b"k");
        assert!(!holder.is_pending());
        dead.marking();
        assert!(holder.is_pending(), "deleted before the holder next serves");
    }

    /// Every marking changes placement: copies held for others are due for deletion.
    #[test]
    fn a_marking_makes_the_copies_held_for_others_due() {
        let p = ReturnPolicy::new(OnServerReturn::DeleteWritten, 10);
        let (dead, holder) = (p.guard(), p.guard());
        holder.hosted(b"k");
        assert!(!holder.is_pending());
        dead.server_down();
        assert!(holder.is_pending(), "deleted before the holder next serves");
    }
}
