//! `mcpool ring`: which server each key lives on, without any network I/O.
//!
//! ```text
//! mcpool --servers A,B,C [--weights 1,2,1] --distribution PROFILE [--ketama-points N]
//!        [--no-sanitize-keys] ring [--keys FILE]
//! ```
//! prints `KEY<TAB>HOST:PORT` for every key read (one key per line, raw bytes without the
//! newline; stdin when no file), in input order. Other tools and tests rely on this format.
//! `--compare-servers` / `--compare-distribution` report how many keys move to another
//! placement and how balanced both are; `--bench` measures lookup cost and build time.

use mcpool::key::url_encode;
use mcpool::{Distribution, Router, ServerSpec};
use std::io::{self, BufRead, BufWriter, Read, Write};
use std::time::{Duration, Instant};

/// The global options `ring` uses (from the options before the command).
#[derive(Clone, Debug, Default)]
pub struct RingGlobals {
    /// `--servers`, split on commas: `HOST:PORT` or `HOST:PORT:NAME`.
    pub servers: Vec<String>,
    /// `--weights`, one per server.
    pub weights: Option<Vec<u32>>,
    /// `--distribution`, a profile name.
    pub distribution: String,
    /// `--ketama-points` (cmf-ketama only).
    pub ketama_points: Option<u32>,
    /// `--no-sanitize-keys`: hash keys as given even under the Whalin profiles.
    pub no_sanitize_keys: bool,
}

const HELP: &str = "\
usage: mcpool --servers A,B,C [--weights 1,2,1] --distribution PROFILE [--ketama-points N]
              [--no-sanitize-keys] ring [OPTIONS]

Prints KEY<TAB>HOST:PORT for each key (one per line; stdin when no --keys), in input order.
No network I/O. Servers are HOST:PORT, or HOST:PORT:NAME for twemproxy.
PROFILE is a profile name or a client's own setting, CLIENT:WORD=VALUE,... e.g.
pylibmc:ketama=1,hash=md5, libmemcached:hash=md5,distribution=modula,
twemproxy:hash=fnv1a_64,distribution=ketama, spymemcached:locator=array_mod,hash=native
(every word: docs/placement.md).

options:
  --keys FILE                 read keys from FILE instead of stdin
  --compare-servers A,B,...   report the keys that move to this server list, and the balance
  --compare-weights W,W,...   weights for --compare-servers (default: all 1)
  --compare-distribution P    report the keys that move to profile or setting P (same servers)
  --random N                  for a comparison without --keys: N generated keys (100000)
  --bench                     ns per lookup and build time, 10/100/1000 servers, every profile
  --bench-sizes N,N,...       server counts for --bench (default 10,100,1000)
  -h, --help                  this text

profiles: ";

/// A usage or input error: the message, and the exit status (2 usage, 1 failure).
#[derive(Debug)]
struct Fail(String, i32);

fn usage(msg: impl Into<String>) -> Fail {
    Fail(msg.into(), 2)
}

/// Options after `ring`.
#[derive(Debug, Default)]
struct RingArgs {
    keys: Option<String>,
    compare_servers: Option<Vec<String>>,
    compare_weights: Option<Vec<u32>>,
    compare_distribution: Option<String>,
    random: Option<usize>,
    bench: bool,
    bench_sizes: Option<Vec<usize>>,
    help: bool,
}

fn parse_list<T: std::str::FromStr>(flag: &str, v: &str) -> Result<Vec<T>, Fail> {
    v.split(',')
        .map(|x| {
            x.trim()
                .parse()
                .map_err(|_| usage(format!("{flag}: bad value {x:?}")))
        })
        .collect()
}

fn parse_args(args: &[String]) -> Result<RingArgs, Fail> {
    let mut r = RingArgs::default();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_owned())),
            _ => (a.as_str(), None),
        };
        let mut value = || {
            inline
                .clone()
                .or_else(|| it.next().cloned())
                .ok_or_else(|| usage(format!("{flag} needs a value")))
        };
        match flag {
            "--keys" => r.keys = Some(value()?),
            "--compare-servers" => {
                r.compare_servers = Some(value()?.split(',').map(str::to_owned).collect())
            }
            "--compare-weights" => r.compare_weights = Some(parse_list(flag, &value()?)?),
            "--compare-distribution" => r.compare_distribution = Some(value()?),
            "--random" => {
                r.random = Some(
                    value()?
                        .parse()
                        .map_err(|_| usage("--random: not a number"))?,
                )
            }
            "--bench" => r.bench = true,
            "--bench-sizes" => r.bench_sizes = Some(parse_list(flag, &value()?)?),
            "-h" | "--help" => r.help = true,
            other => return Err(usage(format!("ring: unknown option {other:?}"))),
        }
    }
    Ok(r)
}

/// The profile from `--distribution` and `--ketama-points`.
fn distribution(name: &str, points: Option<u32>) -> Result<Distribution, Fail> {
    let d: Distribution = name
        .parse()
        .map_err(|e: mcpool::Error| usage(e.to_string()))?;
    match (points, &d) {
        (None, _) => Ok(d),
        (Some(p), Distribution::CmfKetama { .. }) => Ok(d.with_ketama_points(p)),
        (Some(_), _) => Err(usage(format!("--ketama-points does not apply to {d}"))),
    }
}

/// Server specs from `HOST:PORT[:NAME]` strings and optional weights.
fn servers(list: &[String], weights: Option<&[u32]>) -> Result<Vec<ServerSpec>, Fail> {
    if list.is_empty() || list.iter().all(|s| s.is_empty()) {
        return Err(usage("ring needs --servers"));
    }
    let mut out: Vec<ServerSpec> = list
        .iter()
        .map(|s| ServerSpec::parse(s).map_err(|e| usage(e.to_string())))
        .collect::<Result<_, _>>()?;
    if let Some(w) = weights {
        if w.len() != out.len() {
            return Err(usage(format!(
                "{} weights for {} servers",
                w.len(),
                out.len()
            )));
        }
        for (s, &w) in out.iter_mut().zip(w) {
            s.weight = w;
        }
    }
    Ok(out)
}

/// A router plus whether it hashes the URL-encoded key.
struct Placement {
    router: Router,
    sanitize: bool,
}

impl Placement {
    fn new(d: &Distribution, servers: &[ServerSpec], no_sanitize: bool) -> Result<Self, Fail> {
        let router = Router::new(d, servers).map_err(|e| usage(e.to_string()))?;
        Ok(Placement {
            router,
            sanitize: d.sanitizes_keys_by_default() && !no_sanitize,
        })
    }

    fn locate(&self, key: &[u8]) -> usize {
        if self.sanitize {
            self.router.locate(&url_encode(key))
        } else {
            self.router.locate(key)
        }
    }

    fn server(&self, i: usize) -> String {
        self.router.servers()[i].addr.to_string()
    }
}

/// Runs `ring`; returns the exit status.
pub fn run(opts: &RingGlobals, args: &[String]) -> i32 {
    match run_inner(opts, args) {
        Ok(()) => 0,
        Err(Fail(msg, code)) => {
            if !msg.is_empty() {
                eprintln!("mcpool ring: {msg}");
                if code == 2 {
                    eprintln!("(run `mcpool ring --help` for usage)");
                }
            }
            code
        }
    }
}

fn run_inner(opts: &RingGlobals, args: &[String]) -> Result<(), Fail> {
    let a = parse_args(args)?;
    if a.help {
        println!(
            "{HELP}{}\n(and {}: every key on the first server, a pool of proxies)",
            Distribution::NAMES.join(", "),
            mcpool::route::proxy_pool::NAME
        );
        return Ok(());
    }
    if a.bench {
        let sizes = a.bench_sizes.unwrap_or_else(|| vec![10, 100, 1000]);
        return bench(&sizes, &mut io::stdout().lock()).map_err(io_fail);
    }
    let d = distribution(&opts.distribution, opts.ketama_points)?;
    let list = servers(&opts.servers, opts.weights.as_deref())?;
    let here = Placement::new(&d, &list, opts.no_sanitize_keys)?;

    if a.compare_servers.is_some() || a.compare_distribution.is_some() {
        let other_d = match &a.compare_distribution {
            Some(name) => distribution(name, opts.ketama_points.filter(|_| name == "cmf-ketama"))?,
            None => d.clone(),
        };
        let other_list = match &a.compare_servers {
            Some(s) => servers(s, a.compare_weights.as_deref())?,
            None => list.clone(),
        };
        let there = Placement::new(&other_d, &other_list, opts.no_sanitize_keys)?;
        let keys = match &a.keys {
            Some(_) => read_keys(a.keys.as_deref())?,
            None => random_keys(a.random.unwrap_or(100_000)),
        };
        let report = compare(&here, &there, &keys);
        print!("{report}");
        return Ok(());
    }

    let out = io::stdout().lock();
    let mut out = BufWriter::with_capacity(1 << 16, out);
    let mut emit = |key: &[u8]| -> io::Result<()> {
        let i = here.locate(key);
        out.write_all(key)?;
        out.write_all(b"\t")?;
        out.write_all(here.server(i).as_bytes())?;
        out.write_all(b"\n")
    };
    let result = match &a.keys {
        Some(path) => {
            let f = std::fs::File::open(path).map_err(|e| Fail(format!("{path}: {e}"), 1))?;
            for_each_key(io::BufReader::new(f), &mut emit)
        }
        None => for_each_key(io::stdin().lock(), &mut emit),
    };
    match result.and_then(|()| out.flush()) {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        r => r.map_err(io_fail),
    }
}

fn io_fail(e: io::Error) -> Fail {
    Fail(e.to_string(), 1)
}

/// Calls `f` with every non-empty line of `r`, without its `\n`.
fn for_each_key(mut r: impl BufRead, f: &mut dyn FnMut(&[u8]) -> io::Result<()>) -> io::Result<()> {
    let mut line = Vec::new();
    loop {
        line.clear();
        if r.read_until(b'\n', &mut line)? == 0 {
            return Ok(());
        }
        if line.last() == Some(&b'\n') {
            line.pop();
        }
        if !line.is_empty() {
            f(&line)?;
        }
    }
}

fn read_keys(path: Option<&str>) -> Result<Vec<Vec<u8>>, Fail> {
    let mut raw = Vec::new();
    match path {
        Some(p) => raw = std::fs::read(p).map_err(|e| Fail(format!("{p}: {e}"), 1))?,
        None => {
            io::stdin().lock().read_to_end(&mut raw).map_err(io_fail)?;
        }
    }
    Ok(raw
        .split(|&b| b == b'\n')
        .filter(|k| !k.is_empty())
        .map(<[u8]>::to_vec)
        .collect())
}

/// `n` deterministic, varied keys (`key:<hex>:<n>`), for comparisons and benchmarks.
fn random_keys(n: usize) -> Vec<Vec<u8>> {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..n)
        .map(|i| {
            // xorshift64*: reproducible without a dependency.
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            format!("key:{:x}:{i}", x.wrapping_mul(0x2545_f491_4f6c_dd1d)).into_bytes()
        })
        .collect()
}

/// The text report of moving `keys` from one placement to another.
fn compare(from: &Placement, to: &Placement, keys: &[Vec<u8>]) -> String {
    let nf = from.router.len();
    let nt = to.router.len();
    let mut load_from = vec![0usize; nf];
    let mut load_to = vec![0usize; nt];
    let mut flows = std::collections::BTreeMap::<(String, String), usize>::new();
    let mut moved = 0usize;
    for k in keys {
        let (a, b) = (from.locate(k), to.locate(k));
        load_from[a] += 1;
        load_to[b] += 1;
        let (sa, sb) = (from.server(a), to.server(b));
        if sa != sb {
            moved += 1;
            *flows.entry((sa, sb)).or_default() += 1;
        }
    }
    let n = keys.len().max(1);
    let mut s = String::new();
    use std::fmt::Write as _;
    let _ = writeln!(s, "keys\t{}", keys.len());
    let _ = writeln!(
        s,
        "moved\t{moved}\t{:.4}\t({:.2}%)",
        moved as f64 / n as f64,
        100.0 * moved as f64 / n as f64
    );
    let balance = |load: &[usize]| {
        let max = load.iter().copied().max().unwrap_or(0) as f64;
        let mean = keys.len() as f64 / load.len().max(1) as f64;
        if mean > 0.0 {
            max / mean
        } else {
            0.0
        }
    };
    let _ = writeln!(
        s,
        "balance\tbefore\t{:.4}\tafter\t{:.4}\t(max/mean keys per server)",
        balance(&load_from),
        balance(&load_to)
    );
    for (label, p, load) in [("before", from, &load_from), ("after", to, &load_to)] {
        for (i, c) in load.iter().enumerate() {
            let _ = writeln!(s, "load\t{label}\t{}\t{c}", p.server(i));
        }
    }
    let mut flows: Vec<_> = flows.into_iter().collect();
    flows.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    for ((a, b), c) in flows {
        let _ = writeln!(s, "move\t{a}\t{b}\t{c}");
    }
    s
}

/// Prints, per profile and server count, the build time and ns per lookup.
fn bench(sizes: &[usize], out: &mut dyn Write) -> io::Result<()> {
    let keys = random_keys(20_000);
    writeln!(out, "profile\tservers\tbuild_us\tns_per_key\tkeys_timed")?;
    for d in Distribution::all() {
        for &n in sizes {
            let servers: Vec<ServerSpec> = (0..n)
                .map(|i| {
                    let mut s = ServerSpec::parse(&format!(
                        "127.{}.{}.{}:{}:node{i}",
                        i / 65536 % 256,
                        i / 256 % 256,
                        i % 256,
                        11211 + (i % 3)
                    ))
                    .expect("generated address");
                    s.weight = 1 + (i % 3) as u32;
                    s
                })
                .collect();
            // Build: the best of a few, so one page fault does not decide.
            let mut build = Duration::MAX;
            let mut router = None;
            for _ in 0..3 {
                let t = Instant::now();
                let r = Router::new(&d, &servers).expect("router");
                build = build.min(t.elapsed());
                router = Some(r);
            }
            let router = router.expect("built");
            // Lookups: whole passes over the keys until 100 ms have gone by.
            let t = Instant::now();
            let mut done = 0usize;
            let mut sink = 0usize;
            while t.elapsed() < Duration::from_millis(100) && done < 2_000_000 {
                for k in keys.iter().take(if n >= 1000 { 2_000 } else { keys.len() }) {
                    sink = sink.wrapping_add(router.locate(k));
                    done += 1;
                }
            }
            std::hint::black_box(sink);
            let ns = t.elapsed().as_nanos() as f64 / done.max(1) as f64;
            writeln!(out, "{}\t{n}\t{}\t{ns:.1}\t{done}", d, build.as_micros())?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn globals(servers: &str, d: &str) -> RingGlobals {
        RingGlobals {
            servers: servers.split(',').map(str::to_owned).collect(),
            distribution: d.into(),
            ..RingGlobals::default()
        }
    }

    #[test]
    fn args_and_errors() {
        let a = parse_args(&["--keys".into(), "f".into(), "--random=5".into()]).unwrap();
        assert_eq!(a.keys.as_deref(), Some("f"));
        assert_eq!(a.random, Some(5));
        assert!(parse_args(&["--nope".into()]).is_err());
        assert!(parse_args(&["--keys".into()]).is_err());
        assert!(distribution("cmf-ketama", Some(40)).is_ok());
        assert!(distribution("cache-memcached", Some(40)).is_err());
        assert!(servers(&["a:1".into(), "b:2".into()], Some(&[1])).is_err());
        assert_eq!(run(&globals("", "cache-memcached"), &[]), 2);
        assert_eq!(run(&globals("127.0.0.1:11211", "nope"), &[]), 2);
    }

    #[test]
    fn keys_split_on_newlines_only() {
        let mut got = Vec::new();
        for_each_key(&b"a\nb c\r\n\n\xff\nlast"[..], &mut |k| {
            got.push(k.to_vec());
            Ok(())
        })
        .unwrap();
        assert_eq!(got, [&b"a"[..], b"b c\r", b"\xff", b"last"]);
    }

    #[test]
    fn comparison_counts_moves() {
        let list = servers(&["127.0.0.1:1".into(), "127.0.0.2:2".into()], None).unwrap();
        let more = servers(
            &[
                "127.0.0.1:1".into(),
                "127.0.0.2:2".into(),
                "127.0.0.3:3".into(),
            ],
            None,
        )
        .unwrap();
        let d = Distribution::LibmemcachedKetamaWeighted;
        let a = Placement::new(&d, &list, false).unwrap();
        let b = Placement::new(&d, &more, false).unwrap();
        let keys = random_keys(3000);
        let same = compare(&a, &a, &keys);
        assert!(same.contains("moved\t0\t"), "{same}");
        let r = compare(&a, &b, &keys);
        let moved: usize = r
            .lines()
            .find(|l| l.starts_with("moved"))
            .unwrap()
            .split('\t')
            .nth(1)
            .unwrap()
            .parse()
            .unwrap();
        // Consistent hashing: about a third of the keys move, all of them to the new server.
        assert!((700..1300).contains(&moved), "{r}");
        assert!(
            r.lines()
                .filter(|l| l.starts_with("move\t"))
                .all(|l| l.contains("\t127.0.0.3:3\t")),
            "{r}"
        );
    }

    #[test]
    fn bench_prints_every_profile() {
        let mut out = Vec::new();
        bench(&[3], &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text.lines().count(), 1 + Distribution::NAMES.len());
    }
}
