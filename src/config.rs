//! Client configuration and its builder. Every setter documents its default and, where
//! one exists, the Whalin `SockIOPool` name (`#[doc(alias)]`).

pub(crate) mod libmemcached_config;
pub mod options;

use crate::address::ServerSpec;
use crate::error::{Error, Result};
use crate::metrics::{Event, EventHandler};
use crate::proto::Protocol;
use crate::resolve::Resolver;
use crate::route::{Distribution, FailoverPolicy};
use crate::tls::TlsOptions;
use crate::trace::{OpHandler, OpRecord};
use crate::value::{Codec, Compression, CompressionFormat, Lang, ValueFormat, ValueOptions};
use std::sync::Arc;
use std::time::Duration;

/// The largest `max_value_size`: memcached's own largest item size (its `-I` option cannot
/// go above 1 GiB), so no value on the wire is longer. A larger setting is a configuration
/// error rather than a limit that could never be reached.
pub const MAX_ITEM_SIZE: usize = 1 << 30;

/// The most keys `written_while_away_max` takes.
pub const WRITTEN_WHILE_AWAY_MAX: usize = 10_000_000;

/// The largest `max_size` (connections per server). The pool reserves its bookkeeping for
/// `max_size` connections up front, so an absurd number would be a multi-gigabyte
/// allocation; 65,536 is far above what one memcached accepts (its `-c` default is 1,024).
pub const MAX_POOL_SIZE: u32 = 1 << 16;

/// The most bytes of a SASL user name, and of a SASL password (as the C ABI documents): a
/// longer one is a configuration error, whichever surface set it.
pub const MAX_SASL_CREDENTIAL: usize = 4096;

/// Everything a [`Client`](crate::Client) is built from. Build it with
/// [`Client::builder`](crate::Client::builder). Its `Debug` output never shows the SASL
/// password.
#[derive(Clone)]
pub struct Config {
    /// The servers, in order (placement depends on the order).
    pub servers: Vec<ServerSpec>,
    /// Key placement profile.
    pub distribution: Distribution,
    /// What happens to keys whose server is dead.
    pub failover: FailoverPolicy,
    /// Connections per server opened at start-up and kept idle.
    pub min_idle: u32,
    /// Most connections per server.
    pub max_size: u32,
    /// Connections idle for longer than this are not reused (see
    /// [`ClientBuilder::idle_timeout`]).
    pub idle_timeout: Option<Duration>,
    /// Connections older than this are not reused (see [`ClientBuilder::max_lifetime`]).
    pub max_lifetime: Option<Duration>,
    /// Time allowed for a TCP/unix connect.
    pub connect_timeout: Duration,
    /// Time allowed for each read or write on a socket.
    pub io_timeout: Duration,
    /// Time a caller waits for a free pooled connection.
    pub pool_timeout: Duration,
    /// One deadline for a whole operation: pool wait, connect, every write and read.
    /// `None` or zero: no operation deadline.
    pub operation_timeout: Option<Duration>,
    /// TCP_NODELAY (Nagle off).
    pub nodelay: bool,
    /// SO_KEEPALIVE on every TCP connection (see [`ClientBuilder::tcp_keepalive`]).
    pub tcp_keepalive: bool,
    /// The keepalive probes' idle time and interval (TCP_KEEPIDLE, TCP_KEEPINTVL); `None`:
    /// the system's.
    pub tcp_keepidle: Option<Duration>,
    /// Check a connection with a `version` round trip on every checkout.
    pub test_on_check_out: bool,
    /// Consecutive failures (connect errors, I/O errors, timeouts) that mark a server dead.
    pub failure_limit: u32,
    /// `None`: `failure_limit` counts consecutive failures (a success resets the count);
    /// `Some(window)`: the failures within `window` of the first of them, a success in
    /// between not resetting it (Cache::Memcached::Fast's `max_failures` in
    /// `failure_timeout`).
    pub failure_window: Option<Duration>,
    /// Under a failover that moves a dead server's keys by leaving it out of the ring
    /// (`eject`, and `rehash` where it ejects): how many times in a row the server must have
    /// been marked dead (its marking, then each failed retry) before its keys move; until
    /// then they fail with `ServerDead`. Default 1 (at once). libmemcached's `failure_limit`
    /// under `auto_eject`/`REMOVE_FAILED_SERVERS` (the `pylibmc` and `libmemcached` presets:
    /// 5).
    pub eject_after: u32,
    /// Whether a reply that did not come within `io_timeout` counts toward `failure_limit`
    /// (default true); false: only connect errors, connect timeouts and socket errors do
    /// (libmemcached's rule: a read timeout never disables a server).
    pub io_timeout_marks_dead: bool,
    /// First wait before a dead server is tried again; doubles per failed retry.
    pub retry_timeout: Duration,
    /// Cap on the doubling retry wait.
    pub retry_timeout_max: Duration,
    /// How long a server that left the ring (under an ejecting failover, `eject_after`
    /// markings in a row) rests before it is tried again, in place of the retry back-off
    /// (pymemcache's `dead_timeout`); `None`: the back-off.
    pub ejected_rest: Option<Duration>,
    /// Compression of large values.
    pub compression: Compression,
    /// The value format and the serialized kinds that are on (docs/value-format.md).
    pub values: ValueOptions,
    /// Prepended to every key (a namespace).
    pub key_prefix: Vec<u8>,
    /// Escape keys that are not valid on the wire (URL-encoding) instead of refusing them.
    /// `None` means the distribution's default (on for the Whalin profiles).
    pub sanitize_keys: Option<bool>,
    /// Whether placement hashes the key with its prefix (`key_prefix`) in front. `None`
    /// means the distribution's rule ([`crate::route::Distribution::hashes_namespace`]).
    pub hash_key_prefix: Option<bool>,
    /// What a wire key over the protocol's limit becomes: refused (the default) or hashed
    /// to Dalli's form (option `long_keys`, docs/keys.md).
    pub long_keys: crate::key::LongKeys,
    /// What a server marked dead gets before it serves again, with `eject`/`rehash`
    /// failover (option `on_server_return`, docs/failover.md).
    pub on_server_return: crate::stale::OnServerReturn,
    /// Most keys remembered per server while it is away (`delete-written`); past it the
    /// return flushes instead.
    pub written_while_away_max: usize,
    /// Largest value sent (as given, checked before compression) and accepted from a server;
    /// at most [`MAX_ITEM_SIZE`].
    pub max_value_size: usize,
    /// Wire protocol.
    pub protocol: Protocol,
    /// SASL PLAIN credentials (username, password), sent on every new connection (binary only).
    pub sasl: Option<(String, String)>,
    /// TLS to every TCP server (cargo feature `tls`); unix-socket servers stay plain text.
    pub tls: Option<TlsOptions>,
    /// Called when a server is marked dead or comes back.
    pub events: Option<EventHandler>,
    /// Resolves server host names in place of the system's resolver (`ClientBuilder::resolver`).
    pub resolver: Option<Resolver>,
    /// How often server host names are re-resolved; zero: at each connect a call makes.
    pub resolve_interval: Duration,
    /// Timeouts and unreachable servers answer as misses (reads) and "not stored" (writes)
    /// instead of errors, counted in the metrics (docs/tracing.md#fail-open).
    pub fail_open: bool,
    /// Called after every exchange with a server, and for keys refused before any server was
    /// asked ([`crate::trace`]).
    pub operations: Option<OpHandler>,
}

impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Every field (a new one fails to compile here until it is shown), the password never.
        let Config {
            servers,
            distribution,
            failover,
            min_idle,
            max_size,
            idle_timeout,
            max_lifetime,
            connect_timeout,
            io_timeout,
            pool_timeout,
            operation_timeout,
            nodelay,
            tcp_keepalive,
            tcp_keepidle,
            test_on_check_out,
            failure_limit,
            eject_after,
            failure_window,
            io_timeout_marks_dead,
            retry_timeout,
            retry_timeout_max,
            ejected_rest,
            compression,
            values,
            key_prefix,
            sanitize_keys,
            hash_key_prefix,
            long_keys,
            on_server_return,
            written_while_away_max,
            max_value_size,
            protocol,
            sasl,
            tls,
            events,
            resolver,
            resolve_interval,
            fail_open,
            operations,
        } = self;
        let sasl = sasl.as_ref().map(|(user, _)| (user, "<redacted>"));
        f.debug_struct("Config")
            .field("servers", &servers)
            .field("distribution", &distribution)
            .field("failover", &failover)
            .field("min_idle", &min_idle)
            .field("max_size", &max_size)
            .field("idle_timeout", &idle_timeout)
            .field("max_lifetime", &max_lifetime)
            .field("connect_timeout", &connect_timeout)
            .field("io_timeout", &io_timeout)
            .field("pool_timeout", &pool_timeout)
            .field("operation_timeout", &operation_timeout)
            .field("nodelay", &nodelay)
            .field("tcp_keepalive", &tcp_keepalive)
            .field("tcp_keepidle", &tcp_keepidle)
            .field("test_on_check_out", &test_on_check_out)
            .field("failure_limit", &failure_limit)
            .field("eject_after", &eject_after)
            .field("failure_window", &failure_window)
            .field("io_timeout_marks_dead", &io_timeout_marks_dead)
            .field("retry_timeout", &retry_timeout)
            .field("retry_timeout_max", &retry_timeout_max)
            .field("ejected_rest", &ejected_rest)
            .field("compression", &compression)
            .field("values", &values)
            .field("key_prefix", &key_prefix)
            .field("sanitize_keys", &sanitize_keys)
            .field("hash_key_prefix", &hash_key_prefix)
            .field("long_keys", &long_keys)
            .field("on_server_return", &on_server_return)
            .field("written_while_away_max", &written_while_away_max)
            .field("max_value_size", &max_value_size)
            .field("protocol", &protocol)
            .field("sasl", &sasl)
            .field("tls", &tls)
            .field("events", &events)
            .field("resolver", &resolver)
            .field("resolve_interval", &resolve_interval)
            .field("fail_open", &fail_open)
            .field("operations", &operations)
            .finish()
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            servers: Vec::new(),
            distribution: Distribution::CacheMemcached,
            failover: FailoverPolicy::FailFast,
            min_idle: 0,
            max_size: 16,
            idle_timeout: Some(Duration::from_secs(300)),
            max_lifetime: None,
            connect_timeout: Duration::from_secs(1),
            io_timeout: Duration::from_secs(1),
            pool_timeout: Duration::from_secs(5),
            operation_timeout: Some(Duration::from_secs(5)),
            nodelay: true,
            tcp_keepalive: false,
            tcp_keepidle: None,
            test_on_check_out: false,
            failure_limit: 2,
            eject_after: 1,
            failure_window: None,
            io_timeout_marks_dead: true,
            retry_timeout: Duration::from_secs(1),
            retry_timeout_max: Duration::from_secs(30),
            ejected_rest: None,
            compression: Compression::default(),
            values: ValueOptions::default(),
            key_prefix: Vec::new(),
            sanitize_keys: None,
            hash_key_prefix: None,
            long_keys: crate::key::LongKeys::Refuse,
            on_server_return: crate::stale::OnServerReturn::Keep,
            written_while_away_max: crate::stale::DEFAULT_WRITTEN_WHILE_AWAY_MAX,
            max_value_size: 1024 * 1024,
            protocol: Protocol::Text,
            sasl: None,
            tls: None,
            events: None,
            resolver: None,
            resolve_interval: Duration::ZERO,
            fail_open: false,
            operations: None,
        }
    }
}

impl Config {
    /// Every rule a configuration must hold, whoever made it: [`ClientBuilder::into_config`]
    /// and [`crate::Client::from_config`], for a `Config` whose public fields were set by
    /// hand, check the same (tester finding rustteam 1: a hand-set `pool_timeout` of 0
    /// panicked at the first call, an `io_timeout` of 0 marked a healthy server dead). The
    /// typed setters' range errors come first from the builder, in their own words.
    pub(crate) fn check_limits(&self) -> Result<()> {
        for (what, d) in [
            ("connect_timeout", self.connect_timeout),
            ("io_timeout", self.io_timeout),
            ("pool_timeout", self.pool_timeout),
        ] {
            if d.is_zero() {
                return Err(Error::Config(format!("{what} must be above zero")));
            }
        }
        let range = |name: &str, n: usize, lo: usize, hi: usize| {
            if (lo..=hi).contains(&n) {
                Ok(())
            } else {
                Err(Error::Config(format!(
                    "{name} {n}: out of range {lo} to {hi}"
                )))
            }
        };
        let most = u32::MAX as usize;
        range("failure_limit", self.failure_limit as usize, 1, most)?;
        range("eject_after", self.eject_after as usize, 1, most)?;
        range(
            "written_while_away_max",
            self.written_while_away_max,
            1,
            WRITTEN_WHILE_AWAY_MAX,
        )?;
        let ratio = self.compression.ratio;
        if !(0.0..=1.0).contains(&ratio) {
            return Err(Error::Config(format!(
                "compression ratio {ratio} not in [0, 1]"
            )));
        }
        if let Some(why) = crate::key::key_prefix_problem(&self.key_prefix) {
            return Err(Error::Config(format!(
                "key prefix {:?}: {why}",
                String::from_utf8_lossy(&self.key_prefix)
            )));
        }
        if let Some((user, password)) = &self.sasl {
            check_sasl(user, password)?;
            if self.protocol != Protocol::Binary {
                return Err(Error::Config(
                    "SASL authentication needs the binary protocol".into(),
                ));
            }
        }
        if let Some(idle) = self.tcp_keepidle {
            check_keepidle(idle)?;
        }
        if self.max_size == 0 {
            return Err(Error::Config("max_size must be at least 1".into()));
        }
        if self.max_size > MAX_POOL_SIZE {
            return Err(Error::Config(format!(
                "max_size {} is above the largest pool of {MAX_POOL_SIZE} connections per server",
                self.max_size
            )));
        }
        if self.min_idle > self.max_size {
            return Err(Error::Config(format!(
                "min_idle ({}) is larger than max_size ({})",
                self.min_idle, self.max_size
            )));
        }
        if self.retry_timeout > self.retry_timeout_max {
            return Err(Error::Config(format!(
                "retry_timeout ({}) is larger than retry_timeout_max ({}), which caps it: \
                 raise retry_timeout_max or lower retry_timeout",
                shown(self.retry_timeout),
                shown(self.retry_timeout_max)
            )));
        }
        self.values.check(&self.compression)?;
        for s in &self.servers {
            s.check()?;
        }
        if self.max_value_size == 0 {
            return Err(Error::Config(format!(
                "max_value_size 0: out of range 1 to {MAX_ITEM_SIZE}"
            )));
        }
        if self.max_value_size > MAX_ITEM_SIZE {
            return Err(Error::Config(format!(
                "max_value_size {} is above memcached's largest item size of {MAX_ITEM_SIZE} \
                 bytes (1 GiB)",
                self.max_value_size
            )));
        }
        Ok(())
    }
}

/// The one rule for SASL credentials, whichever surface set them: a user name and a
/// password, both or neither (pylibmc refuses one alone too), each at most
/// [`MAX_SASL_CREDENTIAL`] bytes, without a NUL byte (SASL PLAIN's separator) or a line break
/// (the end of the line of a file the value was read from, far likelier than a password
/// that holds one); any other byte, a tab too, is the credential's own (tester finding
/// secure 1: a tab was refused by name and taken by the C setter).
/// The most seconds TCP_KEEPIDLE takes (the kernel's `MAX_TCP_KEEPIDLE`).
pub(crate) const MAX_TCP_KEEPIDLE_SECS: u64 = 32_767;

/// `tcp_keepidle` is whole seconds, 1 to [`MAX_TCP_KEEPIDLE_SECS`] (zero is none): the
/// kernel's unit and range, refused rather than rounded or capped unsaid; a bare number in
/// the option table is milliseconds, so libmemcached's `tcp_keepidle 60` written as it is
/// would have been 60 ms, rounded to a second (tester finding retest27 4). The message
/// shows the duration as read (`60ms`) and no rule of a bare number's unit, which differs
/// by surface (Python's and Perl's numbers are seconds: retest28 2).
fn check_keepidle(idle: Duration) -> Result<()> {
    if idle.is_zero() || (idle.subsec_nanos() == 0 && idle.as_secs() <= MAX_TCP_KEEPIDLE_SECS) {
        return Ok(());
    }
    Err(Error::Config(format!(
        "tcp_keepidle {idle:?}: whole seconds from 1s to {MAX_TCP_KEEPIDLE_SECS}s (the \
         kernel's TCP_KEEPIDLE)"
    )))
}

pub(crate) fn check_sasl(user: &str, password: &str) -> Result<()> {
    match (user.is_empty(), password.is_empty()) {
        (false, true) => {
            return Err(Error::Config(
                "sasl_username needs sasl_password (SASL takes both)".into(),
            ))
        }
        (true, false) => {
            return Err(Error::Config(
                "sasl_password needs sasl_username, which is empty or not set (SASL takes both)"
                    .into(),
            ))
        }
        _ => {}
    }
    for (what, v) in [("sasl_username", user), ("sasl_password", password)] {
        if let Err(why) = sasl_credential_problem(v) {
            return Err(Error::Config(format!("{what} has {why}")));
        }
    }
    Ok(())
}

/// What is wrong with one SASL credential, if anything (see [`check_sasl`]).
pub(crate) fn sasl_credential_problem(v: &str) -> std::result::Result<(), String> {
    if v.len() > MAX_SASL_CREDENTIAL {
        return Err(format!(
            "{} bytes, longer than the limit of {MAX_SASL_CREDENTIAL} bytes",
            v.len()
        ));
    }
    if v.contains('\0') {
        return Err("a NUL byte, which SASL PLAIN takes for a separator".into());
    }
    if v.contains(['\r', '\n']) {
        return Err(
            "a line break (CR or LF), likely the end of the line it was read from: remove it"
                .into(),
        );
    }
    Ok(())
}

/// The error of `tls=false` given together with a TLS option (`what`), in either order: the
/// intent is unclear, and guessing "off" would send in plain text what was meant for TLS.
pub(crate) fn tls_contradiction(what: &str) -> String {
    format!(
        "tls is false, but {what} ask for TLS: leave tls out (or true) to use TLS, \
         or drop the other TLS options for plain text"
    )
}

/// The error of servers given both in a `libmemcached_config` string and as a list, in
/// either order.
pub(crate) const SERVERS_TWICE: &str = "libmemcached_config: servers given twice, as a list and \
     as --SERVER words: give them in one place";

/// An owned builder for [`Client`](crate::Client); `build` is in `client.rs`.
///
/// Order: a `preset` or `libmemcached_config` ([`ClientBuilder::set`]) sets defaults. An
/// option set by name keeps its value whether it comes before or after them; a typed
/// setter (`compression(false)`, `io_timeout(..)`, `key_prefix(..)`, ...) called *before*
/// them is overridden by their value, so call them first:
/// `ClientBuilder::new().set("preset", "whalin")?.compression(false)`.
#[derive(Clone, Default)]
pub struct ClientBuilder {
    config: Config,
    errors: Vec<String>,
    /// `tls` was set to false by name: a TLS option besides it is an error (see
    /// [`tls_contradiction`]).
    tls_off: bool,
    /// `retry_timeout_max` was set by the caller (a setter or by name; a preset's is a
    /// default): a `retry_timeout` above it is then a configuration error; otherwise the cap
    /// rises to `retry_timeout` (a first wait of 60 s alone is not refused for the default
    /// 30 s cap, nor `retry_timeout=3s` under the pymemcache preset's 1 s).
    retry_cap_chosen: bool,
    /// The options the caller set by name (row name, value as text), in order: applied again
    /// over a `preset` or `libmemcached_config` set after them, so that those two set
    /// defaults and never override an option given beside them, whatever the order
    /// (`options::OptionSpec::set`; tester finding migrate 1).
    named: Vec<(&'static str, Vec<u8>)>,
    /// A `preset` or `libmemcached_config` is being applied: its settings are defaults, not
    /// the caller's options.
    applying_base: bool,
    /// The `preset` or `libmemcached_config` the caller gave (name, value): another is
    /// refused (`options::OptionSpec::given`).
    base: Option<(&'static str, Vec<u8>)>,
    /// The options that base set (its settings, as defaults): put back to their defaults
    /// before another base replaces it, so that two presets never mix (tester finding
    /// optparity 1: `whalin` then `pylibmc` kept Whalin's key encoding).
    base_applied: Vec<&'static str>,
    /// The servers came from a `libmemcached_config` string's `--SERVER` words: a server
    /// added after it, or a list set by name, is refused as a list given before the string
    /// is (tester finding rustteam2 2: after it they were merged, or replaced the string's).
    pub(crate) string_servers: bool,
}

impl std::fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Every field (a new one fails to compile here until it is shown), a secret set by
        // name as its length only, as `Config`'s Debug leaves the password out.
        let ClientBuilder {
            config,
            errors,
            tls_off,
            retry_cap_chosen,
            named,
            applying_base,
            base,
            base_applied,
            string_servers,
        } = self;
        let named: Vec<(&str, String)> = named
            .iter()
            .map(|(name, value)| {
                let value = String::from_utf8_lossy(value);
                let shown = if options::is_secret(name) {
                    options::redacted(&value)
                } else {
                    value.into_owned()
                };
                (*name, shown)
            })
            .collect();
        f.debug_struct("ClientBuilder")
            .field("config", config)
            .field("errors", errors)
            .field("tls_off", tls_off)
            .field("retry_cap_chosen", retry_cap_chosen)
            .field("named", &named)
            .field("applying_base", applying_base)
            .field("base", &base.as_ref().map(|(name, v)| (*name, v.len())))
            .field("base_applied", base_applied)
            .field("string_servers", string_servers)
            .finish()
    }
}

impl ClientBuilder {
    /// The one range check of a typed setter: a number outside `lo..=hi` is kept as an error
    /// for `build` (`"{name} {n}: out of range {lo} to {hi}"`). The option path
    /// (`ClientBuilder::set`, the C ABI's setters) calls the same setter and reports the
    /// error at once ([`options::OptionSpec::set_value`]).
    fn check_range<T: PartialOrd + std::fmt::Display>(&mut self, name: &str, n: T, lo: T, hi: T) {
        if n < lo || n > hi {
            self.errors
                .push(format!("{name} {n}: out of range {lo} to {hi}"));
        }
    }

    /// A builder with every default.
    pub fn new() -> Self {
        ClientBuilder::default()
    }

    /// Adds a server of weight 1: `host:port`, `[v6]:port`, or a unix socket path.
    #[doc(alias = "setServers")]
    pub fn server(self, addr: &str) -> Self {
        self.server_weighted(addr, 1)
    }

    /// Adds several servers of weight 1.
    pub fn servers<S: AsRef<str>>(mut self, addrs: impl IntoIterator<Item = S>) -> Self {
        for a in addrs {
            self = self.server(a.as_ref());
        }
        self
    }

    /// Adds a server with a placement weight (for the profiles that use weights). The
    /// address is read as every surface reads a server ([`ServerSpec::parse_with_weight`]):
    /// `host:port:3` has weight 3; a `weight` of 1 (the usual value) leaves that in force, and
    /// any other `weight` must agree with it.
    #[doc(alias = "setWeights")]
    pub fn server_weighted(mut self, addr: &str, weight: u32) -> Self {
        if self.string_servers {
            self.errors.push(SERVERS_TWICE.into());
            return self;
        }
        match ServerSpec::parse_with_weight(addr, weight) {
            Ok(s) => self.config.servers.push(s),
            // The message alone: `into_config` wraps it in `Error::Config` again.
            Err(Error::Config(m)) => self.errors.push(m),
            Err(e) => self.errors.push(e.to_string()),
        }
        self
    }

    /// Removes every server added so far (to give the list again, e.g. after
    /// [`Client::set_servers`](crate::Client::set_servers) changed a client built from it).
    /// (Servers a `libmemcached_config` string gave may then be given again.)
    pub fn clear_servers(mut self) -> Self {
        self.config.servers.clear();
        self.string_servers = false;
        self
    }

    /// Adds an already parsed server.
    pub fn server_spec(mut self, spec: ServerSpec) -> Self {
        if self.string_servers {
            self.errors.push(SERVERS_TWICE.into());
            return self;
        }
        self.config.servers.push(spec);
        self
    }

    /// Placement profile. Default: `cache-memcached`.
    #[doc(alias = "setHashingAlg")]
    pub fn distribution(mut self, d: Distribution) -> Self {
        self.config.distribution = d;
        self
    }

    /// Failover policy. Default: `fail-fast` (a key whose server is dead gets an error).
    /// With `rehash` or `eject`, a call that cannot reach a key's server (nothing sent) and
    /// leaves it dead goes on to the key's new server within the same call
    /// (docs/failover.md).
    #[doc(alias = "setFailover")]
    #[doc(alias = "setFailback")]
    pub fn failover(mut self, p: FailoverPolicy) -> Self {
        self.config.failover = p;
        self
    }

    /// Connections per server opened when the client is built (in the background) and kept
    /// idle. Default 0: lazy, as libmemcached, pylibmc, python-memcached, pymemcache and
    /// Cache::Memcached(::Fast) are: each connection is opened by the first call that needs
    /// it, and no background thread starts before the first call.
    #[doc(alias = "setInitConn")]
    #[doc(alias = "setMinConn")]
    pub fn min_idle(mut self, n: u32) -> Self {
        self.config.min_idle = n;
        self
    }

    /// Most connections per server. Default 16, at most [`MAX_POOL_SIZE`].
    #[doc(alias = "setMaxConn")]
    pub fn max_size(mut self, n: u32) -> Self {
        self.config.max_size = n;
        self
    }

    /// Close connections idle for longer than this. Default 300 s; `None` (or zero) keeps
    /// them. A checkout never takes a connection idle for longer (one coarse clock reading,
    /// good to a few milliseconds): it opens a new one; the pool's background sweep, every
    /// 30 s, closes those no call came for. Set it below a firewall's or load balancer's idle
    /// cut-off and no call uses a connection cut under it.
    #[doc(alias = "setMaxIdle")]
    pub fn idle_timeout(mut self, d: Option<Duration>) -> Self {
        self.config.idle_timeout = d;
        self
    }

    /// Close connections older than this. Default `None` (no limit). A checkout never takes
    /// a connection older than this (it opens a new one); the pool's background sweep, every
    /// 30 s, closes those no call came for.
    pub fn max_lifetime(mut self, d: Option<Duration>) -> Self {
        self.config.max_lifetime = d;
        self
    }

    /// Connect timeout. Default 1 s.
    #[doc(alias = "setSocketConnectTO")]
    pub fn connect_timeout(mut self, d: Duration) -> Self {
        self.config.connect_timeout = d;
        self
    }

    /// Timeout of each socket read or write. Default 1 s.
    #[doc(alias = "setSocketTO")]
    #[doc(alias = "setMaxBusyTime")]
    pub fn io_timeout(mut self, d: Duration) -> Self {
        self.config.io_timeout = d;
        self
    }

    /// How long a caller waits for a free pooled connection. Default 5 s.
    pub fn pool_timeout(mut self, d: Duration) -> Self {
        self.config.pool_timeout = d;
        self
    }

    /// One deadline for a whole operation, covering the pool wait, the connect and every write
    /// and read (each read or write waits at most the I/O timeout, and never past the
    /// deadline, by the clock); whichever phase is running when it passes reports its own
    /// timeout error (`PoolTimeout`, `ConnectTimeout`, `IoTimeout`). A single-key read or
    /// set served on another caller's connection (docs/handover.md) ends by it too. Default
    /// 5 s; `None` or zero means no operation deadline: only the per-phase timeouts apply (a
    /// slow server trickling a large reply could then hold a call longer).
    pub fn operation_timeout(mut self, d: Option<Duration>) -> Self {
        self.config.operation_timeout = d.filter(|d| !d.is_zero());
        self
    }

    /// TCP_NODELAY. Default on (Nagle off): a cache wants latency, not batching.
    #[doc(alias = "setNagle")]
    pub fn nodelay(mut self, on: bool) -> Self {
        self.config.nodelay = on;
        self
    }

    /// SO_KEEPALIVE on every TCP connection: the system sends probes on a connection idle
    /// for [`tcp_keepidle`](Self::tcp_keepidle) (or its own default, two hours on Linux),
    /// which keep a NAT's or firewall's state of a pooled connection alive and find one the
    /// network silently lost (libmemcached's and pylibmc's `tcp_keepalive`). Default off.
    pub fn tcp_keepalive(mut self, on: bool) -> Self {
        self.config.tcp_keepalive = on;
        self
    }

    /// With [`tcp_keepalive`](Self::tcp_keepalive), how long a connection is idle before the
    /// first probe, and the time between probes (TCP_KEEPIDLE and TCP_KEEPINTVL, in whole
    /// seconds, 1 s to 32767 s, the kernel's range: anything else is refused when the client
    /// is built; libmemcached's `tcp_keepidle`). `None` (or zero): the system's.
    pub fn tcp_keepidle(mut self, d: Option<Duration>) -> Self {
        self.config.tcp_keepidle = d.filter(|d| !d.is_zero());
        self
    }

    /// A `version` round trip on every checkout. Default off: it costs a round trip, and a
    /// broken connection is never returned to the pool anyway.
    #[doc(alias = "setAliveCheck")]
    pub fn test_on_check_out(mut self, on: bool) -> Self {
        self.config.test_on_check_out = on;
        self
    }

    /// Consecutive failures that mark a server dead. Default 2. The requests in flight when
    /// it is marked dead, and connections opened before, fail without counting again.
    /// At least 1 (0 would never count a failure): 0 makes `build` fail.
    pub fn failure_limit(mut self, n: u32) -> Self {
        self.check_range("failure_limit", n, 1, u32::MAX);
        self.config.failure_limit = n;
        self
    }

    /// Under `eject` (and `rehash` where it ejects), the times in a row a dead server must
    /// have been marked dead (the marking, then each failed retry after `retry_timeout`)
    /// before its keys move to the others; until then they fail with
    /// [`Error::ServerDead`], as libmemcached's server "in
    /// timeout" does. Default 1: at once. libmemcached counts its `failure_limit` (5 by
    /// default) this way before `auto_eject` removes a server, at most one failure per
    /// `retry_timeout` (the `pylibmc` and `libmemcached` presets set 5). At least 1.
    pub fn eject_after(mut self, n: u32) -> Self {
        self.check_range("eject_after", n, 1, u32::MAX);
        self.config.eject_after = n;
        self
    }

    /// Count [`failure_limit`](Self::failure_limit)'s failures within `window` of the first
    /// of them, a success in between not resetting the count (Cache::Memcached::Fast's
    /// `max_failures` in `failure_timeout`); the count starts again after a window with
    /// fewer and after a rest. `None` or zero (the default): consecutive failures, reset by
    /// a success.
    pub fn failure_window(mut self, window: Option<Duration>) -> Self {
        self.config.failure_window = window.filter(|w| !w.is_zero());
        self
    }

    /// Whether an I/O timeout (a server that took the request and did not answer within
    /// `io_timeout`) counts toward [`failure_limit`](Self::failure_limit). Default true.
    /// False is libmemcached's rule (the `pylibmc` and `libmemcached` presets): a read
    /// timeout fails the call and the server is asked again by the next one; connect
    /// errors, connect timeouts and socket errors still count.
    pub fn io_timeout_marks_dead(mut self, on: bool) -> Self {
        self.config.io_timeout_marks_dead = on;
        self
    }

    /// First back-off before a dead server is retried; it doubles per failed retry, up to
    /// `retry_timeout_max`, and starts again after a success. Default 1 s. Larger than a
    /// `retry_timeout_max` the caller set makes `build` fail (naming both), never silently
    /// capped; with the cap left at its default or a preset's, the cap rises to it.
    pub fn retry_timeout(mut self, d: Duration) -> Self {
        self.config.retry_timeout = d;
        self
    }

    /// Cap on the retry back-off. Default 30 s (or `retry_timeout`, when that is larger and
    /// this is not set); when set, at least `retry_timeout` (else `build` fails).
    pub fn retry_timeout_max(mut self, d: Duration) -> Self {
        self.config.retry_timeout_max = d;
        self.retry_cap_chosen = !self.applying_base;
        self
    }

    /// How long a server that left the ring under an ejecting failover (marked dead
    /// `eject_after` times in a row) rests before it is tried again, in place of the retry
    /// back-off: pymemcache's `dead_timeout` (60 s), which keeps a removed node out of its
    /// hash that long, so that a server that flaps does not take its keys back (and their
    /// older copies) a second after each return (tester finding frameworks2 1). Zero (the
    /// default): the back-off.
    pub fn ejected_rest(mut self, d: Duration) -> Self {
        self.config.ejected_rest = (!d.is_zero()).then_some(d);
        self
    }

    /// Compression on or off. Default on, except under a value format whose readers do not
    /// inflate by default (`pymemcache`: [`ValueFormat::compresses_by_default`]).
    #[doc(alias = "setCompressEnable")]
    pub fn compression(mut self, on: bool) -> Self {
        self.config.compression.enabled = Some(on);
        self
    }

    /// mcpool's layout before value formats: the caller's flags, compression marked by bit
    /// 2 (gzip) or 8 (zlib), every value bytes. Kept for programs that still set it; it
    /// replaces the value format. New code sets [`ClientBuilder::value_format`] (for the bit
    /// of a legacy client, its preset: `pylibmc`, `cache-memcached-fast`, …).
    pub fn compression_format(mut self, f: CompressionFormat) -> Self {
        self.config.values.format = ValueFormat::Legacy(f);
        self
    }

    /// The value format: the flag layout and wire encodings of every kind, the same for
    /// every program sharing the fleet. Default `mcpool` (our cross-language layout); the
    /// legacy clients' presets read and write exactly what those clients do
    /// (docs/value-format.md).
    pub fn value_format(mut self, f: ValueFormat) -> Self {
        self.config.values.format = f;
        self
    }

    /// The compression codec: zlib, gzip or zstd (zstd only under the `mcpool` value format;
    /// a legacy format whose readers cannot inflate it makes `build` fail). Default: the
    /// format's (`mcpool`: zlib; pylibmc, python-memcached, pymemcache: zlib; the Perl and
    /// Java clients: gzip).
    pub fn compression_codec(mut self, c: Codec) -> Self {
        self.config.compression.codec = Some(c);
        self
    }

    /// The compression level on the codec's scale (zlib/gzip 0..=9, zstd 1..=22). Default 6
    /// for zlib/gzip (zlib's own default, as pylibmc and python-memcached), 3 for zstd.
    pub fn compression_level(mut self, level: i32) -> Self {
        self.config.compression.level = Some(level);
        self
    }

    /// Reads and writes objects serialized by `lang` (Python pickles, Perl Storable, Java
    /// serialization). Off by default: a value the format marks as one is then an error
    /// ([`crate::Error::ValueFormat`]) on every read, never bytes.
    pub fn serialized(mut self, lang: Lang, on: bool) -> Self {
        self.config.values.set_serialized(lang, on);
        self
    }

    /// Values of at least this many bytes are compressed. Default 30 KiB (SockIOPool's).
    #[doc(alias = "setCompressThreshold")]
    pub fn compression_threshold(mut self, bytes: usize) -> Self {
        self.config.compression.threshold = bytes;
        self
    }

    /// Keep a compressed value only when `compressed / original <= ratio`, `ratio` from 0
    /// to 1; 0: never (no value is compressed: Cache::Memcached::Fast's `compress_ratio 0`).
    /// Default 0.8.
    pub fn compression_ratio(mut self, ratio: f64) -> Self {
        if !(0.0..=1.0).contains(&ratio) {
            self.errors
                .push(format!("compression ratio {ratio} not in [0, 1]"));
        }
        self.config.compression.ratio = ratio;
        self
    }

    /// Compare [`compression_ratio`](Self::compression_ratio) strictly: keep a compressed
    /// value only when `compressed < ratio × original` (pylibmc's, python-memcached's and
    /// spymemcached's `compressed < original` at ratio 1), not when it is at most that.
    /// Default false.
    pub fn compression_ratio_below(mut self, below: bool) -> Self {
        self.config.compression.ratio_below = below;
        self
    }

    /// Refuse to inflate a value beyond this size. Default 64 MiB. A value longer than this is
    /// stored uncompressed, so the client can always read back what it stores.
    pub fn max_decompressed_size(mut self, bytes: usize) -> Self {
        self.config.compression.max_decompressed = bytes;
        self
    }

    /// Prefix (namespace) prepended to every key. Default empty. At most 250 bytes, and
    /// never beginning or ending with white space ([`crate::key::key_prefix_problem`]):
    /// `build` refuses such a prefix rather than trim it.
    pub fn key_prefix(mut self, prefix: impl Into<Vec<u8>>) -> Self {
        let prefix = prefix.into();
        if let Some(why) = crate::key::key_prefix_problem(&prefix) {
            self.errors.push(format!(
                "key prefix {:?}: {why}",
                String::from_utf8_lossy(&prefix)
            ));
        }
        self.config.key_prefix = prefix;
        self
    }

    /// Whether placement hashes the key prefix too (Cache::Memcached::Fast's `hash_namespace`,
    /// libmemcached's `MEMCACHED_BEHAVIOR_HASH_WITH_NAMESPACE`). Default: the distribution's
    /// rule (what the client it imitates does).
    pub fn hash_key_prefix(mut self, on: bool) -> Self {
        self.config.hash_key_prefix = Some(on);
        self
    }

    /// Compare the compression threshold strictly (`above`: values longer than
    /// `compression_threshold` are compressed, as Whalin and spymemcached do) instead of
    /// `at least` (the default).
    pub fn compression_above(mut self, above: bool) -> Self {
        self.config.compression.above = above;
        self
    }

    /// What a wire key (prefix included) over the protocol's limit becomes: refused (the
    /// default) or, with [`LongKeys::Hash`](crate::key::LongKeys::Hash), Dalli's truncated
    /// form (a readable prefix, `:md5:`, the hex MD5 of the whole key). Hashed keys are not
    /// shared with clients that refuse long keys (docs/keys.md).
    pub fn long_keys(mut self, policy: crate::key::LongKeys) -> Self {
        self.config.long_keys = policy;
        self
    }

    /// What a server that was marked dead gets before it serves again, with `eject` or
    /// `rehash` failover (meaningless with `fail-fast`, where nothing is written elsewhere):
    /// nothing (`Keep`, the default), `flush_all` (`Flush`), or the deletion of the keys
    /// written to other servers while it was away (`DeleteWritten`, at most
    /// [`ClientBuilder::written_while_away_max`] keys, then `flush_all`). docs/failover.md.
    pub fn on_server_return(mut self, policy: crate::stale::OnServerReturn) -> Self {
        self.config.on_server_return = policy;
        self
    }

    /// Most keys remembered per server while it is away, for `on_server_return =
    /// delete-written` (default 10000); past it the return falls back to `flush_all`
    /// (counted as `away_overflows`).
    /// 1 to [`WRITTEN_WHILE_AWAY_MAX`]; another number makes `build` fail.
    pub fn written_while_away_max(mut self, keys: usize) -> Self {
        self.check_range("written_while_away_max", keys, 1, WRITTEN_WHILE_AWAY_MAX);
        self.config.written_while_away_max = keys;
        self
    }

    /// URL-encode every key as Whalin's `sanitizeKeys` does (all bytes but `A-Z a-z 0-9 . - * _`
    /// as `%XX`, space as `+`: `user:1` is sent as `user%3A1`), so that keys with spaces or
    /// control bytes can be stored. Default: the distribution's (on for the Whalin profiles,
    /// off otherwise).
    #[doc(alias = "setSanitizeKeys")]
    pub fn sanitize_keys(mut self, on: bool) -> Self {
        self.config.sanitize_keys = Some(on);
        self
    }

    /// Largest value sent (reads are not held to it: a read takes a value up to the larger
    /// of this and `max_decompressed_size`, so one another client stored under a larger
    /// limit is read). Default 1 MiB (memcached's `-I`); at most
    /// [`MAX_ITEM_SIZE`] (1 GiB, memcached's own limit): 0 or a larger value makes `build`
    /// fail with a configuration error. A value to store is checked as sent, after compression (as
    /// Cache::Memcached::Fast's `max_size`, python-memcached and libmemcached do): a larger
    /// value that compresses below it is stored. One larger than this and than
    /// `max_decompressed_size` too is refused before any compressing (it could not be read
    /// back).
    pub fn max_value_size(mut self, bytes: usize) -> Self {
        self.check_range("max_value_size", bytes, 1, MAX_ITEM_SIZE);
        self.config.max_value_size = bytes;
        self
    }

    /// Wire protocol: text (default; works through every proxy), meta (memcached ≥ 1.6:
    /// opaque-checked pipelines, binary keys, leases) or binary (needed for SASL).
    pub fn protocol(mut self, p: Protocol) -> Self {
        self.config.protocol = p;
        self
    }

    /// SASL PLAIN authentication on every new connection. Requires the binary protocol.
    /// Both empty means no SASL, as the `sasl_username`/`sasl_password` options read an
    /// empty value (tester finding secure 3: it sent a login with empty credentials); only
    /// one of them empty is refused by `build()`.
    pub fn sasl_plain(mut self, username: &str, password: &str) -> Self {
        self.config.sasl = (!username.is_empty() || !password.is_empty())
            .then(|| (username.to_owned(), password.to_owned()));
        self
    }

    /// Speak TLS to every TCP server (needs the cargo feature `tls`; memcached `-Z`). The
    /// server certificate is verified against `options.ca_file` unless explicitly disabled.
    /// A unix-socket server in the same list is spoken to in plain text (memcached has no
    /// TLS on unix sockets), with no error.
    pub fn tls(mut self, options: TlsOptions) -> Self {
        self.config.tls = Some(options);
        self
    }

    /// A callback for server state changes (marked dead, back alive). It runs on the thread
    /// whose call changed the state, after that call has given its connection (and its
    /// place in the pool) back, so it may issue commands of its own; keep it short, that
    /// call returns only when it does. A handler that panics does not unwind into that call
    /// (whose result stands): the panic hook reports it and the panic is caught. A handler
    /// that owns the client (an `Arc<Client>` moved into it) makes a cycle that is never
    /// freed, connections included: give it a `Weak<Client>` and `upgrade` it per call.
    pub fn on_event(mut self, handler: impl Fn(&Event) + Send + Sync + 'static) -> Self {
        self.config.events = Some(EventHandler(Arc::new(handler)));
        self
    }

    /// Resolves server host names with `resolve(host, port)` instead of the system's resolver
    /// (DNS, /etc/hosts), e.g. from a service registry. It runs on a helper thread, at most one
    /// at a time per server; a caller waits for it at most its connect timeout (bounded by
    /// the operation deadline), so a resolver that stalls costs a timeout, not a hung call.
    /// IP literals and unix socket paths never go through it. Called at each connect a call
    /// makes (connections opened in the background use its last answer), or every
    /// `resolve_interval` when that is set. An empty list counts as "did not resolve". The
    /// addresses are one server's: its connections go to one of them at a time (the one the
    /// last connect reached, tried first while listed; see docs/topology.md).
    pub fn resolver(
        mut self,
        resolve: impl Fn(&str, u16) -> std::io::Result<Vec<std::net::SocketAddr>>
            + Send
            + Sync
            + 'static,
    ) -> Self {
        self.config.resolver = Some(Resolver(Arc::new(resolve)));
        self
    }

    /// Back to the system's resolver (undoes [`ClientBuilder::resolver`]).
    pub fn no_resolver(mut self) -> Self {
        self.config.resolver = None;
        self
    }

    /// Re-resolve server host names this often (in the background; calls keep the addresses
    /// they have meanwhile), and close connections to addresses no longer listed when they are
    /// next given back. Default zero: a name is resolved at each connect a call makes.
    pub fn resolve_interval(mut self, d: Duration) -> Self {
        self.config.resolve_interval = d;
        self
    }

    /// Fail-open: a read whose server times out or cannot be reached (refused, reset, marked
    /// dead) answers as a miss (`get` → `None`, `get_multi` → the keys absent), a write as
    /// not done (`StoreOutcome::NotStored`; `delete`/`touch` → false; `incr`/`decr` →
    /// `None`), so a cache outage never fails a request path. Each is counted in the
    /// metrics (`fail_open_misses`, `fail_open_not_stored`) and reported to the
    /// [`on_operation`](ClientBuilder::on_operation) handler as `FailedOpen`. Protocol
    /// violations, values that do not decode, server error answers, refused keys or values,
    /// refused authentication and configuration errors stay errors
    /// ([`Error::fails_open`] decides). `incr_or_init`/`decr_or_init` (no miss to answer),
    /// `cas` (a lost reply may have been applied: read as "not stored", a retry loop applied
    /// its update twice) and the whole-server commands keep their errors. Default off.
    pub fn fail_open(mut self, on: bool) -> Self {
        self.config.fail_open = on;
        self
    }

    /// A handler called after every exchange with a server, with its [`OpRecord`]
    /// (operation, key count, server, protocol, duration, outcome, bytes), and once for the
    /// keys of a call refused before any server was asked (a bad key or value: no server): see
    /// [`crate::trace`] for what one record covers. It runs on the calling thread, after
    /// the exchange, once the connection is back in its pool; it may issue commands of its
    /// own (their records reach no handler: this thread is inside one), but keep it short
    /// (the call returns when it does). Without a handler the cost
    /// is one branch per call. A panic in the handler is caught, never unwinds into the
    /// call (whose work is done): the panic hook reports it and
    /// [`Client::operation_handler_panics`](crate::Client::operation_handler_panics) counts it.
    /// A handler that owns the client (an `Arc<Client>`) is a cycle never freed: give it a
    /// `Weak<Client>`, as for [`on_event`](ClientBuilder::on_event).
    pub fn on_operation(mut self, handler: impl Fn(&OpRecord<'_>) + Send + Sync + 'static) -> Self {
        self.config.operations = Some(OpHandler(Arc::new(handler)));
        self
    }

    /// Removes the per-operation handler.
    pub fn no_operation_handler(mut self) -> Self {
        self.config.operations = None;
        self
    }

    /// The configuration so far.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Checks the configuration and returns it.
    pub fn into_config(self) -> Result<Config> {
        if let Some(e) = self.errors.into_iter().next() {
            return Err(Error::Config(e));
        }
        let mut c = self.config;
        if !self.retry_cap_chosen {
            c.retry_timeout_max = c.retry_timeout_max.max(c.retry_timeout);
        }
        if c.servers.is_empty() {
            return Err(Error::Config("no servers given".into()));
        }
        if self.tls_off && c.tls.is_some() {
            return Err(Error::Config(tls_contradiction("TLS options")));
        }
        c.check_limits()?;
        Ok(c)
    }

    /// Sets the option `name` from its text form, as the C ABI's `mcpool_config_set` and
    /// the CLI do: every option of the table in [`options`] (`io_timeout`, `max_size`,
    /// `distribution`, ..., and `preset`), e.g. `.set("io_timeout", "250ms")?`. A bad value
    /// or an unknown name is an [`Error::Config`] naming the option, the value and what is
    /// accepted (or the close names); the builder is consumed either way (keep a clone to
    /// try again). `preset` and `libmemcached_config` set defaults: options set by name
    /// before or after them keep their values, typed setters called before them do not
    /// (see [`ClientBuilder`]).
    pub fn set(self, name: &str, value: &str) -> Result<Self> {
        options::set(self, name, value)
    }

    /// [`ClientBuilder::set`] with the value as bytes: UTF-8 read as text, and any bytes for
    /// an option that takes them (`key_prefix`: a namespace that is not UTF-8, as the C ABI
    /// and every binding take it; [`options::OptionSpec::takes_bytes`]).
    pub fn set_bytes(self, name: &str, value: &[u8]) -> Result<Self> {
        options::set_bytes(self, name, value)
    }
}

/// A duration as a message shows it: `0` for zero (not `0ns`), else as `Debug` writes it
/// (`250ms`, `1.5s`).
fn shown(d: Duration) -> String {
    if d.is_zero() {
        "0".to_owned()
    } else {
        format!("{d:?}")
    }
}
