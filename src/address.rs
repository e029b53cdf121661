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

impl ServerSpec {
    /// A server of weight 1 and no name.
    pub fn new(addr: ServerAddr) -> ServerSpec {
        ServerSpec {
            addr,
            weight: 1,
            name: None,
        }
    }

    /// Parses `host:port`, `[v6]:port`, `host:port:name`, `[v6]:port:name`, a bare host
    /// (port 11211) or a unix socket path (starts with `/`). Leading and trailing whitespace
    /// is ignored; anything else that cannot be a server is a configuration error here, not
    /// a failure at the first call: a NUL, control byte or space inside the address, port 0
    /// or a port that is not a number, a `:` field beyond `host:port:name`, a relative socket
    /// path (one with `/` that does not start with it), or a socket path too long for the
    /// system (over 107 bytes).
    pub fn parse(s: &str) -> Result<ServerSpec> {
        let bad = |why: &str| Error::Config(format!("bad server address {s:?}: {why}"));
        let t = s.trim();
        if t.is_empty() {
            return Err(bad("empty"));
        }
        if t.bytes().any(|b| b < b' ' || b == 0x7f) {
            return Err(bad("contains a NUL or control byte"));
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
        if t.bytes().any(|b| b == b' ') {
            return Err(bad("contains a space"));
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
        let (port, name) = match rest {
            None => (11211, None),
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
                            "a ':' field beyond host:port:name (weights are given separately)",
                        ));
                    }
                }
                (port, n.map(str::to_owned))
            }
        };
        Ok(ServerSpec {
            addr: ServerAddr::Tcp {
                host: host.to_owned(),
                port,
            },
            weight: 1,
            name,
        })
    }
}

impl fmt::Display for ServerSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.addr)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
