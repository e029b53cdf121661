//! `mcpool`: memcached commands at a terminal, key-placement reports, and the benchmark.

#![forbid(unsafe_code)]

mod client_stats;
mod cmd;
mod ring;

use std::process::ExitCode;

const USAGE: &str = "\
usage: mcpool [GLOBAL OPTIONS] COMMAND [ARGS]

Commands (exit 0 on success, 1 on a miss or a refused store, 2 on errors):
  get KEY...                 print each value (KEY<TAB>VALUE when several keys)
  set KEY VALUE [--ttl S] [--kind bytes|text|int|bool]
                             store unconditionally (also: add, replace)
  add KEY VALUE [--ttl S]    store only if missing
  replace KEY VALUE [--ttl S] store only if present
  append KEY VALUE           append to an existing value
  prepend KEY VALUE          prepend to an existing value
  delete KEY                 delete
  incr KEY N | decr KEY N    arithmetic on a decimal value
  touch KEY TTL              set a new expiry
  version                    each server's version
  stats [GROUP]              each server's statistics (items, slabs, sizes, settings, ...)
  stats --client [--ops N] [--threads T] [--format table|prometheus]
                             a short checked load, then this client's per-server metrics
  flush [DELAY]              invalidate every item on every server
  ring [--keys FILE] [...]   which server each key lives on (no network I/O); see `mcpool ring --help`
  bench [SCENARIO...] [...]  compare mcpool with other clients; see `mcpool bench --help`

Global options:
  --servers HOST:PORT[,HOST:PORT...]  servers ([v6]:port and unix socket paths too). Without it,
                                      a private memcached is started on a free loopback port
                                      for the duration of the command (said on stderr).
  --weights W,W...                    per-server weights, in server order
  --distribution PROFILE              key placement profile (default cache-memcached), or
                                      proxy-pool: every key to the first healthy server
  --ketama-points N                   points per server for cmf-ketama
  --no-sanitize-keys                  never URL-encode keys (Whalin profiles encode by default)
  --prefix P                          key prefix (namespace)
  --protocol text|meta|binary         wire protocol (default text)
  --value-format NAME                 flag layout of values (default mcpool): mcpool, pylibmc,
                                      python-memcached, pymemcache, cache-memcached-fast,
                                      cache-memcached, whalin, spymemcached, libmemcached
                                      (docs/value-format.md). `get` prints text and integers
                                      as text; a value it cannot decode is an error (exit 2)
  --compression-codec zlib|gzip|zstd  codec of compressed values (zstd: mcpool format only)
  --compression-level N               zlib/gzip 0-9 (default 6), zstd 1-22 (default 3)
  --connect-timeout-ms N              connect timeout (default 1000)
  --io-timeout-ms N                   socket read/write timeout (default 1000)
  -h, --help                          this text
";

/// Options that come before the command.
#[derive(Default, Debug, Clone)]
pub struct Globals {
    /// `--servers`, split on commas.
    pub servers: Vec<String>,
    /// `--weights`.
    pub weights: Option<Vec<u32>>,
    /// `--distribution`.
    pub distribution: Option<String>,
    /// `--ketama-points`.
    pub ketama_points: Option<u32>,
    /// `--no-sanitize-keys`.
    pub no_sanitize_keys: bool,
    /// `--prefix`.
    pub prefix: Option<String>,
    /// `--connect-timeout-ms`.
    pub connect_timeout_ms: Option<u64>,
    /// `--io-timeout-ms`.
    pub io_timeout_ms: Option<u64>,
    /// `--protocol`.
    pub protocol: Option<String>,
    /// `--value-format`.
    pub value_format: Option<String>,
    /// `--compression-codec`.
    pub compression_codec: Option<String>,
    /// `--compression-level`.
    pub compression_level: Option<i32>,
}

/// A usage error: printed with a hint, exit status 2.
pub fn usage_error(msg: &str) -> ExitCode {
    eprintln!("mcpool: {msg}\n(run `mcpool --help` for usage)");
    ExitCode::from(2)
}

fn parse_globals(args: &[String]) -> Result<(Globals, usize), String> {
    let mut g = Globals::default();
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
            _ => (a, None),
        };
        let takes_value = matches!(
            flag,
            "--servers"
                | "--weights"
                | "--distribution"
                | "--ketama-points"
                | "--prefix"
                | "--connect-timeout-ms"
                | "--io-timeout-ms"
                | "--protocol"
                | "--value-format"
                | "--compression-codec"
                | "--compression-level"
        );
        let value = if takes_value {
            match inline {
                Some(v) => Some(v),
                None => {
                    i += 1;
                    Some(
                        args.get(i)
                            .cloned()
                            .ok_or_else(|| format!("{flag} needs a value"))?,
                    )
                }
            }
        } else {
            None
        };
        let num = |v: &str| -> Result<u64, String> {
            v.parse()
                .map_err(|_| format!("{flag} takes a number, not {v:?}"))
        };
        match (flag, value) {
            ("--servers", Some(v)) => {
                g.servers = v
                    .split(',')
                    .filter(|s| !s.is_empty())
                    .map(String::from)
                    .collect()
            }
            ("--weights", Some(v)) => {
                g.weights = Some(
                    v.split(',')
                        .map(|w| num(w).map(|n| n as u32))
                        .collect::<Result<_, _>>()?,
                )
            }
            ("--distribution", Some(v)) => g.distribution = Some(v),
            ("--ketama-points", Some(v)) => g.ketama_points = Some(num(&v)? as u32),
            ("--prefix", Some(v)) => g.prefix = Some(v),
            ("--connect-timeout-ms", Some(v)) => g.connect_timeout_ms = Some(num(&v)?),
            ("--io-timeout-ms", Some(v)) => g.io_timeout_ms = Some(num(&v)?),
            ("--protocol", Some(v)) => g.protocol = Some(v),
            ("--value-format", Some(v)) => g.value_format = Some(v),
            ("--compression-codec", Some(v)) => g.compression_codec = Some(v),
            ("--compression-level", Some(v)) => {
                g.compression_level = Some(
                    v.parse()
                        .map_err(|_| format!("{flag} takes a number, not {v:?}"))?,
                )
            }
            ("--no-sanitize-keys", None) => g.no_sanitize_keys = true,
            (f, _) if f.starts_with('-') && f != "-" => {
                if f == "-h" || f == "--help" {
                    return Err(String::new());
                }
                return Err(format!("unknown option {f}"));
            }
            _ => return Ok((g, i)),
        }
        i += 1;
    }
    Ok((g, i))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (globals, at) = match parse_globals(&args) {
        Ok(x) => x,
        Err(e) if e.is_empty() => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => return usage_error(&e),
    };
    let Some(command) = args.get(at) else {
        eprint!("{USAGE}");
        return ExitCode::from(2);
    };
    let rest = &args[at + 1..];
    match command.as_str() {
        "ring" => {
            let opts = ring::RingGlobals {
                servers: globals.servers.clone(),
                weights: globals.weights.clone(),
                distribution: globals
                    .distribution
                    .clone()
                    .unwrap_or_else(|| "cache-memcached".into()),
                ketama_points: globals.ketama_points,
                no_sanitize_keys: globals.no_sanitize_keys,
            };
            ExitCode::from(ring::run(&opts, rest).clamp(0, 255) as u8)
        }
        "bench" => ExitCode::from(mcpool_bench::run(&globals.servers, rest).clamp(0, 255) as u8),
        "help" => {
            print!("{USAGE}");
            ExitCode::SUCCESS
        }
        other => cmd::run(&globals, other, rest),
    }
}
