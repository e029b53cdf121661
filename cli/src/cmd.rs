//! The memcached commands of the CLI.

use crate::out::{check, errln, outln};
use crate::{usage_error, Globals};
use mcpool::config::options::parse_bool;
use mcpool::{
    Client, ClientBuilder, Compress, Distribution, Kind, Lease, ServerSpec, StoreCommand,
    StoreOutcome, Value,
};
use mcpool_testkit::Spawn;
use std::io::Write;
use std::process::ExitCode;

const MISS: u8 = 1;
const FAIL: u8 = 2;

/// Builds a client from the global options (the servers must be set).
/// What of the options (TLS, SASL) a private memcached cannot serve, if any: the options
/// applied as the client would apply them (a bad one is reported later, as usual).
fn needs_real_server(g: &Globals) -> Option<&'static str> {
    let mut b = ClientBuilder::new();
    for (name, value) in &g.options {
        if let Ok(next) = b.clone().set(name, value) {
            b = next;
        }
    }
    if b.config().tls.is_some() {
        Some("TLS options")
    } else if b.config().sasl.is_some() {
        Some("SASL options")
    } else {
        None
    }
}

pub fn client_from(g: &Globals, servers: &[String]) -> Result<Cli, String> {
    let client = builder_from(g, servers)?
        .build()
        .map_err(|e| e.to_string())?;
    Ok(Cli {
        client,
        prefix_option: prefix_option(g),
    })
}

/// A client built from the global options, with what its messages say of them: the option
/// that gave its key prefix, as the command line spelt it. It is the client for everything
/// else ([`Deref`](std::ops::Deref)).
pub struct Cli {
    client: Client,
    /// [`prefix_option`]'s.
    prefix_option: String,
}

impl std::ops::Deref for Cli {
    type Target = Client;

    fn deref(&self) -> &Client {
        &self.client
    }
}

/// The option that gave the key prefix that applies, as the command line spelt it (tester
/// finding limits 4: `--key-prefix` was named `--prefix`): the last one given by name
/// (`--key-prefix`, `--prefix`, `--key_prefix`, ...: the later wins, whatever the spelling),
/// else a `--libmemcached-config` string's `--NAMESPACE` (which one given by name overrides),
/// else the option's own name.
fn prefix_option(g: &Globals) -> String {
    match &g.key_prefix_flag {
        Some(flag) => flag.clone(),
        None if g.options.iter().any(|(n, _)| n == "libmemcached_config") => "--NAMESPACE".into(),
        None => "key_prefix".into(),
    }
}

/// The options applied before every other, whatever their place on the command line.
const PRESET_LIKE: [&str; 2] = ["preset", "libmemcached_config"];

/// Where a command's servers come from.
pub(crate) enum Servers {
    /// `--servers`, or a libmemcached configuration string that names them (then the list
    /// is empty: the string's own `--SERVER` words are read by the client).
    Given(Vec<String>),
    /// `MEMCACHED_SERVERS`, read as libmemcached's tools (memcp, memcat, memstat) read it
    /// when no servers are given (tester finding statscli 1; `ring` too: retest22 3).
    Env(Vec<String>),
    /// Neither.
    Missing,
}

/// The servers of the global options, else of the environment: the one rule of every
/// command that talks to servers; a `MEMCACHED_SERVERS` that cannot be read is an error
/// naming it.
pub(crate) fn servers_of(g: &Globals) -> Result<Servers, String> {
    if !g.servers.is_empty() || config_names_servers(g)? {
        return Ok(Servers::Given(g.servers.clone()));
    }
    Ok(match env_servers() {
        Some(list) => Servers::Env(list?),
        None => Servers::Missing,
    })
}

/// The servers `MEMCACHED_SERVERS` names: `None` when it is unset or empty; a list it
/// cannot be read as is an error naming the variable.
fn env_servers() -> Option<Result<Vec<String>, String>> {
    let v = std::env::var_os("MEMCACHED_SERVERS")?;
    if v.is_empty() {
        return None;
    }
    let Some(v) = v.to_str() else {
        return Some(Err("MEMCACHED_SERVERS: not UTF-8 text".into()));
    };
    Some(match mcpool::ServerSpec::split_list(v) {
        Ok(list) if list.is_empty() => Err(format!("MEMCACHED_SERVERS: empty server list ({v:?})")),
        Ok(list) => Ok(list.into_iter().map(str::to_owned).collect()),
        Err(e) => Err(format!("MEMCACHED_SERVERS: {e}")),
    })
}

/// Whether a `--libmemcached-config` names servers (`--SERVER=` words); one the core
/// refuses is its error, said as it is (tester finding addresses 3: a writing command and
/// `ring` said "needs servers" of a string that gave some, its refused word never named).
pub(crate) fn config_names_servers(g: &Globals) -> Result<bool, String> {
    for (n, v) in g.options.iter().filter(|(n, _)| n == "libmemcached_config") {
        // (the string's servers as it gives them: a setting the client refuses when it is
        // built, `--POOL-MIN` above `--POOL-MAX`, is said then, not as "no servers": tester
        // finding configwords 2)
        let b = ClientBuilder::new().set(n, v).map_err(|e| e.to_string())?;
        if !b.config().servers.is_empty() {
            return Ok(true);
        }
    }
    Ok(false)
}

/// --weights without servers to weigh.
const WEIGHTS_NEED_SERVERS: &str = "--weights needs --servers: it weighs them in their order \
     (a --libmemcached-config string weighs its own servers: --SERVER=HOST:PORT/?N)";

/// The client's builder from the global options, every option applied and checked (a bad
/// one is an error), for `servers`.
fn builder_from(g: &Globals, servers: &[String]) -> Result<ClientBuilder, String> {
    // One --preset (or --libmemcached-config), as every option is given once: a second
    // would mix two clients' settings (whalin's key encoding under pylibmc's placement).
    // (One of each is the core's refusal, on every surface.)
    for name in PRESET_LIKE {
        let given: Vec<String> = g
            .options
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(n, v)| format!("--{} {v}", n.replace('_', "-")))
            .collect();
        if given.len() > 1 {
            return Err(format!("{}: give one", given.join(", ")));
        }
    }
    let mut b = ClientBuilder::new().min_idle(0);
    // A preset first, whatever its place: every other option overrides it.
    for (name, value) in g.options.iter().filter(|(n, _)| n == "preset") {
        b = b.set(name, value).map_err(|e| e.to_string())?;
    }
    if let Some(w) = &g.weights {
        if servers.is_empty() {
            // (the string's servers, or none: tester finding configwords 3, "2 entries for
            // 0 servers" of a string that named two)
            return Err(WEIGHTS_NEED_SERVERS.into());
        }
        if w.len() != servers.len() {
            return Err(format!(
                "--weights has {} entries for {} servers",
                w.len(),
                servers.len()
            ));
        }
    }
    // The core's rule for a server entry: `HOST:PORT:WEIGHT` is a weight, as in the
    // `servers` option; one in the address and a different one in --weights is an error.
    for (i, s) in servers.iter().enumerate() {
        let w = g.weights.as_ref().map(|w| w[i]);
        let spec = ServerSpec::parse_entry(s, w).map_err(|e| match w {
            Some(_) => format!("{e} (--weights)"),
            None => e.to_string(),
        })?;
        b = b.server_spec(spec);
    }
    // A libmemcached configuration string next, whatever its place (a preset and its
    // client's words, over --servers: the core refuses servers given both ways).
    for (name, value) in g.options.iter().filter(|(n, _)| n == "libmemcached_config") {
        b = b.set(name, value).map_err(|e| e.to_string())?;
    }
    // --distribution has one spelling and no other option writes placement (a preset's
    // comes before it): its place on the command line changes nothing.
    // The core's rule for a count in the profile's name and in --ketama-points: one count,
    // or the same in both; its range; the profiles that have one.
    if let Some(d) = &g.distribution {
        let dist = Distribution::with_points_beside(d, g.ketama_points, "--ketama-points")
            .map_err(|e| e.to_string())?;
        b = b.distribution(dist);
    } else if g.ketama_points.is_some() {
        // A points count for no named profile would be silently ignored: say so instead.
        return Err("--ketama-points needs --distribution (e.g. --distribution cmf-ketama)".into());
    }
    // Every other option in command-line order, whatever its spelling: the later wins.
    for (name, value) in g
        .options
        .iter()
        .filter(|(n, _)| !PRESET_LIKE.contains(&n.as_str()))
    {
        b = b.set(name, value).map_err(|e| e.to_string())?;
    }
    Ok(b)
}

/// Whether `n` arguments (keys, values, numbers) fit the command's slots.
fn arity_fits(spec: &Spec, n: usize) -> bool {
    if spec.slots == [Slot::Pairs] {
        return n >= 2 && n % 2 == 0;
    }
    let required = spec
        .slots
        .iter()
        .filter(|s| !matches!(s, Slot::OptNumber | Slot::OptGroup))
        .count();
    let unbounded = spec.slots.contains(&Slot::Keys);
    n >= required && (unbounded || n <= spec.slots.len())
}

/// The slot of argument `i` of the `n` a command is given (keys, values, numbers): KEY...
/// takes every argument between the slots before it and those after it, one at least (gat
/// TTL KEY..., touch KEY... TTL); pairs alternate KEY and VALUE.
fn slot_at(spec: &Spec, i: usize, n: usize) -> Option<Slot> {
    let slots = spec.slots;
    if slots == [Slot::Pairs] {
        return Some(if i % 2 == 0 { Slot::Key } else { Slot::Value });
    }
    let Some(j) = slots.iter().position(|s| *s == Slot::Keys) else {
        return slots.get(i).copied();
    };
    let after = slots.len() - j - 1;
    let keys_end = n.saturating_sub(after).max(j + 1);
    if i < j {
        slots.get(i).copied()
    } else if i < keys_end {
        Some(Slot::Keys)
    } else {
        slots.get(j + 1 + (i - keys_end)).copied()
    }
}

/// What the CLI says about `key`: `COMMAND "KEY": what` (after `mcpool: `), for every keyed
/// command's error, miss or refused store, so a failure always names its command and key.
fn about(command: &str, key: &[u8], what: impl std::fmt::Display) -> String {
    format!("{command} {}: {what}", shown_key(key))
}

/// [`about`] for a core error: a refused key that the error names as the caller gave it
/// is named once (`get: invalid key "x y": ...`; tester finding keys2 5). One over 250
/// bytes, which the error names by its length, is shown too: which of the keys it was.
fn about_error(client: &Cli, command: &str, key: &[u8], e: &mcpool::Error) -> String {
    let what = key_error(client, key, e);
    if key.len() <= mcpool::key::MAX_KEY_LEN && e.names_key(key) {
        format!("{command}: {what}")
    } else {
        about(command, key, what)
    }
}

/// A core error about `key`, said: a key the client's key prefix made too long is named by
/// both lengths and the prefix's option as given (`"<251 bytes: 249 bytes + 2 of
/// --key-prefix>"`), where the core says "of the key_prefix" ([`mcpool::key::prefixed_length`]).
pub(crate) fn key_error(client: &Cli, key: &[u8], e: &mcpool::Error) -> String {
    let prefix = client.config().key_prefix.len();
    if let mcpool::Error::InvalidKey { key: named, reason } = e {
        let (total, given) = (key.len() + prefix, key.len());
        let core_named =
            mcpool::key::prefixed_length(total, given, prefix, mcpool::key::PREFIX_NAMED);
        if prefix > 0 && *named == core_named {
            // the core's naming, with the prefix's option as the command line gave it
            let key = mcpool::key::prefixed_length(total, given, prefix, &client.prefix_option);
            return mcpool::Error::InvalidKey { key, reason }.to_string();
        }
    }
    e.to_string()
}

/// A key (or a value) as the CLI's messages show it: as the core's errors show a key
/// ([`mcpool::key::quoted`]: quoted, UTF-8 as text, a control byte or any byte that is not
/// UTF-8 as `\xNN`), so a key reads alike in the CLI's own messages and the core's (tester
/// finding retest45 1: `"a\u{1}b": not found` beside `invalid key "a\x01b"`).
pub fn shown_key(key: &[u8]) -> String {
    mcpool::key::quoted(key)
}

/// An argument as a message shows it unquoted (an option, a word): UTF-8 as it is, any other
/// byte as `\xNN`, never U+FFFD (tester finding retest39 3).
fn shown_word(a: &[u8]) -> String {
    match std::str::from_utf8(a) {
        Ok(s) => s.to_owned(),
        Err(_) => a.escape_ascii().to_string(),
    }
}

fn fail(e: impl std::fmt::Display) -> ExitCode {
    let e = e.to_string();
    // The core names its function; the command line's word for it is the flag (tester
    // finding cli3 5: "get_lease needs the meta protocol").
    let hint = if e.contains("needs the meta protocol") {
        " (give --protocol meta)"
    } else {
        ""
    };
    errln!("mcpool: {e}{hint}");
    ExitCode::from(FAIL)
}

/// The exit status of a store, and for a refused one (exit 1) why, in words, after the
/// command and key.
/// The words for a miss: under `fail_open` a miss may be a server that did not answer, as
/// "not stored" says for a store (tester finding topology 6).
fn not_found(client: &Client) -> &'static str {
    if client.config().fail_open {
        "not found (or, with fail_open, no server answered)"
    } else {
        "not found"
    }
}

fn store_exit(command: &str, key: &[u8], o: StoreOutcome) -> ExitCode {
    match refusal(command, o) {
        None => ExitCode::SUCCESS,
        Some(why) => {
            errln!("mcpool: {}", about(command, key, why));
            ExitCode::from(MISS)
        }
    }
}

/// Why a store was refused, in words (`None`: stored).
fn refusal(command: &str, o: StoreOutcome) -> Option<&'static str> {
    Some(match (o, command) {
        (StoreOutcome::Stored, _) => return None,
        (StoreOutcome::NotStored, "add") => "not stored (the key exists)",
        (StoreOutcome::NotStored, "replace" | "append" | "prepend") => {
            "not stored (the key does not exist)"
        }
        // A set refused by the server (or, with fail_open, a server not reached).
        (StoreOutcome::NotStored, _) => {
            "not stored (refused, or with fail_open no server answered)"
        }
        (StoreOutcome::Exists, _) => "not stored (the item changed since its CAS was read)",
        (StoreOutcome::NotFound, _) => "not stored (the key does not exist)",
    })
}

/// What one argument of a command is. Where an argument that begins with `-` may stand:
/// a key never (an option there is refused, so `delete -x` or `delete --help` never acts on
/// the key `-x`: such a key goes after `--`), a value always (`set k -5 --kind int`), a
/// number when it reads as a negative number (for the command's own range message).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Slot {
    /// One key.
    Key,
    /// One key or more (the last slot).
    Keys,
    /// A value to store: any bytes, a leading `-` included.
    Value,
    /// A number (TTL, delta, CAS unique, counter, delay).
    Number,
    /// An optional number (flush's delay), the last slot.
    OptNumber,
    /// An optional statistics group (stats), the last slot.
    OptGroup,
    /// KEY VALUE, once or more (set-multi), the only slot: each KEY a [`Slot::Key`], each
    /// VALUE a [`Slot::Value`].
    Pairs,
}

/// A memcached command of the CLI: its arguments, the options it takes, its usage line.
struct Spec {
    name: &'static str,
    slots: &'static [Slot],
    /// Its options: `--ttl`, `--kind`, `--flags`, ... (each at most once).
    options: &'static [&'static str],
    usage: &'static str,
    /// It changes what the servers hold (a store, delete, touch, counter or flush): its
    /// effect would vanish with the private memcached started for want of servers, so it
    /// needs servers (`--servers`, or `MEMCACHED_SERVERS`).
    writes: bool,
}

/// What a command's `--help` says after its usage line, where its arguments need it.
fn notes(command: &str) -> Option<&'static str> {
    match command {
        "lease" => Some(
            "TTL (the core's vivify_ttl: how long a miss's placeholder holds the election) and\n\
             RECACHE_BELOW (also win the recompute of a value with less time to live) are\n\
             durations, 0 to 2592000 seconds (30 days), never a unix time.",
        ),
        "invalidate" => Some(
            "STALE_TTL (how long lease readers get the stale value) is a duration, 0 to\n\
             2592000 seconds (30 days), never a unix time.",
        ),
        _ => None,
    }
}

/// Every memcached command's arguments and options: the one place the CLI decides what is
/// an option, a key or a value ([`parse_args`]).
const COMMANDS: &[Spec] = {
    use Slot::*;
    const STORE: &[&str] = &["--ttl", "--kind", "--flags", "--value-file"];
    const CONCAT: &[&str] = &["--value-file"];
    const READ: &[&str] = &["--show-flags"];
    &[
        Spec {
            name: "get",
            writes: false,
            slots: &[Keys],
            options: READ,
            usage: "get KEY... [--show-flags]",
        },
        Spec {
            name: "gets",
            writes: false,
            slots: &[Keys],
            options: READ,
            usage: "gets KEY... [--show-flags]",
        },
        Spec {
            name: "gat",
            writes: true,
            slots: &[Number, Keys],
            options: READ,
            usage: "gat TTL KEY... [--show-flags]",
        },
        Spec {
            name: "gats",
            writes: true,
            slots: &[Number, Keys],
            options: READ,
            usage: "gats TTL KEY... [--show-flags]",
        },
        Spec {
            name: "set",
            writes: true,
            slots: &[Key, Value],
            options: STORE,
            usage: "set KEY (VALUE | --value-file FILE) [--ttl S] [--kind bytes|text|int|bool | --flags N]",
        },
        Spec {
            name: "set-multi",
            writes: true,
            slots: &[Pairs],
            options: &["--ttl", "--noreply"],
            usage: "set-multi KEY VALUE [KEY VALUE...] [--ttl S] [--noreply]",
        },
        Spec {
            name: "add",
            writes: true,
            slots: &[Key, Value],
            options: STORE,
            usage: "add KEY (VALUE | --value-file FILE) [--ttl S] [--kind bytes|text|int|bool | --flags N]",
        },
        Spec {
            name: "replace",
            writes: true,
            slots: &[Key, Value],
            options: STORE,
            usage: "replace KEY (VALUE | --value-file FILE) [--ttl S] [--kind bytes|text|int|bool | --flags N]",
        },
        Spec {
            name: "cas",
            writes: true,
            slots: &[Key, Value, Number],
            options: STORE,
            usage:
                "cas KEY (VALUE | --value-file FILE) CAS [--ttl S] [--kind bytes|text|int|bool | --flags N]",
        },
        Spec {
            name: "append",
            writes: true,
            slots: &[Key, Value],
            options: CONCAT,
            usage: "append KEY (VALUE | --value-file FILE)",
        },
        Spec {
            name: "prepend",
            writes: true,
            slots: &[Key, Value],
            options: CONCAT,
            usage: "prepend KEY (VALUE | --value-file FILE)",
        },
        Spec {
            name: "delete",
            writes: true,
            slots: &[Keys],
            options: &[],
            usage: "delete KEY...",
        },
        Spec {
            name: "incr",
            writes: true,
            slots: &[Key, Number],
            options: &[],
            usage: "incr KEY N",
        },
        Spec {
            name: "decr",
            writes: true,
            slots: &[Key, Number],
            options: &[],
            usage: "decr KEY N",
        },
        Spec {
            name: "incr-or-init",
            writes: true,
            slots: &[Key, Number, Number],
            options: &["--ttl"],
            usage: "incr-or-init KEY N INITIAL [--ttl S]",
        },
        Spec {
            name: "decr-or-init",
            writes: true,
            slots: &[Key, Number, Number],
            options: &["--ttl"],
            usage: "decr-or-init KEY N INITIAL [--ttl S]",
        },
        Spec {
            name: "touch",
            writes: true,
            slots: &[Keys, Number],
            options: &[],
            usage: "touch KEY... TTL",
        },
        Spec {
            name: "set-counter",
            writes: true,
            slots: &[Key, Number],
            options: &["--ttl"],
            usage: "set-counter KEY N [--ttl S]",
        },
        Spec {
            name: "lease",
            writes: true,
            slots: &[Key, Number, OptNumber],
            options: &[],
            usage: "lease KEY TTL [RECACHE_BELOW]",
        },
        Spec {
            name: "invalidate",
            writes: true,
            slots: &[Key, Number],
            options: &[],
            usage: "invalidate KEY STALE_TTL",
        },
        Spec {
            name: "info",
            writes: false,
            slots: &[Key],
            options: &[],
            usage: "info KEY",
        },
        Spec {
            name: "version",
            writes: false,
            slots: &[],
            options: &[],
            usage: "version",
        },
        Spec {
            name: "noop",
            writes: false,
            slots: &[],
            options: &[],
            usage: "noop",
        },
        Spec {
            name: "stats",
            writes: false,
            slots: &[OptGroup],
            options: &[],
            usage:
                "stats [GROUP] | stats --client [--ops N] [--threads T] [--format table|prometheus]",
        },
        Spec {
            name: "flush",
            writes: true,
            slots: &[OptNumber],
            options: &[],
            usage: "flush [DELAY]",
        },
    ]
};

/// Whether `name` is one of the memcached commands.
pub fn is_command(name: &str) -> bool {
    COMMANDS.iter().any(|c| c.name == name)
}

/// A command's arguments, its options taken out.
struct Args<'a> {
    /// The keys, values and numbers, in order.
    pos: Vec<&'a [u8]>,
    /// `--ttl`'s argument as given: read into seconds with the key known ([`typed_command`]).
    ttl: Option<&'a [u8]>,
    kind: Kind,
    /// `--flags`'s argument as given (the stores): read with the key known, as `--ttl`.
    flags: Option<&'a [u8]>,
    /// `--value-file`'s path (`-`: standard input): the value read from it ([`value_file`]).
    value_file: Option<&'a [u8]>,
    /// `--noreply` (set-multi): stores sent without waiting for each reply.
    noreply: bool,
    /// `--show-flags` (get, gets, gat, gats): each value's flags printed before it.
    show_flags: bool,
}

/// What the command line asks of a command.
enum Parsed<'a> {
    /// `-h` or `--help` (before `--`): the command's usage, exit 0.
    Help,
    /// `stats --client ...`: its own options (client_stats).
    StatsClient,
    Run(Args<'a>),
}

/// Whether `a` is written as an option: `-` and more (`-` alone is an argument).
fn looks_like_option(a: &[u8]) -> bool {
    a.len() > 1 && a[0] == b'-'
}

/// Reads a command's arguments by its [`Spec`], for every command alike: `-h`/`--help` is
/// help; its options (`--ttl S`, `--kind K`, `--show-flags`, ...) where the command takes
/// them (anywhere, at most once each; `--kind` and `--flags` not together);
/// `--` ends the options, after it every argument is a key or a value whatever it looks
/// like (`set -- k --ttl` stores the value `--ttl`); any other argument that begins with `-`
/// is refused where a key (or a number) goes, and taken as it is where a value goes.
fn parse_args<'a>(spec: &Spec, args: &'a [Vec<u8>]) -> Result<Parsed<'a>, String> {
    let command = spec.name;
    let is_help = |a: &[u8]| a == b"-h" || a == b"--help";
    if command == "stats" {
        let options = || args.iter().take_while(|a| *a != b"--");
        // `--client` anywhere (`stats items --client` said "takes no option --client":
        // tester finding statscli 4); what does not go with it is refused by its parser.
        if options().any(|a| a == b"--client") {
            if options().any(|a| is_help(a)) {
                return Ok(Parsed::Help);
            }
            return Ok(Parsed::StatsClient);
        }
        // (`--ops=5` too: the name before an `=`)
        let name = |a: &[u8]| a.split(|&b| b == b'=').next().unwrap_or_default().to_vec();
        if let Some(f) = options()
            .map(|a| name(a))
            .find(|a| [&b"--format"[..], b"--ops", b"--threads"].contains(&a.as_slice()))
        {
            let f = String::from_utf8_lossy(&f);
            return Err(format!(
                "stats: {f} goes with --client (stats --client {f} ...: the client's own \
                 metrics); the servers' statistics (stats [GROUP]) are printed as a table of \
                 STAT lines only"
            ));
        }
    }
    let mut out = Args {
        pos: Vec::new(),
        ttl: None,
        kind: Kind::Bytes,
        flags: None,
        value_file: None,
        noreply: false,
        show_flags: false,
    };
    let mut kind: Option<&[u8]> = None;
    let mut it = args.iter();
    let mut ended = false;
    while let Some(a) = it.next() {
        let a = a.as_slice();
        if !ended {
            if a == b"--" {
                ended = true;
                continue;
            }
            if is_help(a) {
                return Ok(Parsed::Help);
            }
            let takes = |o: &str| spec.options.contains(&o);
            // An option with a value: `--name V` or `--name=V`, each given once.
            let valued = ["--ttl", "--kind", "--flags", "--value-file"]
                .into_iter()
                .filter(|o| takes(o))
                .find_map(|o| {
                    let inline = a.strip_prefix(o.as_bytes())?;
                    match inline {
                        [] => Some((o, None)),
                        [b'=', v @ ..] => Some((o, Some(v))),
                        _ => None,
                    }
                });
            if let Some((name, inline)) = valued {
                let v = match inline {
                    Some(v) => v,
                    None => it.next().ok_or_else(|| match name {
                        "--value-file" => "--value-file needs a file (- for standard input)".into(),
                        _ => format!("{name} needs a value"),
                    })?,
                };
                let slot = match name {
                    "--ttl" => &mut out.ttl,
                    "--kind" => &mut kind,
                    "--flags" => &mut out.flags,
                    _ => &mut out.value_file,
                };
                if slot.replace(v).is_some() {
                    return Err(format!("{name} given twice"));
                }
                continue;
            }
            // A switch, given once.
            let switch = match a {
                b"--noreply" if takes("--noreply") => Some(&mut out.noreply),
                b"--show-flags" if takes("--show-flags") => Some(&mut out.show_flags),
                _ => None,
            };
            if let Some(on) = switch {
                if std::mem::replace(on, true) {
                    return Err(format!("{} given twice", shown_word(a)));
                }
                continue;
            }
            if let Some(why) = option_refused(command, a) {
                return Err(why);
            }
            if looks_like_option(a) {
                // Where this argument goes among all of them (touch's last one is its TTL,
                // the others its keys): the arguments left, a first `--` aside. (Only a KEY...
                // followed by a slot needs the count, and such a command takes no option, so
                // every argument left is a key, a value or a number.)
                let left = it.as_slice();
                let n =
                    out.pos.len() + 1 + left.len() - usize::from(left.iter().any(|x| x == b"--"));
                let slot = slot_at(spec, out.pos.len(), n);
                // (once --value-file has given the value, no argument is the VALUE)
                let slot = slot.filter(|s| !(*s == Slot::Value && out.value_file.is_some()));
                let negative = a[1..].iter().all(u8::is_ascii_digit);
                let flag = std::str::from_utf8(a)
                    .ok()
                    .map(|f| f.split_once('=').map_or(f, |(f, _)| f));
                // A global option after the command (`set k v --compression false`): say
                // where it goes (tester finding cli2 6). Where a VALUE goes, it could be the
                // value: that one goes after `--`.
                if let Some(f) = flag.filter(|f| crate::is_global_option(f)) {
                    let as_value = match slot {
                        Some(Slot::Value) => format!(
                            "; to store {} as the value, put it after --: mcpool {command} \
                             KEY -- {}",
                            shown_key(a),
                            shown_word(a)
                        ),
                        _ => String::new(),
                    };
                    return Err(format!(
                        "{}{as_value}",
                        crate::global_option_after(command, f)
                    ));
                }
                // Where a VALUE goes, an argument written as an option of the store
                // commands, or close to one of this command's (`--value-flie=f`, `--kidn`),
                // is a mistake far more often than a value: refused, with the way to store
                // it (after `--`).
                if let (Some(Slot::Value), Some(f)) = (slot, flag) {
                    if let Some(meant) = misspelt_option(spec, f) {
                        return Err(format!(
                            "{} looks like the option {meant}{}; to store it as the value, put \
                             it after --: mcpool {command} KEY -- {0}",
                            shown_word(a),
                            if spec.options.contains(&meant) {
                                String::new()
                            } else {
                                format!(", which {command} does not take")
                            }
                        ));
                    }
                }
                let taken = match slot {
                    Some(Slot::Value) => true,
                    Some(Slot::Number | Slot::OptNumber) => negative,
                    _ => false,
                };
                if !taken {
                    // the closest of its options, by the core's one rule (tester finding
                    // retest48 4: `set k v --tll 5` named no --ttl)
                    let close = flag.map_or_else(Vec::new, |f| {
                        mcpool::config::options::closest(
                            f.trim_start_matches('-'),
                            spec.options.iter().map(|o| o.trim_start_matches('-')),
                        )
                    });
                    // else the closest global option, which goes before the command (tester
                    // finding retest49 5: `get k --protcol meta` named none)
                    let global = match close.as_slice() {
                        [] => flag.map_or_else(Vec::new, |f| {
                            mcpool::config::options::close_names(f.trim_start_matches('-'))
                        }),
                        _ => Vec::new(),
                    };
                    let theirs = match (spec.options, close.as_slice(), global.as_slice()) {
                        (_, [], [meant, ..]) => {
                            let meant = crate::flag_name(meant);
                            format!(
                                " (did you mean --{meant}? a global option: global options go \
                                 before the command: mcpool --{meant} ... {command} ...)"
                            )
                        }
                        ([], _, _) => String::new(),
                        (o, [], []) => format!(" (its options: {})", o.join(", ")),
                        (o, close, _) => format!(
                            " (did you mean --{}? its options: {})",
                            close.join(", --"),
                            o.join(", ")
                        ),
                    };
                    let hint = match slot {
                        Some(Slot::Key | Slot::Keys) => format!(
                            "; a key that begins with - goes after -- (mcpool {command} -- KEY)"
                        ),
                        _ => String::new(),
                    };
                    return Err(format!(
                        "{command} takes no option {}{theirs}{hint}",
                        shown_word(a)
                    ));
                }
            }
        }
        out.pos.push(a);
    }
    if let Some(k) = kind {
        if out.flags.is_some() {
            return Err(format!(
                "{command}: --kind and --flags: give one (--kind stores the value format's own \
                 flags for the kind, --flags the flags given, the value as bytes)"
            ));
        }
        out.kind = match text_of(&format!("{command} --kind"), k)? {
            "bytes" => Kind::Bytes,
            "text" => Kind::Text,
            "int" => Kind::Int,
            "bool" => Kind::Bool,
            k => return Err(format!("--kind takes bytes, text, int or bool, not {k:?}")),
        };
    }
    Ok(Parsed::Run(out))
}

/// Why `command` refuses the option `a` (`--flags` or `--flags=N`) where another command
/// takes it, when a reason is worth more than "takes no option": append and prepend add
/// bytes to a stored item, whose flags memcached keeps.
fn option_refused(command: &str, a: &[u8]) -> Option<String> {
    let name = a.split(|&b| b == b'=').next().unwrap_or_default();
    (matches!(command, "append" | "prepend") && name == b"--flags").then(|| {
        format!(
            "{command} takes no --flags: memcached keeps the stored item's flags on append \
             and prepend (flags sent with them are ignored); store the value with its flags \
             with set, add, replace or cas"
        )
    })
}

/// The option `flag` (`--name`, no `=value`) looks like where a VALUE goes: one of the store
/// commands' options itself (`append k --ttl=5`: append takes no --ttl), or one of this
/// command's misspelt (at most 1 edit from a name of 4 letters or fewer, 2 from a longer one,
/// a swap of two neighbours one edit: `--value-flie`, `--kidn`, `--tll`).
fn misspelt_option(spec: &Spec, flag: &str) -> Option<&'static str> {
    let name = flag.strip_prefix("--")?;
    if name.is_empty() {
        return None;
    }
    const STORE_OPTIONS: [&str; 4] = ["--ttl", "--kind", "--flags", "--value-file"];
    if let Some(o) = STORE_OPTIONS.iter().find(|o| **o == flag) {
        return Some(o);
    }
    spec.options.iter().copied().find(|o| {
        let want = &o[2..];
        let most = if want.len() <= 4 { 1 } else { 2 };
        edits(name, want) <= most
    })
}

/// The edit distance between `a` and `b` (insertions, deletions, substitutions, and a swap of
/// two neighbouring characters, each one edit).
fn edits(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[a.len()][b.len()]
}

/// A value read: its bytes (as stored, inflated), its flags and its CAS unique.
type Read = (Vec<u8>, u32, Option<u64>);

/// A read's results, one per key.
struct Found(Vec<mcpool::Result<Option<Read>>>);

impl mcpool::sink::Sink for Found {
    fn value(
        &mut self,
        i: usize,
        value: &[u8],
        flags: u32,
        cas: Option<u64>,
    ) -> mcpool::Result<()> {
        self.0[i] = Ok(Some((value.to_vec(), flags, cas)));
        Ok(())
    }

    fn result(&mut self, i: usize, result: mcpool::Result<bool>) {
        match result {
            Ok(true) => {}
            Ok(false) => self.0[i] = Ok(None),
            Err(e) => self.0[i] = Err(e),
        }
    }
}

/// Each key once, in the order first given (as every binding's multi-get answers a key asked
/// twice).
fn distinct<'a>(keys: &[&'a [u8]]) -> Vec<&'a [u8]> {
    let mut seen = std::collections::HashSet::new();
    keys.iter().copied().filter(|k| seen.insert(*k)).collect()
}

/// An exit status raised to `to` (0, then [`MISS`], then [`FAIL`]: a miss never lowers an
/// error's). A u8, not an ExitCode: comparing ExitCodes needs Rust 1.81 (our MSRV is 1.80).
fn raise(code: &mut u8, to: u8) {
    *code = (*code).max(to);
}

/// delete's, touch's and set-multi's batch of several keys (one request per key, one round
/// trip per server): `results` one per key, `Ok(None)` done, `Ok(Some(why))` a miss or a
/// refused store. With `several` keys each done is a `KEY<TAB>DONE` line (the key escaped as
/// get escapes it); a miss or a refusal is said on stderr as get says a miss (exit 1), an
/// error too (exit 2), every other key still done and reported.
fn batch_report(
    client: &Cli,
    out: &mut impl Write,
    command: &str,
    keys: &[&[u8]],
    several: bool,
    done: &str,
    results: impl IntoIterator<Item = mcpool::Result<Option<&'static str>>>,
) -> ExitCode {
    let mut code = 0u8;
    for (k, r) in keys.iter().zip(results) {
        match r {
            Ok(None) if several => {
                check(out.write_all(&escaped(k)));
                check(writeln!(out, "\t{done}"));
            }
            Ok(None) => {}
            Ok(Some(why)) => {
                errln!("mcpool: {}", about(command, k, why));
                raise(&mut code, MISS);
            }
            Err(e) => {
                errln!("mcpool: {}", about_error(client, command, k, &e));
                raise(&mut code, FAIL);
            }
        }
    }
    ExitCode::from(code)
}

/// get, gets, gat and gats: reads `keys` (touching each with gat's or gats' TTL) with the
/// client's read engine and prints each value found, each distinct key once (as every
/// binding's multi-get answers), `KEY<TAB>` first when several keys are given; then, with
/// `show_flags`, the flags the read delivers (as `get_item` gives them); gets and gats print
/// the CAS unique before the value: memcached's order, KEY FLAGS CAS. A miss is said on
/// stderr (exit 1), an error too (exit 2).
fn read_command(
    client: &Cli,
    out: &mut impl Write,
    command: &str,
    touch: Option<u32>,
    keys: &[&[u8]],
    show_flags: bool,
) -> Result<ExitCode, String> {
    let distinct = distinct(keys);
    let several = keys.len() > 1;
    let with_cas = matches!(command, "gets" | "gats");
    let mut found = Found((0..distinct.len()).map(|_| Ok(None)).collect());
    client.read(&distinct[..], with_cas, touch, &mut found);
    // The exit status: 0, MISS after a miss, FAIL after an error ([`raise`]).
    let mut code = 0u8;
    for (k, r) in distinct.iter().zip(found.0) {
        // Decoded by the value format: never undecoded (or compressed) bytes. The read's
        // body is the kind's ABI form: an integer's exact decimal digits, of any size (a
        // Python writer's int beyond 64 bits prints as it is, never rounded).
        let r = r.and_then(|item| {
            item.map(|(value, flags, cas)| {
                client
                    .value_kind(flags)
                    .map(|kind| (kind, value, flags, cas))
            })
            .transpose()
        });
        match r {
            Ok(Some((kind, body, flags, cas))) => {
                // With several keys each item is one line, its fields separated by tabs: a
                // backslash, tab, newline or carriage return in a key or value is written
                // escaped (\\ \t \n \r), so a value never reads as another item.
                if several {
                    check(out.write_all(&escaped(k)));
                    check(out.write_all(b"\t"));
                }
                if show_flags {
                    check(write!(out, "{flags}\t"));
                }
                if with_cas {
                    let cas =
                        cas.ok_or_else(|| about(command, k, "the server sent no CAS unique"))?;
                    check(write!(out, "{cas}\t"));
                }
                write_body(out, kind, &body, several);
                check(out.write_all(b"\n"));
            }
            Ok(None) => {
                errln!("mcpool: {}", about(command, k, not_found(client)));
                raise(&mut code, MISS);
            }
            Err(e) => {
                errln!("mcpool: {}", about_error(client, command, k, &e));
                raise(&mut code, FAIL);
            }
        }
    }
    Ok(ExitCode::from(code))
}

/// A value read, as get prints it: bytes, text and integers as stored (`escape`: a
/// backslash, tab, newline or carriage return written \\, \t, \n, \r, for a line of
/// several fields), a bool as true/false. A serialized object (delivered only with its
/// --serialized-* option on; else the core's error, exit 2) is its serialized bytes as
/// stored, for a program of that language to load: never a made-up stand-in printed as if
/// it were the value.
fn write_body(out: &mut impl Write, kind: Kind, body: &[u8], escape: bool) {
    let body = match kind {
        Kind::Bytes | Kind::Text | Kind::Int | Kind::Serialized(_) => body,
        Kind::Bool if body == b"1" => b"true",
        Kind::Bool => b"false",
    };
    check(if escape {
        out.write_all(&escaped(body))
    } else {
        out.write_all(body)
    });
}

/// Text a server sent (a version, a statistic) as the CLI prints it: control characters
/// (a NUL, a terminal's escape sequences) escaped as `\u{1b}`, never written to the terminal
/// as they are (tester finding hostile2 6); anything else as it is.
fn server_text(s: &str) -> std::borrow::Cow<'_, str> {
    escape_controls(s, |_| false)
}

/// [`server_text`] for a message of lines: newlines and tabs kept.
pub(crate) fn server_text_keeping_lines(s: &str) -> std::borrow::Cow<'_, str> {
    escape_controls(s, |c| c == '\n' || c == '\t')
}

/// `s` with its control characters escaped (`\u{1b}`), but those `keep` says.
fn escape_controls(s: &str, keep: impl Fn(char) -> bool) -> std::borrow::Cow<'_, str> {
    let shown = |c: char| !c.is_control() || keep(c);
    if s.chars().all(shown) {
        return s.into();
    }
    s.chars()
        .map(|c| {
            if shown(c) {
                c.to_string()
            } else {
                c.escape_default().to_string()
            }
        })
        .collect::<String>()
        .into()
}

/// A key or value as a field of the several-keys output: a backslash, tab, newline and
/// carriage return escaped (`\\`, `\t`, `\n`, `\r`, as PostgreSQL's COPY text format and
/// `mysql --batch` write them); every other byte as it is.
pub(crate) fn escaped(bytes: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    if !bytes
        .iter()
        .any(|b| matches!(b, b'\\' | b'\t' | b'\n' | b'\r'))
    {
        return bytes.into();
    }
    let mut e = Vec::with_capacity(bytes.len() + 8);
    for &b in bytes {
        match b {
            b'\\' => e.extend_from_slice(b"\\\\"),
            b'\t' => e.extend_from_slice(b"\\t"),
            b'\n' => e.extend_from_slice(b"\\n"),
            b'\r' => e.extend_from_slice(b"\\r"),
            _ => e.push(b),
        }
    }
    e.into()
}

/// memcached's largest item (`-I 1024m`): a value file is read up to this and no further.
const VALUE_FILE_MAX: u64 = 1 << 30;

/// A file path given on the command line (`--value-file`, `ring --keys`,
/// `--sasl-password-file`): its bytes as they are, the system's name for the file (on Linux
/// any bytes but NUL), never read as text: the one way every option that names a file reads
/// it (tester finding retest44 3: `ring --keys` refused a name `--value-file` took).
pub fn os_path(path: &[u8]) -> &std::path::Path {
    use std::os::unix::ffi::OsStrExt;
    std::path::Path::new(std::ffi::OsStr::from_bytes(path))
}

/// A file path as messages show it: UTF-8 as it is, any other as its bytes, quoted and
/// `\xNN` as a key is shown, never as U+FFFD (tester finding retest43 4).
pub fn shown_path(path: &[u8]) -> String {
    std::str::from_utf8(path).map_or_else(|_| shown_key(path), str::to_owned)
}

/// What a refusal of an argument that is not UTF-8 says may be any bytes.
pub const ANY_BYTES: &str = "only keys, values and file paths may be any bytes";

/// Whether `path` is the file standard input is (`/dev/stdin`, `/dev/fd/0`,
/// `/proc/self/fd/0`, ...: the same device and inode), for `--value-file` with standard input
/// closed at start, where it names the `/dev/null` Rust's runtime put there (tester finding
/// retest31 2: an empty value stored over the old one). Unknown (either unreadable): false.
fn names_standard_input(path: &[u8]) -> bool {
    use std::os::unix::fs::MetadataExt;
    let (Ok(named), Ok(stdin)) = (
        std::fs::metadata(os_path(path)),
        std::fs::metadata("/proc/self/fd/0"),
    ) else {
        return false;
    };
    (named.dev(), named.ino()) == (stdin.dev(), stdin.ino())
}

/// `--value-file PATH`'s value (`-`: standard input, to its end) and the place among the
/// command's arguments where it goes (the VALUE slot's), for a command given every other
/// argument and no VALUE. Read up to [`VALUE_FILE_MAX`], growing as the bytes arrive.
fn value_file(spec: &Spec, a: &Args, path: &[u8]) -> Result<(usize, Vec<u8>), String> {
    use std::io::Read;
    let at = spec
        .slots
        .iter()
        .position(|s| *s == Slot::Value)
        .unwrap_or(0);
    if a.pos.len() + 1 != spec.slots.len() {
        return Err(if a.pos.len() == spec.slots.len() {
            format!("{}: a VALUE and --value-file: give one", spec.name)
        } else {
            wrong_arguments(spec)
        });
    }
    let shown = shown_path(path);
    if (path == b"-" || names_standard_input(path)) && crate::out::input_closed_at_start() {
        return Err(format!(
            "--value-file {shown}: standard input was closed when mcpool started, or is not \
             open for reading; nothing was stored"
        ));
    }
    let mut bytes = Vec::new();
    let read = if path == b"-" {
        std::io::stdin()
            .lock()
            .take(VALUE_FILE_MAX + 1)
            .read_to_end(&mut bytes)
    } else {
        std::fs::File::open(os_path(path)).and_then(|f| {
            // a regular file's length is known before a byte is read: one over the limit
            // is refused unread (tester finding bigvalues 5: 1.1 GB were read to say so)
            let len = f.metadata()?.len();
            if f.metadata()?.is_file() && len > VALUE_FILE_MAX {
                return Ok(usize::try_from(len).unwrap_or(usize::MAX));
            }
            f.take(VALUE_FILE_MAX + 1).read_to_end(&mut bytes)
        })
    };
    let n = read.map_err(|e| format!("--value-file {shown}: {e}"))?;
    if n as u64 > VALUE_FILE_MAX {
        return Err(format!(
            "--value-file {shown}: more than {VALUE_FILE_MAX} bytes, memcached's largest item"
        ));
    }
    Ok((at, bytes))
}

/// An argument that must be text (a number, an option, a statistics group).
fn text(a: &[u8]) -> Result<&str, String> {
    std::str::from_utf8(a).map_err(|_| {
        // (its bytes shown as they are, \xNN, never as U+FFFD: tester finding retest37b 6)
        format!("argument {} is not UTF-8 ({ANY_BYTES})", shown_key(a))
    })
}

/// [`text`] for the argument `what` names (`"gat TTL"`, `"stats GROUP"`), its refusal naming
/// it (tester finding retest40 7: a non-UTF-8 TTL of `gat` named no command).
fn text_of<'a>(what: &str, a: &'a [u8]) -> Result<&'a str, String> {
    text(a).map_err(|e| format!("{what}: {e}"))
}

/// A typed value from the command line's argument (bytes: a text or int kind checks them).
fn typed(kind: Kind, arg: &[u8]) -> Result<Value, String> {
    let shown = shown_key(arg);
    let body = match kind {
        // The core's boolean rule (the options' own).
        Kind::Bool => match std::str::from_utf8(arg).ok().and_then(parse_bool) {
            Some(true) => b"1".to_vec(),
            Some(false) => b"0".to_vec(),
            None => {
                return Err(format!(
                    "--kind bool takes true/false, 1/0, yes/no or on/off (any case), not {shown}"
                ))
            }
        },
        _ => arg.to_vec(),
    };
    Value::from_abi(kind, body).ok_or_else(|| format!("not a valid {kind}: {shown}"))
}

/// A value to store, read from the command line by its `--kind`.
enum Stored<'a> {
    /// `--kind int` with integer text: any size, the core's rule (`store_int_text_as`).
    IntText(&'a [u8]),
    Value(Value),
    /// `--flags N`: the bytes under those flags (the core's `store`, which refuses flags the
    /// value format would not read back).
    Flagged(&'a [u8], u32),
}

/// `--ttl` of a command that sends memcached's `set` (set, set-multi, set-counter): seconds
/// the core takes, or a whole number it refuses (above 2^31 - 1), left to the core when the
/// set is done: it refuses it and deletes the key(s), as a set so refused does on every
/// surface (tester finding retest37 2: the CLI refused it while reading the arguments and
/// left the old value readable).
#[derive(Clone, Copy)]
enum SetTtl<'a> {
    Seconds(u32),
    Refused(&'a str),
}

/// A memcached command with every argument read and checked: what [`run`] does once a
/// server is there. Built before any memcached is started, so a bad argument never starts
/// one (nothing here is read after the start).
enum Op<'a> {
    /// get, gets, gat, gats (with gat's or gats' TTL; `show_flags`: `--show-flags`).
    Read {
        touch: Option<u32>,
        keys: Vec<&'a [u8]>,
        show_flags: bool,
    },
    Store {
        cmd: StoreCommand,
        key: &'a [u8],
        value: Stored<'a>,
        ttl: SetTtl<'a>,
    },
    SetCounter {
        key: &'a [u8],
        n: u64,
        ttl: SetTtl<'a>,
    },
    /// append (true) or prepend.
    Concat {
        append: bool,
        key: &'a [u8],
        value: &'a [u8],
    },
    Delete {
        key: &'a [u8],
    },
    /// delete of several keys: one batch.
    DeleteMulti {
        keys: Vec<&'a [u8]>,
    },
    /// incr (true) or decr.
    Arith {
        incr: bool,
        key: &'a [u8],
        delta: u64,
    },
    /// incr-or-init, decr-or-init: the counter created with `initial` when missing.
    ArithOrInit {
        incr: bool,
        key: &'a [u8],
        delta: u64,
        initial: u64,
        ttl: u32,
    },
    Touch {
        key: &'a [u8],
        ttl: u32,
    },
    /// touch of several keys: one batch.
    TouchMulti {
        keys: Vec<&'a [u8]>,
        ttl: u32,
    },
    /// set-multi: its KEY VALUE pairs, one batch (`noreply`: set_multi_noreply).
    SetMulti {
        items: Vec<(&'a [u8], &'a [u8])>,
        ttl: SetTtl<'a>,
        noreply: bool,
    },
    /// lease: get_lease (meta protocol).
    Lease {
        key: &'a [u8],
        ttl: u32,
        recache_below: Option<u32>,
    },
    /// invalidate: mark stale (meta protocol).
    Invalidate {
        key: &'a [u8],
        stale_ttl: u32,
    },
    /// info: meta_info (meta protocol).
    Info {
        key: &'a [u8],
    },
    Version,
    Noop,
    Stats(Option<&'a str>),
    Flush(Option<u32>),
    StatsClient(crate::client_stats::Load),
}

impl Op<'_> {
    /// The keys the command names (none for a command of the servers: version, stats, ...).
    fn keys(&self) -> Vec<&[u8]> {
        match self {
            Op::Read { keys, .. } | Op::DeleteMulti { keys } | Op::TouchMulti { keys, .. } => {
                keys.clone()
            }
            Op::SetMulti { items, .. } => items.iter().map(|(k, _)| *k).collect(),
            Op::Store { key, .. }
            | Op::SetCounter { key, .. }
            | Op::Concat { key, .. }
            | Op::Delete { key }
            | Op::Arith { key, .. }
            | Op::ArithOrInit { key, .. }
            | Op::Touch { key, .. }
            | Op::Lease { key, .. }
            | Op::Invalidate { key, .. }
            | Op::Info { key } => vec![key],
            Op::Version | Op::Noop | Op::Stats(_) | Op::Flush(_) | Op::StatsClient(_) => vec![],
        }
    }
}

/// Reads a command's arguments (taken apart by [`parse_args`], their count checked) into
/// an [`Op`]: every number, TTL and typed value. An error about an argument of a keyed
/// command comes after the command and key (`set "k": not a valid int: "x"`), as its
/// server's errors do.
fn typed_command<'a>(spec: &Spec, a: Args<'a>) -> Result<Op<'a>, String> {
    let command = spec.name;
    let wrong = || wrong_arguments(spec);
    let Args {
        pos,
        ttl,
        kind,
        flags,
        noreply,
        show_flags,
        ..
    } = a;
    // --ttl's seconds, for the key's command.
    let ttl_of = |key: &[u8]| -> Result<u32, String> {
        ttl.map_or(Ok(0), |v| {
            text_of("--ttl", v)
                .and_then(|v| crate::seconds("--ttl", v))
                .map_err(|e| about(command, key, e))
        })
    };
    // --ttl of a `set`: one the core refuses that is a whole number is the core's to
    // refuse when the set is done (it deletes the key); anything else is a usage error.
    let set_ttl = |checked: Result<u32, String>| -> Result<SetTtl<'a>, String> {
        match (checked, ttl.and_then(|v| text(v).ok())) {
            (Ok(t), _) => Ok(SetTtl::Seconds(t)),
            (Err(_), Some(v)) if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) => {
                Ok(SetTtl::Refused(v))
            }
            (Err(e), _) => Err(e),
        }
    };
    let op = match (command, &pos[..]) {
        ("get" | "gets", [_, ..]) => Op::Read {
            touch: None,
            keys: pos.clone(),
            show_flags,
        },
        ("gat" | "gats", [ttl, keys @ ..]) if !keys.is_empty() => Op::Read {
            touch: Some({
                let what = format!("{command} TTL");
                crate::seconds(&what, text_of(&what, ttl)?)?
            }),
            keys: keys.to_vec(),
            show_flags,
        },
        ("set" | "add" | "replace" | "cas", &[key, value, ..]) => {
            let cmd = match (command, &pos[2..]) {
                ("set", []) => StoreCommand::Set,
                ("add", []) => StoreCommand::Add,
                ("replace", []) => StoreCommand::Replace,
                ("cas", [cas]) => {
                    // 0 is the core's to refuse (no item has CAS 0), as on every surface.
                    let cas = text_of("CAS", cas)
                        .and_then(|c| {
                            crate::whole_number(c).ok_or_else(|| {
                                format!(
                                    "CAS takes a CAS unique 1-{} (as gets prints it), not {c:?}",
                                    u64::MAX
                                )
                            })
                        })
                        .map_err(|e| about(command, key, e))?;
                    StoreCommand::Cas(cas)
                }
                _ => return Err(wrong()),
            };
            let flags = flags
                .map(|f| text_of("--flags", f).and_then(|f| crate::count("--flags", f, 0)))
                .transpose()
                .map_err(|e| about(command, key, e))?;
            let value = match (flags, kind) {
                (Some(flags), _) => Stored::Flagged(value, flags),
                (None, Kind::Int) if mcpool::value::kind::is_integer_text(value) => {
                    Stored::IntText(value)
                }
                (None, _) => Stored::Value(typed(kind, value).map_err(|e| about(command, key, e))?),
            };
            Op::Store {
                cmd,
                key,
                value,
                ttl: match cmd {
                    StoreCommand::Set => set_ttl(ttl_of(key))?,
                    _ => SetTtl::Seconds(ttl_of(key)?),
                },
            }
        }
        ("set-counter", &[key, value]) => Op::SetCounter {
            key,
            n: counter_value("N", value).map_err(|e| about(command, key, e))?,
            ttl: set_ttl(ttl_of(key))?,
        },
        ("incr-or-init" | "decr-or-init", &[key, n, initial]) => Op::ArithOrInit {
            incr: command == "incr-or-init",
            key,
            delta: delta(command, n).map_err(|e| about(command, key, e))?,
            initial: counter_value("INITIAL", initial).map_err(|e| about(command, key, e))?,
            ttl: ttl_of(key)?,
        },
        ("append" | "prepend", &[key, value]) => Op::Concat {
            append: command == "append",
            key,
            value,
        },
        ("delete", &[key]) => Op::Delete { key },
        ("delete", [_, _, ..]) => Op::DeleteMulti {
            keys: distinct(&pos),
        },
        ("incr" | "decr", &[key, n]) => Op::Arith {
            incr: command == "incr",
            key,
            delta: delta(command, n).map_err(|e| about(command, key, e))?,
        },
        ("touch", &[key, ttl]) => Op::Touch {
            key,
            ttl: text_of("touch TTL", ttl)
                .and_then(|t| crate::seconds("touch TTL", t))
                .map_err(|e| about(command, key, e))?,
        },
        ("touch", [keys @ .., ttl]) if keys.len() > 1 => Op::TouchMulti {
            keys: distinct(keys),
            // (`touch 100 k1 k2`, gat's order, reads "k2" as the TTL: the error says where it goes)
            ttl: text_of("touch TTL", ttl)
                .and_then(|t| crate::seconds("touch TTL", t))
                .map_err(|e| format!("{e} (the TTL goes last: touch KEY... TTL)"))?,
        },
        ("set-multi", pairs) if !pairs.is_empty() && pairs.len() % 2 == 0 => {
            let items: Vec<(&[u8], &[u8])> = pairs.chunks(2).map(|p| (p[0], p[1])).collect();
            let mut seen = std::collections::HashSet::new();
            if let Some((key, _)) = items.iter().find(|(k, _)| !seen.insert(*k)) {
                return Err(about(
                    command,
                    key,
                    "the key is given twice (a batch stores one value per key)",
                ));
            }
            let ttl = match ttl {
                Some(v) => set_ttl(
                    text_of("set-multi --ttl", v)
                        .and_then(|v| crate::seconds("set-multi --ttl", v)),
                )?,
                None => SetTtl::Seconds(0),
            };
            Op::SetMulti {
                items,
                ttl,
                noreply,
            }
        }
        // A lease's times are durations (0 to 30 days), by the core's rule for them.
        ("lease", [key, ttl, recache @ ..]) => {
            let seconds = |arg: &str, what: &'static str, t: &[u8]| {
                text_of(arg, t)
                    .and_then(|t| crate::lease_seconds(arg, what, t))
                    .map_err(|e| about(command, key, e))
            };
            Op::Lease {
                key,
                ttl: seconds("lease TTL", "vivify_ttl", ttl)?,
                recache_below: recache
                    .first()
                    .map(|t| seconds("lease RECACHE_BELOW", "recache_below", t))
                    .transpose()?,
            }
        }
        ("invalidate", &[key, ttl]) => Op::Invalidate {
            key,
            stale_ttl: text_of("invalidate STALE_TTL", ttl)
                .and_then(|t| crate::lease_seconds("invalidate STALE_TTL", "stale_ttl", t))
                .map_err(|e| about(command, key, e))?,
        },
        ("info", &[key]) => Op::Info { key },
        ("version", []) => Op::Version,
        ("noop", []) => Op::Noop,
        ("stats", _) => Op::Stats(stats_group(&pos)?),
        ("flush", [] | [_]) => Op::Flush(
            pos.first()
                .map(|d| crate::seconds_as("flush DELAY", "delay", text_of("flush DELAY", d)?))
                .transpose()?,
        ),
        _ => return Err(wrong()),
    };
    Ok(op)
}

/// stats's GROUP: one word, or none. memcached takes some commands of several words after
/// `stats` (`stats detail on`, `stats cachedump 1 1`), but the library's stats call sends one
/// word and reads `STAT` lines (it refuses a group with a space or control character), so
/// such a group is refused here, saying why, before any server is asked (tester finding
/// cli2 5).
fn stats_group<'a>(pos: &[&'a [u8]]) -> Result<Option<&'a str>, String> {
    let words = pos
        .iter()
        .map(|w| text_of("stats GROUP", w))
        .collect::<Result<Vec<_>, _>>()?;
    let Some(&first) = words.first() else {
        return Ok(None);
    };
    let several = words.len() > 1 || first.split_whitespace().count() > 1;
    if several {
        let group: Vec<&str> = words.iter().flat_map(|w| w.split_whitespace()).collect();
        return Err(format!(
            "stats {0:?}: a statistics group of several words is not supported: the \
             library's stats call sends one word after `stats` and reads STAT lines (it \
             refuses a group with a space), and `stats detail on|off|dump` or `stats \
             cachedump` are not such reads (they switch the server's detail recording, or \
             answer ITEM lines); send them over a plain connection (printf 'stats {0}\\r\\n' \
             | nc HOST PORT)",
            group.join(" ")
        ));
    }
    if first.is_empty() || first.bytes().any(|b| b <= b' ' || b == 0x7f) {
        return Err(format!(
            "stats {first:?}: not a statistics group (one word: items, slabs, sizes, \
             settings, conns, ...)"
        ));
    }
    Ok(Some(first))
}

/// incr/decr's delta N: memcached's deltas are unsigned 64-bit (the error follows the
/// command and key).
fn delta(command: &str, s: &[u8]) -> Result<u64, String> {
    let t = text_of("N", s)?;
    crate::whole_number(t).ok_or_else(|| {
        let other = match command {
            "incr" => "decr",
            "decr" => "incr",
            "incr-or-init" => "decr-or-init",
            _ => "incr-or-init",
        };
        let hint = match t.strip_prefix('-') {
            Some(n) if crate::whole_number(n).is_some() => {
                format!(" (for a negative delta use {other} KEY {n})")
            }
            _ => String::new(),
        };
        format!("N takes a delta 0-{}, not {t:?}{hint}", u64::MAX)
    })
}

/// A counter's value (set-counter's N, incr-or-init's INITIAL): memcached's counters are
/// unsigned 64-bit (-1 would be a counter no incr takes), written in decimal digits.
fn counter_value(what: &str, s: &[u8]) -> Result<u64, String> {
    let t = text_of(what, s)?;
    crate::whole_number(t).ok_or_else(|| {
        format!(
            "{what} takes an unsigned 64-bit integer (0 to {}), not {t:?}",
            u64::MAX
        )
    })
}

/// Too few or too many arguments for a command.
fn wrong_arguments(spec: &Spec) -> String {
    format!(
        "wrong arguments for {0}; usage: mcpool {1} (run `mcpool {0} --help`)",
        spec.name, spec.usage
    )
}

/// Runs one memcached command; starts a private server when `--servers` is absent.
/// `args` are bytes: keys and values may be any (a key's 0x80 and above included).
pub fn run(g: &Globals, command: &str, args: &[Vec<u8>]) -> ExitCode {
    let Some(spec) = COMMANDS.iter().find(|c| c.name == command) else {
        return usage_error(&format!("unknown command {command:?}"));
    };
    // The arguments are read before any server is started or asked: help, and a usage
    // error, never reach memcached.
    let file_value: Vec<u8>;
    let parsed = match parse_args(spec, args) {
        Ok(p) => p,
        Err(e) => return usage_error(&e),
    };
    // Every argument read into the command (its count, numbers, TTLs, typed values, stats
    // --client's options) before any memcached is started for it.
    let op = match parsed {
        Parsed::Help => {
            outln!("usage: mcpool [GLOBAL OPTIONS] {}", spec.usage);
            if let Some(notes) = notes(spec.name) {
                outln!("{notes}");
            }
            outln!("(every command and global option: mcpool --help)");
            return ExitCode::SUCCESS;
        }
        Parsed::StatsClient => args
            .iter()
            .enumerate()
            .map(|(i, a)| {
                // named by the option it is the value of (`stats --client --ops`)
                let option = i
                    .checked_sub(1)
                    .and_then(|j| std::str::from_utf8(&args[j]).ok())
                    .filter(|p| p.starts_with("--"))
                    .map_or("stats --client".to_owned(), |p| {
                        format!("stats --client {p}")
                    });
                text_of(&option, a).map(str::to_owned)
            })
            .collect::<Result<Vec<_>, _>>()
            .and_then(|args| crate::client_stats::Load::parse(&args))
            .map(Op::StatsClient),
        Parsed::Run(mut a) => match a.value_file {
            Some(path) => match value_file(spec, &a, path) {
                Ok((at, bytes)) => {
                    file_value = bytes;
                    a.pos.insert(at, &file_value);
                    typed_command(spec, a)
                }
                Err(e) => Err(e),
            },
            // (stats's words are read by `stats_group`, which says why several are refused)
            None if spec.name != "stats" && !arity_fits(spec, a.pos.len()) => {
                Err(wrong_arguments(spec))
            }
            None => typed_command(spec, a),
        },
    };
    let op = match op {
        Ok(op) => op,
        Err(e) => return fail(e),
    };
    // A command that changes the servers and prints its result (a counter's new value, a
    // lease's token, each key's outcome) is not run when standard output was closed: the
    // change would be done and its result lost (tester finding cli3 2: a retry incremented
    // twice). The stores, a delete of one key, touch and flush print nothing when they
    // succeed, and run.
    let prints_nothing = matches!(
        spec.name,
        "set" | "add" | "replace" | "append" | "prepend" | "cas" | "flush"
    ) || (spec.name == "delete" && args.len() == 1)
        // (several keys: a line per key; tester finding retest31 3)
        || (spec.name == "touch" && args.len() == 2);
    if spec.writes && !prints_nothing && crate::out::started_closed() {
        return usage_error(&format!(
            "{}: standard output was closed when mcpool started, or is not open for writing: \
             its result could not be shown, so nothing was sent",
            spec.name
        ));
    }
    let _private;
    let source = match servers_of(g) {
        Ok(s) => s,
        Err(e) => return usage_error(&e),
    };
    let private = matches!(source, Servers::Missing);
    if private && spec.writes {
        return usage_error(&format!(
            "{} needs servers: give --servers (or set MEMCACHED_SERVERS); without them it \
             would write to a private memcached that ends with this command, and the write \
             would be lost",
            spec.name
        ));
    }
    if private {
        // (not "2 entries for 1 servers", counting the private one: tester finding
        // retest37b 5)
        if g.weights.is_some() {
            return usage_error(WEIGHTS_NEED_SERVERS);
        }
        if let Some(what) = needs_real_server(g) {
            return usage_error(&format!(
                "{what} given without --servers: the private memcached used without \
                 --servers speaks neither TLS nor SASL; give --servers"
            ));
        }
        // The options as they will apply to the private server (one, on loopback), and the
        // keys by that client's rules (prefix, protocol, ...): none starts it for nothing.
        let client = match client_from(g, &["127.0.0.1:11211".to_owned()]) {
            Ok(c) => c,
            Err(e) => return fail(e),
        };
        let mut refused = false;
        for key in distinct(&op.keys()) {
            if let Err(e) = client.wire_key(key) {
                errln!("mcpool: {}", about_error(&client, spec.name, key, &e));
                refused = true;
            }
        }
        if refused {
            return ExitCode::from(FAIL);
        }
    }
    let from_env = matches!(source, Servers::Env(_));
    let servers = match source {
        Servers::Given(list) | Servers::Env(list) => list,
        // "For its duration": it ends with this process, whatever ends it (a signal too).
        Servers::Missing => {
            let spawn = Spawn {
                threads: 1,
                memory_mb: Some(64),
                stop_with_process: true,
                ..Spawn::default()
            };
            match spawn.start() {
                Ok(p) => {
                    errln!(
                        "mcpool: no --servers given; started a private memcached at {} for \
                         this command",
                        p.addr()
                    );
                    let s = vec![p.addr()];
                    _private = p;
                    s
                }
                Err(e) => return fail(e),
            }
        }
    };
    let client = match client_from(g, &servers) {
        Ok(c) => c,
        // A list from the environment is named as such (retest22 6: `127.0.0.1:0` was
        // refused without saying where it came from).
        Err(e) if from_env => return fail(format!("MEMCACHED_SERVERS: {e}")),
        Err(e) => return fail(e),
    };
    match execute(&client, command, op) {
        Ok(code) => code,
        Err(e) => fail(e),
    }
}

/// The seconds of a `set` of `key`: a `--ttl` the core refuses is given to it, which refuses
/// it and deletes the key ([`Client::store_ttl_checked`]), the error naming the number as
/// given.
fn set_seconds(client: &Client, key: &[u8], ttl: SetTtl) -> mcpool::Result<u32> {
    let given = match ttl {
        SetTtl::Seconds(t) => return Ok(t),
        SetTtl::Refused(given) => given,
    };
    client.wire_key(key)?;
    client
        .store_ttl_checked(StoreCommand::Set, key, signed(given))
        .map_err(|e| named_as_given(given, e))
}

/// A refused `--ttl` (all digits) as the core's signed times take it: one beyond i64 is the
/// largest i64 (refused as well), which [`named_as_given`] then names as given.
fn signed(given: &str) -> i64 {
    given.parse::<i64>().unwrap_or(i64::MAX)
}

/// The core's refusal of the `--ttl` `given`, naming the number as given: one beyond i64 is
/// not named as the largest i64.
fn named_as_given(given: &str, e: mcpool::Error) -> mcpool::Error {
    match e {
        mcpool::Error::InvalidArgument { what, reason } if given.parse::<i64>().is_err() => {
            mcpool::Error::InvalidArgument {
                what,
                reason: reason.replacen(&signed(given).to_string(), given, 1),
            }
        }
        e => e,
    }
}

/// Does a checked command on the servers: its output on stdout, a miss or refused store
/// said on stderr (exit 1); an error is returned (exit 2).
fn execute(client: &Cli, command: &str, op: Op) -> Result<ExitCode, String> {
    let mut out = crate::out::stdout();
    match op {
        Op::Read {
            touch,
            keys,
            show_flags,
        } => read_command(client, &mut out, command, touch, &keys, show_flags),
        Op::Store {
            cmd,
            key,
            value,
            ttl,
        } => {
            let ttl =
                set_seconds(client, key, ttl).map_err(|e| about_error(client, command, key, &e))?;
            let o = match value {
                Stored::IntText(v) => client.store_int_text_as(cmd, key, v, ttl, Compress::Auto),
                Stored::Value(v) => client.store_value(cmd, key, &v, ttl),
                Stored::Flagged(v, flags) => client.store(cmd, key, v, flags, ttl),
            }
            .map_err(|e| about_error(client, command, key, &e))?;
            Ok(store_exit(command, key, o))
        }
        Op::SetCounter { key, n, ttl } => {
            let ttl =
                set_seconds(client, key, ttl).map_err(|e| about_error(client, command, key, &e))?;
            let o = client
                .set_counter(key, n, ttl)
                .map_err(|e| about_error(client, command, key, &e))?;
            Ok(store_exit(command, key, o))
        }
        Op::Concat { append, key, value } => {
            let o = if append {
                client.append(key, value)
            } else {
                client.prepend(key, value)
            }
            .map_err(|e| about_error(client, command, key, &e))?;
            Ok(store_exit(command, key, o))
        }
        Op::Delete { key } => {
            let found = client
                .delete(key)
                .map_err(|e| about_error(client, command, key, &e))?;
            Ok(found_or_missed(client, command, key, found))
        }
        Op::DeleteMulti { keys } => {
            let found = client.delete_multi(&keys);
            let missed = |found: bool| (!found).then(|| not_found(client));
            let results = found.into_iter().map(|r| r.map(missed));
            Ok(batch_report(
                client, &mut out, command, &keys, true, "deleted", results,
            ))
        }
        Op::TouchMulti { keys, ttl } => {
            let items: Vec<(&[u8], u32)> = keys.iter().map(|k| (*k, ttl)).collect();
            let found = client.touch_multi(&items);
            let missed = |found: bool| (!found).then(|| not_found(client));
            let results = found.into_iter().map(|r| r.map(missed));
            Ok(batch_report(
                client, &mut out, command, &keys, true, "touched", results,
            ))
        }
        Op::SetMulti {
            items,
            ttl,
            noreply,
        } => {
            // A refused --ttl that fits the core's u32 goes to the core's batch as any other:
            // it refuses it and deletes every key in one batch, each key's message saying
            // the batch's other keys went too (tester finding retest39 1).
            let ttl = match ttl {
                SetTtl::Refused(given) => given.parse::<u32>().map_or(ttl, SetTtl::Seconds),
                ttl => ttl,
            };
            let results: Vec<_> = match ttl {
                SetTtl::Seconds(ttl) if noreply => {
                    // One answer for the batch: the first failure (on text memcached reports
                    // no refusal of a noreply store).
                    client.set_multi_noreply(&items, ttl).map_err(|e| {
                        match (&e, items.first()) {
                            // (a refused ttl: the first key's refusal, naming it)
                            (mcpool::Error::InvalidArgument { what: "ttl", .. }, Some((k, _))) => {
                                format!("{command} {}: {e}", shown_key(k))
                            }
                            _ => format!("{command}: {e}"),
                        }
                    })?;
                    return Ok(ExitCode::SUCCESS);
                }
                // Bytes, flags 0: what set stores without --kind, in every value format.
                SetTtl::Seconds(ttl) => client
                    .set_multi(&items, ttl)
                    .into_iter()
                    .map(|r| r.map(|o| refusal(command, o)))
                    .collect(),
                // A --ttl beyond u32: refused by the core for the whole batch, which deletes
                // every key in one batch, each key's message saying the others went too
                // (tester finding retest40 3), the number named as given.
                SetTtl::Refused(given) => {
                    let keys: Vec<&[u8]> = items.iter().map(|(k, _)| *k).collect();
                    match client.store_ttl_checked_multi(StoreCommand::Set, &keys, signed(given)) {
                        Err(errors) => errors
                            .into_iter()
                            .map(|e| Err(named_as_given(given, e)))
                            .collect(),
                        // (never: a --ttl is refused only beyond what the core takes)
                        Ok(t) => client
                            .set_multi(&items, t)
                            .into_iter()
                            .map(|r| r.map(|o| refusal(command, o)))
                            .collect(),
                    }
                }
            };
            if noreply {
                // (a --ttl beyond u32: each key's own refusal; the first one's, naming its key)
                let first = items
                    .iter()
                    .zip(results)
                    .find_map(|((k, _), r)| Some((k, r.err()?)));
                return first.map_or(Ok(ExitCode::SUCCESS), |(k, e)| {
                    Err(format!("{command} {}: {e}", shown_key(k)))
                });
            }
            let keys: Vec<&[u8]> = items.iter().map(|(k, _)| *k).collect();
            Ok(batch_report(
                client,
                &mut out,
                command,
                &keys,
                keys.len() > 1,
                "stored",
                results,
            ))
        }
        Op::Arith { incr, key, delta } => {
            let r = if incr {
                client.incr(key, delta)
            } else {
                client.decr(key, delta)
            }
            .map_err(|e| about_error(client, command, key, &e))?;
            match r {
                Some(v) => {
                    check(writeln!(out, "{v}"));
                    Ok(ExitCode::SUCCESS)
                }
                None => Ok(found_or_missed(client, command, key, false)),
            }
        }
        Op::ArithOrInit {
            incr,
            key,
            delta,
            initial,
            ttl,
        } => {
            let n = if incr {
                client.incr_or_init(key, delta, initial, ttl)
            } else {
                client.decr_or_init(key, delta, initial, ttl)
            }
            .map_err(|e| about_error(client, command, key, &e))?;
            check(writeln!(out, "{n}"));
            Ok(ExitCode::SUCCESS)
        }
        Op::Touch { key, ttl } => {
            let found = client
                .touch(key, ttl)
                .map_err(|e| about_error(client, command, key, &e))?;
            Ok(found_or_missed(client, command, key, found))
        }
        Op::Lease {
            key,
            ttl,
            recache_below,
        } => {
            let lease = client
                .get_lease(key, ttl, recache_below)
                .map_err(|e| about_error(client, command, key, &e))?;
            let (state, item) = match &lease {
                Lease::Hit(item) => ("hit", Some(item)),
                Lease::Recompute { stale } => ("recompute", stale.as_ref()),
                Lease::Wait { stale } => ("wait", stale.as_ref()),
            };
            check(out.write_all(state.as_bytes()));
            if let Some(item) = item {
                let kind = client
                    .value_kind(item.flags)
                    .map_err(|e| about_error(client, command, key, &e))?;
                check(out.write_all(b"\t"));
                write_body(&mut out, kind, &item.value, false);
            }
            check(out.write_all(b"\n"));
            Ok(match lease {
                Lease::Hit(_) => ExitCode::SUCCESS,
                _ => ExitCode::from(MISS),
            })
        }
        Op::Invalidate { key, stale_ttl } => {
            let found = client
                .invalidate(key, stale_ttl)
                .map_err(|e| about_error(client, command, key, &e))?;
            Ok(found_or_missed(client, command, key, found))
        }
        Op::Info { key } => match client
            .meta_info(key)
            .map_err(|e| about_error(client, command, key, &e))?
        {
            Some(i) => {
                let ttl = i
                    .ttl
                    .map_or_else(|| "never".to_owned(), |t| t.as_secs().to_string());
                check(writeln!(
                    out,
                    "hit_before {}\nlast_access {}\nttl {ttl}\ncas {}\nsize {}\nflags {}",
                    i.hit_before,
                    i.last_access.as_secs(),
                    i.cas,
                    i.size,
                    i.flags
                ));
                Ok(ExitCode::SUCCESS)
            }
            None => Ok(found_or_missed(client, command, key, false)),
        },
        Op::Version => per_server(&mut out, client.version(), |out, v| {
            check(writeln!(out, " {}", server_text(v)));
        }),
        Op::Noop => per_server(&mut out, client.noop(), |out, ()| {
            check(writeln!(out, " ok"));
        }),
        // `SERVER:` on a line of its own, then one `  NAME VALUE` line per statistic (the
        // first one used to follow the server on its line, out of reach of `awk '$1=="pid"'`).
        Op::Stats(group) => per_server(&mut out, client.stats(group), |out, stats| {
            check(writeln!(out));
            for (k, v) in stats {
                check(writeln!(out, "  {} {}", server_text(k), server_text(v)));
            }
        }),
        Op::Flush(delay) => flush(client, delay),
        Op::StatsClient(load) => {
            drop(out);
            crate::client_stats::run(client, &load)
        }
    }
}

/// A keyed command's exit: 0 when it found its key, else the miss said on stderr after the
/// command and key (`mcpool: touch "k": not found`), exit 1.
fn found_or_missed(client: &Client, command: &str, key: &[u8], found: bool) -> ExitCode {
    if found {
        return ExitCode::SUCCESS;
    }
    errln!("mcpool: {}", about(command, key, not_found(client)));
    ExitCode::from(MISS)
}

/// `flush [DELAY]`: silent when every server was flushed; else each failed server's error
/// on stderr and the servers that were flushed, exit 2, so that a user can tell which still
/// hold their data (tester finding retest26 6: one refusing server was named, nothing said
/// of the others).
fn flush(client: &Client, delay: Option<u32>) -> Result<ExitCode, String> {
    let results = client.flush_all_each(delay);
    // A delay the core refuses is every server's same error, none asked: said once.
    if let Some((_, Err(e @ mcpool::Error::InvalidArgument { .. }))) = results.first() {
        return Err(e.to_string());
    }
    let total = results.len();
    let mut flushed = Vec::new();
    for (server, r) in results {
        match r {
            Ok(()) => flushed.push(server),
            Err(e) => errln!("mcpool: {server}: {e}"),
        }
    }
    if flushed.len() == total {
        return Ok(ExitCode::SUCCESS);
    }
    let list = if flushed.is_empty() {
        "none".to_owned()
    } else {
        flushed.join(" ")
    };
    errln!(
        "mcpool: flush: {} of {total} servers flushed: {list}",
        flushed.len()
    );
    Ok(ExitCode::from(FAIL))
}

fn per_server<T>(
    out: &mut impl Write,
    results: mcpool::PerServer<T>,
    show: impl Fn(&mut dyn Write, &T),
) -> Result<ExitCode, String> {
    let mut code = ExitCode::SUCCESS;
    for (server, r) in results {
        match r {
            Ok(v) => {
                check(write!(out, "{server}:"));
                show(out, &v);
            }
            Err(e) => {
                errln!("mcpool: {server}: {e}");
                code = ExitCode::from(FAIL);
            }
        }
    }
    Ok(code)
}
