//! Consistent-hashing continuums ("ketama"): points on a 32-bit circle, each owned by a
//! server; a key belongs to the first point at or after its hash, wrapping to the first
//! point. Lookups are a binary search over a sorted `Vec`.

use super::hash;

/// Which point wins when two servers hash a point to the same value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Collision {
    /// The point added first (libmemcached and twemproxy sort with glibc's stable `qsort`;
    /// Cache::Memcached::Fast inserts after equal points and searches for the first).
    FirstWins,
    /// The point added last (Java `TreeMap.put` replaces: spymemcached, Whalin).
    LastWins,
}

/// A sorted continuum of `(point, server index)`.
#[derive(Clone, Debug, Default)]
pub(crate) struct Continuum {
    points: Vec<(u32, u32)>,
}

impl Continuum {
    /// Sorts the points (stable, by value) and keeps one owner per value.
    pub(crate) fn build(mut points: Vec<(u32, u32)>, collision: Collision) -> Continuum {
        points.sort_by_key(|p| p.0);
        match collision {
            Collision::FirstWins => points.dedup_by_key(|p| p.0),
            Collision::LastWins => {
                points.reverse();
                points.dedup_by_key(|p| p.0);
                points.reverse();
            }
        }
        Continuum { points }
    }

    /// How many points the continuum has.
    pub(crate) fn len(&self) -> usize {
        self.points.len()
    }

    /// The server owning the first point `>= h`, wrapping around.
    pub(crate) fn find(&self, h: u32) -> usize {
        let i = self.points.partition_point(|p| p.0 < h);
        let i = if i == self.points.len() { 0 } else { i };
        self.points[i].1 as usize
    }
}

/// How many MD5-derived points a server gets on a weighted libmemcached-style continuum
/// (libmemcached `KETAMA_WEIGHTED`, twemproxy, spymemcached with weights), computed in
/// 32-bit float exactly as they do:
/// `floorf((float)(pct * 160 / 4 * (float)n + 0.0000000001)) * 4`, `pct = (float)w / (float)W`.
pub(crate) fn weighted_points(weight: u32, total_weight: u64, servers: usize) -> u32 {
    let pct = weight as f32 / total_weight as f32;
    let x = pct * 160.0f32 / 4.0f32 * servers as f32;
    let x = ((x as f64) + 0.000_000_000_1) as f32;
    (x.floor() as u32) * 4
}

/// Adds 4 points per MD5 digest of `"<name>-<i>"` for `i in 0..points/4`.
pub(crate) fn add_md5_points(out: &mut Vec<(u32, u32)>, server: u32, name: &[u8], points: u32) {
    let mut buf = [0u8; 20];
    for i in 0..points / 4 {
        let mut h = md5::Md5::default();
        md5::Digest::update(&mut h, name);
        md5::Digest::update(&mut h, b"-");
        md5::Digest::update(&mut h, hash::decimal(i as u64, &mut buf));
        let d: [u8; 16] = md5::Digest::finalize(h).into();
        for n in 0..4 {
            out.push((hash::md5_word(&d, n), server));
        }
    }
}

/// Adds one point per `"<name>-<i>"` for `i in 0..points`, each hashed with `f`.
pub(crate) fn add_single_points(
    out: &mut Vec<(u32, u32)>,
    server: u32,
    name: &[u8],
    points: u32,
    f: super::parts::KeyHash,
) {
    let mut buf = Vec::with_capacity(name.len() + 12);
    let mut digits = [0u8; 20];
    for i in 0..points {
        buf.clear();
        buf.extend_from_slice(name);
        buf.push(b'-');
        buf.extend_from_slice(hash::decimal(i as u64, &mut digits));
        out.push((f.hash(&buf), server));
    }
}

/// Cache::Memcached::Fast's ketama points for one server: `round(points × weight)` values,
/// each the CRC-32 of `host "\0" port` continued with the previous point as 4
/// little-endian bytes (the first continued with 0). That is what Cache::Memcached::Fast
/// 0.28 (Debian) does; a later upstream revision hashes the point's index instead.
pub(crate) fn add_cmf_points(
    out: &mut Vec<(u32, u32)>,
    server: u32,
    host: &[u8],
    port: &[u8],
    count: u32,
) {
    let base = hash::crc32_continue(hash::crc32_continue(hash::crc32(host), b"\0"), port);
    let mut point: u32 = 0;
    for _ in 0..count {
        point = hash::crc32_continue(base, &point.to_le_bytes());
        out.push((point, server));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_wraps_and_ties() {
        let c = Continuum::build(
            vec![(10, 0), (20, 1), (20, 2), (30, 3)],
            Collision::FirstWins,
        );
        assert_eq!(c.len(), 3);
        assert_eq!(c.find(0), 0);
        assert_eq!(c.find(10), 0);
        assert_eq!(c.find(11), 1);
        assert_eq!(c.find(31), 0);
        let c = Continuum::build(vec![(20, 1), (20, 2)], Collision::LastWins);
        assert_eq!(c.find(5), 2);
    }

    #[test]
    fn weighted_points_at_equal_weight() {
        // 32-bit float rounding: 25, 47, 50, 55 and 61 equal servers get 156 points each, as
        // in libmemcached and twemproxy (the 25-server fixture case checks it against them).
        for n in 1..=64 {
            let want = if [25, 47, 50, 55, 61].contains(&n) {
                156
            } else {
                160
            };
            assert_eq!(weighted_points(1, n as u64, n), want, "{n} servers");
        }
    }
}
