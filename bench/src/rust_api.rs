//! The `mcpool` contestant through the Rust API, in this process.

use super::contestant::Contestant;
use super::load::{self, MixOp};
use super::sys;
use super::work::{value_bytes, Answer, Op, Work};
use mcpool::{Client, Protocol, StoreOutcome, ValueFormat};

/// How the client is configured for a piece of work (pool size, compression).
#[derive(Clone, Copy, PartialEq, Eq)]
struct Shape {
    pool: u32,
    compress: bool,
}

/// `mcpool::Client`, one per shape of work, shared by every thread of a `mix`.
pub struct RustApi {
    addr: String,
    protocol: Protocol,
    zero_copy: bool,
    client: Option<(Shape, Client)>,
}

/// `--op-hook noop`: the clients get a no-op per-operation handler (the hook's cost).
pub static OP_HOOK_NOOP: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The name of the row that reads multi-gets through the zero-copy path.
pub const ZERO_COPY: &str = "mcpool-zero-copy";

/// The configuration stated in the report.
pub fn note(zero_copy: bool) -> String {
    let reads = if zero_copy {
        "multi-gets through get_multi_each, the zero-copy path (values borrowed from the \
         connection's buffer, as the libmemcached driver's reused memcached_result_st)"
    } else {
        "gets and multi-gets through get and get_multi, the API a user writes first (an owned \
         Item per hit)"
    };
    format!(
        "mcpool::Client, text protocol, TCP_NODELAY, pool max_size 20 (min_idle 1), one client \
         shared by every thread; {reads}; bulk: zlib format (flag 8), threshold 30 KiB, the \
         library's default level"
    )
}

impl RustApi {
    /// A contestant against `addr`; multi-gets through `get_multi_each` when `zero_copy`.
    pub fn new(addr: &str, protocol: Protocol, zero_copy: bool) -> RustApi {
        RustApi {
            addr: addr.to_string(),
            protocol,
            zero_copy,
            client: None,
        }
    }

    /// One multi-get of `keys`: true when every key was a hit.
    fn mget(&self, c: &Client, keys: &[String]) -> bool {
        if self.zero_copy {
            c.get_multi_each(keys, |_, _, _| {})
                .iter()
                .all(|r| matches!(r, Ok(true)))
        } else {
            c.get_multi(keys).iter().all(|r| matches!(r, Ok(Some(_))))
        }
    }

    fn client(&mut self, shape: Shape) -> Result<Client, String> {
        if let Some((s, c)) = &self.client {
            if *s == shape {
                return Ok(c.clone());
            }
        }
        let mut b = Client::builder()
            .server(&self.addr)
            .max_size(shape.pool.max(1))
            .min_idle(1)
            .compression(shape.compress)
            .value_format(ValueFormat::Pylibmc)
            .protocol(self.protocol);
        if OP_HOOK_NOOP.load(std::sync::atomic::Ordering::Relaxed) {
            b = b.on_operation(|_| {});
        }
        let c = b.build().map_err(|e| format!("mcpool: {e}"))?;
        self.client = Some((shape, c.clone()));
        Ok(c)
    }
}

fn key(buf: &mut String, prefix: &str, i: u64) {
    use std::fmt::Write;
    buf.clear();
    buf.push_str(prefix);
    let _ = write!(buf, "{i}");
}

impl Contestant for RustApi {
    fn run(&mut self, work: &Work) -> Result<Answer, String> {
        let single = Shape {
            pool: 20,
            compress: false,
        };
        match work {
            Work::Seq {
                op,
                n,
                size,
                prefix,
                slice,
            } => {
                let c = self.client(single)?;
                let val = value_bytes(*size);
                let mut k = String::with_capacity(64);
                Ok(Answer::Ok(load::seq(*n, *slice, |i| {
                    key(&mut k, prefix, i);
                    match op {
                        Op::Set => matches!(c.set(&k, &val, 0), Ok(StoreOutcome::Stored)),
                        Op::Add => matches!(c.add(&k, &val, 0), Ok(StoreOutcome::Stored)),
                        Op::Replace => {
                            matches!(c.replace(&k, &val, 0), Ok(StoreOutcome::Stored))
                        }
                        Op::Get => matches!(c.get(&k), Ok(Some(_))),
                        Op::Delete => matches!(c.delete(&k), Ok(true)),
                    }
                })))
            }
            Work::Mget {
                keys,
                calls,
                prefix,
            } => {
                let c = self.client(single)?;
                let ks: Vec<String> = (0..u64::from(*keys))
                    .map(|i| format!("{prefix}{i}"))
                    .collect();
                Ok(Answer::Ok(load::seq(*calls, *calls, |_| {
                    self.mget(&c, &ks)
                })))
            }
            Work::Fill {
                keyspace,
                size,
                compress,
                prefix,
                value,
            } => {
                let c = self.client(Shape {
                    pool: 20,
                    compress: *compress,
                })?;
                let val = value.bytes(*size);
                let mut k = String::new();
                Ok(Answer::Ok(load::seq(u64::from(*keyspace), u64::MAX, |i| {
                    key(&mut k, prefix, i);
                    matches!(c.set(&k, &val, 0), Ok(StoreOutcome::Stored))
                })))
            }
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
            } => {
                let c = self.client(Shape {
                    pool: *pool,
                    compress: *compress,
                })?;
                let val = value.bytes(*size);
                let (keyspace, mget) = (u64::from(*keyspace), u64::from(*mget));
                let r = load::mix(
                    *threads,
                    *ops,
                    *get_pct,
                    |_| {
                        Ok((
                            String::with_capacity(64),
                            Vec::<String>::with_capacity(mget as usize),
                        ))
                    },
                    |(k, ks), rng, kind| match kind {
                        MixOp::Set => {
                            key(k, prefix, rng.below(keyspace));
                            matches!(c.set(&*k, &val, 0), Ok(StoreOutcome::Stored))
                        }
                        MixOp::Get if mget <= 1 => {
                            key(k, prefix, rng.below(keyspace));
                            matches!(c.get(&*k), Ok(Some(_)))
                        }
                        MixOp::Get => {
                            let first = rng.below(keyspace);
                            ks.clear();
                            ks.extend(
                                (0..mget).map(|j| format!("{prefix}{}", (first + j) % keyspace)),
                            );
                            self.mget(&c, ks)
                        }
                    },
                )?;
                Ok(Answer::Ok(r))
            }
        }
    }

    fn reset_peak_rss(&mut self) {
        sys::reset_peak_rss();
    }

    fn peak_rss_kib(&mut self) -> Option<u64> {
        sys::peak_rss_kib(None)
    }

    fn rss_kib(&mut self) -> Option<u64> {
        sys::rss_kib(None)
    }
}
