//! Rendezvous (highest random weight) hashing as pymemcache's `HashClient` does it.
//!
//! pymemcache scores each node with `murmur3_32("%s-%s" % (node, key), seed=0)` where `node`
//! is `"host:port"` and `key` is the Python `str` key; the highest score wins, a tie goes to
//! the larger node name. Its pure-Python murmur3 reads characters with `ord()` and only the
//! low 8 bits of each survive, so a key is hashed as its Unicode code points `& 0xff`, and
//! the length is counted in characters. The key is hashed before `key_prefix` is added.

use super::hash::Murmur3;

/// The node names and their lookup order.
#[derive(Clone, Debug)]
pub(crate) struct Rendezvous {
    /// `"host:port"` per server index.
    names: Vec<String>,
}

/// Feeds `bytes`, read as UTF-8, into `m` as pymemcache's murmur3 sees a `str`: one byte
/// (`code point & 0xff`) per character.
fn push_chars(m: &mut Murmur3, bytes: &[u8]) {
    match std::str::from_utf8(bytes) {
        Ok(s) if s.is_ascii() => bytes.iter().for_each(|&b| m.push(b)),
        Ok(s) => s.chars().for_each(|c| m.push(c as u32 as u8)),
        Err(_) => String::from_utf8_lossy(bytes)
            .chars()
            .for_each(|c| m.push(c as u32 as u8)),
    }
}

impl Rendezvous {
    /// Nodes named `"host:port"`.
    pub(crate) fn new(names: Vec<String>) -> Rendezvous {
        Rendezvous { names }
    }

    /// pymemcache's score of `key` on node `i`.
    pub(crate) fn score(&self, i: usize, key: &[u8]) -> u32 {
        let mut m = Murmur3::new(0);
        push_chars(&mut m, self.names[i].as_bytes());
        m.push(b'-');
        push_chars(&mut m, key);
        m.finish()
    }

    /// The winning node among those `candidate` accepts (all, for plain placement).
    pub(crate) fn locate_among(
        &self,
        key: &[u8],
        candidate: &dyn Fn(usize) -> bool,
    ) -> Option<usize> {
        let mut best: Option<(u32, usize)> = None;
        for i in 0..self.names.len() {
            if !candidate(i) {
                continue;
            }
            let s = self.score(i, key);
            best = match best {
                None => Some((s, i)),
                Some((bs, _)) if s > bs => Some((s, i)),
                Some((bs, bi)) if s == bs && self.names[i] > self.names[bi] => Some((s, i)),
                keep => keep,
            };
        }
        best.map(|(_, i)| i)
    }
}
