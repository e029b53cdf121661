//! libmemcached's configuration strings, as a C program gives them to `memcached()`
//! (`--SERVER=10.0.0.1:11211/?2 --DISTRIBUTION=consistent --HASH=MD5 ...`,
//! libmemcached_configuration(3)), read into the core's options: option
//! `libmemcached_config`. The libmemcached preset first, then each word in order: servers,
//! placement (a `libmemcached:BEFORE;AFTER` setting: the behaviors set before the last
//! server was added, then those after, as libmemcached 1.1.4 applies them, checked key for
//! key against it in `tools/placement`), timeouts, failover, namespace, protocol. A word
//! that would change what a call means (UDP, NOREPLY, replicas, buffered requests, random
//! distribution) is refused, naming it; socket tuning that changes no result is accepted
//! and has no effect. docs/options.md lists every word.

use crate::address::ServerSpec;
use crate::config::ClientBuilder;
use crate::error::{Error, Result};

/// The words (libmemcached 1.1.4's parser.yy) that change nothing here: socket buffer and
/// watermark tuning, keepalive, SO_RCVTIMEO/SO_SNDTIMEO (which shorten no wait of
/// libmemcached's, whose waits are its poll timeout), key checks (always done), CAS (always
/// supported), fetching versions, user data.
const NO_EFFECT: &[&str] = &[
    "RCV-TIMEOUT",
    "SND-TIMEOUT",
    "SOCKET-RECV-SIZE",
    "SOCKET-SEND-SIZE",
    "IO-MSG-WATERMARK",
    "IO-BYTES-WATERMARK",
    "IO-KEY-PREFETCH",
    "TCP-KEEPALIVE",
    "TCP-KEEPIDLE",
    "VERIFY-KEY",
    "SUPPORT-CAS",
    "FETCH-VERSION",
    "USER-DATA",
];

/// Words refused: each changes what a call means or reads another file.
const REFUSED: &[(&str, &str)] = &[
    ("USE-UDP", "mcpool speaks TCP and unix sockets only"),
    ("NOREPLY", "every call here waits for its reply"),
    ("BUFFER-REQUESTS", "every call here is sent when made"),
    ("RANDOMIZE-REPLICA-READ", "mcpool does not replicate writes"),
    ("CONFIGURE-FILE", "give the file's contents"),
    ("INCLUDE", "give the file's contents"),
    ("RESET", "give the words in force"),
    ("ERROR", "it fails libmemcached's parse too"),
    ("END", "give the words in force"),
    ("PARSER-DEBUG", "not a setting"),
];

/// One word of the string: `--NAME` or `--NAME=VALUE` (quotes around the value removed).
struct Word {
    name: String,
    value: Option<String>,
    given: String,
}

/// Splits the string into words: separated by white space, a double-quoted value may hold
/// spaces (`--NAMESPACE="a b"`), `#` starts a comment to the end of the line.
fn words(text: &str) -> Result<Vec<Word>> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let Some(&c) = chars.peek() else { break };
        if c == '#' {
            while chars.next().is_some_and(|c| c != '\n') {}
            continue;
        }
        let mut given = String::new();
        let mut quoted = false;
        while let Some(&c) = chars.peek() {
            if c.is_whitespace() && !quoted {
                break;
            }
            if c == '"' {
                quoted = !quoted;
            }
            given.push(c);
            chars.next();
        }
        if quoted {
            return Err(bad(&given, "a quote is not closed"));
        }
        let Some(body) = given.strip_prefix("--") else {
            return Err(bad(&given, "each word starts with -- (--SERVER=host:port)"));
        };
        let (name, value) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v.trim_matches('"').to_owned())),
            None => (body, None),
        };
        out.push(Word {
            name: name.to_ascii_uppercase().replace('_', "-"),
            value,
            given: given.clone(),
        });
    }
    Ok(out)
}

fn bad(given: &str, why: &str) -> Error {
    Error::Config(format!("libmemcached_config: {given}: {why}"))
}

/// What the string amounts to, before it is applied.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Translated {
    /// The servers, in order, with their weights.
    pub servers: Vec<ServerSpec>,
    /// The placement setting (`libmemcached:BEFORE;AFTER`).
    pub distribution: String,
    /// Core options by name, in order.
    pub options: Vec<(&'static str, String)>,
}

/// Reads `text` (see the module's documentation).
pub(crate) fn translate(text: &str) -> Result<Translated> {
    let words = words(text)?;
    let last_server = words
        .iter()
        .rposition(|w| w.name == "SERVER" || w.name == "SOCKET");
    let mut t = Translated::default();
    let (mut before, mut after) = (Vec::new(), Vec::new());
    let (mut eject, mut failure_limit) = (false, None);
    for (i, w) in words.iter().enumerate() {
        let number = || -> Result<u64> {
            let v = w.value.as_deref().unwrap_or("");
            v.parse()
                .map_err(|_| bad(&w.given, "needs a whole number (--NAME=N)"))
        };
        let text_value = || -> Result<&str> {
            w.value
                .as_deref()
                .filter(|v| !v.is_empty())
                .ok_or_else(|| bad(&w.given, "needs a value (--NAME=VALUE)"))
        };
        let placement = if last_server.is_some_and(|l| i < l) {
            &mut before
        } else {
            &mut after
        };
        match w.name.as_str() {
            "SERVER" | "SOCKET" => t.servers.push(server(w, text_value()?)?),
            "DISTRIBUTION" => {
                let v = text_value()?.to_ascii_lowercase();
                if v.contains(',') {
                    return Err(bad(
                        &w.given,
                        "a hash for the distribution's points is not reproduced (give \
                         --DISTRIBUTION=consistent and --HASH=... for the keys)",
                    ));
                }
                if v == "random" {
                    return Err(bad(
                        &w.given,
                        "a random distribution places no key twice alike",
                    ));
                }
                placement.push(format!("distribution={v}"));
            }
            "HASH" => placement.push(format!("hash={}", text_value()?.to_ascii_lowercase())),
            "SORT-HOSTS" => placement.push("sort_hosts=1".into()),
            "BINARY-PROTOCOL" => t.options.push(("protocol", "binary".into())),
            "TCP-NODELAY" => t.options.push(("nodelay", "true".into())),
            "HASH-WITH-NAMESPACE" => t.options.push(("hash_key_prefix", "true".into())),
            "NAMESPACE" => t.options.push(("key_prefix", text_value()?.into())),
            "CONNECT-TIMEOUT" => t.options.push(("connect_timeout", ms(w, number()?)?)),
            // libmemcached waits for each reply with poll() for this long
            "POLL-TIMEOUT" => t.options.push(("io_timeout", ms(w, number()?)?)),
            "RETRY-TIMEOUT" => {
                // each wait the same (no doubling)
                let s = format!("{}s", number()?);
                t.options.push(("retry_timeout_max", s.clone()));
                t.options.push(("retry_timeout", s));
            }
            // failures counted toward ejection, one per retry_timeout (docs/failover.md)
            "SERVER-FAILURE-LIMIT" => failure_limit = Some(number()?.max(1)),
            "REMOVE-FAILED-SERVERS" | "AUTO-EJECT-HOSTS" => {
                eject = w.value.is_none() || number()? > 0;
            }
            "POOL-MAX" => t.options.push(("max_size", number()?.to_string())),
            "POOL-MIN" => t.options.push(("min_idle", number()?.to_string())),
            "NUMBER-OF-REPLICAS" => {
                if number()? > 0 {
                    return Err(bad(&w.given, "mcpool does not replicate writes"));
                }
            }
            name if NO_EFFECT.contains(&name) => {}
            name => {
                let why = REFUSED
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, why)| format!("not supported: {why}"))
                    .unwrap_or_else(|| {
                        "not a word of libmemcached's configuration strings".to_owned()
                    });
                return Err(bad(&w.given, &why));
            }
        }
    }
    if eject {
        t.options.push(("failover", "eject".into()));
    }
    if let Some(n) = failure_limit {
        t.options.push(("eject_after", n.to_string()));
    }
    t.distribution = format!("libmemcached:{};{}", before.join(","), after.join(","));
    Ok(t)
}

/// A `--SERVER=host[:port][/?weight]` or `--SOCKET="path[/?weight]"` word.
fn server(w: &Word, value: &str) -> Result<ServerSpec> {
    let (addr, weight) = match value.split_once("/?") {
        Some((a, wt)) => (
            a,
            wt.parse::<u32>()
                .ok()
                .filter(|&n| n > 0)
                .ok_or_else(|| bad(&w.given, "a weight is a whole number above 0 (/?2)"))?,
        ),
        None => (value, 1),
    };
    let mut spec = ServerSpec::parse(addr).map_err(|e| bad(&w.given, &e.to_string()))?;
    spec.weight = weight;
    Ok(spec)
}

/// Milliseconds as the core's duration text; 0 is refused (libmemcached times every call
/// out at once).
fn ms(w: &Word, n: u64) -> Result<String> {
    if n == 0 {
        return Err(bad(
            &w.given,
            "0: libmemcached times every call out at once; give milliseconds above 0",
        ));
    }
    Ok(format!("{n}ms"))
}

/// Applies `text` to `b`: the libmemcached preset, then the string's servers (when it
/// names any), placement and options. An empty string changes nothing.
pub(crate) fn apply(b: ClientBuilder, text: &str) -> Result<ClientBuilder> {
    if text.trim().is_empty() {
        return Ok(b); // the default: none (as `preset` ""), nothing changes
    }
    let t = translate(text)?;
    let mut b = b.set("preset", "libmemcached")?;
    if !t.servers.is_empty() {
        b = t
            .servers
            .into_iter()
            .fold(b.clear_servers(), ClientBuilder::server_spec);
    }
    b = b.set("distribution", &t.distribution)?;
    for (name, value) in &t.options {
        b = b.set(name, value).map_err(|e| match e {
            Error::Config(m) => Error::Config(format!("libmemcached_config: {m}")),
            e => e,
        })?;
    }
    Ok(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_before_the_last_server_are_the_before_group() {
        let t = translate(
            "--DISTRIBUTION=consistent --SERVER=127.0.0.1:11211/?2 --SERVER=127.0.0.2 \
             --HASH=MD5 --BINARY-PROTOCOL --NAMESPACE=\"app:\" --POLL-TIMEOUT=250",
        )
        .unwrap();
        assert_eq!(
            t.distribution,
            "libmemcached:distribution=consistent;hash=md5"
        );
        assert_eq!(t.servers.len(), 2);
        assert_eq!((t.servers[0].weight, t.servers[1].weight), (2, 1));
        assert_eq!(t.servers[1].addr.to_string(), "127.0.0.2:11211");
        assert_eq!(
            t.options,
            vec![
                ("protocol", "binary".to_owned()),
                ("key_prefix", "app:".to_owned()),
                ("io_timeout", "250ms".to_owned()),
            ]
        );
    }

    #[test]
    fn refused_words_name_themselves() {
        for (s, part) in [
            ("--USE-UDP", "USE-UDP"),
            ("--DISTRIBUTION=random", "random"),
            ("--DISTRIBUTION=consistent,MD5", "points"),
            ("--NUMBER-OF-REPLICAS=2", "replicate"),
            ("--FOO=1", "not a word"),
            ("SERVER=a", "starts with --"),
            ("--SERVER=a:1/?0", "weight"),
            ("--CONNECT-TIMEOUT=0", "at once"),
            ("--NAMESPACE=\"open", "quote"),
        ] {
            let e = translate(s).unwrap_err().to_string();
            assert!(
                e.contains(part) && e.contains("libmemcached_config"),
                "{s}: {e}"
            );
        }
    }

    #[test]
    fn comments_sockets_and_ejection() {
        let t = translate(
            "# the fleet\n--SOCKET=\"/tmp/mc.sock/?3\" --REMOVE-FAILED-SERVERS=1 \
             --SERVER-FAILURE-LIMIT=3 --VERIFY-KEY",
        )
        .unwrap();
        assert_eq!(t.servers[0].weight, 3);
        assert_eq!(t.distribution, "libmemcached:;");
        assert_eq!(
            t.options,
            vec![
                ("failover", "eject".to_owned()),
                ("eject_after", "3".to_owned())
            ]
        );
    }
}
