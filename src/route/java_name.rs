//! The name spymemcached gives a server on its continuum: Java's
//! `String.valueOf(InetSocketAddress)` without its leading `/`
//! (`DefaultKetamaNodeLocatorConfiguration.getSocketAddressForNode`). spymemcached resolves
//! a host name when it reads its server list (`AddrUtil.getAddresses`), so the name carries
//! both: `localhost/127.0.0.1:11211`; an IP literal has no host name: `127.0.0.1:11211`; an
//! IPv6 address is written in full, bracketed as Java 14 and later print it:
//! `[0:0:0:0:0:0:0:1]:11211`; a name that does not resolve: `host/<unresolved>:11211`.

use std::net::{IpAddr, Ipv6Addr, ToSocketAddrs};

/// The spymemcached continuum name of `host:port` (`host` without brackets).
pub(super) fn java_socket_address(host: &str, port: u16) -> String {
    let (name, ip) = match host.parse::<IpAddr>() {
        Ok(ip) => ("", Some(ip)),
        Err(_) => (host, first_address(host, port)),
    };
    match ip {
        None => format!("{host}/<unresolved>:{port}"),
        Some(IpAddr::V4(v4)) => format!("{name}/{v4}:{port}"),
        Some(IpAddr::V6(v6)) => format!("{name}/[{}]:{port}", java_v6(&v6)),
    }
    .trim_start_matches('/')
    .to_string()
}

/// The address Java's `InetAddress.getByName` picks: the first IPv4 one of the resolver's
/// answer (Java prefers IPv4 unless told otherwise), else the first.
fn first_address(host: &str, port: u16) -> Option<IpAddr> {
    let all: Vec<IpAddr> = (host, port)
        .to_socket_addrs()
        .ok()?
        .map(|a| a.ip())
        .collect();
    all.iter().find(|a| a.is_ipv4()).or(all.first()).copied()
}

/// Java's `Inet6Address.getHostAddress`: eight groups in lowercase hex, no `::` shortening.
fn java_v6(a: &Ipv6Addr) -> String {
    let groups: Vec<String> = a.segments().iter().map(|g| format!("{g:x}")).collect();
    groups.join(":")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_as_java_prints_them() {
        assert_eq!(java_socket_address("127.0.0.1", 11211), "127.0.0.1:11211");
        assert_eq!(java_socket_address("::1", 27411), "[0:0:0:0:0:0:0:1]:27411");
        assert_eq!(
            java_socket_address("fe80::a:0:1", 1),
            "[fe80:0:0:0:0:a:0:1]:1"
        );
        assert_eq!(
            java_socket_address("localhost", 27411),
            "localhost/127.0.0.1:27411"
        );
        assert_eq!(
            java_socket_address("no-such-host.invalid", 11211),
            "no-such-host.invalid/<unresolved>:11211"
        );
    }
}
