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
                       `all` (default) or `none` (only the floor and mcpool; an empty LIST is
                       an error); `protocols` adds mcpool over the meta and binary protocols
                       (mcpool-meta, mcpool-binary)
  --out DIR            report directory (default bench-results/<timestamp>/)
  --repeats N          timed repeats per point (default 3, at least 3)
  --server-threads N   memcached -t for the private server, 1 or more (default 2; an error
                       with --servers, whose server the bench does not start)
  --server-reqs-per-event N
                       memcached -R for the private server, 1 or more (default: memcached's
                       own, 20; an error with --servers); pipelined meta/binary multi-gets
                       yield to the event loop every N requests
  --op-hook noop|none  noop: install a no-op per-operation handler on mcpool's Rust client
                       (measures the hook's cost: compare with a run without it); none:
                       no handler (the default)
  --unpinned           no CPU pinning at all (client or private server); figures are noisier
  --list-peers         print every peer, whether it is installed, and how to install it
  -h, --help           this text
Each option is given once (`--repeats 3 --repeats 4` is an error).

Without --servers a private memcached is started on a free loopback port (pinned to CPU 1)
and stopped at the end. With --servers only the first server is used, and it is not pinned;
a server that does not answer `version` stops the bench before any scenario (exit 2). A
contestant whose every operation of a run failed gets no figure for it (a note says so) and
the bench exits 2 after writing its report.
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
    /// memcached -t (None: not given, 2).
    pub server_threads: Option<u32>,
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
        server_threads: None,
        server_reqs_per_event: None,
        unpinned: false,
        list_peers: false,
        op_hook_noop: false,
    };
    // The options given so far: each is given once, as everywhere in the CLI.
    let mut seen: Vec<&str> = vec![];
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
            _ => (a.as_str(), None),
        };
        if flag.starts_with('-') && flag != "-h" && flag != "--help" {
            if seen.contains(&flag) {
                return Err(format!("{flag} given twice"));
            }
            seen.push(flag);
        }
        let mut value = || -> Result<String, String> {
            match &inline {
                Some(v) => Ok(v.clone()),
                None => it
                    .next()
                    .cloned()
                    .ok_or_else(|| format!("{flag} needs a value")),
            }
        };
        // A whole number `min` or more: anything else is refused, never silently raised.
        let number = |v: String, min: u32| -> Result<u32, String> {
            v.parse()
                .ok()
                .filter(|&n| n >= min)
                .ok_or_else(|| format!("{flag} takes a whole number {min}-{}, not {v:?}", u32::MAX))
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
                    "none" => Some(vec![]),
                    "" => return Err("--peers: empty list (for no peers: --peers none)".into()),
                    _ => {
                        let list: Vec<String> = v
                            .split(',')
                            .filter(|s| !s.is_empty())
                            .map(String::from)
                            .collect();
                        if list.is_empty() {
                            return Err(format!(
                                "--peers {v:?} names no peer (for no peers: --peers none)"
                            ));
                        }
                        Some(list)
                    }
                }
            }
            "--op-hook" => match value()?.as_str() {
                "noop" => o.op_hook_noop = true,
                "none" => o.op_hook_noop = false,
                v => return Err(format!("--op-hook takes noop or none, not {v:?}")),
            },
            "--out" => o.out = Some(PathBuf::from(value()?)),
            "--repeats" => o.repeats = number(value()?, 0)?,
            "--server-threads" => o.server_threads = Some(number(value()?, 1)?),
            "--server-reqs-per-event" => o.server_reqs_per_event = Some(number(value()?, 1)?),
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

    /// Tester finding cli2 3: 0 for a server setting was silently raised to 1, an option
    /// given twice took the later value, and `--peers ''` meant none unsaid.
    #[test]
    fn zero_server_settings_repeated_options_and_empty_peers_are_refused() {
        for args in [
            &["--server-threads", "0"][..],
            &["--server-threads=0"],
            &["--server-reqs-per-event", "0"],
            &["--server-threads", "-1"],
            &["--server-reqs-per-event", "x"],
        ] {
            let e = p(args).unwrap_err();
            assert!(e.contains("takes a whole number 1-"), "{args:?}: {e}");
        }
        for args in [
            &["--repeats", "3", "--repeats", "4"][..],
            &["--repeats=3", "--repeats", "4"],
            &["--peers", "none", "--peers=all"],
            &["--quick", "--quick"],
            &["--server-threads", "2", "--server-threads", "2"],
        ] {
            let e = p(args).unwrap_err();
            assert!(e.contains("given twice"), "{args:?}: {e}");
        }
        for args in [&["--peers", ""][..], &["--peers="], &["--peers", ","]] {
            let e = p(args).unwrap_err();
            assert!(e.contains("--peers none"), "{args:?}: {e}");
        }
        let o = p(&["--server-threads", "1", "--server-reqs-per-event", "1"])
            .unwrap()
            .unwrap();
        assert_eq!(
            (o.server_threads, o.server_reqs_per_event),
            (Some(1), Some(1))
        );
        assert_eq!(p(&[]).unwrap().unwrap().server_threads, None);
    }
}
