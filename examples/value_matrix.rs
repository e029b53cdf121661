//! The Rust driver of the value matrix (ffi/matrix/run.py, `make test-matrix`):
//! `value_matrix MODE FORMAT SERVER FIXDIR < plan`, plan lines `KEY KIND`, output lines
//! `KEY OK`, `KEY ERR message`, `KEY DIFF what` or `KEY MISS`. Kinds: `ascii`, `bin1m`,
//! `empty` and any `...b` are bytes; `utf8`, `text100k` text; `int` an integer.
use std::io::BufRead;

use mcpool::{Client, Value, ValueFormat};

fn native(kind: &str, dir: &str) -> Value {
    let raw = kind.ends_with('b') && kind != "empty";
    let base = if raw { &kind[..kind.len() - 1] } else { kind };
    let data = std::fs::read(format!("{dir}/{base}.bin")).expect("fixture");
    match base {
        _ if raw => Value::Bytes(data),
        "int" => Value::Int(
            String::from_utf8(data)
                .expect("int")
                .trim()
                .parse()
                .expect("int"),
        ),
        "utf8" | "text100k" => Value::Text(String::from_utf8(data).expect("utf-8")),
        _ => Value::Bytes(data),
    }
}

fn describe(v: &Value) -> String {
    match v {
        Value::Bytes(b) => format!("bytes of {}", b.len()),
        Value::Text(s) => format!("text of {}", s.len()),
        other => format!("{other:?}"),
    }
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let (mode, fmt, server, dir) = (&a[1], &a[2], &a[3], &a[4]);
    let format: ValueFormat = fmt.parse().expect("value format");
    let c = Client::builder()
        .server(server)
        .value_format(format)
        .compression(true)
        .compression_threshold(1024)
        .max_value_size(2 * 1024 * 1024)
        .min_idle(0)
        .build()
        .expect("client");
    for line in std::io::stdin().lock().lines() {
        let line = line.expect("stdin");
        let mut it = line.split_whitespace();
        let (Some(key), Some(kind)) = (it.next(), it.next()) else {
            continue;
        };
        let want = native(kind, dir);
        if mode == "write" {
            match c.set_value(key, &want, 0) {
                Ok(_) => println!("{key} OK"),
                Err(e) => println!("{key} ERR {e}"),
            }
            continue;
        }
        match c.get_value(key) {
            Ok(None) => println!("{key} MISS"),
            Ok(Some(v)) if v == want => println!("{key} OK"),
            Ok(Some(v)) => println!("{key} DIFF {}", describe(&v)),
            Err(e) => println!("{key} ERR {}", e.to_string().replace('\n', " ")),
        }
    }
}
