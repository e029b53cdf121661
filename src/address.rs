//! Server addresses as users write them: `host:port`, `[v6]:port`, a unix socket path,
//! optionally followed by `:name` (twemproxy-style server names, used by some placement profiles).

use crate::error::{Error, Result};
use std::fmt;
use std::path::PathBuf;

/// The longest unix socket path: `sun_path` holds 108 bytes with the terminating NUL.
const MAX_SOCKET_PATH: usize = 107;

/// Where a server listens.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ServerAddr {
    /// A TCP server. `host` is kept exactly as written (placement profiles hash it),
    /// without brackets for IPv6 literals.
    Tcp {
        /// Host name or IP literal, as written.
        host: String,
        /// TCP port.
        port: u16,
    },
    /// A unix-domain socket path.
    Unix(PathBuf),
}

/// One server of the fleet: its address, its weight and its optional name.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ServerSpec {
    /// Where it listens.
    pub addr: ServerAddr,
    /// Relative weight for placement (1 = normal). Profiles that ignore weights ignore it.
    pub weight: u32,
    /// A name for the server (twemproxy's `host:port:weight name`); `None` for most profiles.
    pub name: Option<String>,
    /// The port as written when that is not its number's decimal text (`027431`), else
    /// `None`: Cache::Memcached::Fast's ketama and twemproxy's unnamed servers hash the
    /// text, so `127.0.0.1:027431` and `127.0.0.1:27431` place keys differently there
    /// (docs/placement.md).
    pub port_text: Option<String>,
}

impl ServerAddr {
    /// Parses `host:port`, `[v6]:port`, or a path starting with `/` (unix socket).
    /// A bare host gets port 11211.
    pub fn parse(s: &str) -> Result<ServerAddr> {
        ServerSpec::parse(s).map(|spec| spec.addr)
    }

    /// The host part (the socket path for unix sockets).
    pub fn host(&self) -> String {
        match self {
            ServerAddr::Tcp { host, .. } => host.clone(),
            ServerAddr::Unix(p) => p.display().to_string(),
        }
    }

    /// The port (0 for unix sockets).
    pub fn port(&self) -> u16 {
        match self {
            ServerAddr::Tcp { port, .. } => *port,
            ServerAddr::Unix(_) => 0,
        }
    }
}

impl fmt::Display for ServerAddr {
    /// `host:port`, `[v6]:port`, or the socket path.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServerAddr::Tcp { host, port } if host.contains(':') => write!(f, "[{host}]:{port}"),
            ServerAddr::Tcp { host, port } => write!(f, "{host}:{port}"),
            ServerAddr::Unix(p) => write!(f, "{}", p.display()),
        }
    }
}

/// Why `t` is an address written with a scheme, which no server list of ours reads: a URL
/// (`memcache://host:port`, the `memcache` crate's form; `tcp://`), or a `tcp:`, `udp:`,
/// `inet:` or `inet6:` prefix (pylibmc's and python-memcached's forms) before an address
/// (tester findings addresses 4, rustteam 3: refused quoting a fragment, "port is not a
/// number"). A host named `inet` (`inet:11211`) is a host.
fn scheme_problem(t: &str) -> Option<&'static str> {
    if t.starts_with('/') {
        return None;
    }
    if t.contains("://") {
        return Some("a URL is no server address: write host:port, without the scheme");
    }
    let (prefix, rest) = t.split_once(':')?;
    let address_follows = rest.starts_with('[') || rest.contains(':');
    match prefix.to_ascii_lowercase().as_str() {
        "udp" if address_follows => {
            Some("UDP is not supported (udp: is pylibmc's prefix): write host:port for TCP")
        }
        "tcp" | "inet" | "inet4" | "inet6" | "memcache" | "memcached" if address_follows => Some(
            "a scheme prefix (tcp:, inet:, inet6:, memcache:) is not read here: write \
             host:port or [v6]:port without it",
        ),
        _ => None,
    }
}

/// An IPv6 literal written without brackets (`::1`, `fe80::1`, `2001:db8::1:11211`): not a
/// socket path nor bracketed, and either hex digits, `:` and `.` with a `::` (which no
/// `host:port[:field]` has) or a leading part up to a `:` that reads as an IPv6 address (the
/// eight-group form).
fn unbracketed_ipv6(t: &str) -> bool {
    if t.starts_with(['/', '[']) || t.matches(':').count() < 2 {
        return false;
    }
    let head = t.split(' ').next().unwrap_or(t);
    // A zone (`fe80::1%eth0`) is not looked at.
    let hexy = head.split('%').next().is_some_and(|a| {
        a.bytes()
            .all(|b| b.is_ascii_hexdigit() || b == b':' || b == b'.')
    });
    (hexy && head.contains("::"))
        || head
            .match_indices(':')
            .map(|(i, _)| &head[..i])
            .chain([head])
            .any(|p| p.parse::<std::net::Ipv6Addr>().is_ok())
}

/// An address (or a word holding one) as an error shows it: a URL's userinfo, the
/// `user:password@` before a host (`memcache://bob:pw@host:11211`, `--SERVER=bob:pw@host`),
/// is replaced by `<userinfo hidden>`, since no address form takes one and it may be a
/// password (tester finding retest14 4: the refusal quoted it). The userinfo is everything
/// from the address's start (after a scheme's `://`, a `--WORD=` and a quote) to the last
/// `@`, whatever it holds (a space, `=` or `"` in a password too: retest15 4). A socket
/// path, which may hold `@` in a name, is shown as written.
pub fn shown(s: &str) -> std::borrow::Cow<'_, str> {
    let Some(at) = s.rfind('@') else {
        return s.into();
    };
    let lead = s.len() - s.trim_start().len();
    let mut start = lead;
    if s[start..].starts_with("--") {
        start = s[..at].find('=').map_or(start, |i| i + 1);
    }
    // a scheme (`memcache://`): letters, digits, `+`, `-`, `.` before the first `://`
    if let Some(i) = s[start..at].find("://") {
        let scheme = &s[start..start + i];
        let is_scheme = scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b));
        if is_scheme {
            start += i + 3;
        }
    }
    if s[start..at].starts_with('"') {
        start += 1;
    }
    let rest = &s[start..];
    if socket_path(rest) || start == at {
        return s.into();
    }
    format!("{}<userinfo hidden>{}", &s[..start], &s[at..]).into()
}

/// A server list written as one string as an error shows it: everything before its last `@`
/// hidden when a piece of it (split at `separators`) holds a `user:password@`, whatever the
/// password holds (a separator, a `/`); else as [`shown`] shows an address.
pub fn shown_list<'a>(list: &'a str, separators: &[char]) -> std::borrow::Cow<'a, str> {
    let secret = list
        .split(separators)
        .map(str::trim)
        .any(ServerSpec::holds_userinfo);
    match list.rfind('@') {
        Some(_) if secret => userinfo_hidden(list).into(),
        _ => shown(list),
    }
}

/// Whether `t` is a socket path, then a `user:password` whose password holds a separator and
/// whose host has no port (`/tmp/a.sock,bob:Se,cret@h`, a list in one entry): the piece after
/// the path's first separator (white space, `,`, `;`), up to the last `@`, is a user name and
/// the password's start (a `:`, no `/`). A socket's own name holding a space has a `/` there
/// (`/tmp/my dir/x:1@y.sock`). A `unix:/path` is a socket path whatever it holds: the spelling
/// that names any socket (tester finding retest21 3).
fn path_then_userinfo(t: &str) -> bool {
    let is_sep = |c: char| c.is_whitespace() || c == ',' || c == ';';
    t.starts_with('/')
        && t.rfind('@').is_some_and(|at| {
            t[..at].find(is_sep).is_some_and(|sep| {
                let after = t[sep..at].trim_start_matches(is_sep);
                let first = after.split(is_sep).next().unwrap_or("");
                first.contains(':') && !first.contains('/')
            })
        })
}

/// `t` with everything before its last `@` hidden (`<userinfo hidden>@host...`): how an entry
/// or a list refused for a possible `user:password@` is shown, whatever it holds.
pub fn userinfo_hidden(t: &str) -> String {
    match t.rfind('@') {
        Some(at) => format!("<userinfo hidden>{}", t[at..].trim_end()),
        None => t.to_owned(),
    }
}

/// Why an address with a `user:password@` before its host is refused.
const NO_USERINFO: &str = "a server address takes no user:password@ (SASL credentials are the \
                           sasl_username and sasl_password options)";

/// Whether `t` is written as a unix socket path: `/path` or `unix:/path`.
fn socket_path(t: &str) -> bool {
    t.starts_with('/') || unix_path(t).is_some()
}

/// The path of `unix:/path` (python-memcached's, pymemcache's and Django's spelling of a
/// socket), or `None` (`unix:11211` is host `unix`, port 11211).
fn unix_path(t: &str) -> Option<&str> {
    t.strip_prefix("unix:").filter(|p| p.starts_with('/'))
}

impl ServerSpec {
    /// A server of weight 1 and no name.
    pub fn new(addr: ServerAddr) -> ServerSpec {
        ServerSpec {
            addr,
            weight: 1,
            name: None,
            port_text: None,
        }
    }

    /// The port's text as the placement profiles that hash it read it: as written (see
    /// [`ServerSpec::port_text`]), the number's decimal text otherwise (empty for a unix
    /// socket).
    pub fn port_as_written(&self) -> String {
        match (&self.port_text, &self.addr) {
            (Some(t), _) => t.clone(),
            (None, ServerAddr::Tcp { port, .. }) => port.to_string(),
            (None, ServerAddr::Unix(_)) => String::new(),
        }
    }

    /// Whether a server made field by field (they are public) is one the parser takes: its
    /// address read back from its text (`host:port`, `[v6]:port`, the socket path) by
    /// [`ServerSpec::parse`], so a URL host, a pasted `--SERVER=` word or port 0 is the same
    /// configuration error as when written (tester finding retest26 2); a weight of at least
    /// 1, a name the parser would read, and a `port_text` that is the port as written (the
    /// text some placements hash: tester finding retest27 2, weight 0 left a server without
    /// keys, unsaid).
    pub fn check(&self) -> Result<()> {
        let shown = self.addr.to_string();
        ServerSpec::parse(&shown)?;
        let bad = |why: String| Err(Error::Config(format!("server {shown}: {why}")));
        if self.weight == 0 {
            return bad("weight must be at least 1".into());
        }
        if let Some(n) = &self.name {
            if n.is_empty() || n.contains(':') || n.bytes().any(|b| b < b' ' || b == 0x7f) {
                return bad(format!(
                    "server name {}: a name is not empty and holds no ':' or control byte",
                    crate::key::quoted(n.as_bytes())
                ));
            }
        }
        match (&self.port_text, &self.addr) {
            (None, _) => Ok(()),
            (Some(t), ServerAddr::Tcp { port, .. })
                if t.bytes().all(|b| b.is_ascii_digit())
                    && t.parse::<u16>().ok() == Some(*port) =>
            {
                Ok(())
            }
            (Some(t), _) => bad(format!(
                "port_text {} is not this port as written (its digits with leading zeros, \
                 as 027431 for 27431; None when written as its number)",
                crate::key::quoted(t.as_bytes())
            )),
        }
    }

    /// Parses `host:port`, `[v6]:port`, `host:port:name`, `[v6]:port:name`, a bare host
    /// (port 11211) or a unix socket path (starts with `/`, or `unix:/path`, the form of
    /// python-memcached, pymemcache and Django's `LOCATION`). Leading and trailing whitespace
    /// is ignored; anything else that cannot be a server is a configuration error here, not
    /// a failure at the first call: a NUL, control byte or space inside the address, port 0
    /// or a port that is not a number, a `:` field beyond `host:port:name`, a relative socket
    /// path (one with `/` that does not start with it), or a socket path too long for the
    /// system (over 107 bytes).
    pub fn parse(s: &str) -> Result<ServerSpec> {
        let bad = |why: &str| {
            let s = shown(s);
            Error::Config(format!("bad server address {s:?}: {why}"))
        };
        let t = s.trim();
        if t.is_empty() {
            return Err(bad("empty"));
        }
        if t.bytes().any(|b| b < b' ' || b == 0x7f) {
            return Err(bad("contains a NUL or control byte"));
        }
        let t = unix_path(t).unwrap_or(t);
        if !t.starts_with('/') && t.contains('@') {
            // no host name has one: a URL's userinfo, never sent anywhere (refused before
            // any field is read, whose error would name a fragment)
            return Err(bad(NO_USERINFO));
        }
        if let Some(why) = scheme_problem(t) {
            return Err(bad(why));
        }
        if t.starts_with('/') {
            // sun_path holds 108 bytes, the last one the terminating NUL.
            if t.len() > MAX_SOCKET_PATH {
                return Err(bad("unix socket path longer than 107 bytes"));
            }
            return Ok(ServerSpec::new(ServerAddr::Unix(PathBuf::from(t))));
        }
        if t.contains('/') {
            return Err(bad(
                "a unix socket path must be absolute (start with '/'); a host has no '/'",
            ));
        }
        if unbracketed_ipv6(t) {
            return Err(bad(
                "an IPv6 address must be in brackets: write [address]:port (e.g. [::1]:11211)",
            ));
        }
        if t.bytes().any(|b| b == b' ') {
            return Err(bad(
                "contains a space (a twemproxy name goes after the weight: host:port:weight name)",
            ));
        }
        let (host, rest) = if let Some(inner) = t.strip_prefix('[') {
            let end = inner.find(']').ok_or_else(|| bad("missing ']'"))?;
            let rest = &inner[end + 1..];
            let rest = if rest.is_empty() {
                None
            } else {
                Some(
                    rest.strip_prefix(':')
                        .ok_or_else(|| bad("expected ':' after ']'"))?,
                )
            };
            (&inner[..end], rest)
        } else {
            match t.split_once(':') {
                Some((h, r)) => (h, Some(r)),
                None => (t, None),
            }
        };
        if host.is_empty() {
            return Err(bad("empty host"));
        }
        if host.contains(['[', ']']) {
            return Err(bad("stray '[' or ']'"));
        }
        if host.starts_with('-') || host.contains('=') {
            // no host name has either: a word of a command line or a libmemcached
            // configuration string pasted as an address, which would fail as a DNS lookup
            // at the first call (tester finding addresses 4)
            return Err(bad(
                "no host name begins with '-' or holds '=' (a libmemcached configuration \
                 string, --SERVER=host:port, goes in libmemcached_config): write host:port",
            ));
        }
        if host.contains([',', ';']) {
            // no host name or IP literal has one: a server list split badly or not at all
            // (tester finding topology 2: `,` and `a,b:11211` were hosts, failing as DNS
            // lookups at every call)
            return Err(bad(
                "no host name holds ',' or ';' (they separate the entries of a server list: \
                 give one address per entry)",
            ));
        }
        if host.len() > 253 {
            // (a DNS name is at most 253 bytes, an IP literal far shorter: no such server)
            return Err(bad(
                "host name longer than 253 bytes, the most a DNS name has",
            ));
        }
        let (port, name, port_text) = match rest {
            None => (11211, None, None),
            Some(r) => {
                let (p, n) = match r.split_once(':') {
                    Some((p, n)) => (p, Some(n)),
                    None => (r, None),
                };
                if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(bad("port is not a number 1-65535"));
                }
                let port: u16 = p.parse().map_err(|_| bad("port is not a number 1-65535"))?;
                if port == 0 {
                    return Err(bad("port 0 (no server listens there)"));
                }
                if let Some(n) = n {
                    if n.is_empty() {
                        return Err(bad("empty server name"));
                    }
                    if n.contains(':') {
                        return Err(bad(
                            "a ':' field beyond host:port:name or host:port:weight (for both \
                             a weight and a name write host:port:weight name, as nutcracker does)",
                        ));
                    }
                }
                let as_written = (p != port.to_string()).then(|| p.to_owned());
                (port, n.map(str::to_owned), as_written)
            }
        };
        Ok(ServerSpec {
            addr: ServerAddr::Tcp {
                host: host.to_owned(),
                port,
            },
            weight: 1,
            name,
            port_text,
        })
    }
}

impl ServerSpec {
    /// The entries of a comma-separated server list (`a:1,b:2:3`), trimmed, empty ones
    /// dropped: the split every surface that takes a list as one string uses (the `servers`
    /// option, the CLI's `--servers`). Each entry is then read by [`ServerSpec::parse_entry`].
    /// See [`ServerSpec::split_list_on`] for a list holding a `user:password@`.
    pub fn split_list(list: &str) -> Result<Vec<&str>> {
        Self::split_list_on(list, &[','])
    }

    /// The entries of a server list written as one string, split at any of `separators`
    /// (Django's `LOCATION` takes `;` and `,`), trimmed, empty ones dropped. A list holding
    /// an address with a `user:password@` is refused whole, showing nothing before its last
    /// `@`: split, a password holding a separator (`bob:Se,cret@h:1`, `bob:Se,/cret@h:1`)
    /// gave pieces whose refusal showed it, or a socket path that swallowed the rest of the
    /// list (tester findings retest18 3, retest19 1-3). Such an address is a piece holding
    /// an `@` that no entry reads (a socket path or a nutcracker name may hold one:
    /// `/run/mc@main.sock:2`, `h:1:1 cache@10.0.0.1:11211`); and a refused piece before a
    /// piece holding an `@` is refused without being shown (it may be a password's start).
    /// A password holding a separator then a `/` (`bob:1,/x@h`, `bob:1,/x@h:11211`) reads as
    /// a valid list (a server and a socket path, with a weight): no rule can tell it from one.
    pub fn split_list_on<'a>(list: &'a str, separators: &[char]) -> Result<Vec<&'a str>> {
        let pieces: Vec<&str> = list
            .split(separators)
            .map(str::trim)
            .filter(|e| !e.is_empty())
            .collect();
        if list.contains('@') {
            let hidden = userinfo_hidden(list);
            if pieces.iter().any(|p| Self::holds_userinfo(p)) {
                return Err(Error::Config(format!(
                    "bad server address \"{hidden}\" (a list of {} bytes): {NO_USERINFO}",
                    list.len()
                )));
            }
            // a refused piece before the last piece with an `@` is refused here, showing
            // nothing before that `@`: it may be a password's start that holds a separator,
            // the rest reading as a socket path (`bob:S;unix:/x@h:1`); a refused piece after
            // it is the entry's own refusal (`/run/mc@main.sock,h:0`: port 0)
            let last = pieces.iter().rposition(|p| p.contains('@')).unwrap_or(0);
            if pieces[..last]
                .iter()
                .any(|p| Self::parse_entry(p, None).is_err())
            {
                return Err(Error::Config(format!(
                    "bad server list \"{hidden}\" ({} bytes): an entry before its `@` is not a \
                     server address (not shown: a user:password@ may hold a separator, and \
                     {NO_USERINFO})",
                    list.len()
                )));
            }
        }
        Ok(pieces)
    }

    /// Whether a piece of a list is an address with a `user:password@` (see
    /// [`ServerSpec::split_list_on`]).
    fn holds_userinfo(p: &str) -> bool {
        p.contains('@') && !socket_path(p) && Self::parse_entry(p, None).is_err()
    }

    /// One entry of a server list, read the same way by every surface (the `servers` option,
    /// [`ClientBuilder::server`](crate::ClientBuilder::server) and `server_weighted`,
    /// [`Client::set_servers`](crate::Client::set_servers), the C ABI's
    /// `mcpool_config_add_server` and `mcpool_client_set_servers`, the CLI's `--servers`):
    /// `host:port:weight` or `[v6]:port:weight`, where a third field of digits is a weight of
    /// at least 1 and any other third field a name (`host:port:name`, see
    /// [`ServerSpec::parse`]). A unix socket path takes a weight as nutcracker writes it,
    /// `/path:weight` (a socket whose own name ends in `:` and digits is written
    /// `unix:/path:3`, taken whole). nutcracker's own line, `host:port:weight name` or
    /// `/path:weight name` (the name after the last space), gives a weight and a name (also
    /// a name of digits only). An IPv6 address without brackets (`::1`) is refused naming
    /// the entry as written.
    ///
    /// `beside` is a weight given beside the address (a separate argument, `--weights`), or
    /// `None`. A weight in the address and a different one beside it is a configuration
    /// error, never one of them silently picked. The weight is the one given (in the address
    /// or beside it), else 1; a weight of 0 is a configuration error.
    pub fn parse_entry(s: &str, beside: Option<u32>) -> Result<ServerSpec> {
        let t = s.trim();
        Self::read_entry(t, beside).map_err(|e| match e {
            // an entry that is no socket path, holds an `@` and is refused is not shown: read
            // as fields, a password after a user name gave the first field's error
            // (`bob:pw:12 x@h:1` read as nutcracker's line showed `bob:pw`: tester findings
            // retest19 4, retest20 3)
            Error::Config(m)
                if t.contains('@') && !socket_path(t) && !m.contains("<userinfo hidden>") =>
            {
                Error::Config(format!(
                    "bad server address \"{}\" (an entry of {} bytes): not a server address \
                     (not shown: it holds an `@`, which may end a user:password@; \
                     {NO_USERINFO})",
                    userinfo_hidden(t),
                    t.len()
                ))
            }
            e => e,
        })
    }

    /// [`ServerSpec::parse_entry`] of a trimmed entry, its errors quoting it.
    fn read_entry(t: &str, beside: Option<u32>) -> Result<ServerSpec> {
        if let Some(why) = scheme_problem(t).filter(|_| !t.contains('@')) {
            // (read as host:port:weight, `memcache://h:1` was refused quoting `memcache://h`;
            // a userinfo's refusal, which hides it, comes first)
            return Err(Error::Config(format!(
                "bad server address {:?}: {why}",
                shown(t)
            )));
        }
        if unbracketed_ipv6(t) {
            // Read as host:port:weight it would be refused quoting a fragment (":").
            return ServerSpec::parse(t);
        }
        if Self::nutcracker_name(t).is_none() {
            Self::not_a_list(t)?;
        }
        // nutcracker's own spelling: `host:port:weight name` / `/path:weight name` (the
        // name is whatever follows the last space, as nutcracker reads it: `cache@1`, `mc:1`)
        let (t_addr, name) = match Self::nutcracker_name(t) {
            Some((addr, name)) => (addr, Some(name)),
            None => (t, None),
        };
        if name.is_some() && t_addr.contains([',', ';']) && path_then_userinfo(t) {
            // a path-first list whose password reads as nutcracker's `:weight name`
            // (`/tmp/a.sock,bob:pw:12 x@h`); a real line's path holds no list separator
            // there (a space may be: `/tmp/a b:1 cache@1`, tester finding retest21 4)
            return Err(Error::Config(format!(
                "bad server address \"{}\" (an entry of {} bytes): {NO_USERINFO}",
                userinfo_hidden(t),
                t.len()
            )));
        }
        if !socket_path(t_addr) && t_addr.contains('@') {
            // a user:password@: refused whole, as the address parser refuses it, never
            // shown (read as host:port:weight its error would name a fragment); past here
            // the address holds none and this function's own errors quote the entry
            return ServerSpec::parse(t_addr);
        }
        let weight_field = Self::weight_field(t_addr);
        let (mut spec, in_addr) = match weight_field {
            Some((addr, w)) => {
                // digits only: u32's parse would take `+2` (nutcracker's nc_atoi refuses it)
                let digits = !w.is_empty() && w.bytes().all(|c| c.is_ascii_digit());
                let weight: u32 = digits.then(|| w.parse().ok()).flatten().ok_or_else(|| {
                    Error::Config(format!(
                        "server {t}: weight {w} is not a whole number up to {}",
                        u32::MAX
                    ))
                })?;
                (ServerSpec::parse(addr)?, Some(weight))
            }
            None => (ServerSpec::parse(t_addr)?, None),
        };
        if let Some(name) = name {
            spec.name = Some(name.to_owned());
        }
        spec.weight = match (in_addr, beside) {
            (Some(a), Some(b)) if a != b => {
                return Err(Error::Config(format!(
                    "server {t}: weight {a} in the address and {b} given beside it; \
                     give it once"
                )))
            }
            (Some(w), _) | (None, Some(w)) => w,
            (None, None) => 1,
        };
        if spec.weight == 0 {
            return Err(Error::Config(format!(
                "server {t}: weight must be at least 1"
            )));
        }
        Ok(spec)
    }

    /// [`ServerSpec::parse_entry`] for the calls whose weight argument is always there, with
    /// 1 as its usual value ([`ClientBuilder::server_weighted`](crate::ClientBuilder::server_weighted),
    /// [`Client::set_servers_weighted`](crate::Client::set_servers_weighted), the C ABI's
    /// `mcpool_config_add_server` and `mcpool_client_set_servers`): a `weight` of 1 counts as
    /// none given, so `host:port:3` with weight 1 is weight 3; any other `weight` must agree
    /// with a weight in the address.
    pub fn parse_with_weight(s: &str, weight: u32) -> Result<ServerSpec> {
        Self::parse_entry(s, (weight != 1).then_some(weight))
    }

    /// Refuses an entry that is several `host:port` addresses (separated by white space,
    /// commas or semicolons: a list written as one string, as spymemcached's `AddrUtil.getAddresses` and
    /// Django's `LOCATION` take it) as that, never read as one address with a weight (tester
    /// finding javacompat 6: "127.0.0.1:1 127.0.0.1:2" was refused as the address
    /// "127.0.0.1:1 127.0.0.1" with a space in it).
    fn not_a_list(t: &str) -> Result<()> {
        let parts: Vec<&str> = t
            .split(|c: char| c.is_whitespace() || c == ',' || c == ';')
            .filter(|p| !p.is_empty())
            .collect();
        // a socket path beside host:port addresses is a list too ("/tmp/a.sock,h:1", which
        // the CLI's --servers splits; read whole it was the path "/tmp/a.sock,h" of weight
        // 1: tester finding retest16 7); a path with a comma in its name alone is a path
        let path = |p: &&str| socket_path(p);
        let address = |p: &&str| p.contains(':') && !path(p) && Self::parse(p).is_ok();
        // an address with a user:password@ beside anything else in one entry: refused
        // without quoting it (a password may hold a space or `,`, which split it here), never
        // read as one socket path whose later errors show the password ("/tmp/a.sock,bob:pw@
        // h:1": tester finding retest17 1); a socket path's own `@` (`/tmp/a b@c.sock`) has
        // no `host:port` after it
        // (a `:` before the `@` too: `user:password@host` without a port, tester finding
        // retest19 1; not after `unix:`, the spelling that names any socket, whose own name
        // may hold `b:x@c`: tester finding retest21 3)
        let spelled_unix = unix_path(t).is_some();
        let userinfo = |p: &&str| {
            !path(p)
                && !p.contains('/')
                && p.rfind('@').is_some_and(|at| {
                    p[at..].contains(':') || !spelled_unix && p[..at].contains(':')
                })
        };
        if parts.len() > 1 && (path_then_userinfo(t) || parts.iter().any(userinfo)) {
            if !path(&t) {
                return Self::parse(t).map(|_| ()); // refused, the userinfo hidden
            }
            // a path first: everything up to the last `@` hidden
            return Err(Error::Config(format!(
                "bad server address \"{}\" (an entry of {} bytes): {NO_USERINFO}",
                userinfo_hidden(t),
                t.len()
            )));
        }
        if parts.len() > 1
            && parts.iter().all(|p| address(p) || path(p))
            && parts.iter().any(address)
        {
            return Err(Error::Config(format!(
                "server {t:?}: {} addresses in one entry: give one address per entry (a list \
                 written as one string, as spymemcached's AddrUtil.getAddresses takes it, is \
                 split before it is given)",
                parts.len()
            )));
        }
        Ok(())
    }

    /// nutcracker's server line, `host:port:weight name` (`[v6]:port:weight name`,
    /// `/path:weight name`): the name is what follows the last space, as nutcracker reads
    /// it, and the weight must be there. Splits it into `host:port:weight` (for a socket,
    /// `/path:weight`) and the name; `None` for any other entry (a socket path with a space
    /// and no `:weight` before it stays a path).
    fn nutcracker_name(t: &str) -> Option<(&str, &str)> {
        let (addr, name) = t.rsplit_once(' ')?;
        let addr = addr.trim_end();
        if name.is_empty() || addr.is_empty() {
            return None;
        }
        Self::weight_field(addr).is_some().then_some((addr, name))
    }

    /// Splits `host:port:DIGITS` / `[v6]:port:DIGITS` / `/path:DIGITS` (nutcracker's socket
    /// line) into the address and the weight's digits; `None` when the entry has no weight
    /// field. Only the third field can be a weight: with a fourth (`host:port:2:3`,
    /// `host:port:name:3`) this is `None`, and [`ServerSpec::parse`] refuses the field
    /// beyond `host:port:name`, never reading the last field as the weight and the third as
    /// a name. A path written `unix:/path` is taken whole (a socket whose own name ends in
    /// `:` and digits).
    fn weight_field(t: &str) -> Option<(&str, &str)> {
        let digits = |w: &str| !w.is_empty() && w.bytes().all(|c| c.is_ascii_digit());
        if unix_path(t).is_some() {
            return None;
        }
        if t.starts_with('/') {
            return t
                .rsplit_once(':')
                .filter(|(path, w)| !path.is_empty() && digits(w));
        }
        let (addr, w) = t.rsplit_once(':')?;
        // `addr` must be exactly host:port (its port the last field).
        let after_host = match addr.strip_prefix('[') {
            Some(inner) => inner.split_once("]:")?.1,
            None => addr.split_once(':')?.1,
        };
        let just_port = !after_host.contains(':');
        // A signed or fractional number is a mistyped weight (refused by the weight's parse),
        // never a server name: `host:port:-1` is not a name "-1" with weight 1.
        let numberish = |w: &str| {
            let b = w.strip_prefix(['-', '+']).unwrap_or(w);
            b.bytes().any(|c| c.is_ascii_digit())
                && b.bytes().all(|c| c.is_ascii_digit() || c == b'.')
        };
        (just_port && (digits(w) || numberish(w))).then_some((addr, w))
    }
}

impl fmt::Display for ServerSpec {
    /// The address as [`ServerAddr`] shows it, but with the port as written
    /// ([`ServerSpec::port_text`]).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.addr, &self.port_text) {
            (ServerAddr::Tcp { host, .. }, Some(port)) if host.contains(':') => {
                write!(f, "[{host}]:{port}")
            }
            (ServerAddr::Tcp { host, .. }, Some(port)) => write!(f, "{host}:{port}"),
            (addr, _) => write!(f, "{addr}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tester finding retest14 4: a refused `user:password@host` quoted the password.
    #[test]
    fn a_userinfo_is_never_shown_in_an_error() {
        for given in [
            "memcache://bob:Hunter2pw@127.0.0.1:42141",
            "bob:Hunter2pw@127.0.0.1:42141",
            "Hunter2pw@127.0.0.1",
            "bob:Hunter2pw@[::1]:11211",
        ] {
            for e in [
                ServerSpec::parse(given).unwrap_err(),
                ServerSpec::parse_entry(given, None).unwrap_err(),
                ServerSpec::parse_entry(&format!("{given}:0"), None).unwrap_err(),
            ] {
                let e = e.to_string();
                assert!(!e.contains("Hunter2pw"), "{given}: {e}");
                assert!(e.contains("<userinfo hidden>@"), "{given}: {e}");
                // the reason, not a fragment's (it said "port is not a number")
                assert!(e.contains("takes no user:password@"), "{given}: {e}");
            }
        }
        let e =
            crate::config::libmemcached_config::translate("--SERVER=bob:Hunter2pw@127.0.0.1:42141")
                .unwrap_err()
                .to_string();
        assert!(
            !e.contains("Hunter2pw") && e.contains("--SERVER=<userinfo hidden>@"),
            "{e}"
        );
        // a socket path may hold @: shown as written
        assert_eq!(shown("/tmp/a@b.sock"), "/tmp/a@b.sock");
        assert_eq!(shown("unix:/tmp/a@b.sock"), "unix:/tmp/a@b.sock");
        assert_eq!(shown("--SOCKET=\"/tmp/a@b\""), "--SOCKET=\"/tmp/a@b\"");
        assert_eq!(shown("127.0.0.1:1"), "127.0.0.1:1");
        // a password holding a space, `=`, a quote or a tab is hidden whole (retest15 4)
        for pw in ["Sek r1t", "Sek=r1t", "Sek\"r1t", "Sek\tr1t", "Sek://r1t"] {
            for given in [
                format!("bob:{pw}@127.0.0.1:1"),
                format!("memcache://bob:{pw}@127.0.0.1:1"),
                format!("--SERVER=bob:{pw}@127.0.0.1:1"),
                format!("--SERVER=\"bob:{pw}@127.0.0.1:1\""),
                format!(" bob:{pw}@h"),
            ] {
                let s = shown(&given);
                assert!(!s.contains("r1t") && !s.contains("Sek"), "{given}: {s}");
                assert!(s.contains("<userinfo hidden>@"), "{given}: {s}");
            }
        }
    }

    #[test]
    fn a_port_written_with_a_leading_zero_keeps_its_text() {
        let s = ServerSpec::parse("127.0.0.1:027431").unwrap();
        assert_eq!(s.addr.port(), 27431);
        assert_eq!(s.port_text.as_deref(), Some("027431"));
        assert_eq!(s.port_as_written(), "027431");
        let plain = ServerSpec::parse("127.0.0.1:27431").unwrap();
        assert_eq!(
            (plain.port_text.clone(), plain.port_as_written()),
            (None, "27431".into())
        );
        assert_eq!(s.to_string(), "127.0.0.1:027431");
        assert_eq!(
            ServerSpec::parse("[::1]:011211").unwrap().to_string(),
            "[::1]:011211"
        );
        assert_eq!(ServerSpec::parse("h").unwrap().port_as_written(), "11211");
        // a signed weight is a typo, as nutcracker reads it (retest9 8)
        let e = ServerSpec::parse_entry("127.0.0.1:11211:+2", None).unwrap_err();
        assert!(e.to_string().contains("weight +2"), "{e}");
        assert_eq!(
            ServerSpec::parse("/run/mc.sock").unwrap().port_as_written(),
            ""
        );
    }

    #[test]
    fn a_list_in_one_entry_is_refused_as_a_list() {
        for list in [
            "127.0.0.1:23450 127.0.0.1:23451",
            "127.0.0.1:23450,127.0.0.1:23451",
            "a:1, b:2, [::1]:3",
            "127.0.0.1:31811;127.0.0.1:31812",
            // a socket path beside an address (tester finding retest16 7: read as the
            // socket "/tmp/a.sock,127.0.0.1" of weight 22611)
            "/tmp/a.sock,127.0.0.1:22611",
            "127.0.0.1:22611,/tmp/a.sock",
            "unix:/tmp/a.sock, 127.0.0.1:22611",
        ] {
            let e = ServerSpec::parse_entry(list, None).unwrap_err().to_string();
            assert!(e.contains("addresses in one entry"), "{list}: {e}");
        }
        // a socket whose name has a comma, alone, is that socket
        let s = ServerSpec::parse_entry("/tmp/a,b.sock", None).unwrap();
        assert_eq!(s.addr.to_string(), "/tmp/a,b.sock");
        // nutcracker's line: its name is whatever follows the last space, as nutcracker
        // reads it (`cache@1`, `mc:1`, even an address), and a socket path may hold `@`,
        // spaces and `;` (tester finding retest18 1, 2: refused after 0602b79)
        for (entry, addr, weight, name) in [
            (
                "127.0.0.1:11211:2 cache@1",
                "127.0.0.1:11211",
                2,
                Some("cache@1"),
            ),
            ("127.0.0.1:11211:2 mc:1", "127.0.0.1:11211", 2, Some("mc:1")),
            (
                "127.0.0.1:11211:1 10.0.0.1:11211",
                "127.0.0.1:11211",
                1,
                Some("10.0.0.1:11211"),
            ),
            ("/tmp/x.sock:2 cache@1", "/tmp/x.sock", 2, Some("cache@1")),
            ("/tmp/my dir/a@b.sock", "/tmp/my dir/a@b.sock", 1, None),
            ("/tmp/a;b@c.sock", "/tmp/a;b@c.sock", 1, None),
            ("/tmp/a,b@c.sock", "/tmp/a,b@c.sock", 1, None),
            ("unix:/tmp/a b@c.sock", "/tmp/a b@c.sock", 1, None),
        ] {
            let s = ServerSpec::parse_entry(entry, None).unwrap();
            assert_eq!(
                (s.addr.to_string().as_str(), s.weight, s.name.as_deref()),
                (addr, weight, name),
                "{entry}"
            );
        }
        // a path first, then an address with a userinfo: refused, never shown (retest17 1)
        for list in [
            "/tmp/a.sock,bob:Sekr1t@127.0.0.1:22709",
            "/tmp/a.sock;bob:Sekr1t@127.0.0.1:22709",
            "/tmp/a.sock bob:Sekr1t@127.0.0.1:22709",
            "unix:/tmp/a.sock,bob:Sekr1t@127.0.0.1:22709",
            "/tmp/a.sock,bob:Sek Sekr1t@127.0.0.1:22709",
            "/tmp/a.sock bob:Sek,Sekr1t@127.0.0.1:22709",
            "127.0.0.1:1,bob:Sekr1t@127.0.0.1:22709",
        ] {
            let e = ServerSpec::parse_entry(list, None).unwrap_err().to_string();
            assert!(!e.contains("Sekr1t"), "{list}: {e}");
        }
        assert!(ServerSpec::parse_entry("/tmp/x@y.sock", None).is_ok());
        // nutcracker's `host:port:weight name` stays one server with a name
        let s = ServerSpec::parse_entry("127.0.0.1:11211:2 cache-1", None).unwrap();
        assert_eq!((s.weight, s.name.as_deref()), (2, Some("cache-1")));
    }

    #[test]
    fn entry_weights_mean_the_same_everywhere() {
        let w = |s: &str, beside: Option<u32>| ServerSpec::parse_entry(s, beside);
        let s = w("127.0.0.1:21911:3", None).unwrap();
        assert_eq!(
            (s.addr.to_string(), s.weight, s.name),
            ("127.0.0.1:21911".into(), 3, None)
        );
        assert_eq!(w("127.0.0.1:21911", None).unwrap().weight, 1);
        assert_eq!(w("127.0.0.1:21911", Some(4)).unwrap().weight, 4);
        assert_eq!(w("127.0.0.1:21911:4", Some(4)).unwrap().weight, 4);
        assert!(w("127.0.0.1:21911:3", Some(2)).is_err());
        assert!(w("127.0.0.1:21911:3", Some(1)).is_err());
        assert!(w("127.0.0.1:21911:0", None).is_err());
        assert!(w("127.0.0.1:21911", Some(0)).is_err());
        assert!(w("127.0.0.1:21911:4294967296", None).is_err());
        let s = w("[::1]:11213:7", None).unwrap();
        assert_eq!((s.addr.to_string(), s.weight), ("[::1]:11213".into(), 7));
        let s = w("h:11211:alpha", None).unwrap();
        assert_eq!((s.weight, s.name.as_deref()), (1, Some("alpha")));
        assert_eq!(w("h:11211", None).unwrap().addr.port(), 11211);
        assert_eq!(w("[::1]:11211", None).unwrap().addr.port(), 11211);
        // nutcracker's socket line without a name: `/path:weight` (tester finding
        // placement 1: the weight was read as part of the path, so the server could not be
        // reached and its ring points were not nutcracker's).
        let s = w("/tmp/mc:3", None).unwrap();
        assert_eq!((s.addr.to_string(), s.weight), ("/tmp/mc".into(), 3));
        let s = w("/tmp/mc:2 sock", None).unwrap();
        assert_eq!(
            (s.addr.to_string(), s.weight, s.name.as_deref()),
            ("/tmp/mc".into(), 2, Some("sock"))
        );
        // Written `unix:`, a path ending in `:digits` is taken whole.
        let s = w("unix:/tmp/mc:3", None).unwrap();
        assert_eq!((s.addr.to_string(), s.weight), ("/tmp/mc:3".into(), 1));
        assert!(w("/tmp/mc:0", None).is_err());
        assert!(w("/tmp/mc:3", Some(2)).is_err());
        let s = w("/tmp/a:b", None).unwrap();
        assert_eq!((s.addr.to_string(), s.weight), ("/tmp/a:b".into(), 1));
        // A weight argument of 1 is the usual value: the address's weight applies.
        assert_eq!(ServerSpec::parse_with_weight("h:1:3", 1).unwrap().weight, 3);
        assert_eq!(ServerSpec::parse_with_weight("h:1:3", 3).unwrap().weight, 3);
        assert!(ServerSpec::parse_with_weight("h:1:3", 2).is_err());
        assert!(ServerSpec::parse_with_weight("h:1", 0).is_err());
        // A fourth field is refused, never the last read as the weight and the third as a
        // name (`h:1:2:3` was weight 3, name "2").
        for four in [
            "h:1:2:3",
            "h:1:alpha:3",
            "h:1:alpha:beta",
            "[::1]:1:2:3",
            "[::1]:1:alpha:3",
            "h:1:2:",
        ] {
            match w(four, None) {
                Err(Error::Config(m)) => assert!(m.contains("beyond host:port:name"), "{m}"),
                other => panic!("{four:?}: {other:?}"),
            }
            assert!(w(four, Some(3)).is_err(), "{four:?} with a weight beside");
        }
        let list: Vec<&str> = ServerSpec::split_list(" a:1 ,, b:2:3 ,").unwrap();
        assert_eq!(list, ["a:1", "b:2:3"]);
        assert_eq!(ServerSpec::split_list(",").unwrap().len(), 0);
    }

    /// retest18 3: a password holding the list's separator split the list before the entry
    /// was read, and the first piece's refusal showed the user name and half the password.
    #[test]
    fn a_password_holding_a_separator_is_never_shown() {
        let read = |list: &str, seps: &[char]| -> Result<Vec<ServerSpec>> {
            ServerSpec::split_list_on(list, seps)?
                .into_iter()
                .map(|e| ServerSpec::parse_entry(e, None))
                .collect()
        };
        for list in [
            "bob:Se,cret@127.0.0.1:11211",
            "bob:Se,cret@h",
            "a:1,bob:Se,cr,et@h:1,b:2",
            "bob:Se;cret@h:1;b:2",
            "/tmp/a.sock,bob:Se,cret@h:1",
            "bob:Se, cret@h:1",
            // retest19 1: a socket path first, an address without a port: read whole it was
            // one socket path holding the password
            "/tmp/a.sock,bob:Secret@127.0.0.1",
            "unix:/tmp/a.sock;bob:Secret@localhost",
            // retest19 3: the piece after the separator reads as a socket path
            "bob:Se,/cret@127.0.0.1:11211",
            "bob:Se;/cret@127.0.0.1:11211",
            "bob:Se,unix:/cret@127.0.0.1:11211",
            // retest19 4: the password reads as nutcracker's `:weight name`
            "bob:Se:12 cret@127.0.0.1:1",
            "a:1,bob:Se:12 cret@127.0.0.1:1",
            // a password holding a separator and a socket path, no port
            "/tmp/a.sock;bob:Se;unix:/cret@127.0.0.1",
            "/tmp/a.sock,bob:Se,/cret@127.0.0.1",
        ] {
            match read(list, &[',', ';']) {
                Err(Error::Config(m)) => {
                    assert!(m.contains(NO_USERINFO), "{list:?}: {m}");
                    for secret in ["bob", "Se", "cret", "cr,et", "Secret"] {
                        assert!(!m.contains(secret), "{list:?} shows {secret:?}: {m}");
                    }
                }
                other => panic!("{list:?}: {other:?}"),
            }
        }
        // lists that hold an `@` where no password is are read as before
        for (list, n) in [
            ("/tmp/a@b.sock,h:1", 2),
            ("h:1:1 cache@1,h:2:1 mc:1", 2),
            ("unix:/tmp/x@y,h:2", 2),
            ("h:1,h:2", 2),
            ("/tmp/my dir/a@b.sock,h:1", 2),
        ] {
            let got = read(list, &[',']).unwrap_or_else(|e| panic!("{list:?}: {e}"));
            assert_eq!(got.len(), n, "{list:?}");
        }
        // retest19 2: a socket path holding `,` and `@` in a list is refused, never one
        // socket swallowing the servers after it (`...,127.0.0.1:21932` its weight)
        let swallow = "/tmp/mc,1@x.sock,127.0.0.1:21931,127.0.0.1:21932";
        assert!(matches!(read(swallow, &[',']), Err(Error::Config(_))));
        assert_eq!(
            ServerSpec::split_list_on(" , ; ", &[',', ';'])
                .unwrap()
                .len(),
            0
        );
        // one entry (not split): the same refusals
        for entry in [
            "/tmp/a.sock,bob:Secret@127.0.0.1",
            "bob:Se:12 cret@127.0.0.1:1",
            "/tmp/a.sock bob:Se cret@127.0.0.1",
            "/tmp/a.sock,bob:Se,cret@127.0.0.1",
        ] {
            match ServerSpec::parse_entry(entry, None) {
                Err(Error::Config(m)) => assert!(!m.contains("Se"), "{entry:?}: {m}"),
                other => panic!("{entry:?}: {other:?}"),
            }
        }
        // a socket path with a space and `@` in one entry stays a path
        assert!(ServerSpec::parse_entry("/tmp/a b@c.sock", None).is_ok());
        // retest20 4, 5: socket paths and nutcracker names holding an `@` (a `:weight` or a
        // `host:port` after it) are read as before, alone and in lists
        for (list, n) in [
            ("/run/mc@main.sock:2", 1),
            ("/tmp/x@y:3", 1),
            ("unix:/tmp/a@b:3", 1),
            ("/tmp/a.sock:2,/tmp/b@c.sock:3", 2),
            (
                "127.0.0.1:1:1 cache@10.0.0.1:11211,127.0.0.1:2:1 cache@10.0.0.2:11211",
                2,
            ),
            ("h:1:1 mc@shard:1,h:2:1 b", 2),
            ("/tmp/a.sock:1 node@h:1,h:2:1 b", 2),
            ("/tmp/my dir/a.sock:1 cache@1", 1),
            ("/tmp/my dir/x:1@y.sock", 1),
            ("/tmp/a.sock:1 a:b@c", 1),
        ] {
            let got = read(list, &[',']).unwrap_or_else(|e| panic!("{list:?}: {e}"));
            assert_eq!(got.len(), n, "{list:?}");
        }
        assert_eq!(
            read("/run/mc@main.sock:2", &[','])
                .unwrap()
                .remove(0)
                .weight,
            2
        );
        // retest21 3, 4: `unix:` names any socket; a nutcracker line whose path has a space
        for entry in [
            "unix:/tmp/a;b:x@c.sock",
            "unix:/tmp/a,b:x@c.sock",
            "unix:/tmp/a b:1 n@c",
            "/tmp/a b:1 cache@1",
        ] {
            assert!(ServerSpec::parse_entry(entry, None).is_ok(), "{entry}");
        }
        // retest20 6: a refused entry after the `@` is refused as itself, named
        match read("/tmp/mc@main.sock,127.0.0.1:0", &[',']) {
            Err(Error::Config(m)) => assert!(m.contains("127.0.0.1:0"), "{m}"),
            other => panic!("{other:?}"),
        }
    }

    /// Fleet F1: `::1` was refused as `bad server address ":": empty host`, and
    /// `2001:db8::1:11211` as "port is not a number".
    #[test]
    fn an_unbracketed_ipv6_address_is_named_and_the_brackets_asked_for() {
        for v6 in [
            "::1",
            "fe80::1",
            "::1:22100",
            "2001:db8::1:11211",
            "2001:db8::1:11211:3",
            "1:2:3:4:5:6:7:8",
            "1:2:3:4:5:6:7:8:11211",
            "fe80::1%eth0",
            "::ffff:127.0.0.1",
            "::1:11211:1 node",
        ] {
            for r in [ServerSpec::parse(v6), ServerSpec::parse_entry(v6, None)] {
                match r {
                    Err(Error::Config(m)) => {
                        assert!(m.contains(&format!("{v6:?}")), "{v6}: {m}");
                        assert!(m.contains("[address]:port"), "{v6}: {m}");
                    }
                    other => panic!("{v6:?}: {other:?}"),
                }
            }
        }
        // Not IPv6: the usual errors and forms.
        for (t, why) in [
            ("localhost::11211", "port is not a number"),
            ("h:1:a:b", "beyond host:port:name"),
            ("h:1:2:3", "beyond host:port:name"),
        ] {
            match ServerSpec::parse_entry(t, None) {
                Err(Error::Config(m)) => assert!(m.contains(why), "{t}: {m}"),
                other => panic!("{t:?}: {other:?}"),
            }
        }
        assert_eq!(
            ServerSpec::parse_entry("[2001:db8::1]:11211:3", None)
                .unwrap()
                .weight,
            3
        );
        assert_eq!(
            ServerSpec::parse_entry("beef:11211:3", None)
                .unwrap()
                .weight,
            3
        );
    }

    /// Fleet F3: nutcracker's `host:port:weight name`, the only spelling of a name that is
    /// all digits (`host:port:10` is weight 10).
    #[test]
    fn nutcracker_server_lines_carry_a_weight_and_a_name() {
        let e = |t: &str| ServerSpec::parse_entry(t, None).unwrap();
        let s = e("127.0.0.1:22001:1 10");
        assert_eq!(
            (s.addr.to_string(), s.weight, s.name.as_deref()),
            ("127.0.0.1:22001".into(), 1, Some("10"))
        );
        let s = e("  h:11211:3   node-a ");
        assert_eq!((s.weight, s.name.as_deref()), (3, Some("node-a")));
        let s = e("[::1]:11211:2 20");
        assert_eq!(
            (s.addr.to_string(), s.weight, s.name.as_deref()),
            ("[::1]:11211".into(), 2, Some("20"))
        );
        let s = e("/tmp/mc.sock:2 30");
        assert_eq!(
            (s.addr, s.weight, s.name.as_deref()),
            (ServerAddr::Unix("/tmp/mc.sock".into()), 2, Some("30"))
        );
        // A socket path with a space and no weight before it stays a path.
        let s = e("/tmp/my mc.sock");
        assert_eq!(
            (s.addr, s.name),
            (ServerAddr::Unix("/tmp/my mc.sock".into()), None)
        );
        assert_eq!(
            ServerSpec::parse_entry("h:11211:2 x", Some(2))
                .unwrap()
                .weight,
            2
        );
        assert!(ServerSpec::parse_entry("h:11211:2 x", Some(3)).is_err());
        assert!(ServerSpec::parse_entry("h:11211:0 x", None).is_err());
        // Without the weight it is not nutcracker's line: a space in a host.
        for bad in ["h:11211 x", "h:11211:alpha x", "h x"] {
            match ServerSpec::parse_entry(bad, None) {
                Err(Error::Config(m)) => assert!(m.contains("space"), "{bad}: {m}"),
                other => panic!("{bad:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn a_host_name_longer_than_dns_allows_is_refused() {
        let long = format!("{}:11211", "a".repeat(254));
        let e = ServerSpec::parse_entry(&long, None).unwrap_err();
        assert!(e.to_string().contains("longer than 253 bytes"), "{e}");
        assert!(ServerSpec::parse_entry(&format!("{}:11211", "a".repeat(253)), None).is_ok());
    }

    /// Tester finding topology 2: `,` and `a,b:11211` were taken as hosts.
    #[test]
    fn a_host_with_a_list_separator_is_refused() {
        for entry in [",", "a,b:11211", ",:11211", "a;b", "a,", "[a,b]:11211"] {
            let e = ServerSpec::parse(entry).unwrap_err().to_string();
            assert!(
                e.contains("no host name holds ',' or ';'") || e.contains("empty"),
                "{entry}: {e}"
            );
            assert!(ServerSpec::parse_entry(entry, None).is_err(), "{entry}");
        }
        // a name may hold what a host may not (host:port:name)
        assert!(ServerSpec::parse("a:11211:x,y").is_ok());
    }

    #[test]
    fn a_signed_or_fractional_third_field_is_a_mistyped_weight_not_a_name() {
        for w in ["-1", "1.5", "-0.5"] {
            let e = ServerSpec::parse_entry(&format!("127.0.0.1:11211:{w}"), None).unwrap_err();
            assert!(
                e.to_string()
                    .contains(&format!("weight {w} is not a whole number")),
                "{e}"
            );
        }
        let named = ServerSpec::parse_entry("127.0.0.1:11211:alpha-1", None).unwrap();
        assert_eq!(named.name.as_deref(), Some("alpha-1"));
    }

    #[test]
    fn parses_forms() {
        let s = ServerSpec::parse("127.0.0.1:11212").unwrap();
        assert_eq!(s.addr.host(), "127.0.0.1");
        assert_eq!(s.addr.port(), 11212);
        let s = ServerSpec::parse("[::1]:11213:alpha").unwrap();
        assert_eq!(s.addr.host(), "::1");
        assert_eq!(s.addr.to_string(), "[::1]:11213");
        assert_eq!(s.name.as_deref(), Some("alpha"));
        assert_eq!(ServerSpec::parse("localhost").unwrap().addr.port(), 11211);
        assert!(matches!(
            ServerSpec::parse("/tmp/mc.sock").unwrap().addr,
            ServerAddr::Unix(_)
        ));
        assert!(ServerSpec::parse("h:notaport").is_err());
        assert!(ServerSpec::parse("[::1").is_err());
        assert!(ServerSpec::parse("").is_err());
        assert_eq!(
            ServerSpec::parse(" h:1\n").unwrap().addr.port(),
            1,
            "trimmed"
        );
        assert_eq!(
            ServerSpec::parse("/tmp/my mc.sock").unwrap().addr.host(),
            "/tmp/my mc.sock",
            "a space is allowed in a socket path"
        );
    }

    #[test]
    fn refuses_what_cannot_be_a_server() {
        let long_path = format!("/{}", "p".repeat(107));
        for bad in [
            "127.0.0.1\0:11211",
            "127.0.0.1:11211\0",
            "/tmp/mc\0.sock",
            "127.0.0.1 :11211",
            "my host:11211",
            "127.0.0.1:0",
            "[::1]:0",
            "h:+1",
            "h:65536",
            "h:1:a:b",
            "[::1]:1:a:b",
            "h:1:",
            "mc.sock/x",
            "./mc.sock",
            "run/mc.sock",
            long_path.as_str(),
            "h]:1",
        ] {
            match ServerSpec::parse(bad) {
                Err(Error::Config(m)) => assert!(m.contains("bad server address"), "{m}"),
                other => panic!("{bad:?}: {other:?}"),
            }
        }
        assert!(
            ServerSpec::parse(&long_path[..107]).is_ok(),
            "107 bytes fit"
        );
    }

    /// compat F13: Django's `LOCATION "unix:/path"` (also python-memcached's and pymemcache's
    /// form) was refused as "a unix socket path must be absolute".
    #[test]
    fn unix_prefix_names_a_socket_path() {
        for entry in ["unix:/tmp/mc.sock", " unix:/tmp/mc.sock "] {
            let s = ServerSpec::parse_entry(entry, None).unwrap();
            assert_eq!(s.addr, ServerAddr::Unix(PathBuf::from("/tmp/mc.sock")));
            assert_eq!(s.weight, 1);
        }
        // As a bare path: a ":3" is part of the path, never a weight.
        let s = ServerSpec::parse_entry("unix:/tmp/mc:3", None).unwrap();
        assert_eq!(s.addr, ServerAddr::Unix(PathBuf::from("/tmp/mc:3")));
        assert_eq!(s.weight, 1);
        // `unix` is still a host name.
        let s = ServerSpec::parse("unix:11211").unwrap();
        assert_eq!(s.addr.to_string(), "unix:11211");
        // A relative path is refused as one.
        match ServerSpec::parse("unix:run/mc.sock") {
            Err(Error::Config(m)) => assert!(m.contains("must be absolute"), "{m}"),
            other => panic!("{other:?}"),
        }
    }
}
