//! `mcpool ring`, end to end through the binary: its output agrees with the committed
//! placement fixtures (which come from the real client libraries), byte for byte.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/placement")
}

fn mcpool(global: &[&str], ring: &[&str], stdin: Option<&[u8]>) -> (i32, Vec<u8>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcpool"))
        .args(global)
        .arg("ring")
        .args(ring)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run mcpool");
    let mut input = child.stdin.take().unwrap();
    if let Some(data) = stdin {
        input.write_all(data).unwrap();
    }
    drop(input);
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        out.stdout,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The first fixture case of `profile` whose header lines all contain `want`.
fn case(profile: &str, want: &[&str]) -> (Vec<String>, Option<String>, Option<String>, Vec<u8>) {
    let mut text = std::fs::read_to_string(fixtures().join("cases.txt")).unwrap();
    text += &std::fs::read_to_string(fixtures().join("settings.txt")).unwrap();
    for block in text.split("end\n") {
        let field = |name: &str| {
            block
                .lines()
                .find_map(|l| l.strip_prefix(name).map(|v| v.trim().to_owned()))
        };
        if field("case ").as_deref() != Some(profile) || !want.iter().all(|w| block.contains(w)) {
            continue;
        }
        let servers = field("servers ")
            .unwrap()
            .split(' ')
            .map(str::to_owned)
            .collect();
        let weights = field("weights ").map(|w| w.replace(' ', ","));
        let points = field("ketama-points ");
        let expect = field("expect ").unwrap().into_bytes();
        return (servers, weights, points, expect);
    }
    panic!("no fixture case {profile} {want:?}");
}

/// A key as `ring` prints it: a backslash, tab and CR escaped (`\\`, `\t`, `\r`).
fn escaped(k: &[u8]) -> Vec<u8> {
    let mut e = Vec::new();
    for &b in k {
        match b {
            b'\\' => e.extend_from_slice(b"\\\\"),
            b'\t' => e.extend_from_slice(b"\\t"),
            b'\r' => e.extend_from_slice(b"\\r"),
            _ => e.push(b),
        }
    }
    e
}

fn check_profile(profile: &str, want: &[&str], extra: &[&str]) {
    let (servers, weights, points, expect) = case(profile, want);
    let keys_path = fixtures().join("keys.txt");
    let keys: Vec<Vec<u8>> = std::fs::read(&keys_path)
        .unwrap()
        .split(|&b| b == b'\n')
        .filter(|k| !k.is_empty())
        .map(<[u8]>::to_vec)
        .collect();
    let joined = servers.join(",");
    let mut global = vec!["--servers", &joined, "--distribution", profile];
    if let Some(w) = &weights {
        global.extend(["--weights", w]);
    }
    if let Some(p) = &points {
        global.extend(["--ketama-points", p]);
    }
    global.extend(extra);
    let path = keys_path.to_str().unwrap();
    let (code, out, err) = mcpool(&global, &["--keys", path], None);
    // `ring` answers as the client would: a fixture key that client refuses (over 250 bytes
    // once URL-encoded by the Whalin profiles) is named on stderr with its line, exit 2, and
    // its line says `!refused` in the server's place (one output line per input line).
    let refused = |line: usize, k: &[u8]| {
        err.contains(&format!(
            "mcpool ring: line {line}: {:?}: invalid key",
            String::from_utf8_lossy(k)
        ))
    };
    assert!(code == 0 || (code == 2 && !err.is_empty()), "{err}");
    let mut want_out = Vec::new();
    let mut left_out = 0;
    for (n, (k, &i)) in keys.iter().zip(&expect).enumerate() {
        want_out.extend_from_slice(&escaped(k));
        want_out.push(b'\t');
        if code == 2 && refused(n + 1, k) {
            left_out += 1;
            want_out.extend_from_slice(b"!refused\n");
            continue;
        }
        let idx = (i as char).to_digit(36).unwrap() as usize;
        let mut hp: Vec<&str> = servers[idx].split(':').collect();
        hp.truncate(2);
        want_out.extend_from_slice(hp.join(":").as_bytes());
        want_out.push(b'\n');
    }
    assert!(
        left_out * 10 < keys.len(),
        "{profile}: {left_out} keys refused: {err}"
    );
    assert!(
        out == want_out,
        "{profile}: ring output differs from the fixture"
    );
}

#[test]
fn ring_matches_fixtures() {
    check_profile(
        "cache-memcached",
        &["Cache::Memcached 1", "weights 3 1 1 2 5"],
        &[],
    );
    check_profile("twemproxy-ketama", &[":alpha", "weights 1 2 3 4 5"], &[]);
    check_profile("cmf-ketama", &["ketama-points 40", "weights"], &[]);
    check_profile("whalin-native", &["sanitize on", "weights 1 2 3 4 5"], &[]);
    check_profile(
        "whalin-old-compat",
        &["sanitize off"],
        &["--no-sanitize-keys"],
    );
    check_profile("pymemcache-rendezvous", &["127.77.10.10"], &[]);
}

#[test]
fn ring_reads_stdin_and_keeps_order_and_bytes() {
    let input = b"b\na\n\xff\xfe raw\nlast-no-newline";
    // A tab or CR in a key is printed escaped, so that every line has two fields.
    let tabbed = b"t\tab\r\n";
    let meta_g = [
        "--servers",
        "127.0.0.1:11211,127.0.0.2:11212",
        "--protocol",
        "meta",
    ];
    let (code, out, err) = mcpool(&meta_g, &[], Some(tabbed));
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with(b"t\\tab\\r\t127.0.0."),
        "{:?}",
        String::from_utf8_lossy(&out)
    );
    let g = [
        "--servers",
        "127.0.0.1:11211,127.0.0.2:11212",
        "--distribution",
        "libmemcached-ketama",
    ];
    // The meta protocol sends a key with a space (base64): the client takes it.
    let meta: Vec<&str> = g.iter().copied().chain(["--protocol", "meta"]).collect();
    let (code, out, err) = mcpool(&meta, &[], Some(input));
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&[u8]> = out
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    assert_eq!(lines.len(), 4);
    for (line, key) in lines
        .iter()
        .zip([&b"b"[..], b"a", b"\xff\xfe raw", b"last-no-newline"])
    {
        assert!(
            line.starts_with(key) && line[key.len()] == b'\t',
            "{line:?}"
        );
        let server = &line[key.len() + 1..];
        assert!(server == b"127.0.0.1:11211" || server == b"127.0.0.2:11212");
    }
    // The text protocol cannot send it: named on stderr with its line, exit 2, the other
    // keys printed, and its own line marked (one output line per input line).
    let (code, text_out, err) = mcpool(&g, &[], Some(input));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("line 3: \"\\xff\\xfe raw\": invalid key"),
        "{err}"
    );
    let text_lines: Vec<&[u8]> = text_out.split(|&b| b == b'\n').collect();
    assert_eq!(text_lines.len(), 5, "4 lines and the end");
    assert_eq!(text_lines[2], b"\xff\xfe raw\t!refused");
}

/// An empty input line was dropped without a word, so the output no longer lined up with
/// its input: every input line gets its output line; an empty one (an empty key, which
/// every command refuses) is marked `!refused` and named on stderr with its line (exit 2).
#[test]
fn ring_answers_every_input_line_an_empty_one_too() {
    let g = ["--servers", "127.0.0.1:11211,127.0.0.2:11212"];
    for input in [&b"a\n\nb\n"[..], b"a\n\nb"] {
        let (code, out, err) = mcpool(&g, &[], Some(input));
        assert_eq!(code, 2, "{err}");
        let lines: Vec<&[u8]> = out.split(|&b| b == b'\n').collect();
        assert_eq!(lines.len(), 4, "{:?}", String::from_utf8_lossy(&out));
        assert!(lines[0].starts_with(b"a\t127.0.0."));
        assert_eq!(lines[1], b"\t!refused");
        assert!(lines[2].starts_with(b"b\t127.0.0."));
        assert_eq!(lines[3], b"");
        assert!(
            err.contains("mcpool ring: line 2: \"\": invalid key"),
            "{err}"
        );
    }
    // The same from a file; and no line at all is no output.
    let dir = std::env::temp_dir().join(format!("mcpool-ring-empty-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("keys");
    std::fs::write(&path, b"\nx\n").unwrap();
    let (code, out, err) = mcpool(&g, &["--keys", path.to_str().unwrap()], None);
    assert_eq!(code, 2, "{err}");
    assert!(out.starts_with(b"\t!refused\nx\t127.0.0."), "{out:?}");
    assert!(err.contains("line 1: \"\""), "{err}");
    let (code, out, err) = mcpool(
        &g,
        &[
            "--keys",
            path.to_str().unwrap(),
            "--compare-distribution",
            "libmemcached-ketama",
        ],
        None,
    );
    assert_eq!(code, 2, "a comparison refuses it too: {err}");
    assert!(out.is_empty() && err.contains("line 1: \"\""), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
    let (code, out, err) = mcpool(&g, &[], Some(b""));
    assert_eq!((code, out.len()), (0, 0), "{err}");
}

#[test]
fn ring_compares_and_benches() {
    let g = [
        "--servers",
        "127.0.0.1:11211,127.0.0.2:11211,127.0.0.3:11211",
        "--distribution",
        "spymemcached-ketama",
    ];
    let (code, out, err) = mcpool(
        &g,
        &[
            "--compare-servers",
            "127.0.0.1:11211,127.0.0.2:11211,127.0.0.3:11211,127.0.0.4:11211",
            "--random",
            "4000",
        ],
        None,
    );
    assert_eq!(code, 0, "{err}");
    let text = String::from_utf8(out).unwrap();
    assert!(text.starts_with("keys\t4000\nmoved\t"), "{text}");
    assert!(text.contains("balance\tbefore\t"), "{text}");
    let (code, out, err) = mcpool(
        &g,
        &[
            "--compare-distribution",
            "libmemcached-ketama-weighted",
            "--random",
            "1000",
        ],
        None,
    );
    assert_eq!(code, 0, "{err}");
    assert!(String::from_utf8(out).unwrap().contains("moved\t"));
    let (code, out, err) = mcpool(&g, &["--bench", "--bench-sizes", "10"], None);
    assert_eq!(code, 0, "{err}");
    // a header and one line per placement profile
    assert_eq!(
        String::from_utf8(out).unwrap().lines().count(),
        mcpool::Distribution::NAMES.len() + 1
    );
    let (code, _, err) = mcpool(
        &["--servers", "127.0.0.1:1", "--distribution", "nope"],
        &[],
        Some(b""),
    );
    assert_eq!(code, 2);
    assert!(err.contains("unknown distribution"), "{err}");
}

#[test]
fn ring_accepts_client_settings_in_their_own_words() {
    check_profile(
        "pylibmc:distribution=consistent",
        &["weights 1 2 3 4 5"],
        &[],
    );
    check_profile("pylibmc:ketama=1,hash=md5", &["127.77.5.1"], &[]);
    check_profile(
        "libmemcached:ketama_weighted=1,distribution=consistent_ketama_spy",
        &["weights 1 2 3"],
        &[],
    );
    check_profile(
        "twemproxy:hash=fnv1a_64,distribution=modula",
        &[":alpha", "weights 1 2 3 4 5"],
        &[],
    );
    check_profile(
        "spymemcached:locator=array_mod,hash=native",
        &["127.77.10.1"],
        &[],
    );
    // Anything else is a usage error that names the valid words.
    for (setting, want) in [
        ("twemproxy:distribution=random", "not placement"),
        ("libmemcached:hash=nope", "fnv1a_64"),
        ("pylibmc:tcp_nodelay=1", "ketama_weighted"),
        ("spymemcached:locator=nope", "array_mod"),
    ] {
        let (code, _, err) = mcpool(
            &["--servers", "127.0.0.1:1", "--distribution", setting],
            &[],
            Some(b""),
        );
        assert_eq!(code, 2, "{setting}");
        assert!(err.contains(want), "{setting}: {err}");
    }
}

#[test]
fn ring_compare_distribution_between_two_client_settings() {
    // The Django settings pylibmc users switch between: how many keys move, counted by
    // `mcpool ring` and by the two fixtures the real pylibmc produced.
    let from = "pylibmc:distribution=consistent";
    let to = "pylibmc:ketama=1,hash=md5";
    let (servers, w1, _, a) = case(from, &["127.77.5.1"]);
    let (servers2, w2, _, b) = case(to, &["127.77.5.1"]);
    assert_eq!((&servers, &w1, &w2), (&servers2, &None, &None));
    let moved = a.iter().zip(&b).filter(|(x, y)| x != y).count();
    assert!(moved > 0);
    let joined = servers.join(",");
    let keys = fixtures().join("keys.txt");
    let (code, out, err) = mcpool(
        &["--servers", &joined, "--distribution", from],
        &[
            "--compare-distribution",
            to,
            "--keys",
            keys.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(code, 0, "{err}");
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.lines()
            .any(|l| l.starts_with(&format!("moved\t{moved}\t"))),
        "want {moved} moved:\n{text}"
    );
    // And between a setting and a profile, either way round.
    let (code, out, err) = mcpool(
        &[
            "--servers",
            &joined,
            "--distribution",
            "libmemcached-ketama",
        ],
        &[
            "--compare-distribution",
            "libmemcached:ketama=1",
            "--random",
            "500",
        ],
        None,
    );
    assert_eq!(code, 0, "{err}");
    assert!(String::from_utf8(out).unwrap().contains("moved\t0\t"));
}

/// Tester finding cli2 8: `ring --compare-servers` ignored keys piped on stdin and compared
/// 100,000 generated keys. A comparison reads stdin as plain `ring` does; it generates keys
/// only with --random, or when stdin gives no key (then it says so on stderr).
#[test]
fn ring_compare_reads_keys_from_stdin() {
    let g = [
        "--servers",
        "127.0.0.1:11211,127.0.0.2:11211,127.0.0.3:11211",
    ];
    let compare = ["--compare-servers", "127.0.0.1:11211,127.0.0.2:11211"];
    let (code, out, err) = mcpool(&g, &compare, Some(b"k1\nk2\nk3\n"));
    assert_eq!(code, 0, "{err}");
    let text = String::from_utf8(out).unwrap();
    assert!(text.starts_with("keys\t3\n"), "{text}");
    assert!(!err.contains("generated"), "{err}");
    let (code, out, err) = mcpool(
        &g,
        &["--compare-distribution", "libmemcached-ketama"],
        Some(b"a\nb\n"),
    );
    assert_eq!(code, 0, "{err}");
    assert!(String::from_utf8(out).unwrap().starts_with("keys\t2\n"));
    // No key on stdin: generated keys, said.
    let (code, out, err) = mcpool(&g, &compare, Some(b""));
    assert_eq!(code, 0, "{err}");
    assert!(String::from_utf8(out)
        .unwrap()
        .starts_with("keys\t100000\n"));
    assert!(err.contains("100000 generated keys"), "{err}");
    // --random: generated keys, stdin unread (so the write may find the pipe closed).
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcpool"))
        .args(g)
        .arg("ring")
        .args(compare)
        .args(["--random", "50"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run mcpool");
    let _ = child.stdin.take().unwrap().write_all(b"k1\n");
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8(o.stdout)
        .unwrap()
        .starts_with("keys\t50\n"));
}
