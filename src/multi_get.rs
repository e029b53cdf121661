//! The per-thread working memory of a multi-key retrieval, and the view of one server's
//! share of the keys that the protocol encoders read.
//!
//! Why per thread: a multi-get used to build several vectors in proportion to its keys on
//! every call (wire keys, results, groups, key lists). From Perl, the first allocation of a
//! kilobyte or more in a call makes glibc consolidate the memory the caller freed just before
//! (its previous result), measured at ~230k instructions per 500-key call. The vectors here
//! are kept from call to call instead, and hold only offsets and indices, never borrowed keys.

use crate::dialect::WireKeys;
use crate::error::Error;
use crate::key::Keys;
use std::cell::RefCell;

/// `wire` entry of a key sent as the caller gave it (no prefix, no sanitizing).
pub(crate) const AS_GIVEN: u32 = u32::MAX;
/// `state` of a key not found (or not yet answered).
pub(crate) const MISS: u32 = 0;
/// `state` of a key whose value was handed over.
pub(crate) const HIT: u32 = 1;
/// `state` of a failed key: `FAILED + i` where `errors[i]` is its error.
pub(crate) const FAILED: u32 = 2;
/// `server` entry of a key that goes to no server (its error is recorded).
pub(crate) const NOWHERE: u32 = u32::MAX;

/// Working memory of one multi-key retrieval.
#[derive(Default)]
pub(crate) struct Scratch {
    /// Wire keys that differ from the caller's (prefixed or sanitized), back to back.
    pub arena: Vec<u8>,
    /// Per key: `(start, len)` of its wire key in `arena`, or `(AS_GIVEN, 0)`.
    pub wire: Vec<(u32, u32)>,
    /// Per key: `MISS`, `HIT` or `FAILED + i`.
    pub state: Vec<u32>,
    /// Per key: its server, or `NOWHERE`.
    pub server: Vec<u32>,
    /// Key indices grouped by server (a counting sort of `server`).
    pub order: Vec<u32>,
    /// Where each server's keys start in `order` (one entry per server, plus the end).
    pub starts: Vec<u32>,
    /// Per server: the next free place in `order`, while it is filled.
    pub cursor: Vec<u32>,
    /// The errors `state` points to.
    pub errors: Vec<Error>,
}

impl Scratch {
    /// Key `i`'s result once the retrieval is over: a hit, a miss, or its error.
    pub(crate) fn result(&self, i: usize) -> crate::error::Result<bool> {
        match self.state[i] {
            MISS => Ok(false),
            HIT => Ok(true),
            f => Err(self.errors[(f - FAILED) as usize].clone()),
        }
    }
}

impl Scratch {
    /// Empties every vector, keeping its memory (unless a huge call grew it).
    pub(crate) fn reset(&mut self) {
        const KEEP_BYTES: usize = 1 << 20;
        const KEEP_KEYS: usize = 1 << 16;
        if self.arena.capacity() > KEEP_BYTES || self.wire.capacity() > KEEP_KEYS {
            *self = Scratch::default();
        }
        self.arena.clear();
        self.wire.clear();
        self.state.clear();
        self.server.clear();
        self.order.clear();
        self.starts.clear();
        self.cursor.clear();
        self.errors.clear();
    }

    /// Groups the keys by `server` (those with one): a counting sort into `order`, server
    /// `j`'s keys at `starts[j]..starts[j + 1]`.
    pub(crate) fn group_by_server(&mut self, servers: usize) {
        if servers == 1 {
            // Already in order: the keys that have a server.
            let placed = self
                .server
                .iter()
                .enumerate()
                .filter(|(_, &j)| j != NOWHERE);
            self.order.extend(placed.map(|(k, _)| k as u32));
            self.starts.extend_from_slice(&[0, self.order.len() as u32]);
            return;
        }
        self.starts.resize(servers + 1, 0);
        for &j in &self.server {
            if j != NOWHERE {
                self.starts[j as usize + 1] += 1;
            }
        }
        for j in 0..servers {
            self.starts[j + 1] += self.starts[j];
        }
        self.order.resize(self.starts[servers] as usize, 0);
        self.cursor.extend_from_slice(&self.starts[..servers]);
        for (k, &j) in self.server.iter().enumerate() {
            if j != NOWHERE {
                self.order[self.cursor[j as usize] as usize] = k as u32;
                self.cursor[j as usize] += 1;
            }
        }
    }

    /// Records `e` as the outcome of every key in `keys`.
    pub(crate) fn fail(&mut self, keys: impl IntoIterator<Item = usize>, e: Error) {
        fail_into(&mut self.state, &mut self.errors, keys, e);
    }
}

/// [`Scratch::fail`] on the two fields it changes, for a caller that holds others borrowed.
pub(crate) fn fail_into(
    state: &mut [u32],
    errors: &mut Vec<Error>,
    keys: impl IntoIterator<Item = usize>,
    e: Error,
) {
    let code = FAILED + errors.len() as u32;
    errors.push(e);
    for k in keys {
        state[k] = code;
    }
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Runs `f` with this thread's scratch, emptied; with a fresh one when the thread's is in use
/// (a callback of the retrieval started another on the same thread).
pub(crate) fn with_scratch<T>(f: impl FnOnce(&mut Scratch) -> T) -> T {
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut s) => {
            s.reset();
            f(&mut s)
        }
        Err(_) => f(&mut Scratch::default()),
    })
}

/// One server's keys of a multi-key retrieval, by index, as the encoders and decoders read
/// them: key `i` is caller key `members[i]`, sent as given or from the arena.
pub(crate) struct Selection<'a, K: ?Sized> {
    /// Caller key indices, in the order they are sent.
    pub members: &'a [u32],
    /// The scratch's `arena`.
    pub arena: &'a [u8],
    /// The scratch's `wire`.
    pub wire: &'a [(u32, u32)],
    /// The caller's keys.
    pub keys: &'a K,
}

impl<K: Keys + ?Sized> WireKeys for Selection<'_, K> {
    fn count(&self) -> usize {
        self.members.len()
    }

    #[inline]
    fn key(&self, i: usize) -> &[u8] {
        let k = self.members[i] as usize;
        match self.wire[k] {
            // A key that reached a server's share was accepted, so this is never the error.
            (AS_GIVEN, _) => self.keys.key(k).unwrap_or(&[]),
            (start, len) => &self.arena[start as usize..(start + len) as usize],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_selection_reads_given_and_rewritten_keys() {
        let given: [&[u8]; 3] = [b"a", b"bb", b"ccc"];
        let arena = b"p:bbp:ccc".to_vec();
        let wire = [(AS_GIVEN, 0), (0, 4), (4, 5)];
        let sel = Selection {
            members: &[2, 0, 1],
            arena: &arena,
            wire: &wire,
            keys: &given[..],
        };
        let keys: Vec<&[u8]> = (0..sel.count()).map(|i| sel.key(i)).collect();
        assert_eq!(keys, [&b"p:ccc"[..], b"a", b"p:bb"]);
    }

    #[test]
    fn the_scratch_is_reused_and_a_nested_call_gets_its_own() {
        with_scratch(|s| {
            s.state.extend([MISS; 100]);
            s.fail([3, 5], Error::Config("x".into()));
            assert_eq!(s.state[5], FAILED);
            with_scratch(|inner| assert!(inner.state.is_empty(), "nested: a fresh one"));
        });
        with_scratch(|s| {
            assert!(s.state.is_empty() && s.errors.is_empty());
            assert!(s.state.capacity() >= 100, "the memory is kept");
        });
    }
}
