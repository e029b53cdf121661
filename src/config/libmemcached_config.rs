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
use crate::config::options::{distance, is_secret};
use crate::config::ClientBuilder;
use crate::error::{Error, Result};

/// The words (libmemcached 1.1.4's parser.yy) that change nothing here and take a number:
/// socket buffer and watermark tuning, SO_RCVTIMEO/SO_SNDTIMEO (which shorten no wait of
/// libmemcached's, whose waits are its poll timeout).
const NO_EFFECT_NUMBERS: &[&str] = &[
    "RCV-TIMEOUT",
    "SND-TIMEOUT",
    "SOCKET-RECV-SIZE",
    "SOCKET-SEND-SIZE",
    "IO-MSG-WATERMARK",
    "IO-BYTES-WATERMARK",
    "IO-KEY-PREFETCH",
];

/// The flags (no value) that change nothing here: key checks (always done), CAS (always
/// supported), fetching versions, user data.
const NO_EFFECT_FLAGS: &[&str] = &["VERIFY-KEY", "SUPPORT-CAS", "FETCH-VERSION", "USER-DATA"];

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

/// The words translated here, by name (the match in [`translate`]).
const TRANSLATED: &[&str] = &[
    "SERVER",
    "SOCKET",
    "DISTRIBUTION",
    "HASH",
    "SORT-HOSTS",
    "BINARY-PROTOCOL",
    "TCP-NODELAY",
    "TCP-KEEPALIVE",
    "TCP-KEEPIDLE",
    "HASH-WITH-NAMESPACE",
    "NAMESPACE",
    "CONNECT-TIMEOUT",
    "POLL-TIMEOUT",
    "RETRY-TIMEOUT",
    "REMOVE-FAILED-SERVERS",
    "POOL-MAX",
    "POOL-MIN",
    "NUMBER-OF-REPLICAS",
];

/// How an error shows a word mcpool does not know (`given`, as written): its name (the text
/// before `=` or `:`) when that is close to a word of libmemcached's strings, a typo of one
/// (`--SEVRER=...`, with the word meant); otherwise only its length and place, since such a
/// word may be anything, a password included (`SASL-PASSWORD=s3cret`, `--PASWORD:s3cret`,
/// `--PW s3cret`: libmemcached's strings have no credential word, tester findings retest11
/// 3, retest12 1, retest13 4). A word after a credential's word (`after_secret`) is only its
/// length and place, even when it reads like a known word's typo: it is the password written
/// after a space (`--SASL-PASSWORD Servers` showed `--SERVERS`, tester finding retest14 2).
fn shown_unknown(given: &str, place: usize, after_secret: bool) -> String {
    if after_secret {
        return hidden(given, place);
    }
    let name: String = given
        .trim_start_matches('-')
        .chars()
        .take_while(|c| c.is_ascii_alphabetic() || *c == '-' || *c == '_')
        .collect();
    let upper = word_name(&name);
    let known = TRANSLATED
        .iter()
        .chain(NO_EFFECT_NUMBERS)
        .chain(NO_EFFECT_FLAGS)
        .chain(REFUSED.iter().map(|(n, _)| n))
        .copied();
    let close = known
        .map(|k| (distance(&upper, k), k))
        .filter(|&(d, k)| !secret_word(&upper) && d <= 1 + k.len() / 5)
        .min();
    let more = if given.trim_start_matches('-').len() > name.len() {
        "=..."
    } else {
        ""
    };
    // Written as libmemcached's words are (`--` and capitals: `--KETAMA`, `--FOO=...`), an
    // unknown word is named, its value not shown: the docs promise the word named, and no
    // password is written so (tester finding cteam 3: `--KETAMA` was "word 2 (not shown)").
    let as_a_word = given.starts_with("--")
        && !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b == b'-' || b == b'_')
        && !secret_word(&upper);
    match close {
        Some((0, _)) => format!("--{upper}{more}"),
        Some((_, k)) => format!("--{upper}{more} (did you mean --{k}?)"),
        None if as_a_word => format!("--{upper}{more}"),
        None => hidden(given, place),
    }
}

/// A word shown by its place and length only.
fn hidden(given: &str, place: usize) -> String {
    format!(
        "word {place} (not shown, {} bytes: it may hold a secret)",
        given.len()
    )
}

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
        // A malformed word is shown only as shown_unknown shows it: it may be a secret
        // written after a space (`--SASL-PASSWORD s3cret`) or in a quote left open
        let place = out.len() + 1;
        let after_secret = out.last().is_some_and(|w: &Word| secret_word(&w.given));
        if quoted {
            return Err(bad(
                &shown_unknown(&given, place, after_secret),
                "a quote is not closed",
            ));
        }
        let Some(body) = given.strip_prefix("--") else {
            return Err(bad(
                &shown_unknown(&given, place, after_secret),
                "each word starts with -- (--SERVER=host:port); a value with spaces is \
                 double-quoted",
            ));
        };
        let (name, value) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v.to_owned())),
            None => (body, None),
        };
        out.push(Word {
            name: word_name(name),
            value,
            given: given.clone(),
        });
    }
    Ok(out)
}

/// A word's name as the table below spells it: upper case, `-` for `_`.
fn word_name(name: &str) -> String {
    name.to_ascii_uppercase().replace('_', "-")
}

/// Whether a word may carry a credential: it names a secret (`--SASL-PASSWORD`) or has a
/// credential's word anywhere in it (`--SASL-PASSWORD:s3cret`, `--PASSWORDs3cret`, a
/// misspelt `--SASL-PASWORD=...`), none of which libmemcached's strings have: never shown
/// as a typo of a known word ([`shown_unknown`]), and its error says where SASL is set.
fn secret_word(word: &str) -> bool {
    let upper = word.to_ascii_uppercase();
    is_secret(&word.to_ascii_lowercase().replace('-', "_"))
        || ["PASS", "PWD", "SECRET", "SASL", "AUTH", "CRED", "TOKEN"]
            .iter()
            .any(|w| upper.contains(w))
}

/// Whether the string asks for TLS or SASL, which libmemcached's strings have no words for:
/// a word whose name begins with `TLS`, `SSL` or `SASL` (`--TLS`, `--SSL-CA=...`,
/// `--SASL=user:pass`), or one that may carry a credential ([`secret_word`]). Such a string
/// is refused, and a client built without it would not secure its traffic as asked
/// (`options::secured_by`).
pub(crate) fn asks_security(text: &str) -> bool {
    text.split_whitespace().any(|w| {
        let body = w.trim_start_matches('-');
        let name = word_name(body.split(['=', ':']).next().unwrap_or(""));
        ["TLS", "SSL", "SASL"].iter().any(|p| name.starts_with(p)) || secret_word(w)
    })
}

fn bad(given: &str, why: &str) -> Error {
    // a `--SERVER=user:password@host` word: its userinfo hidden
    let given = crate::address::shown(given);
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

/// The words that make placement: each is a behavior libmemcached sets where it stands.
const PLACEMENT: &[&str] = &["DISTRIBUTION", "HASH", "SORT-HOSTS"];

/// Reads `text` (see the module's documentation). Placement words stand all before the
/// servers or all after them (`libmemcached:BEFORE;AFTER`); a string naming no server has
/// them all before (a C program adds its servers to the client `memcached()` made). Between
/// two servers they are refused: libmemcached weighs a server by the distribution in force
/// when it is added, which no setting here says.
pub(crate) fn translate(text: &str) -> Result<Translated> {
    let words = words(text)?;
    let is_server = |w: &Word| w.name == "SERVER" || w.name == "SOCKET";
    let first_server = words.iter().position(is_server);
    let last_server = words.iter().rposition(is_server);
    if let (Some(first), Some(last)) = (first_server, last_server) {
        if let Some(w) = words[first..last]
            .iter()
            .find(|w| PLACEMENT.contains(&w.name.as_str()))
        {
            return Err(bad(
                &w.given,
                "between two --SERVER words: libmemcached weighs each server by the \
                 distribution in force when it is added; give the placement words before \
                 the first server or after the last",
            ));
        }
    }
    let mut t = Translated::default();
    let (mut before, mut after) = (Vec::new(), Vec::new());
    let (mut hash_seen, mut namespace_seen) = (false, false);
    for (i, w) in words.iter().enumerate() {
        let number = || -> Result<u64> {
            let v = w.value.as_deref().unwrap_or("");
            v.parse()
                .map_err(|_| bad(&w.given, "needs a whole number (--NAME=N)"))
        };
        let flag = || -> Result<()> {
            match w.value {
                None => Ok(()),
                Some(_) => Err(bad(
                    &w.given,
                    "takes no value (as libmemcached: --NAME alone)",
                )),
            }
        };
        let text_value = || -> Result<&str> {
            w.value
                .as_deref()
                .filter(|v| !v.is_empty())
                .ok_or_else(|| bad(&w.given, "needs a value (--NAME=VALUE)"))
        };
        let placement = if last_server.map_or(true, |l| i < l) {
            &mut before
        } else {
            &mut after
        };
        match w.name.as_str() {
            "SERVER" | "SOCKET" => t.servers.push(server(w, text_value()?)?),
            "DISTRIBUTION" => {
                let v = text_value()?.to_ascii_lowercase();
                match v.as_str() {
                    "consistent" | "modula" => placement.push(format!("distribution={v}")),
                    "random" => {
                        return Err(bad(
                            &w.given,
                            "a random distribution places no key twice alike",
                        ))
                    }
                    _ if v.contains(',') => {
                        return Err(bad(
                            &w.given,
                            "a hash for the distribution's points is not reproduced (give \
                             --DISTRIBUTION=consistent and --HASH=... for the keys)",
                        ))
                    }
                    _ => return Err(bad(&w.given, "one of consistent, modula (libmemcached's)")),
                }
            }
            "HASH" => {
                if std::mem::replace(&mut hash_seen, true) {
                    return Err(bad(
                        &w.given,
                        "--HASH can only be set once (as libmemcached)",
                    ));
                }
                placement.push(format!("hash={}", text_value()?.to_ascii_lowercase()));
            }
            "SORT-HOSTS" => {
                flag()?;
                placement.push("sort_hosts=1".into());
            }
            "BINARY-PROTOCOL" => {
                flag()?;
                t.options.push(("protocol", "binary".into()));
            }
            "TCP-NODELAY" => {
                flag()?;
                t.options.push(("nodelay", "true".into()));
            }
            "TCP-KEEPALIVE" => {
                flag()?;
                t.options.push(("tcp_keepalive", "true".into()));
            }
            // libmemcached's parser takes it as a flag that sets the behaviour to 1: a
            // probe after one idle second (tester finding retest27 6: it was taken as
            // changing nothing, and the system's two hours stood)
            "TCP-KEEPIDLE" => {
                flag()?;
                t.options.push(("tcp_keepidle", "1s".into()));
            }
            "HASH-WITH-NAMESPACE" => {
                flag()?;
                t.options.push(("hash_key_prefix", "true".into()));
            }
            "NAMESPACE" => {
                if std::mem::replace(&mut namespace_seen, true) {
                    return Err(bad(
                        &w.given,
                        "--NAMESPACE can only be called once (as libmemcached)",
                    ));
                }
                t.options
                    .push(("key_prefix", unquoted(w, text_value()?)?.0));
            }
            "CONNECT-TIMEOUT" => t.options.push(("connect_timeout", ms(w, number()?)?)),
            // libmemcached waits for each reply with poll() for this long
            "POLL-TIMEOUT" => t.options.push(("io_timeout", ms(w, number()?)?)),
            "RETRY-TIMEOUT" => {
                // each wait the same (no doubling)
                let s = format!("{}s", number()?);
                t.options.push(("retry_timeout_max", s.clone()));
                t.options.push(("retry_timeout", s));
            }
            // libmemcached's auto-eject (docs/failover.md: its failure limit is the preset's
            // eject_after)
            "REMOVE-FAILED-SERVERS" => {
                if number()? > 0 {
                    t.options.push(("failover", "eject".into()));
                }
            }
            "POOL-MAX" => t.options.push(("max_size", number()?.to_string())),
            "POOL-MIN" => t.options.push(("min_idle", number()?.to_string())),
            "NUMBER-OF-REPLICAS" => {
                if number()? > 0 {
                    return Err(bad(&w.given, "mcpool does not replicate writes"));
                }
            }
            name if NO_EFFECT_NUMBERS.contains(&name) => {
                number()?;
            }
            name if NO_EFFECT_FLAGS.contains(&name) => flag()?,
            name => {
                let why = REFUSED
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, why)| format!("not supported: {why}"))
                    .unwrap_or_else(|| {
                        "not a word of libmemcached's configuration strings".to_owned()
                    });
                // a word unknown here may hold a secret (`--SASL-PASSWORD:s3cret`, which
                // libmemcached refuses too): shown_unknown shows it
                let mut why = why;
                if secret_word(&w.given) {
                    why.push_str("; SASL is set with the sasl_username and sasl_password options");
                }
                let after_secret = i > 0 && secret_word(&words[i - 1].given);
                return Err(bad(&shown_unknown(&w.given, i + 1, after_secret), &why));
            }
        }
    }
    t.distribution = format!("libmemcached:{};{}", before.join(","), after.join(","));
    // The placement words' values checked here, in the string's words: refused later, as
    // the option `distribution`, the message named an option the user never set and a
    // setting they never wrote (tester finding cteam 4: --HASH=HSIEH)
    if let Err(e) = t.distribution.parse::<crate::route::Distribution>() {
        let given: Vec<&str> = words
            .iter()
            .filter(|w| PLACEMENT.contains(&w.name.as_str()))
            .map(|w| w.given.as_str())
            .collect();
        let why = match e {
            Error::Config(m) => m,
            other => other.to_string(),
        };
        let why = why.strip_prefix("libmemcached: ").unwrap_or(&why);
        return Err(bad(&given.join(" "), why));
    }
    Ok(t)
}

/// A value that may be double-quoted (`"a b"`), and what follows the closing quote.
fn unquoted(w: &Word, value: &str) -> Result<(String, String)> {
    match value.strip_prefix('"') {
        Some(rest) => {
            let end = rest
                .find('"')
                .ok_or_else(|| bad(&w.given, "a quote is not closed"))?;
            Ok((rest[..end].to_owned(), rest[end + 1..].to_owned()))
        }
        None => Ok((value.to_owned(), String::new())),
    }
}

/// A `--SERVER=host[:port][/?weight]` or `--SOCKET="path"[/?weight]` word (libmemcached's
/// forms: the weight after the closing quote; port 0 or none is 11211).
fn server(w: &Word, value: &str) -> Result<ServerSpec> {
    let (addr, rest) = unquoted(w, value)?;
    // A quoted name is the name, as libmemcached reads it ("/p/?3" is that path)
    let (addr, weight_text) = if rest.is_empty() && !value.starts_with('"') {
        match addr.split_once("/?") {
            Some((a, wt)) => (a.to_owned(), Some(wt.to_owned())),
            None => (addr, None),
        }
    } else if rest.is_empty() {
        (addr, None)
    } else {
        match rest.strip_prefix("/?") {
            Some(wt) => (addr, Some(wt.to_owned())),
            None => return Err(bad(&w.given, "after the quoted path only /?WEIGHT")),
        }
    };
    // libmemcached gives a server of weight 0 its default weight, 1 (`weight ? weight : 1`
    // in its server_create): `/?0` places keys as `/?1` there, so here too (tester finding
    // migrate 4: it was refused)
    let weight = match weight_text {
        Some(wt) => wt
            .parse::<u32>()
            .map(|n| n.max(1))
            .map_err(|_| bad(&w.given, "a weight is a whole number (/?2; /?0 is 1)"))?,
        None => 1,
    };
    let addr = if w.name == "SERVER" {
        libmemcached_port(w, addr)?
    } else {
        addr
    };
    let mut spec = ServerSpec::parse(&addr).map_err(|e| bad(&w.given, &e.to_string()))?;
    spec.weight = weight;
    Ok(spec)
}

/// A `--SERVER` address with its port read as libmemcached's parser reads it: one to five
/// digits (a sixth is its syntax error), and a port of only zeros (`:0`, `:00000`) its
/// default, 11211. A port over 65535, which libmemcached cuts to 16 bits, is refused by the
/// address parser after this.
fn libmemcached_port(w: &Word, addr: String) -> Result<String> {
    // `host:port`, `[v6]:port`; a bare IPv6 address has no port to read here
    let Some((host, digits)) = addr.rsplit_once(':').filter(|(host, port)| {
        !port.is_empty()
            && port.bytes().all(|b| b.is_ascii_digit())
            && (host.ends_with(']') || !host.contains(':'))
    }) else {
        return Ok(addr);
    };
    if digits.len() > 5 {
        return Err(bad(
            &w.given,
            "a port has at most 5 digits in libmemcached's configuration (it refuses more)",
        ));
    }
    if digits.bytes().all(|b| b == b'0') {
        return Ok(format!("{host}:11211"));
    }
    Ok(addr)
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
    if !t.servers.is_empty() && !b.config.servers.is_empty() {
        return Err(Error::Config(crate::config::SERVERS_TWICE.into()));
    }
    let mut b = b.set("preset", "libmemcached")?;
    if !t.servers.is_empty() {
        b = t
            .servers
            .into_iter()
            .fold(b.clear_servers(), ClientBuilder::server_spec);
        b.string_servers = true;
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

    /// Tester finding migrate 4: libmemcached gives weight 0 its default, 1.
    #[test]
    fn a_weight_of_0_is_1_as_in_libmemcached() {
        let t = translate("--SERVER=127.0.0.1:11211/?0 --SERVER=127.0.0.2/?3").unwrap();
        assert_eq!((t.servers[0].weight, t.servers[1].weight), (1, 3));
    }

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
            ("--SERVER=a:1/?x", "weight"),
            ("--SERVER=a:1/?-1", "weight"),
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
            "# the fleet\n--SOCKET=\"/tmp/mc.sock\"/?3 --REMOVE-FAILED-SERVERS=1 --VERIFY-KEY\n\
             --SERVER=127.0.0.1:0",
        )
        .unwrap();
        assert_eq!(t.servers[0].weight, 3);
        assert_eq!(t.servers[0].addr.to_string(), "/tmp/mc.sock");
        assert_eq!(
            t.servers[1].addr.to_string(),
            "127.0.0.1:11211",
            "port 0 is 11211"
        );
        assert_eq!(t.distribution, "libmemcached:;");
        assert_eq!(t.options, vec![("failover", "eject".to_owned())]);
    }

    /// Tester finding cteam 4: a placement word's refused value is said in the string's
    /// words (it was the option `distribution`'s refusal of `libmemcached:;hash=hsieh`, with
    /// two "accepted:" clauses); an unknown word written as libmemcached's is named (cteam 3).
    #[test]
    fn refused_placement_words_and_unknown_words_are_named() {
        let e = translate("--SERVER=127.0.0.1:11211 --HASH=HSIEH")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("configuration error: libmemcached_config: --HASH=HSIEH: hash=hsieh: "),
            "{e}"
        );
        assert!(
            !e.contains("option distribution") && !e.contains(":;"),
            "{e}"
        );
        for (given, shown) in [("--KETAMA", "--KETAMA"), ("--FOO=bar", "--FOO=...")] {
            let e = translate(&format!("--SERVER=127.0.0.1:1 {given}"))
                .unwrap_err()
                .to_string();
            assert!(
                e.contains(&format!("libmemcached_config: {shown}: not a word")),
                "{e}"
            );
            assert!(!e.contains("bar"), "{e}");
        }
    }

    /// Tester finding retest11 3: a password written after a space, or in a quote left open,
    /// was quoted in the error.
    #[test]
    fn a_secret_is_never_shown_in_an_error() {
        for given in [
            "--SERVER=127.0.0.1:11211 --SASL-PASSWORD S3cr3tPW",
            "--SASL-PASSWORD=abc S3cr3tPW",
            "--PASSWORD S3cr3tPW",
            "--SASL-PASSWORD=\"S3cr3tPW",
            "--SASL-PASSWORD=\"abc S3cr3tPW",
            "--sasl_password S3cr3tPW --SERVER=a",
            "--SASL-PASSWORD=S3cr3tPW",
            "--SASL-PASSWORD S3cr3tPW\"",
            "--SASL-PASSWORD:S3cr3tPW",
            "--SASL_PASSWORD:S3cr3tPW",
            "--PASSWORD:S3cr3tPW",
            "--SASL-PASSWORD-S3cr3tPW",
            "--SASL-PASSWORDS3cr3tPW",
            "--SASL-PASWORD=S3cr3tPW",
            "--SASL-PASWORD:S3cr3tPW",
            "SASL-PASSWORD=S3cr3tPW",
            "--PASWORD:S3cr3tPW",
            "--PASWD:S3cr3tPW",
            "--PW:S3cr3tPW",
            "--SALS-PASWORD:S3cr3tPW",
            "--PASWORD S3cr3tPW",
            "--PW S3cr3tPW",
            "--KEY S3cr3tPW",
            "--PASWRD=\"S3cr3tPW",
            "--PW=\"S3cr3tPW x",
            "--S3cr3tPW",
            // after a credential's word, a password that reads like a known word's typo
            // (tester finding retest14 2: shown as --SERVERS (did you mean --SERVER?))
            "--SASL-PASSWORD Servers3cr3tPW",
            "--SASL-PASSWORD\tHash-S3cr3tPW",
            "--SERVER=127.0.0.1:1 --PASSWORD Pool_Max_S3cr3tPW",
            "--SASL-PASSWORD --Servers-S3cr3tPW",
        ] {
            let e = translate(given).unwrap_err().to_string();
            assert!(!e.to_ascii_uppercase().contains("S3CR3TPW"), "{given}: {e}");
            assert!(e.contains("libmemcached_config"), "{given}: {e}");
        }
        // other words are still shown as written
        let e = translate("SERVER=a").unwrap_err().to_string();
        assert!(e.contains("--SERVER=...: each word starts with --"), "{e}");
        let e = translate("--NAMESPACE=\"open").unwrap_err().to_string();
        assert!(
            e.contains("--NAMESPACE=...") && e.contains("not closed"),
            "{e}"
        );
        // a typo of a word is named with the word meant, never its value
        let e = translate("--SEVRER=127.0.0.1:11211")
            .unwrap_err()
            .to_string();
        assert!(e.contains("--SEVRER=... (did you mean --SERVER?)"), "{e}");
        assert!(!e.contains("127.0.0.1"), "{e}");
        for pw in ["Servers", "Sockets4Me", "End", "ErRoR", "Hash1", "Pool_Max"] {
            for given in [
                format!("--SASL-PASSWORD {pw}"),
                format!("--SERVER=127.0.0.1:1 --PASSWORD {pw}"),
                format!("--SASL-PASSWORD\t{pw}"),
            ] {
                let e = translate(&given).unwrap_err().to_string();
                // the word as shown: between "libmemcached_config: " and the reason
                let shown = e.split("libmemcached_config: ").nth(1).unwrap_or("");
                let shown = shown.split("):").next().unwrap_or("");
                assert!(
                    shown.starts_with("word ") && shown.contains("not shown"),
                    "{given}: {e}"
                );
            }
        }
    }

    /// Tester finding retest9 (lmconfig): libmemcached reads a port of one to five digits
    /// (`:011211` is its syntax error) and one of only zeros as 11211.
    #[test]
    fn ports_are_read_as_libmemcached_reads_them() {
        for (given, addr) in [
            ("--SERVER=127.0.0.1:0", "127.0.0.1:11211"),
            ("--SERVER=127.0.0.1:00000", "127.0.0.1:11211"),
            ("--SERVER=127.0.0.1:01121", "127.0.0.1:1121"),
            ("--SERVER=[::1]:00", "[::1]:11211"),
            ("--SERVER=127.0.0.1:11211/?2", "127.0.0.1:11211"),
        ] {
            let t = translate(given).unwrap();
            assert_eq!(t.servers[0].addr.to_string(), addr, "{given}");
        }
        for given in ["--SERVER=127.0.0.1:011211", "--SERVER=[::1]:000011211"] {
            let e = translate(given).unwrap_err().to_string();
            assert!(e.contains("at most 5 digits"), "{given}: {e}");
        }
    }

    /// Tester findings lmconfig 1-4, 9: libmemcached's own rules.
    #[test]
    fn placement_words_stand_before_or_after_the_servers() {
        // no server named: the words come before the servers a program adds
        let t = translate("--DISTRIBUTION=consistent --HASH=MD5").unwrap();
        assert_eq!(
            t.distribution,
            "libmemcached:distribution=consistent,hash=md5;"
        );
        for s in [
            "--SERVER=a:1/?3 --DISTRIBUTION=consistent --SERVER=b:2",
            "--SERVER=a:1 --HASH=MD5 --SERVER=b:2",
            "--SERVER=a:1 --SORT-HOSTS --SERVER=b:2",
        ] {
            let e = translate(s).unwrap_err().to_string();
            assert!(e.contains("between two --SERVER words"), "{s}: {e}");
        }
        for s in [
            "--SORT-HOSTS=0",
            "--HASH-WITH-NAMESPACE=false",
            "--BINARY-PROTOCOL=0",
            "--TCP-NODELAY=1",
            "--VERIFY-KEY=1",
        ] {
            assert!(
                translate(s)
                    .unwrap_err()
                    .to_string()
                    .contains("takes no value"),
                "{s}"
            );
        }
        for s in [
            "--RCV-TIMEOUT",
            "--RCV-TIMEOUT=abc",
            "--REMOVE-FAILED-SERVERS",
            "--HASH=md5 --HASH=crc",
            "--NAMESPACE=a --NAMESPACE=b",
            "--SERVER-FAILURE-LIMIT=3",
            "--DISTRIBUTION=consistent_ketama",
            "--SOCKET=\"/p\"x",
        ] {
            assert!(translate(s).is_err(), "{s}");
        }
        let t = translate("--SOCKET=\"/p/?3\"").unwrap();
        assert_eq!(
            (t.servers[0].addr.to_string().as_str(), t.servers[0].weight),
            ("/p/?3", 1)
        );
    }
}
