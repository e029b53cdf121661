//! `mcpool`: memcached commands at a terminal, key-placement reports, and the benchmark.

#![forbid(unsafe_code)]

mod client_stats;
mod cmd;
mod out;
mod ring;

use out::{err, errln, out, outln};
use std::process::ExitCode;

const USAGE: &str = "\
usage: mcpool [GLOBAL OPTIONS] COMMAND [ARGS]

Commands (exit 0 on success, 1 on a miss or a refused store, 2 on errors; an error or a
miss is said on stderr after the command and key: `mcpool: add \"k\": not stored (the key
exists)`):
  get KEY... [--show-flags]  print each value (KEY<TAB>VALUE when several keys are given,
                             one line per item: a backslash, tab, newline or carriage
                             return in a key or value is written \\\\, \\t, \\n, \\r; a key
                             given twice is printed once): bytes and text as stored, an
                             integer as its decimal number (007 as 7), a bool as
                             true/false, another language's serialized object (a Python
                             pickle, ...; an error unless --serialized-python/-perl/-java
                             true) as its serialized bytes, unchanged. --show-flags
                             (get, gets, gat, gats): each value's flags before it,
                             FLAGS<TAB>VALUE (KEY<TAB>FLAGS<TAB>VALUE; before the CAS,
                             memcached's order), the flags as the client's reads give
                             them (the application's 16 bits of a mcpool-format value)
  gets KEY...                print each CAS unique and value, CAS<TAB>VALUE
                             (KEY<TAB>CAS<TAB>VALUE when several keys, escaped as get
                             escapes), for cas
  gat TTL KEY...             get and touch: print each value as get does, setting its
                             expiry to TTL
  gats TTL KEY...            gets and touch: print each CAS unique and value as gets
                             does, setting its expiry to TTL
  set KEY VALUE [--ttl S] [--kind bytes|text|int|bool | --flags N]
                             store unconditionally (also: add, replace, cas). --kind bool
                             takes true/false, 1/0, yes/no or on/off, in any case.
                             --flags N (0-4294967295): the value as bytes under flags N,
                             as the core's store takes them (flags the value format would
                             not read back are refused); not with --kind
  add KEY VALUE [--ttl S]    store only if missing
  replace KEY VALUE [--ttl S] store only if present
  cas KEY VALUE CAS [--ttl S] store only if the item's CAS unique is still CAS (from
                             gets): exit 1 if it changed or the key is gone
  append KEY VALUE           append to an existing value (its flags kept: no --flags)
  prepend KEY VALUE          prepend to an existing value
                             (every store: --value-file FILE in place of VALUE reads the
                             value from FILE, - for standard input, any bytes, up to 1 GiB)
  set-multi KEY VALUE [KEY VALUE...] [--ttl S] [--noreply]
                             store every pair unconditionally, as bytes (set without
                             --kind), in one batch; reported as delete reports keys;
                             --noreply: without waiting for each reply (text protocol),
                             nothing printed, the first failure only
  delete KEY...              delete; several keys go as one batch (one round trip per
                             server), each key deleted printed KEY<TAB>deleted (escaped as
                             get escapes), a miss or an error said on stderr as get says
                             it: exit 1 after a miss, 2 after an error, the others done
  incr KEY N | decr KEY N    arithmetic on a decimal value; N is a delta 0-18446744073709551615
                             (for a negative delta use the other command)
  set-counter KEY N [--ttl S] store N (0 to 2^64-1) as a counter for incr/decr (decimal
                             text, flags 0, whatever --value-format)
  incr-or-init KEY N INITIAL [--ttl S] | decr-or-init KEY N INITIAL [--ttl S]
                             incr/decr, creating a missing counter with INITIAL (and the
                             TTL) in the same call; prints the new value
  touch KEY... TTL           set a new expiry, the TTL last (several keys: one batch,
                             reported as delete reports them, KEY<TAB>touched)
  version                    each server's version
  lease KEY TTL [RECACHE_BELOW]
                             get with a lease against stampedes (--protocol meta):
                             prints hit<TAB>VALUE (exit 0), or recompute (this caller
                             won: compute the value and set it) or wait (another is
                             computing), each followed by <TAB>VALUE when there is a
                             stale value to serve meanwhile (exit 1); a miss leaves a
                             placeholder for TTL seconds (at least 1); RECACHE_BELOW:
                             also win the recompute of a value with less time to live.
                             TTL (the core's vivify_ttl) and RECACHE_BELOW: 0 to 2592000
                             seconds (30 days), durations, never a unix time
  invalidate KEY STALE_TTL   mark the value stale rather than delete it (--protocol
                             meta): lease readers get it, flagged, for STALE_TTL
                             seconds while one recomputes; exit 1 when missing.
                             STALE_TTL: 0 to 2592000 seconds (30 days), a duration
  info KEY                   an item's metadata without its value (--protocol meta),
                             one NAME VALUE line each: hit_before true|false,
                             last_access (seconds), ttl (seconds or never), cas, size
                             (bytes as stored), flags; exit 1 when missing. Of an
                             invalidated item it takes the recompute token, as gets
                             does (memcached gives it to the first read): leases then
                             wait until the item is stored or STALE_TTL ends
  noop                       a no-op round trip to each server (`HOST:PORT: ok`); exit 2
                             when any server failed (named on stderr)
  stats [GROUP]              each server's statistics (items, slabs, sizes, settings, ...;
                             one word: `stats detail on`, `stats cachedump 1 1` are not
                             statistics reads and are refused)
  stats --client [--ops N] [--threads T] [--format table|prometheus]
                             a short checked load, then this client's per-server metrics;
                             exit 2 when any operation of the load failed (not a miss)
                             or a value crossed over, or when no value written was
                             read back (nothing checked). Its first keys are one on
                             each server (the client's placement), each written and
                             read back, whatever N and T: an N too small for that is
                             raised (said on stderr)
  flush [DELAY]              invalidate every item on every server; exit 2 when any
                             server failed (each named on stderr, and those flushed)
  ring [--keys FILE] [...]   which server each key lives on (no network I/O); see
                             `mcpool ring --help`
  bench [SCENARIO...] [...]  compare mcpool with other clients; see `mcpool bench --help`
  options [--markdown|--presets]
                             every option of the table below (or the legacy presets)
  Every command reads its arguments alike. `-h` or `--help` after it prints its usage
  (exit 0). An argument that begins with - is one of the command's options (--ttl,
  --kind, --flags, ... where shown above); any other is an error (exit 2) where a key goes,
  so a key that begins with - goes after -- (`delete -- -k`, `get -- -k`), and is taken as
  it is where a VALUE goes (`set k -5 --kind int`, `append k -x`), except a global option
  (they go before the command: `mcpool --compression false set k v`), a store option
  (--ttl, --kind, --flags, --value-file) or one misspelt (`--value-flie=f`, `--kidn`):
  those are errors. `--` ends a command's options: what follows is keys and values (`set -- k
  --ttl`, `set k -- --kidn`). An option is given once: `--ttl 5 --ttl 6` is an error.
  TTL, --ttl S and DELAY are seconds, 0-2147483647 (0: never; above 30 days a unix time);
  a larger one is refused (exit 2): memcached would read it as negative and expire at once
  (set, set-multi and set-counter then delete the key, as memcached does with such a set).
  A lease's TTL and RECACHE_BELOW and invalidate's STALE_TTL are durations, 0 to 2592000
  seconds (30 days): a negative or longer one is refused (exit 2), since memcached would
  read a longer one as a unix time long past.

Global options:
  --servers HOST:PORT[,HOST:PORT...]  servers ([v6]:port and unix socket paths too). Without it,
                                      those of MEMCACHED_SERVERS (as libmemcached's tools);
                                      without either, a command that writes is refused (its
                                      write would be lost), and for the others
                                      a private memcached is started on a free loopback port
                                      for the duration of the command (said on stderr; it
                                      ends with mcpool, a signal too): the program named by
                                      the MEMCACHED environment variable, else memcached on
                                      PATH; with TLS or SASL options it is an error (exit 2).
                                      The command's arguments, options and keys (by the
                                      client's key rules) are checked first.
                                      HOST:PORT:WEIGHT gives a weight (as the
                                      `servers` option reads it). An empty list is an error.
  --weights W,W...                    per-server weights, in server order (a weight also in
                                      --servers must be the same)
  --distribution PROFILE              key placement profile (default cache-memcached), or
                                      proxy-pool: every key to the first healthy server
  --ketama-points N                   points per server for --distribution cmf-ketama,
                                      1-4194304, points x the sum of the weights at most
                                      4194304 (an error without --distribution; a count
                                      also in the profile, cmf-ketama:N, must be the same)
  --no-sanitize-keys                  never URL-encode keys (Whalin profiles encode by
                                      default); the same as --sanitize-keys false
  --prefix P                          key prefix (namespace); the same as --key-prefix P
  --protocol text|meta|binary         wire protocol (default text)
  --value-format NAME                 flag layout of values (default mcpool): mcpool, pylibmc,
                                      python-memcached, pymemcache, cache-memcached-fast,
                                      cache-memcached, whalin, spymemcached, libmemcached
                                      (docs/value-format.md). `get` prints text and integers
                                      as text; a value it cannot decode is an error (exit 2)
  --compression-codec zlib|gzip|zstd  codec of compressed values (zstd: mcpool format only)
  --compression-level N               zlib/gzip 0-9 (default 6), zstd 1-22 (default 3)
  --connect-timeout-ms N              connect timeout, milliseconds (default 1000, 0
                                      refused): the same option as --connect-timeout
  --io-timeout-ms N                   socket read/write timeout, milliseconds (default
                                      1000, 0 refused): the same option as --io-timeout
  --sasl-password-file FILE           the SASL password, read from FILE (its only line; a
                                      trailing newline dropped), so that it is not on
                                      the command line, where `ps` shows it to every user;
                                      the environment variable MCPOOL_SASL_PASSWORD is read
                                      when --sasl-username is given and neither this nor
                                      --sasl-password
  -h, --help                          this text
  -V, --version                       this program's version (the library's, as
                                      mcpool_version() gives it), and whether it speaks TLS

Every client option, by name (the core's option table; `--name=value` works too).
Options apply in command-line order whatever their spelling, so a later one overrides
an earlier one: `--key-prefix b: --prefix a:` stores under a:, `--sanitize-keys true
--no-sanitize-keys` does not encode, `--io-timeout-ms 500 --io-timeout 2s` waits 2 s.
--preset applies first whatever its place: every other option overrides it.
A BOOL option alone means true (`--fail-open get k`, `--nodelay --fail-open version`);
followed by a value, it takes it (`--fail-open false`).
";

/// The usage text: the fixed part, then one entry per option of the core's table (those
/// with a flag above are not repeated).
fn usage() -> String {
    use mcpool::config::options::{OptionType, OPTIONS};
    let mut s = USAGE.to_owned();
    for o in OPTIONS {
        if matches!(
            o.name,
            "servers"
                | "distribution"
                | "protocol"
                | "value_format"
                | "compression_codec"
                | "compression_level"
        ) {
            continue;
        }
        let arg = match o.kind {
            OptionType::Duration | OptionType::DurationOrNone | OptionType::DurationOrZero => {
                "DURATION"
            }
            OptionType::Bool => "BOOL",
            OptionType::Integer => "N",
            OptionType::Fraction => "X",
            OptionType::Name => "NAME",
            _ => "TEXT",
        };
        let flag = format!("--{} {arg}", flag_name(o.name));
        let default = if o.default.is_empty() {
            "none"
        } else {
            o.default
        };
        let mut text = format!("{} (default {default})", o.doc);
        if !o.accepted.is_empty() {
            text.push_str(&format!("; {}", o.accepted));
        }
        s.push_str(&format!("  {flag:<34}"));
        let mut col = 0;
        for word in text.split(' ') {
            if col > 0 && col + word.len() > 62 {
                s.push_str(&format!("\n{:36}", ""));
                col = 0;
            }
            if col > 0 {
                s.push(' ');
                col += 1;
            }
            s.push_str(word);
            col += word.len();
        }
        s.push('\n');
    }
    s.push_str("Durations: 250ms, 1.5s, 2s, 500us, or a number of milliseconds.\n");
    s
}

/// `mcpool options [--markdown|--presets]`: the option table, or the presets' rows.
fn options_command(args: &[String]) -> ExitCode {
    use mcpool::config::options::{markdown_table, OPTIONS};
    if args.iter().any(|a| a == "-h" || a == "--help") {
        outln!(
            "usage: mcpool options [--markdown | --presets]\n\
             Lists every client option (name, type, default, what it does); --markdown\n\
             prints the README's table, --presets what each preset sets (one of them, once)."
        );
        return ExitCode::SUCCESS;
    }
    // One of the two, once (as every command reads its options).
    let mut given: Option<&str> = None;
    for a in args {
        let flag = a.split_once('=').map_or(a.as_str(), |(f, _)| f);
        match (a.as_str(), given) {
            (f @ ("--markdown" | "--presets"), Some(g)) if f == g => {
                return usage_error(&format!("{f} given twice"))
            }
            (f @ ("--markdown" | "--presets"), Some(g)) => {
                return usage_error(&format!("options: {g} and {f}: give one"))
            }
            (f @ ("--markdown" | "--presets"), None) => given = Some(f),
            _ if is_global_option(flag) => {
                return usage_error(&global_option_after("options", flag))
            }
            (other, _) => return usage_error(&format!("options: unknown argument {other}")),
        }
    }
    match given {
        None => {
            for o in OPTIONS {
                outln!("{}\t{}", o.name, o.summary());
            }
        }
        Some("--markdown") => out!("{}", markdown_table()),
        _ => out!("{}", mcpool::config::options::presets_markdown()),
    }
    ExitCode::SUCCESS
}

/// The flag of an option: its name with `-` for `_`.
fn flag_name(option: &str) -> String {
    option.replace('_', "-")
}

/// Whether `flag` (`--name`, without any `=value`) is one of the global options, which go
/// before the command: an option of the core's table or one of the CLI's own flags.
pub fn is_global_option(flag: &str) -> bool {
    matches!(
        flag,
        "--servers"
            | "--weights"
            | "--distribution"
            | "--ketama-points"
            | "--prefix"
            | "--no-sanitize-keys"
            | "--connect-timeout-ms"
            | "--io-timeout-ms"
    ) || flag
        .strip_prefix("--")
        .filter(|n| !n.is_empty() && !n.starts_with('-'))
        .and_then(mcpool::config::options::option)
        .is_some()
}

/// The error for the global option `flag` written after `command` (`set k v --prefix p:`,
/// `ring --prefix p:`): global options go before the command.
pub fn global_option_after(command: &str, flag: &str) -> String {
    format!(
        "{command} takes no option {flag}: {flag} is a global option, and global options go \
         before the command: mcpool {flag} ... {command} ..."
    )
}

/// Options that come before the command.
#[derive(Default, Debug, Clone)]
pub struct Globals {
    /// `--servers`, split on commas.
    pub servers: Vec<String>,
    /// `--weights`.
    pub weights: Option<Vec<u32>>,
    /// `--distribution` (its only spelling; `--ketama-points` is its parameter).
    pub distribution: Option<String>,
    /// `--ketama-points`.
    pub ketama_points: Option<u32>,
    /// Every other client option, in command-line order, under its name in the core's table:
    /// `--name value` and the older flags that spell one of them (`--prefix` is key_prefix,
    /// `--no-sanitize-keys` sanitize_keys false, `--io-timeout-ms N` io_timeout, ...). They
    /// are applied in this order, so a later one overrides an earlier one whatever the
    /// spelling of either (`preset` excepted: it applies first).
    pub options: Vec<(String, String)>,
    /// The flag of the last `key_prefix` among `options`, as given (`--key-prefix`,
    /// `--prefix`, `--key_prefix`): what a message about the prefix names.
    pub key_prefix_flag: Option<String>,
}

/// A usage error: printed with a hint, exit status 2.
pub fn usage_error(msg: &str) -> ExitCode {
    errln!("mcpool: {msg}\n(run `mcpool --help` for usage)");
    ExitCode::from(2)
}

/// A whole number for `flag`, from `min` to `u32::MAX`: anything else (negative, larger,
/// not a number) is an error naming the flag, never a value wrapped modulo 2^32.
pub fn count(flag: &str, v: &str, min: u32) -> Result<u32, String> {
    whole_number(v)
        .and_then(|n| u32::try_from(n).ok())
        .filter(|&n| n >= min)
        .ok_or_else(|| format!("{flag} takes a whole number {min}-{}, not {v:?}", u32::MAX))
}

/// An expiry in seconds for `flag` (`--ttl`, touch's TTL, flush's delay): a whole number
/// that the core's rule (`mcpool::ttl`, 0 to 2^31 - 1) accepts; anything else is an error
/// naming the flag (exit 2), before any server is asked.
pub fn seconds(flag: &str, v: &str) -> Result<u32, String> {
    seconds_as(flag, "ttl", v)
}

/// [`seconds`] for a time the core's refusal names `what` (flush's "delay", as every other
/// surface names it; tester finding expiry 5).
pub fn seconds_as(flag: &str, what: &'static str, v: &str) -> Result<u32, String> {
    let n = whole_number(v)
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| {
            format!(
                "{flag} takes seconds, a whole number 0-{}, not {v:?}",
                mcpool::ttl::MAX_TTL
            )
        })?;
    mcpool::ttl::check(what, n).map_err(|e| format!("{flag}: {e}"))
}

/// A lease's time for `arg` (lease's TTL and RECACHE_BELOW, invalidate's STALE_TTL), which
/// the core names `what` (`vivify_ttl`, `recache_below`, `stale_ttl`): a duration, 0 to 30
/// days, read by the core's one rule for signed times (`mcpool::ttl::checked_from_signed`),
/// so a negative one or one above 30 days is refused as every other surface refuses it
/// (`invalid vivify_ttl: -1 is negative; ...`; tester finding retest38 1: the CLI said the
/// store range 0-2147483647 for them). A number beyond i64, or no number, is an error
/// naming the argument and its range.
pub fn lease_seconds(arg: &str, what: &'static str, v: &str) -> Result<u32, String> {
    let negative = v.starts_with('-');
    let digits = v.strip_prefix('-').unwrap_or(v);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "{arg} takes seconds, a whole number 0-{} (30 days), not {v:?}",
            mcpool::ttl::RELATIVE_MAX
        ));
    }
    // (a number beyond i64 is refused as its end of i64 is, named as given: tester finding
    // retest39 2)
    let n = v
        .parse::<i64>()
        .unwrap_or(if negative { i64::MIN } else { i64::MAX });
    mcpool::ttl::checked_from_signed(what, n).map_err(|e| {
        let e = e.to_string();
        match v.parse::<i64>() {
            Ok(_) => e,
            Err(_) => e.replacen(&n.to_string(), v, 1),
        }
    })
}

/// A whole number as the CLI's arguments write one: decimal digits only (no sign, no
/// space), up to 2^64-1. Rust's own parse takes "+5", which no other surface did (tester
/// finding counters 5).
pub fn whole_number(v: &str) -> Option<u64> {
    if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    v.parse().ok()
}

/// Why the global options stop the program before any command.
enum Stop {
    /// `-h`, `--help`: the usage text, exit 0.
    Help,
    /// `-V`, `--version`: the version, exit 0.
    Version,
    /// A usage error (exit 2).
    Usage(String),
}

impl From<String> for Stop {
    fn from(e: String) -> Self {
        Stop::Usage(e)
    }
}

/// What `mcpool --version` prints: the crate's version, the one the library's
/// `mcpool_version()` returns (every crate of the workspace has the same version), then
/// whether this build speaks TLS.
fn version_line() -> String {
    let tls = if mcpool::TLS_SUPPORTED {
        "tls: built in"
    } else {
        "tls: not built in (make MCPOOL_FEATURES=tls)"
    };
    format!("mcpool {}\n{tls}", env!("CARGO_PKG_VERSION"))
}

/// Whether `word` is one of the CLI's commands.
fn is_command(word: &str) -> bool {
    cmd::is_command(word) || matches!(word, "ring" | "bench" | "options" | "help")
}

/// When the command word is missing or unknown after an option took the next argument as
/// its value and that argument is a command (`--io-timeout version`, `--io-timeout get k`):
/// the error that names the option, not a usage dump or "unknown command k".
/// Whether `flag` (`--sasl-password`) sets an option whose value is a secret, never shown.
fn secret_flag(flag: &str) -> bool {
    flag.strip_prefix("--")
        .and_then(mcpool::config::options::option)
        .is_some_and(|o| mcpool::config::options::is_secret(o.name))
}

/// Argument `i` as a message quotes it: a secret option's value (`--sasl-password X`,
/// `--sasl-password=X`) as its length only.
fn shown_argument(args: &[String], i: usize) -> String {
    let a = &args[i];
    match a.split_once('=') {
        Some((flag, v)) if secret_flag(flag) => {
            format!("{flag}={}", mcpool::config::options::redacted(v))
        }
        _ if i > 0 && secret_flag(&args[i - 1]) => mcpool::config::options::redacted(a),
        _ => format!("{a:?}"),
    }
}

fn swallowed(taken: &Option<(String, String)>, next: Option<&str>) -> Option<String> {
    let (flag, value) = taken.as_ref().filter(|(_, v)| is_command(v))?;
    if next.is_some_and(is_command) {
        return None;
    }
    let value = if secret_flag(flag) {
        mcpool::config::options::redacted(value)
    } else {
        value.clone()
    };
    Some(format!(
        "{flag} took {value:?} as its value, so {}: give {flag} its value before the command \
         ({flag} VALUE {value} ...)",
        match next {
            Some(n) => format!("{n:?} was read as the command"),
            None => "no command is left".to_owned(),
        }
    ))
}

/// Whether the global option `flag` (`--servers`, `--io-timeout`: the CLI's own and the
/// core's options) takes a value (a boolean one alone is a switch, see [`parse_globals`]).
fn takes_value(flag: &str) -> bool {
    flag.strip_prefix("--")
        .and_then(mcpool::config::options::option)
        .is_some()
        || matches!(
            flag,
            "--servers"
                | "--weights"
                | "--ketama-points"
                | "--prefix"
                | "--connect-timeout-ms"
                | "--io-timeout-ms"
                | "--sasl-password-file"
        )
}

/// The global options of `args` (the arguments as text; `raw`, as given): every argument
/// read is text, refused otherwise ([`not_utf8`]), but a path (`--sasl-password-file`'s),
/// any bytes. Returns them and where the command is.
fn parse_globals(args: &[String], raw: &[Vec<u8>]) -> Result<(Globals, usize), Stop> {
    use mcpool::config::options::OptionType;
    let mut g = Globals::default();
    let text = |i: usize| match std::str::from_utf8(&raw[i]) {
        Ok(_) => Ok(()),
        Err(_) => Err(Stop::Usage(not_utf8(raw, i, None))),
    };
    let mut i = 0;
    // The option just read, when it took the next argument as its value, and that value.
    let mut taken: Option<(String, String)> = None;
    while i < args.len() {
        // The option just before this argument, if it took its value from the next one.
        let previous = taken.take();
        let a = args[i].as_str();
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
            _ => (a, None),
        };
        // (a file's path is any bytes, as --value-file's: cmd::os_path)
        let path = flag == "--sasl-password-file";
        let inline_path = path && inline.is_some();
        if !path {
            text(i)?;
        }
        let table = flag
            .strip_prefix("--")
            .and_then(mcpool::config::options::option);
        let takes_value = takes_value(flag);
        // A boolean option alone is a switch (`--fail-open get k`: true) when what follows
        // is no value of its own: nothing, a command or another option. Otherwise the next
        // argument is its value, checked by the core (`--fail-open ture` is refused).
        let switch = table.is_some_and(|o| matches!(o.kind, OptionType::Bool))
            && inline.is_none()
            && args
                .get(i + 1)
                .map_or(true, |n| is_command(n) || (n.starts_with('-') && n != "-"));
        let value = if switch {
            Some("true".to_owned())
        } else if takes_value {
            match inline {
                Some(v) => Some(v),
                None => {
                    i += 1;
                    let v = args
                        .get(i)
                        .cloned()
                        .ok_or_else(|| format!("{flag} needs a value"))?;
                    if !path {
                        text(i)?;
                    }
                    taken = Some((flag.to_owned(), v.clone()));
                    Some(v)
                }
            }
        } else {
            None
        };
        // (the -ms timeouts, the only numbers read here, are above zero: the core refuses 0)
        let num = |v: &str| -> Result<u64, String> {
            v.parse().ok().filter(|&n| n > 0).ok_or_else(|| {
                format!(
                    "{flag} takes a number of milliseconds 1-{}, not {v:?}",
                    u64::MAX
                )
            })
        };
        match (flag, value) {
            ("--servers", Some(v)) => {
                // The core's split of a list (the `servers` option's): given but empty is an
                // error, never the private server meant for no --servers at all.
                g.servers = mcpool::ServerSpec::split_list(&v)
                    .map_err(|e| format!("--servers: {e}"))?
                    .into_iter()
                    .map(String::from)
                    .collect();
                if g.servers.is_empty() {
                    return Err(format!("--servers: empty server list ({v:?})").into());
                }
            }
            ("--weights", Some(v)) => {
                g.weights = Some(
                    v.split(',')
                        .map(|w| count(flag, w.trim(), 1))
                        .collect::<Result<_, _>>()?,
                )
            }
            ("--distribution", Some(v)) => g.distribution = Some(v),
            // Any count goes to the core's check (cmd.rs), which states the real bounds
            // (0 and too many points included); here only what is not a number at all.
            ("--ketama-points", Some(v)) => {
                g.ketama_points = Some(v.parse::<u32>().map_err(|_| {
                    format!(
                        "{flag} takes a whole number 1-{} (points x the sum of the weights at \
                         most that), not {v:?}",
                        mcpool::route::MAX_TABLE_ENTRIES
                    )
                })?)
            }
            // The older flags: each is one option of the table, applied in its place.
            ("--prefix", Some(v)) => {
                g.options.push(("key_prefix".into(), v));
                g.key_prefix_flag = Some(flag.to_owned());
            }
            ("--no-sanitize-keys", None) => {
                g.options.push(("sanitize_keys".into(), "false".into()))
            }
            // Milliseconds, checked by the core's option as `--io-timeout 500` is (0 refused).
            ("--connect-timeout-ms", Some(v)) => {
                let ms = num(&v)?;
                g.options.push(("connect_timeout".into(), ms.to_string()));
            }
            ("--io-timeout-ms", Some(v)) => {
                let ms = num(&v)?;
                g.options.push(("io_timeout".into(), ms.to_string()));
            }
            ("--sasl-password-file", Some(_)) => {
                let file = if inline_path {
                    &raw[i][flag.len() + 1..]
                } else {
                    &raw[i][..]
                };
                g.options
                    .push(("sasl_password".into(), password_from_file(file)?));
            }
            (_, Some(v)) if table.is_some() => {
                let name = table.map_or("", |o| o.name);
                if name == "key_prefix" {
                    // (as given: `--key-prefix`, `--key_prefix`, ...)
                    g.key_prefix_flag = Some(flag.to_owned());
                }
                g.options.push((name.to_owned(), v));
            }
            (f, _) if f.starts_with('-') && f != "-" => {
                if f == "-h" || f == "--help" {
                    return Err(Stop::Help);
                }
                if f == "-V" || f == "--version" {
                    return Err(Stop::Version);
                }
                let close = mcpool::config::options::close_names(f.trim_start_matches('-'));
                if !close.is_empty() {
                    let flags: Vec<String> = close
                        .iter()
                        .map(|n| format!("--{}", flag_name(n)))
                        .collect();
                    return Err(
                        format!("unknown option {f} (did you mean {}?)", flags.join(", ")).into(),
                    );
                }
                return Err(format!("unknown option {f}").into());
            }
            _ => {
                if let Some(e) = swallowed(&previous, Some(a)) {
                    return Err(e.into());
                }
                break; // the command (`taken` is empty here: the end below checks nothing)
            }
        }
        i += 1;
    }
    if let Some(e) = swallowed(&taken, None) {
        return Err(e.into());
    }
    password_from_environment(&mut g)?;
    Ok((g, i))
}

/// Why argument `i` of `raw` is refused where text goes, not being UTF-8: its bytes as they
/// are (`\xNN`, never U+FFFD; a secret's length only), after the option it is the value of,
/// when it is one (tester finding retest41b 5), and for `command`'s own arguments (`raw`
/// being those: ring's, bench's) the command and the option it follows (retest43 4); then
/// what may be any bytes ([`cmd::ANY_BYTES`]; the bench reads every argument as text).
pub fn not_utf8(raw: &[Vec<u8>], i: usize, command: Option<&str>) -> String {
    let args: Vec<String> = raw
        .iter()
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    let shown = shown_argument(&args, i);
    let shown = if shown == format!("{:?}", args[i]) {
        cmd::shown_key(&raw[i])
    } else {
        shown
    };
    // (`--flag=VALUE`: the flag named only when it is text, never as U+FFFD)
    let inline = raw[i]
        .iter()
        .position(|&b| b == b'=')
        .and_then(|at| std::str::from_utf8(&raw[i][..at]).ok());
    let before = i
        .checked_sub(1)
        .map(|j| args[j].as_str())
        .filter(|p| p.starts_with('-') && !p.contains('='));
    let option = match (command, inline) {
        (Some(c), Some(flag)) if flag.starts_with("--") => format!("{c} {flag}: "),
        (Some(c), _) => match before {
            Some(p) => format!("{c} (after {p}): "),
            None => format!("{c}: "),
        },
        (None, Some(flag)) if flag.starts_with("--") && takes_value(flag) => format!("{flag}: "),
        (None, _) => before
            .filter(|p| takes_value(p))
            .map_or(String::new(), |p| format!("{p}: ")),
    };
    // (the TLS files are the core's options, which take text: named as such, never as a
    // path that could be any bytes)
    let tls_file = command.is_none()
        && inline
            .or(before)
            .and_then(|f| f.strip_prefix("--"))
            .and_then(mcpool::config::options::option)
            .is_some_and(|o| {
                matches!(o.name, "tls_ca_file" | "tls_client_cert" | "tls_client_key")
            });
    let hint = match command {
        // (mcpool_bench reads its arguments as text, --out's directory too)
        Some("bench") => "the bench reads every argument as text, --out's directory too",
        _ if tls_file => {
            "a TLS file is named by a client option, which is text; keys, values and the \
             other file paths may be any bytes"
        }
        _ => cmd::ANY_BYTES,
    };
    format!("{option}argument {shown} is not UTF-8 ({hint})")
}

/// The SASL password in `file` (its path as given, any bytes: [`cmd::os_path`]): its first
/// line (a trailing `\n` or `\r\n` dropped), never shown in an error.
fn password_from_file(file: &[u8]) -> Result<String, String> {
    let path = cmd::shown_path(file);
    let bytes = std::fs::read(cmd::os_path(file))
        .map_err(|e| format!("--sasl-password-file {path}: {e}"))?;
    let text = String::from_utf8(bytes)
        .map_err(|_| format!("--sasl-password-file {path}: the password is not UTF-8"))?;
    let line = text.strip_suffix('\n').unwrap_or(&text);
    let line = line.strip_suffix('\r').unwrap_or(line);
    if line.contains(['\n', '\r']) {
        return Err(format!(
            "--sasl-password-file {path}: more than one line (the password is the file's \
             only line)"
        ));
    }
    if line.is_empty() {
        return Err(format!("--sasl-password-file {path}: the file is empty"));
    }
    Ok(line.to_owned())
}

/// `MCPOOL_SASL_PASSWORD`, when the command line gives a SASL user name and no password.
fn password_from_environment(g: &mut Globals) -> Result<(), String> {
    const VAR: &str = "MCPOOL_SASL_PASSWORD";
    let given = |option: &str| g.options.iter().any(|(name, _)| name == option);
    if given("sasl_password") || !given("sasl_username") {
        return Ok(());
    }
    match std::env::var(VAR) {
        Ok(pw) if pw.is_empty() => return Err(format!("{VAR}: the variable is empty")),
        Ok(pw) => g.options.push(("sasl_password".into(), pw)),
        Err(std::env::VarError::NotUnicode(_)) => {
            return Err(format!("{VAR}: the password is not UTF-8"))
        }
        Err(std::env::VarError::NotPresent) => {
            // the command line's ways to give it, not the library's option (cli3 5)
            return Err(format!(
                "--sasl-username needs a password: --sasl-password-file FILE or the {VAR} \
                 variable (SASL takes both)"
            ));
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    // A closed output pipe ends the output quietly; a failed write is exit 2 (`out`).
    out::status(run())
}

fn run() -> ExitCode {
    use std::os::unix::ffi::OsStringExt;
    // Keys and values are bytes (0x80 and above included, as memcached takes them): the
    // arguments are read as bytes, and only options and names must be UTF-8.
    let raw: Vec<Vec<u8>> = std::env::args_os()
        .skip(1)
        .map(OsStringExt::into_vec)
        .collect();
    // Every argument as text; one that is not UTF-8 is refused wherever text is needed.
    let args: Vec<String> = raw
        .iter()
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    let (globals, at) = match parse_globals(&args, &raw) {
        Ok(x) => x,
        Err(Stop::Help) => {
            out!("{}", usage());
            return ExitCode::SUCCESS;
        }
        Err(Stop::Version) => {
            outln!("{}", version_line());
            return ExitCode::SUCCESS;
        }
        // (every argument it read was text where text goes, its name too)
        Err(Stop::Usage(e)) => return usage_error(&e),
    };
    let Some(command) = args.get(at) else {
        err!("{}", usage());
        return ExitCode::from(2);
    };
    let rest = &args[at + 1..];
    if !matches!(command.as_str(), "ring" | "bench" | "options" | "help") {
        // The memcached commands take their keys and values as bytes.
        return cmd::run(&globals, command, &raw[at + 1..]);
    }
    if command == "ring" {
        // (its --keys FILE is a path, any bytes; its other arguments text)
        return ExitCode::from(ring::run(&globals, &raw[at + 1..]).clamp(0, 255) as u8);
    }
    let own = &raw[at + 1..];
    if let Some(i) = (0..own.len()).find(|&i| std::str::from_utf8(&own[i]).is_err()) {
        return usage_error(&not_utf8(own, i, Some(command.as_str())));
    }
    match command.as_str() {
        "bench" => ExitCode::from(mcpool_bench::run(&globals.servers, rest).clamp(0, 255) as u8),
        "options" => options_command(rest),
        "help" => {
            out!("{}", usage());
            ExitCode::SUCCESS
        }
        _ => unreachable!("the memcached commands and ring returned above"),
    }
}
