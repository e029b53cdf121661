//! Key placement agrees with the real client libraries, key for key.
//!
//! `fixtures_agree` checks every profile against `tests/fixtures/placement/cases.txt`, and
//! every client setting (`libmemcached:hash=md5,distribution=modula`, ...) against
//! `tests/fixtures/placement/settings.txt`, which
//! `tools/placement/generate-fixtures.sh` produced by running the real libraries (Perl
//! Cache::Memcached and ::Fast, python-memcached, pylibmc, pymemcache, libmemcached,
//! spymemcached, nutcracker; Whalin's hashing reproduced in Java, since Whalin's client is not
//! packaged). It needs nothing installed.
//!
//! `live_libraries_agree` reruns those libraries now (`tools/placement/run-cases.py`) and
//! checks the router against what they say. A missing library is reported loudly and its
//! cases skipped; with `CI=true` a missing library fails the test.

use mcpool::key::url_encode;
use mcpool::{Distribution, FailoverPolicy, Router, ServerSpec};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const INDEX: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn keys() -> Vec<Vec<u8>> {
    let raw = std::fs::read(root().join("tests/fixtures/placement/keys.txt")).unwrap();
    raw.split(|&b| b == b'\n')
        .filter(|k| !k.is_empty())
        .map(<[u8]>::to_vec)
        .collect()
}

/// One case block of a cases file.
#[derive(Debug, Default)]
struct Case {
    profile: String,
    library: String,
    servers: Vec<String>,
    weights: Vec<u32>,
    ketama_points: Option<u32>,
    sanitize: Option<bool>,
    /// A server that was down: the library's own rehash placed its keys.
    dead: Option<usize>,
    expect: Vec<u8>,
}

fn parse_cases(text: &str) -> Vec<Case> {
    let mut out = Vec::new();
    let mut cur = Case::default();
    for line in text.lines() {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (field, value) = line.split_once(' ').unwrap_or((line, ""));
        match field {
            "case" => cur.profile = value.to_owned(),
            "library" => cur.library = value.to_owned(),
            "servers" => cur.servers = value.split(' ').map(str::to_owned).collect(),
            "weights" => cur.weights = value.split(' ').map(|w| w.parse().unwrap()).collect(),
            "ketama-points" => cur.ketama_points = Some(value.parse().unwrap()),
            "sanitize" => cur.sanitize = Some(value == "on"),
            "dead" => cur.dead = Some(value.parse().unwrap()),
            "expect" => cur.expect = value.as_bytes().to_vec(),
            "end" => out.push(std::mem::take(&mut cur)),
            other => panic!("unknown field {other:?} in cases file"),
        }
    }
    out
}

/// Checks every case; returns (cases checked per profile, disagreement descriptions).
fn check(cases: &[Case], keys: &[Vec<u8>]) -> (BTreeMap<String, Vec<String>>, Vec<String>) {
    let mut seen: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut bad = Vec::new();
    for c in cases {
        let mut d: Distribution = c.profile.parse().unwrap();
        if let Some(p) = c.ketama_points {
            d = d.with_ketama_points(p);
        }
        let mut servers: Vec<ServerSpec> = c
            .servers
            .iter()
            .map(|s| ServerSpec::parse(s).unwrap())
            .collect();
        for (s, &w) in servers.iter_mut().zip(&c.weights) {
            s.weight = w;
        }
        let router = Router::new(&d, &servers).unwrap();
        let sanitize = c.sanitize.unwrap_or(d.sanitizes_keys_by_default());
        assert_eq!(
            c.expect.len(),
            keys.len(),
            "{} / {}: key count",
            c.profile,
            c.library
        );
        let mut wrong = 0;
        let mut example = None;
        for (k, &want) in keys.iter().zip(&c.expect) {
            let wire = if sanitize { url_encode(k) } else { k.into() };
            let at = match c.dead {
                None => router.locate(&wire),
                Some(dead) => router
                    .locate_alive(&wire, FailoverPolicy::Rehash, &|i| i != dead)
                    .expect("a live server"),
            };
            let got = INDEX[at];
            if got != want {
                wrong += 1;
                example.get_or_insert_with(|| {
                    format!(
                        "key {:?}: library says {}, we say {}",
                        String::from_utf8_lossy(k),
                        want as char,
                        got as char
                    )
                });
            }
        }
        let what = format!(
            "{} vs {} ({} servers{}{})",
            c.profile,
            c.library,
            servers.len(),
            if c.weights.is_empty() {
                ""
            } else {
                ", weighted"
            },
            match c.sanitize {
                Some(false) => ", sanitizing off",
                _ => "",
            }
        ) + &c
            .dead
            .map(|d| format!(" server {d} down, rehash"))
            .unwrap_or_default();
        if wrong > 0 {
            bad.push(format!(
                "{what}: {wrong} of {} keys disagree, e.g. {}",
                keys.len(),
                example.unwrap()
            ));
        }
        seen.entry(c.profile.clone()).or_default().push(what);
    }
    (seen, bad)
}

fn report(seen: &BTreeMap<String, Vec<String>>, keys: usize) {
    for (profile, cases) in seen {
        eprintln!(
            "{profile}: {} cases × {keys} keys, 0 disagreements",
            cases.len()
        );
    }
}

#[test]
fn fixtures_agree() {
    let keys = keys();
    assert!(keys.len() >= 2000);
    let mut cases = Vec::new();
    for file in ["cases.txt", "settings.txt"] {
        let path = root().join("tests/fixtures/placement").join(file);
        cases.extend(parse_cases(&std::fs::read_to_string(path).unwrap()));
    }
    let (seen, bad) = check(&cases, &keys);
    assert!(
        bad.is_empty(),
        "disagreements with the committed fixtures:\n{}",
        bad.join("\n")
    );
    for name in Distribution::NAMES {
        assert!(
            seen.contains_key(*name),
            "no fixture case for profile {name}"
        );
    }
    report(&seen, keys.len());
}

#[test]
fn live_libraries_agree() {
    let ci = std::env::var("CI").is_ok_and(|v| v == "true");
    let python = Path::new("/usr/bin/python3");
    if !python.exists() {
        let msg = "MISSING /usr/bin/python3: the live placement compatibility test cannot run";
        assert!(!ci, "{msg}");
        eprintln!("\n!!!!! {msg} !!!!!\n");
        return;
    }
    let out =
        std::env::temp_dir().join(format!("mcpool-placement-live-{}.txt", std::process::id()));
    let run = Command::new(python)
        .arg(root().join("tools/placement/run-cases.py"))
        .arg("--keys")
        .arg(root().join("tests/fixtures/placement/keys.txt"))
        .arg("--out")
        .arg(&out)
        .output()
        .expect("run tools/placement/run-cases.py");
    let stderr = String::from_utf8_lossy(&run.stderr);
    let missing: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("MISSING"))
        .collect();
    match run.status.code() {
        Some(0) => {}
        Some(3) => {
            let msg = format!(
                "real client libraries are missing, their live checks were skipped:\n{}",
                missing.join("\n")
            );
            assert!(!ci, "{msg}");
            eprintln!("\n!!!!! {msg}\n!!!!!\n");
        }
        _ => panic!("run-cases.py failed ({}):\n{stderr}", run.status),
    }
    let text = std::fs::read_to_string(&out).unwrap();
    let _ = std::fs::remove_file(&out);
    let keys = keys();
    let (seen, bad) = check(&parse_cases(&text), &keys);
    assert!(
        bad.is_empty(),
        "disagreements with the real libraries:\n{}",
        bad.join("\n")
    );
    assert!(!seen.is_empty() || !missing.is_empty(), "no live case ran");
    report(&seen, keys.len());
}
