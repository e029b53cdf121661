//! The driver line protocol: one unit of work, and what a contestant reports back.
//!
//! Every contestant, in-process or a subprocess peer, does the same [`Work`] and answers
//! with a [`Reply`]. Subprocess drivers read one command per line on stdin and write one
//! reply per line on stdout; `bench/peers/PROTOCOL.md` is the specification.

use std::fmt;

/// A single-key operation of the sequential loops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `set` (always stores).
    Set,
    /// `get` (keys are expected to exist).
    Get,
    /// `delete`.
    Delete,
    /// `add` (keys are expected to be missing).
    Add,
    /// `replace` (keys are expected to exist).
    Replace,
}

impl Op {
    /// The protocol word.
    pub fn name(self) -> &'static str {
        match self {
            Op::Set => "set",
            Op::Get => "get",
            Op::Delete => "delete",
            Op::Add => "add",
            Op::Replace => "replace",
        }
    }

    fn parse(s: &str) -> Option<Op> {
        Some(match s {
            "set" => Op::Set,
            "get" => Op::Get,
            "delete" => Op::Delete,
            "add" => Op::Add,
            "replace" => Op::Replace,
            _ => return None,
        })
    }
}

/// One unit of work. Keys are `PREFIX` followed by a decimal index; values are
/// [`value_bytes`] of the given size.
#[derive(Clone, Debug, PartialEq)]
pub enum Work {
    /// `seq OP N SIZE PREFIX SLICE`: one thread, keys `PREFIX0..PREFIX{N-1}` in order, one
    /// operation each; report the time of every `SLICE` operations too.
    Seq {
        /// The operation.
        op: Op,
        /// How many operations (and keys).
        n: u64,
        /// Value size for stores.
        size: usize,
        /// Key prefix.
        prefix: String,
        /// Slice length for `slices=`.
        slice: u64,
    },
    /// `mget K CALLS PREFIX`: one thread, `CALLS` multi-gets of keys `PREFIX0..PREFIX{K-1}`.
    Mget {
        /// Keys per call.
        keys: u32,
        /// How many calls.
        calls: u64,
        /// Key prefix.
        prefix: String,
    },
    /// `fill KEYSPACE SIZE COMPRESS PREFIX VALUE`: one thread stores keys
    /// `PREFIX0..PREFIX{KEYSPACE-1}` once each, with the client configured as for `mix`
    /// (compression when `COMPRESS` is 1), values of kind `VALUE`.
    Fill {
        /// How many keys.
        keyspace: u32,
        /// Value size.
        size: usize,
        /// Compression on.
        compress: bool,
        /// Key prefix.
        prefix: String,
        /// Which value.
        value: ValueKind,
    },
    /// `mix THREADS OPS SIZE KEYSPACE GETPCT MGET POOL COMPRESS PREFIX VALUE`: `THREADS` threads share
    /// one client (at most `POOL` connections per server; peers that cannot share use one client
    /// per thread); each does `OPS` operations on random keys below `KEYSPACE`: with probability
    /// `GETPCT`% a get (a multi-get of `MGET` keys when `MGET` > 1), otherwise a set of `SIZE` bytes.
    /// `COMPRESS` 1 turns on the client's zlib compression of large values; values of kind `VALUE`.
    Mix {
        /// Threads.
        threads: u32,
        /// Operations per thread.
        ops: u64,
        /// Value size.
        size: usize,
        /// Keys `PREFIX0..PREFIX{KEYSPACE-1}`.
        keyspace: u32,
        /// Percent of gets.
        get_pct: u32,
        /// Keys per get.
        mget: u32,
        /// Pool size per server.
        pool: u32,
        /// Compression on.
        compress: bool,
        /// Key prefix.
        prefix: String,
        /// Which value.
        value: ValueKind,
    },
}

impl fmt::Display for Work {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Work::Seq {
                op,
                n,
                size,
                prefix,
                slice,
            } => write!(f, "seq {} {n} {size} {prefix} {slice}", op.name()),
            Work::Mget {
                keys,
                calls,
                prefix,
            } => write!(f, "mget {keys} {calls} {prefix}"),
            Work::Fill {
                keyspace,
                size,
                compress,
                prefix,
                value,
            } => write!(
                f,
                "fill {keyspace} {size} {} {prefix} {}",
                u8::from(*compress),
                value.name()
            ),
            Work::Mix {
                threads,
                ops,
                size,
                keyspace,
                get_pct,
                mget,
                pool,
                compress,
                prefix,
                value,
            } => write!(
                f,
                "mix {threads} {ops} {size} {keyspace} {get_pct} {mget} {pool} {} {prefix} {}",
                u8::from(*compress),
                value.name()
            ),
        }
    }
}

impl Work {
    /// Parses a command line (the reverse of `Display`).
    #[allow(dead_code)] // used by the tests and by in-process drivers run as subprocesses
    pub fn parse(line: &str) -> Option<Work> {
        let w: Vec<&str> = line.split_whitespace().collect();
        let n = |i: usize| -> Option<u64> { w.get(i)?.parse().ok() };
        match *w.first()? {
            "seq" if w.len() == 6 => Some(Work::Seq {
                op: Op::parse(w[1])?,
                n: n(2)?,
                size: n(3)? as usize,
                prefix: w[4].to_string(),
                slice: n(5)?,
            }),
            "mget" if w.len() == 4 => Some(Work::Mget {
                keys: n(1)? as u32,
                calls: n(2)?,
                prefix: w[3].to_string(),
            }),
            "fill" if w.len() == 6 => Some(Work::Fill {
                keyspace: n(1)? as u32,
                size: n(2)? as usize,
                compress: n(3)? != 0,
                prefix: w[4].to_string(),
                value: ValueKind::parse(w[5])?,
            }),
            "mix" if w.len() == 11 => Some(Work::Mix {
                threads: n(1)? as u32,
                ops: n(2)?,
                size: n(3)? as usize,
                keyspace: n(4)? as u32,
                get_pct: n(5)? as u32,
                mget: n(6)? as u32,
                pool: n(7)? as u32,
                compress: n(8)? != 0,
                prefix: w[9].to_string(),
                value: ValueKind::parse(w[10])?,
            }),
            _ => None,
        }
    }

    /// Operations this work performs in total (calls, for `mget`).
    pub fn ops(&self) -> u64 {
        match self {
            Work::Seq { n, .. } => *n,
            Work::Mget { calls, .. } => *calls,
            Work::Fill { keyspace, .. } => u64::from(*keyspace),
            Work::Mix { threads, ops, .. } => u64::from(*threads) * ops,
        }
    }
}

/// Which value a store writes (the same bytes in every driver).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ValueKind {
    /// `letters`: byte `i` is `'a' + (7i + i/13) mod 26`; zlib's default level packs 30,800
    /// of them into about 190 bytes (about 160:1). Every scenario's value.
    Letters,
    /// `digits`: the decimal numbers 0, 1, 2, ... each followed by one space, cut at the size
    /// (`0 1 2 3 ...`, seed 001's text); about 2.15:1 at zlib's default level. The bulk
    /// scenario's second value.
    Digits,
}

impl ValueKind {
    /// Both, in report order.
    pub const ALL: [ValueKind; 2] = [ValueKind::Letters, ValueKind::Digits];

    /// The protocol word.
    pub fn name(self) -> &'static str {
        match self {
            ValueKind::Letters => "letters",
            ValueKind::Digits => "digits",
        }
    }

    /// The kind a protocol word names.
    pub fn parse(s: &str) -> Option<ValueKind> {
        ValueKind::ALL.into_iter().find(|k| k.name() == s)
    }

    /// The value of `size` bytes.
    pub fn bytes(self, size: usize) -> Vec<u8> {
        match self {
            ValueKind::Letters => value_bytes(size),
            ValueKind::Digits => {
                use std::io::Write as _;
                let mut v = Vec::with_capacity(size + 12);
                let mut i = 0u64;
                while v.len() < size {
                    let _ = write!(v, "{i} ");
                    i += 1;
                }
                v.truncate(size);
                v
            }
        }
    }
}

/// The value every contestant stores outside the bulk scenario's second value: byte `i` is
/// `'a' + (7i + i/13) mod 26` — the same in every driver ([`ValueKind::Letters`]).
pub fn value_bytes(size: usize) -> Vec<u8> {
    (0..size)
        .map(|i| b'a' + ((i * 7 + i / 13) % 26) as u8)
        .collect()
}

/// A contestant's answer to one [`Work`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Reply {
    /// Wall time of the whole work, nanoseconds.
    pub ns: u64,
    /// Failed operations (errors, and misses where a hit was expected).
    pub errors: u64,
    /// Wall time of each slice (`seq`), nanoseconds.
    pub slices: Vec<u64>,
    /// Latency percentiles p50, p99, p99.9 in microseconds (`mix`).
    pub lat_us: Option<[f64; 3]>,
    /// Mean get latency, µs (`mix`).
    pub get_us: Option<f64>,
    /// Mean set latency, µs (`mix`).
    pub set_us: Option<f64>,
}

/// What a contestant said.
#[derive(Clone, Debug, PartialEq)]
pub enum Answer {
    /// Done.
    Ok(Reply),
    /// The contestant cannot do this work (said why).
    NotApplicable(String),
}

impl fmt::Display for Reply {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ok ns={} errors={}", self.ns, self.errors)?;
        if !self.slices.is_empty() {
            let s: Vec<String> = self.slices.iter().map(u64::to_string).collect();
            write!(f, " slices={}", s.join(","))?;
        }
        if let Some([a, b, c]) = self.lat_us {
            write!(f, " lat={a:.1},{b:.1},{c:.1}")?;
        }
        if let Some(g) = self.get_us {
            write!(f, " get_us={g:.2}")?;
        }
        if let Some(s) = self.set_us {
            write!(f, " set_us={s:.2}")?;
        }
        Ok(())
    }
}

/// Parses a reply line: `ok key=value...`, `na REASON` or `err MESSAGE`.
pub fn parse_answer(line: &str) -> Result<Answer, String> {
    let line = line.trim();
    if let Some(reason) = line.strip_prefix("na") {
        return Ok(Answer::NotApplicable(reason.trim().to_string()));
    }
    if let Some(msg) = line.strip_prefix("err") {
        return Err(msg.trim().to_string());
    }
    let Some(rest) = line.strip_prefix("ok") else {
        return Err(format!("unexpected reply {line:?}"));
    };
    let mut r = Reply::default();
    let mut seen_ns = false;
    for tok in rest.split_whitespace() {
        let (k, v) = tok
            .split_once('=')
            .ok_or_else(|| format!("bad field {tok:?} in {line:?}"))?;
        let num = |s: &str| -> Result<f64, String> {
            s.parse::<f64>()
                .map_err(|_| format!("bad number {s:?} in {line:?}"))
        };
        match k {
            "ns" => {
                r.ns = num(v)? as u64;
                seen_ns = true;
            }
            "errors" => r.errors = num(v)? as u64,
            "slices" => {
                r.slices = v
                    .split(',')
                    .filter(|s| !s.is_empty())
                    .map(|s| num(s).map(|x| x as u64))
                    .collect::<Result<_, _>>()?
            }
            "lat" => {
                let p: Vec<f64> = v.split(',').map(num).collect::<Result<_, _>>()?;
                if p.len() != 3 {
                    return Err(format!("lat needs 3 values in {line:?}"));
                }
                r.lat_us = Some([p[0], p[1], p[2]]);
            }
            "get_us" => r.get_us = Some(num(v)?),
            "set_us" => r.set_us = Some(num(v)?),
            _ => {} // unknown fields are ignored, so drivers may add their own
        }
    }
    if !seen_ns {
        return Err(format!("reply without ns= : {line:?}"));
    }
    Ok(Answer::Ok(r))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_roundtrip() {
        for w in [
            Work::Seq {
                op: Op::Replace,
                n: 10,
                size: 100,
                prefix: "p".into(),
                slice: 5,
            },
            Work::Mget {
                keys: 5,
                calls: 7,
                prefix: "m".into(),
            },
            Work::Fill {
                keyspace: 4,
                size: 30,
                compress: true,
                prefix: "f".into(),
                value: ValueKind::Digits,
            },
            Work::Mix {
                threads: 3,
                ops: 9,
                size: 64,
                keyspace: 100,
                get_pct: 80,
                mget: 1,
                pool: 20,
                compress: true,
                prefix: "t".into(),
                value: ValueKind::Letters,
            },
        ] {
            assert_eq!(Work::parse(&w.to_string()), Some(w));
        }
        // A value kind no driver knows does not parse.
        assert_eq!(Work::parse("fill 4 30 1 f words"), None);
        assert_eq!(Work::parse("fill 4 30 1 f"), None);
    }

    #[test]
    fn the_digits_value_is_seed_001s_text() {
        let v = ValueKind::Digits.bytes(30_800);
        assert_eq!(v.len(), 30_800);
        assert!(v.starts_with(b"0 1 2 3 4 5 6 7 8 9 10 11 "));
        // The same bytes as Python's " ".join(map(str, range(n)))[:n].
        let joined: Vec<u8> = (0..30_800u32)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(" ")
            .into_bytes();
        assert_eq!(&v[..], &joined[..30_800]);
        assert_eq!(ValueKind::Letters.bytes(40), value_bytes(40));
        assert_eq!(ValueKind::parse("digits"), Some(ValueKind::Digits));
    }

    #[test]
    fn reply_roundtrip() {
        let r = Reply {
            ns: 5,
            errors: 1,
            slices: vec![1, 2],
            lat_us: Some([1.0, 2.0, 3.0]),
            get_us: Some(1.5),
            set_us: Some(2.5),
        };
        assert_eq!(parse_answer(&r.to_string()), Ok(Answer::Ok(r)));
        assert_eq!(
            parse_answer("na no threads"),
            Ok(Answer::NotApplicable("no threads".into()))
        );
        assert!(parse_answer("err boom").is_err());
        assert!(parse_answer("ok errors=1").is_err());
    }
}
