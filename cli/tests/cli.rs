//! The `mcpool` command line: commands, exit statuses (0 ok, 1 miss/refused, 2 error).
use mcpool_testkit as common;

use common::Memcached;
use std::process::{Command, Output};

fn mcpool(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mcpool"))
        .args(args)
        .output()
        .expect("run mcpool")
}

fn code(o: &Output) -> i32 {
    o.status.code().expect("exit status")
}

#[test]
fn commands_and_exit_statuses() {
    let mc = Memcached::start(&[]);
    let s = mc.addr();
    let with = |rest: &[&str]| {
        let mut a = vec!["--servers", s.as_str()];
        a.extend_from_slice(rest);
        mcpool(&a)
    };
    assert_eq!(code(&with(&["set", "k", "hello", "--ttl", "100"])), 0);
    let o = with(&["get", "k"]);
    assert_eq!((code(&o), o.stdout.as_slice()), (0, &b"hello\n"[..]));
    assert_eq!(
        code(&with(&["add", "k", "x"])),
        1,
        "add of an existing key is refused"
    );
    assert_eq!(code(&with(&["replace", "k", "hi"])), 0);
    assert_eq!(code(&with(&["append", "k", "!"])), 0);
    assert_eq!(code(&with(&["prepend", "k", "<"])), 0);
    assert_eq!(with(&["get", "k"]).stdout, b"<hi!\n");
    let o = with(&["get", "k", "missing"]);
    assert_eq!(code(&o), 1);
    assert_eq!(o.stdout, b"k\t<hi!\n");
    assert!(String::from_utf8_lossy(&o.stderr).contains("missing: not found"));
    assert_eq!(code(&with(&["set", "n", "5"])), 0);
    assert_eq!(with(&["incr", "n", "3"]).stdout, b"8\n");
    assert_eq!(with(&["decr", "n", "10"]).stdout, b"0\n");
    assert_eq!(code(&with(&["incr", "nope", "1"])), 1);
    assert_eq!(code(&with(&["touch", "k", "50"])), 0);
    assert_eq!(code(&with(&["delete", "k"])), 0);
    assert_eq!(code(&with(&["delete", "k"])), 1);
    let o = with(&["version"]);
    assert_eq!(code(&o), 0);
    assert!(String::from_utf8_lossy(&o.stdout).contains(&format!("{s}: 1.")));
    let o = with(&["stats", "settings"]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("item_size_max"));
    assert_eq!(code(&with(&["flush"])), 0);
    let o = with(&["stats", "--client", "--ops", "400", "--threads", "4"]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("0 crossed values") && out.contains("pool_wait"),
        "{out}"
    );
    assert!(
        out.lines()
            .any(|l| l.starts_with(&s) && l.contains(" 400 ")),
        "{out}"
    );
    // Errors: exit 2 with the reason on stderr.
    let o = with(&["get", "bad key"]);
    assert_eq!(code(&o), 2);
    assert!(String::from_utf8_lossy(&o.stderr).contains("invalid key"));
    assert_eq!(code(&with(&["incr", "n", "x"])), 2);
    assert_eq!(code(&with(&["frobnicate"])), 2);
    assert_eq!(code(&mcpool(&["--servers", "127.0.0.1:1", "get", "k"])), 2);
    assert_eq!(code(&mcpool(&["--bogus"])), 2);
    assert_eq!(code(&mcpool(&["--help"])), 0);
}

#[test]
fn every_protocol_from_the_command_line() {
    let mc = Memcached::start(&[]);
    let addr = mc.addr();
    for p in ["text", "meta", "binary"] {
        let run = |rest: &[&str]| {
            let mut a = vec!["--servers", addr.as_str(), "--protocol", p];
            a.extend_from_slice(rest);
            mcpool(&a)
        };
        assert_eq!(code(&run(&["set", "k", p])), 0, "{p}");
        assert_eq!(run(&["get", "k"]).stdout, format!("{p}\n").as_bytes());
    }
    let o = mcpool(&[
        "--servers",
        &mc.addr(),
        "--protocol",
        "carrier-pigeon",
        "version",
    ]);
    assert_eq!(code(&o), 2);
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown protocol"));
}

#[test]
fn private_server_when_no_servers_given() {
    let o = mcpool(&["version"]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("started a private memcached at 127.0.0.1:")
    );
    let o = mcpool(&["set", "k", "v"]);
    assert_eq!(code(&o), 0);
}

/// A plain-socket set with the writer's own flags, as a legacy client leaves it.
fn raw_set(addr: &str, key: &str, flags: u32, data: &[u8]) {
    use std::io::{BufRead, BufReader, Write};
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    write!(s, "set {key} {flags} 0 {}\r\n", data.len()).unwrap();
    s.write_all(data).unwrap();
    s.write_all(b"\r\n").unwrap();
    let mut line = String::new();
    BufReader::new(s).read_line(&mut line).unwrap();
    assert_eq!(line, "STORED\r\n");
}

#[test]
fn value_formats_from_the_command_line() {
    let mc = Memcached::start(&[]);
    let s = mc.addr();
    let with = |rest: &[&str]| {
        let mut a = vec!["--servers", s.as_str()];
        a.extend_from_slice(rest);
        mcpool(&a)
    };
    // A zlib-compressed Python value (pylibmc: text 16 + zlib 8) and a python-memcached int.
    let text = "compressed by a Python client ".repeat(50);
    let zlib = mcpool::Codec::Zlib.compress(text.as_bytes(), 6).unwrap();
    raw_set(&s, "pz", 24, &zlib);
    raw_set(&s, "pi", 2, b"42");
    // The default (mcpool) format: an error naming the key and the flags, exit 2, nothing on
    // stdout (formerly: the compressed bytes and exit 0).
    let o = with(&["get", "pz"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(code(&o), 2, "{err}");
    assert!(o.stdout.is_empty());
    assert!(
        err.contains("pz") && err.contains("24") && err.contains("pylibmc"),
        "{err}"
    );
    // With the writer's format: the text, and the integer readably.
    let o = with(&["--value-format", "pylibmc", "get", "pz"]);
    assert_eq!(
        (code(&o), o.stdout.clone()),
        (0, format!("{text}\n").into_bytes())
    );
    let o = with(&["--value-format", "python-memcached", "get", "pi"]);
    assert_eq!((code(&o), o.stdout.as_slice()), (0, &b"42\n"[..]));
    // A corrupt stream under the right format: exit 2 with the message.
    raw_set(&s, "bad", 24, b"x\x9c definitely not zlib");
    let o = with(&["--value-format", "pylibmc", "get", "bad"]);
    assert_eq!(code(&o), 2);
    assert!(String::from_utf8_lossy(&o.stderr).contains("bad"));
    // Kinds written by the CLI, read back typed; Whalin's binary integer printed as a number.
    assert_eq!(
        code(&with(&[
            "--value-format",
            "whalin",
            "set",
            "wi",
            "300",
            "--kind",
            "int"
        ])),
        0
    );
    let o = with(&["--value-format", "whalin", "get", "wi"]);
    assert_eq!(o.stdout, b"300\n");
    assert_eq!(code(&with(&["set", "b", "true", "--kind", "bool"])), 0);
    assert_eq!(with(&["get", "b"]).stdout, b"true\n");
    assert_eq!(code(&with(&["set", "n", "x", "--kind", "int"])), 2);
    // zstd only where the format marks it.
    let big = "z".repeat(40_000);
    assert_eq!(
        code(&with(&["--compression-codec", "zstd", "set", "zs", &big])),
        0
    );
    assert_eq!(with(&["get", "zs"]).stdout, format!("{big}\n").into_bytes());
    let o = with(&[
        "--value-format",
        "pylibmc",
        "--compression-codec",
        "zstd",
        "get",
        "zs",
    ]);
    assert_eq!(code(&o), 2);
    assert!(String::from_utf8_lossy(&o.stderr).contains("zstd"));
}
