//! `mcpool bench` options.

use super::scenarios::{Size, NAMES};
use std::path::PathBuf;

/// The help text.
pub const HELP: &str = "\
usage: mcpool [--servers HOST:PORT] bench [SCENARIO...] [OPTIONS]

Measures mcpool against the raw socket floor and the other memcached clients installed here,
side by side in one run. Every figure is the median of the timed repeats (after a warm-up),
with min-max, and its ratio to the floor of the same run.

Scenarios (default: all, in this order):
  sequential   one thread: N sets, N gets, N deletes of 100 bytes (N = 10k, 100k, 1M); for
               the JVM peers also the first 10,000 sets of a fresh driver (`warm-up`, × steady)
  kilobyte     one thread: 10,000 sets then 10,000 gets of 1,000 bytes
  multiget     get_multi of 1, 5, 10, 100, 500 keys; single add/set/replace/get/delete of 40 bytes
  threads      1, 10, 50, 100, 300 threads sharing one client (20 connections), 64 bytes, 4 gets : 1 set
  bulk         30,800-byte compressed values, 90% get_multi(100) / 10% set, 1 to 50 threads;
               two values: letters (about 160:1 at zlib level 6) and digits (`0 1 2 3 ...`,
               about 2.15:1; points `value=digits`), ratios measured and printed at start-up

Placement (2+ CPUs): single-thread scenarios run colocated (client and server on CPU 1),
threads and bulk split (client on CPU 0, server on CPU 1).

Without --quick every timed repeat of a sequential part is capped at ~0.8 s (the full run
stays under 20 minutes with 16 contestants); the `count` column shows the operations timed.

Options:
  --quick              under 3 minutes: N = 10k, threads 1/10/100/300 over 2,000 keys, bulk
                       at 10 threads over 200 keys (both values), one fresh JVM warm-up, each
                       timed repeat capped at ~0.1 s (the `count` column shows the operations
                       actually timed)
  --peers LIST         comma-separated peers to run (names or families from bench/peers/peers.conf),
                       `all` (default) or `none` (only the floor and mcpool); `protocols`
                       adds mcpool over the meta and binary protocols (mcpool-meta, mcpool-binary)
  --out DIR            report directory (default bench-results/<timestamp>/)
  --repeats N          timed repeats per point (default 3, at least 3)
  --server-threads N   memcached -t for the private server (default 2)
  --server-reqs-per-event N
                       memcached -R for the private server (default: memcached's own, 20);
                       pipelined meta/binary multi-gets yield to the event loop every N requests
  --op-hook noop       install a no-op per-operation handler on mcpool's Rust client
                       (measures the hook's cost: compare with a run without it)
  --unpinned           no CPU pinning at all (client or private server); figures are noisier
  --list-peers         print every peer, whether it is installed, and how to install it
  -h, --help           this text

Without --servers a private memcached is started on a free loopback port (pinned to CPU 1)
and stopped at the end. With --servers only the first server is used, and it is not pinned.
";

/// Parsed options.
#[derive(Clone, Debug)]
pub struct Options {
    /// Scenarios to run, in order.
    pub scenarios: Vec<&'static str>,
    /// Counts.
    pub size: Size,
    /// `None` = all peers; `Some(empty)` = none.
    pub peers: Option<Vec<String>>,
    /// Report directory.
    pub out: Option<PathBuf>,
    /// Timed repeats.
    pub repeats: u32,
    /// memcached -t.
    pub server_threads: u32,
    /// memcached -R (None: the server's default).
    pub server_reqs_per_event: Option<u32>,
    /// No pinning.
    pub unpinned: bool,
    /// Only list the peers.
    pub list_peers: bool,
    /// `--op-hook noop`: a no-op `on_operation` handler on the Rust API's clients.
    pub op_hook_noop: bool,
}

/// `Ok(None)` means help was asked for.
pub fn parse(args: &[String]) -> Result<Option<Options>, String> {
    let mut o = Options {
        scenarios: vec![],
        size: Size::Full,
        peers: None,
        out: None,
        repeats: 3,
        server_threads: 2,
        server_reqs_per_event: None,
        unpinned: false,
        list_peers: false,
        op_hook_noop: false,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
            _ => (a.as_str(), None),
        };
        let mut value = || -> Result<String, String> {
            match &inline {
                Some(v) => Ok(v.clone()),
                None => it
                    .next()
                    .cloned()
                    .ok_or_else(|| format!("{flag} needs a value")),
            }
        };
        let number = |v: String| -> Result<u32, String> {
            v.parse()
                .map_err(|_| format!("{flag} takes a number, not {v:?}"))
        };
        match flag {
            "-h" | "--help" => return Ok(None),
            "--quick" => o.size = Size::Quick,
            "--smoke" => o.size = Size::Smoke,
            "--unpinned" => o.unpinned = true,
            "--list-peers" => o.list_peers = true,
            "--peers" => {
                let v = value()?;
                o.peers = match v.as_str() {
                    "all" => None,
                    "none" | "" => Some(vec![]),
                    _ => Some(
                        v.split(',')
                            .filter(|s| !s.is_empty())
                            .map(String::from)
                            .collect(),
                    ),
                }
            }
            "--op-hook" => match value()?.as_str() {
                "noop" => o.op_hook_noop = true,
                "none" => o.op_hook_noop = false,
                v => return Err(format!("--op-hook takes noop or none, not {v:?}")),
            },
            "--out" => o.out = Some(PathBuf::from(value()?)),
            "--repeats" => o.repeats = number(value()?)?,
            "--server-threads" => o.server_threads = number(value()?)?.max(1),
            "--server-reqs-per-event" => o.server_reqs_per_event = Some(number(value()?)?.max(1)),
            f if f.starts_with('-') => return Err(format!("unknown bench option {f}")),
            name => {
                let Some(&n) = NAMES.iter().find(|&&n| n == name) else {
                    return Err(format!(
                        "unknown scenario {name:?} (scenarios: {})",
                        NAMES.join(", ")
                    ));
                };
                if !o.scenarios.contains(&n) {
                    o.scenarios.push(n);
                }
            }
        }
    }
    if o.repeats < 3 && o.size != Size::Smoke {
        return Err("--repeats must be at least 3 (the median of fewer says little)".into());
    }
    if o.scenarios.is_empty() {
        o.scenarios = NAMES.to_vec();
    } else {
        // Keep the documented order.
        o.scenarios
            .sort_by_key(|n| NAMES.iter().position(|m| m == n));
    }
    Ok(Some(o))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(a: &[&str]) -> Result<Option<Options>, String> {
        parse(&a.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn options() {
        let o = p(&[
            "threads",
            "--quick",
            "sequential",
            "--peers",
            "pylibmc,libmemcached",
        ])
        .unwrap()
        .unwrap();
        assert_eq!(o.scenarios, vec!["sequential", "threads"]);
        assert_eq!(o.size, Size::Quick);
        assert_eq!(o.peers.unwrap(), vec!["pylibmc", "libmemcached"]);
        let o = p(&["--peers=none", "--repeats=5"]).unwrap().unwrap();
        assert_eq!(o.peers, Some(vec![]));
        assert_eq!(o.repeats, 5);
        assert_eq!(o.scenarios.len(), 5);
        assert!(p(&["--help"]).unwrap().is_none());
        assert!(p(&["nope"]).is_err());
        assert!(p(&["--repeats", "2"]).is_err());
        assert!(p(&["--bogus"]).is_err());
    }
}
