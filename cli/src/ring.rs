//! `mcpool ring`: which server each key lives on, without any network I/O.
//!
//! ```text
//! mcpool --servers A,B,C [--weights 1,2,1] --distribution PROFILE [--ketama-points N]
//!        [--no-sanitize-keys] ring [--keys FILE]
//! ```
//! prints `KEY<TAB>HOST:PORT` for every key read (one key per line, raw bytes without the
//! newline; stdin when no file or `--keys -`), in input order: one output line per input
//! line, so the output pastes next to its input. The key is escaped as `get` escapes its several-keys
//! output (a backslash, tab or CR as `\\`, `\t`, `\r`), so the line always has two fields.
//! Other tools and tests rely on this format.
//! `--compare-servers` / `--compare-distribution` report how many keys move to another
//! placement and how balanced both are; `--bench` measures lookup cost and build time.
//!
//! The placement is the core's own: `ring` builds the client the same global options build
//! for a command (servers, weights, distribution, key prefix, `--hash-key-prefix`, key
//! sanitizing, protocol: every option) and asks it where each key goes
//! ([`mcpool::Client::server_for`]), so it can never disagree with where a command stores the
//! key. A key that client refuses (as every command would; an empty line is an empty key,
//! refused too) prints `KEY<TAB>!refused` in its place, is reported on stderr with its line
//! number, and makes the exit status 2; the other keys are still printed.

use crate::out::{errln, out, outln};
use crate::Globals;
use mcpool::{Distribution, Router, ServerSpec};
use std::io::{self, BufRead, BufWriter, Read, Write};
use std::time::{Duration, Instant};

const HELP: &str = "\
usage: mcpool --servers A,B,C [--weights 1,2,1] --distribution PROFILE [--ketama-points N]
              [--no-sanitize-keys] [--prefix P] [OTHER GLOBAL OPTIONS] ring [OPTIONS]

Prints KEY<TAB>HOST:PORT for each key (one per line; stdin when no --keys; a backslash, tab
or CR in the key printed as \\\\, \\t, \\r, as get prints several keys), in input order:
the server a command with the same global options stores the key on (key prefix, sanitizing
and every other option applied). No network I/O. Servers are HOST:PORT, HOST:PORT:WEIGHT,
or HOST:PORT:NAME for twemproxy. One output line per input line: a key the client refuses
(an empty line is an empty key, refused too) prints KEY<TAB>!refused in its place and is
reported on stderr with its line number (exit 2); the other keys are still printed.
PROFILE is a profile name or a client's own setting, CLIENT:WORD=VALUE,... e.g.
pylibmc:ketama=1,hash=md5, libmemcached:hash=md5,distribution=modula,
twemproxy:hash=fnv1a_64,distribution=ketama, spymemcached:locator=array_mod,hash=native
(every word: docs/placement.md).

options (each given once):
  --keys FILE                 read keys from FILE instead of stdin (- is stdin)
  --compare-servers A,B,...   report the keys that move to this server list, and the balance
  --compare-weights W,W,...   weights for --compare-servers (default: all 1)
  --compare-distribution P    report the keys that move to profile or setting P (same servers)
                              (a comparison reads the keys of --keys FILE or of stdin; when
                              stdin is a terminal or empty, 100000 generated keys, said on
                              stderr)
  --random N                  for a comparison without --keys: N generated keys (stdin unread)
  --bench                     ns per lookup and build time, 10/100/1000 servers, every profile,
                              on generated keys (no other option but --bench-sizes)
  --bench-sizes N,N,...       server counts for --bench (default 10,100,1000; only with --bench)
  -h, --help                  this text

profiles: ";

/// An error: the message (none when already reported), and the exit status (2).
#[derive(Debug)]
struct Fail(String, i32);

fn usage(msg: impl Into<String>) -> Fail {
    Fail(msg.into(), 2)
}

/// Options after `ring`.
#[derive(Debug, Default)]
struct RingArgs {
    /// The options given, in order (each once; `-h`/`--help` aside).
    given: Vec<String>,
    /// `--keys`'s path, as given: any bytes ([`crate::cmd::os_path`]).
    keys: Option<Vec<u8>>,
    compare_servers: Option<Vec<String>>,
    compare_weights: Option<Vec<u32>>,
    compare_distribution: Option<String>,
    random: Option<usize>,
    bench: bool,
    bench_sizes: Option<Vec<usize>>,
    help: bool,
}

/// The most generated keys `--random` makes.
const MAX_RANDOM: usize = 10_000_000;
/// The largest server count `--bench-sizes` takes.
const MAX_BENCH_SERVERS: usize = 100_000;

fn parse_list<T: std::str::FromStr>(flag: &str, v: &str) -> Result<Vec<T>, Fail> {
    v.split(',')
        .map(|x| {
            x.trim()
                .parse()
                .map_err(|_| usage(format!("{flag}: bad value {x:?}")))
        })
        .collect()
}

/// Reads `ring`'s arguments, as given: `--keys`'s path is any bytes, as every file's path
/// (tester finding retest44 3); every other argument is text, one that is not UTF-8 refused
/// as the global options refuse one ([`crate::not_utf8`]: `ring (after --random): ...`).
fn parse_args(args: &[Vec<u8>]) -> Result<RingArgs, Fail> {
    let mut r = RingArgs::default();
    let not_text = |i: usize| {
        crate::usage_error(&crate::not_utf8(args, i, Some("ring")));
        Fail(String::new(), 2)
    };
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        // `--name=VALUE`: the name, and the value (text, but --keys's path)
        let (name, inline) = match a.iter().position(|&b| b == b'=') {
            Some(at) if a.starts_with(b"--") => (&a[..at], Some(&a[at + 1..])),
            _ => (&a[..], None),
        };
        let flag = std::str::from_utf8(name).map_err(|_| not_text(i))?;
        if flag != "--keys" && std::str::from_utf8(a).is_err() {
            return Err(not_text(i));
        }
        let at = i;
        // The option's value as given: inline, or the next argument.
        let mut raw_value = || match inline {
            Some(v) => Ok((v, at)),
            None if at + 1 < args.len() => {
                i = at + 1;
                Ok((&args[at + 1][..], at + 1))
            }
            None => Err(usage(format!("{flag} needs a value"))),
        };
        let mut value = || {
            let (v, j) = raw_value()?;
            std::str::from_utf8(v)
                .map(str::to_owned)
                .map_err(|_| not_text(j))
        };
        // Every option once, as every command reads them.
        if OPTIONS.contains(&flag) {
            if r.given.iter().any(|g| g == flag) {
                return Err(usage(format!("{flag} given twice")));
            }
            r.given.push(flag.to_owned());
        }
        match flag {
            "--keys" => r.keys = Some(raw_value()?.0.to_vec()),
            "--compare-servers" => {
                // the core's split of a list, as --servers (a password holding a comma is
                // never cut into a piece an error shows: tester finding retest20 2)
                let v = value()?;
                let servers = mcpool::ServerSpec::split_list(&v)
                    .map_err(|e| usage(format!("{flag}: {e}")))?;
                r.compare_servers = Some(servers.into_iter().map(str::to_owned).collect())
            }
            "--compare-weights" => r.compare_weights = Some(parse_list(flag, &value()?)?),
            "--compare-distribution" => r.compare_distribution = Some(value()?),
            "--random" => {
                r.random = Some(
                    value()?
                        .parse()
                        .ok()
                        .filter(|n| (1..=MAX_RANDOM).contains(n))
                        .ok_or_else(|| {
                            usage(format!("--random takes a whole number 1-{MAX_RANDOM}"))
                        })?,
                )
            }
            "--bench" => r.bench = true,
            "--bench-sizes" => {
                let sizes: Vec<usize> = parse_list(flag, &value()?)?;
                if let Some(n) = sizes.iter().find(|n| !(1..=MAX_BENCH_SERVERS).contains(*n)) {
                    return Err(usage(format!(
                        "--bench-sizes: {n} is not a server count 1-{MAX_BENCH_SERVERS}"
                    )));
                }
                r.bench_sizes = Some(sizes);
            }
            "-h" | "--help" => r.help = true,
            f if crate::is_global_option(f) => {
                return Err(usage(crate::global_option_after("ring", f)))
            }
            other => return Err(usage(format!("ring: unknown option {other:?}"))),
        }
        i += 1;
    }
    Ok(r)
}

/// `ring`'s options, but -h and --help.
const OPTIONS: [&str; 7] = [
    "--keys",
    "--compare-servers",
    "--compare-weights",
    "--compare-distribution",
    "--random",
    "--bench",
    "--bench-sizes",
];

/// An option that would change nothing, refused rather than ignored: one that needs another
/// (`--compare-weights` without `--compare-servers`), or one that `--bench` would not read.
fn needless_option(a: &RingArgs) -> Option<String> {
    if a.bench {
        let other = a
            .given
            .iter()
            .find(|f| !matches!(f.as_str(), "--bench" | "--bench-sizes"))?;
        return Some(format!(
            "{other} does not go with --bench: it times generated keys on every profile (its \
             only option is --bench-sizes)"
        ));
    }
    let comparing = a.compare_servers.is_some() || a.compare_distribution.is_some();
    if a.bench_sizes.is_some() {
        Some("--bench-sizes needs --bench".into())
    } else if a.compare_weights.is_some() && a.compare_servers.is_none() {
        Some("--compare-weights needs --compare-servers".into())
    } else if a.random.is_some() && !(comparing && a.keys.is_none()) {
        Some(
            "--random makes keys for a comparison (--compare-servers or \
             --compare-distribution) without --keys"
                .into(),
        )
    } else {
        None
    }
}

/// The client the global options build, asked where each key goes.
struct Placement {
    client: crate::cmd::Cli,
    labels: Vec<String>,
}

impl Placement {
    /// The client of these options (as a command builds it; no connection is opened).
    fn new(g: &Globals) -> Result<Self, Fail> {
        // (a libmemcached configuration string names them, or the client says why not)
        use crate::cmd::Servers;
        let servers = match crate::cmd::servers_of(g).map_err(usage)? {
            Servers::Given(list) | Servers::Env(list) => list,
            Servers::Missing => {
                return Err(usage(
                    "ring needs --servers (or MEMCACHED_SERVERS, or --libmemcached-config \
                     with --SERVER words)",
                ))
            }
        };
        let client = crate::cmd::client_from(g, &servers).map_err(usage)?;
        Ok(Placement {
            labels: client.server_labels(),
            client,
        })
    }

    /// The index of `key`'s server, or why the client refuses the key.
    fn locate(&self, key: &[u8]) -> Result<usize, String> {
        self.client
            .server_for(key)
            .map_err(|e| crate::cmd::key_error(&self.client, key, &e))
    }

    fn server(&self, i: usize) -> &str {
        &self.labels[i]
    }

    fn len(&self) -> usize {
        self.labels.len()
    }
}

/// Runs `ring` with its arguments as given; returns the exit status.
pub fn run(opts: &Globals, args: &[Vec<u8>]) -> i32 {
    match run_inner(opts, args) {
        Ok(()) => 0,
        Err(Fail(msg, code)) => {
            if !msg.is_empty() {
                errln!("mcpool ring: {msg}");
                if code == 2 {
                    errln!("(run `mcpool ring --help` for usage)");
                }
            }
            code
        }
    }
}

fn run_inner(opts: &Globals, args: &[Vec<u8>]) -> Result<(), Fail> {
    let a = parse_args(args)?;
    if a.help {
        outln!(
            "{HELP}{}\n(and {}: every key on the first server, a pool of proxies)",
            Distribution::NAMES.join(", "),
            mcpool::route::proxy_pool::NAME
        );
        return Ok(());
    }
    if let Some(e) = needless_option(&a) {
        return Err(usage(e));
    }
    if a.bench {
        let sizes = a.bench_sizes.unwrap_or_else(|| vec![10, 100, 1000]);
        // It only writes its table: a closed pipe ends it quietly, as everywhere (`out`).
        crate::out::check(bench(&sizes, &mut crate::out::stdout()));
        return Ok(());
    }
    let comparing = a.compare_servers.is_some() || a.compare_distribution.is_some();
    if let (Some(w), Some(list)) = (&a.compare_weights, &a.compare_servers) {
        if w.len() != list.len() {
            return Err(usage(format!(
                "--compare-weights has {} entries for {} --compare-servers",
                w.len(),
                list.len()
            )));
        }
    }
    let here = Placement::new(opts)?;

    if comparing {
        let mut other = opts.clone();
        if let Some(name) = &a.compare_distribution {
            other.distribution = Some(name.clone());
            other.ketama_points = opts.ketama_points.filter(|_| name == "cmf-ketama");
        }
        if let Some(list) = &a.compare_servers {
            other.servers = list.clone();
            other.weights = a.compare_weights.clone();
        }
        let there = Placement::new(&other)?;
        let keys = comparison_keys(&a)?;
        let report = compare(&here, &there, &keys)?;
        out!("{report}");
        return Ok(());
    }

    let out = crate::out::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, out);
    let mut refused = false;
    let mut emit = |line: usize, key: &[u8]| -> io::Result<()> {
        // One output line per input line: a refused key's line says so in the server's place.
        let server = match here.locate(key) {
            Ok(i) => here.server(i),
            Err(e) => {
                errln!(
                    "mcpool ring: line {line}: {}: {e}",
                    crate::cmd::shown_key(key)
                );
                refused = true;
                REFUSED
            }
        };
        // escaped as get's several-keys output is: a tab or CR in a key never reads as a field
        out.write_all(&crate::cmd::escaped(key))?;
        out.write_all(b"\t")?;
        out.write_all(server.as_bytes())?;
        out.write_all(b"\n")
    };
    let (input, name) = key_input(a.keys.as_deref())?;
    let result = match for_each_key(io::BufReader::new(input), &mut emit) {
        Err(Broke::Read(e)) => return Err(usage(format!("{name}: {e}"))),
        Err(Broke::Write(e)) => Err(e),
        Ok(()) => out.flush(),
    };
    match result {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        r => r.map_err(io_fail),
    }?;
    if refused {
        return Err(Fail(String::new(), 2));
    }
    Ok(())
}

fn io_fail(e: io::Error) -> Fail {
    Fail(e.to_string(), 2)
}

/// What `ring` prints in the server's place for a key the client refuses (no server label
/// begins with `!`).
const REFUSED: &str = "!refused";

/// Why [`for_each_key`] stopped: reading the keys failed, or `f` (writing an answer) did.
#[derive(Debug)]
enum Broke {
    Read(io::Error),
    Write(io::Error),
}

/// Calls `f` with every line of `r` (its number from 1, and the line without its `\n`),
/// an empty line included: one key per line, so every line gets its answer. A last line
/// without a newline is a line; nothing after the last newline is none.
fn for_each_key(
    mut r: impl BufRead,
    f: &mut dyn FnMut(usize, &[u8]) -> io::Result<()>,
) -> Result<(), Broke> {
    let mut line = Vec::new();
    let mut n = 0;
    loop {
        line.clear();
        if r.read_until(b'\n', &mut line).map_err(Broke::Read)? == 0 {
            return Ok(());
        }
        if line.last() == Some(&b'\n') {
            line.pop();
        }
        n += 1;
        f(n, &line).map_err(Broke::Write)?;
    }
}

/// Where the keys are read from: `--keys FILE`, or standard input (no `--keys`, or
/// `--keys -`, as `--value-file -` reads it); and its name for an error (`--keys FILE`).
fn key_input(path: Option<&[u8]>) -> Result<(Box<dyn Read>, String), Fail> {
    match path {
        None | Some(b"-") => Ok((Box::new(io::stdin()), "standard input".into())),
        Some(p) => {
            let name = format!("--keys {}", crate::cmd::shown_path(p));
            match std::fs::File::open(crate::cmd::os_path(p)) {
                Ok(f) => Ok((Box::new(f), name)),
                Err(e) => Err(usage(format!("{name}: {e}"))),
            }
        }
    }
}

/// The keys of `path` (stdin when none, or `-`), one per line as `for_each_key` reads them.
fn read_keys(path: Option<&[u8]>) -> Result<Vec<Vec<u8>>, Fail> {
    let (mut input, name) = key_input(path)?;
    let mut raw = Vec::new();
    input
        .read_to_end(&mut raw)
        .map_err(|e| usage(format!("{name}: {e}")))?;
    let mut keys = Vec::new();
    // (a slice never fails to read, and this `f` never fails)
    let _ = for_each_key(&raw[..], &mut |_, k| {
        keys.push(k.to_vec());
        Ok(())
    });
    Ok(keys)
}

/// How many keys a comparison generates when none are given.
const DEFAULT_RANDOM: usize = 100_000;

/// The keys of a comparison: `--keys FILE`'s; `--random N` generated keys; else, as plain
/// `ring` reads them, standard input's when it is not a terminal (`printf 'k1\nk2\n' | mcpool
/// ring --compare-servers ...`), generated keys only when it is a terminal or gives no line
/// at all, said on stderr (tester finding cli2 8: piped keys were silently ignored).
fn comparison_keys(a: &RingArgs) -> Result<Vec<Vec<u8>>, Fail> {
    use std::io::IsTerminal;
    if let Some(path) = &a.keys {
        return read_keys(Some(path));
    }
    if let Some(n) = a.random {
        return Ok(random_keys(n));
    }
    if !io::stdin().is_terminal() {
        let keys = read_keys(None)?;
        if !keys.is_empty() {
            return Ok(keys);
        }
    }
    errln!(
        "mcpool ring: no keys on standard input and no --keys FILE: comparing {DEFAULT_RANDOM} \
         generated keys (--random N for another count)"
    );
    Ok(random_keys(DEFAULT_RANDOM))
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
fn compare(from: &Placement, to: &Placement, keys: &[Vec<u8>]) -> Result<String, Fail> {
    let nf = from.len();
    let nt = to.len();
    let mut load_from = vec![0usize; nf];
    let mut load_to = vec![0usize; nt];
    let mut flows = std::collections::BTreeMap::<(String, String), usize>::new();
    let mut moved = 0usize;
    for (line, k) in keys.iter().enumerate() {
        let refused = |e: String| {
            let line = line + 1;
            usage(format!("line {line}: {}: {e}", crate::cmd::shown_key(k)))
        };
        let (a, b) = (
            from.locate(k).map_err(refused)?,
            to.locate(k).map_err(refused)?,
        );
        load_from[a] += 1;
        load_to[b] += 1;
        let (sa, sb) = (from.server(a), to.server(b));
        if sa != sb {
            moved += 1;
            *flows.entry((sa.to_owned(), sb.to_owned())).or_default() += 1;
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
    Ok(s)
}

/// Prints, per profile and server count, the build time and ns per lookup.
fn bench(sizes: &[usize], out: &mut dyn Write) -> io::Result<()> {
    let keys = random_keys(20_000);
    writeln!(out, "profile\tservers\tbuild_us\tns_per_key\tkeys_timed")?;
    for d in Distribution::all() {
        for &n in sizes {
            let servers: Vec<ServerSpec> = (0..n)
                .map(|i| {
                    // (named where the profile reads names)
                    let name = if d.reads_server_names() {
                        format!(":node{i}")
                    } else {
                        String::new()
                    };
                    let mut s = ServerSpec::parse(&format!(
                        "127.{}.{}.{}:{}{name}",
                        i / 65536 % 256,
                        i / 256 % 256,
                        i % 256,
                        11211 + (i % 3)
                    ))
                    .expect("generated address");
                    // weights where the profile counts them (the unweighted libmemcached
                    // ones refuse a weight above 1)
                    s.weight = if d.uses_weights() {
                        1 + (i % 3) as u32
                    } else {
                        1
                    };
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

    fn globals(servers: &str, d: &str) -> Globals {
        Globals {
            servers: ServerSpec::split_list(servers)
                .unwrap()
                .into_iter()
                .map(str::to_owned)
                .collect(),
            distribution: Some(d.into()),
            ..Globals::default()
        }
    }

    #[test]
    fn args_and_errors() {
        let a = parse_args(&["--keys".into(), "f".into(), "--random=5".into()]).unwrap();
        assert_eq!(a.keys.as_deref(), Some(&b"f"[..]));
        assert_eq!(a.random, Some(5));
        // a path is any bytes
        let a = parse_args(&[b"--keys=f\xff".to_vec()]).unwrap();
        assert_eq!(a.keys.as_deref(), Some(&b"f\xff"[..]));
        assert!(parse_args(&["--nope".into()]).is_err());
        assert!(parse_args(&["--keys".into()]).is_err());
        assert!(parse_args(&["--random=0".into()]).is_err());
        assert!(parse_args(&["--random=18446744073709551616".into()]).is_err());
        assert!(parse_args(&["--bench-sizes=10,0".into()]).is_err());
        assert!(parse_args(&["--compare-weights=4294967296".into()]).is_err());
        let mut g = globals("127.0.0.1:1", "cmf-ketama");
        g.ketama_points = Some(40);
        assert!(Placement::new(&g).is_ok());
        g.distribution = Some("cache-memcached".into());
        assert!(Placement::new(&g).is_err());
        let mut g = globals("127.0.0.1:1,127.0.0.1:2", "cache-memcached");
        g.weights = Some(vec![1]);
        assert!(Placement::new(&g).is_err());
        assert_eq!(run(&globals("", "cache-memcached"), &[]), 2);
        assert_eq!(run(&globals("127.0.0.1:11211", "nope"), &[]), 2);
    }

    #[test]
    fn keys_split_on_newlines_only() {
        let mut got = Vec::new();
        for_each_key(&b"a\nb c\r\n\n\xff\nlast"[..], &mut |n, k| {
            got.push((n, k.to_vec()));
            Ok(())
        })
        .unwrap();
        // Every line, the empty one too, numbered from 1 (one output line per input line).
        let want: Vec<(usize, Vec<u8>)> = [&b"a"[..], b"b c\r", b"", b"\xff", b"last"]
            .iter()
            .enumerate()
            .map(|(i, k)| (i + 1, k.to_vec()))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn comparison_counts_moves() {
        let d = "libmemcached-ketama-weighted";
        let a = Placement::new(&globals("127.0.0.1:1,127.0.0.2:2", d)).unwrap();
        let b = Placement::new(&globals("127.0.0.1:1,127.0.0.2:2,127.0.0.3:3", d)).unwrap();
        let keys = random_keys(3000);
        let same = compare(&a, &a, &keys).unwrap();
        assert!(same.contains("moved\t0\t"), "{same}");
        let r = compare(&a, &b, &keys).unwrap();
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
