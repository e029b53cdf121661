//! docs/c-abi.md against include/mcpool.h: every call the guide writes out in full
//! (`mcpool_name(arg, ...)`) has as many arguments as the header's prototype, so code written
//! from the guide compiles (tester finding cteam2 5: `mcpool_client_store_multi_kind` was given
//! without its `flags`). Short forms (`_set_serialized(...)`, a suffix of several functions)
//! are not checked.

use std::collections::HashMap;

fn read(rel: &str) -> String {
    let path = format!("{}/../{rel}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// `text` without its `/* ... */` comments.
fn without_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("/*") {
        out.push_str(&rest[..at]);
        rest = rest[at..]
            .find("*/")
            .map_or("", |end| &rest[at + end + 2..]);
    }
    out.push_str(rest);
    out
}

/// The text of `s` up to the parenthesis that closes one opened just before it (`s` starts
/// with the first argument), or `None` when it is never closed.
fn balanced(s: &str) -> Option<&str> {
    let mut depth = 1usize;
    for (i, b) in s.bytes().enumerate() {
        match b {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(&s[..i]);
                }
            }
            _ => {}
        }
    }
    None
}

/// How many arguments `args` holds: top-level commas plus one (`void` or nothing: 0).
fn count(args: &str) -> usize {
    let args = args.trim();
    if args.is_empty() || args == "void" {
        return 0;
    }
    let mut depth = 0i32;
    let mut n = 1;
    for b in args.bytes() {
        match b {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            b',' if depth == 0 => n += 1,
            _ => {}
        }
    }
    n
}

/// Every `mcpool_name(` in `text` (not preceded by a word byte) with its arguments.
fn calls(text: &str) -> Vec<(&str, &str)> {
    let mut found = Vec::new();
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(at) = text[from..].find("mcpool_") {
        let start = from + at;
        from = start + 1;
        if start > 0 && (bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'_') {
            continue;
        }
        let end = start
            + text[start..]
                .bytes()
                .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
                .count();
        if bytes.get(end) != Some(&b'(') {
            continue;
        }
        if let Some(args) = balanced(&text[end + 1..]) {
            found.push((&text[start..end], args));
        }
    }
    found
}

#[test]
fn guide_calls_match_the_header() {
    let header = without_comments(&read("include/mcpool.h"));
    let mut protos: HashMap<&str, usize> = HashMap::new();
    for (name, args) in calls(&header) {
        protos.entry(name).or_insert_with(|| count(args));
    }
    assert!(
        protos.len() > 150 && protos.get("mcpool_client_store_multi_kind") == Some(&13),
        "the header's prototypes were not read: {} found",
        protos.len()
    );
    let guide = read("docs/c-abi.md");
    let mut wrong = Vec::new();
    let mut checked = 0;
    for (name, args) in calls(&guide) {
        let Some(&want) = protos.get(name) else {
            wrong.push(format!("{name}: not in the header"));
            continue;
        };
        checked += 1;
        let got = count(args);
        if got != want {
            let args = args.split_whitespace().collect::<Vec<_>>().join(" ");
            wrong.push(format!(
                "{name}({args}): {got} arguments, the header has {want}"
            ));
        }
    }
    assert!(checked > 40, "only {checked} calls found in docs/c-abi.md");
    assert!(wrong.is_empty(), "docs/c-abi.md:\n{}", wrong.join("\n"));
}
