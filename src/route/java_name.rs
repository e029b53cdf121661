//! The name spymemcached gives a server on its continuum: Java's
//! `String.valueOf(InetSocketAddress)` without its leading `/`
//! (`DefaultKetamaNodeLocatorConfiguration.getSocketAddressForNode`). spymemcached resolves
//! a host name when it reads its server list (`AddrUtil.getAddresses`), so the name carries
//! both: `localhost/127.0.0.1:11211`; an IP literal has no host name: `127.0.0.1:11211`; an
//! IPv6 address is written in full, bracketed as Java 14 and later print it:
//! `[0:0:0:0:0:0:0:1]:11211`; a name that does not resolve: `host/<unresolved>:11211`.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, ToSocketAddrs};

/// The spymemcached continuum name of `host:port` (`host` without brackets).
pub(super) fn java_socket_address(host: &str, port: u16) -> String {
    let (name, ip) = match java_literal(host) {
        Some(ip) => ("", Some(ip)),
        // A BSD form Java does not read as a literal (`0x7f000001`, which the C resolver
        // reads as 127.0.0.1): Java refuses to look it up, so it stays unresolved.
        None if bsd_v4_form(host) => (host, None),
        None => (host, first_address(host, port)),
    };
    match ip {
        None => format!("{host}/<unresolved>:{port}"),
        Some(IpAddr::V4(v4)) => format!("{name}/{v4}:{port}"),
        Some(IpAddr::V6(v6)) => format!("{name}/[{}]:{port}", java_v6(&v6)),
    }
    .trim_start_matches('/')
    .to_string()
}

/// The address `host` is when Java's `InetAddress.getByName` reads it as an IP literal
/// (`IPAddressUtil.textToNumericFormatV4`/`V6`): IPv4 in Java's decimal forms (`a.b.c.d`,
/// `a.b.c` with a 16-bit last part, `a.b` with a 24-bit one, `a` 32 bits; leading zeros
/// are decimal: `127.1`, `2130706433`, `127.0.0.01` are 127.0.0.1), or IPv6, an
/// IPv4-mapped one (`::ffff:127.0.0.1`) read as its IPv4 address, as Java converts it
/// (tester finding addresses 1: these were hashed as host names, elsewhere than
/// spymemcached placed them).
fn java_literal(host: &str) -> Option<IpAddr> {
    if let Some(v4) = java_v4(host) {
        return Some(IpAddr::V4(v4));
    }
    let v6 = host.parse::<Ipv6Addr>().ok()?;
    Some(match v6.to_ipv4_mapped() {
        Some(v4) => IpAddr::V4(v4),
        None => IpAddr::V6(v6),
    })
}

/// Java's decimal IPv4 literal: one to four parts of decimal digits, every part but the
/// last at most 255, the last filling the bits left.
fn java_v4(s: &str) -> Option<Ipv4Addr> {
    let parts: Vec<&str> = s.split('.').collect();
    if parts.len() > 4 {
        return None;
    }
    let mut numbers = Vec::with_capacity(parts.len());
    for p in &parts {
        // (at most 10 significant digits fit the largest part, 32 bits)
        let digits = p.trim_start_matches('0');
        if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) || digits.len() > 10 {
            return None;
        }
        numbers.push(digits.parse::<u64>().unwrap_or(0));
    }
    let (last, head) = numbers.split_last()?;
    let last_bits = 32 - 8 * head.len();
    if head.iter().any(|&n| n > 0xff) || *last >= 1u64 << last_bits {
        return None;
    }
    let v = head
        .iter()
        .enumerate()
        .fold(*last, |v, (i, &n)| v | n << (24 - 8 * i));
    Some(Ipv4Addr::from(u32::try_from(v).ok()?))
}

/// Whether `s` is an IPv4 address in a form only the C resolver's `inet_aton` reads (a
/// hexadecimal part, `0x7f.1`): one to four dot-separated parts, each decimal digits or
/// `0x` and hexadecimal digits, one of them hexadecimal.
fn bsd_v4_form(s: &str) -> bool {
    let parts: Vec<&str> = s.split('.').collect();
    let hex = |p: &str| {
        p.strip_prefix("0x")
            .or_else(|| p.strip_prefix("0X"))
            .is_some_and(|h| h.bytes().all(|b| b.is_ascii_hexdigit()))
    };
    let decimal = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    parts.len() <= 4 && parts.iter().all(|p| hex(p) || decimal(p)) && parts.iter().any(|p| hex(p))
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
        // Java's own literal forms, as `InetSocketAddress` prints them (spymemcached's
        // `AddrUtil` on OpenJDK 17: tester finding addresses 1)
        for literal in [
            "127.1",
            "127.0.1",
            "127.0.0.01",
            "2130706433",
            "::ffff:127.0.0.1",
        ] {
            assert_eq!(java_socket_address(literal, 7), "127.0.0.1:7", "{literal}");
        }
        assert_eq!(java_socket_address("10.65536", 7), "10.1.0.0:7");
        assert_eq!(java_socket_address("0", 7), "0.0.0.0:7");
        assert_eq!(
            java_socket_address("0x7f000001", 7),
            "0x7f000001/<unresolved>:7"
        );
        assert_eq!(
            java_socket_address("127.0.0.0x1", 7),
            "127.0.0.0x1/<unresolved>:7"
        );
        // not literals: a part too large, five parts, an empty part, a sign
        for name in [
            "127.0.0.256",
            "256.1",
            "4294967296",
            "1.2.3.4.5",
            "127..1",
            "+127.1",
        ] {
            assert!(java_v4(name).is_none(), "{name}");
        }
        assert_eq!(java_v4("4294967295"), Some(Ipv4Addr::BROADCAST));
        assert_eq!(
            java_v4("00000000000000000127.1"),
            Some(Ipv4Addr::new(127, 0, 0, 1))
        );
        assert_eq!(java_socket_address("::7f00:1", 7), "[0:0:0:0:0:0:7f00:1]:7");
    }
}
