//! Build script of the C ABI crate: writes the repository's `include/mcpool.h` from `src/` with cbindgen, but only when asked
//! (`MCPOOL_GEN_HEADER=1`, or the `gen-header` feature). Writing outside `OUT_DIR` on every
//! build would break `cargo publish` (mozilla/cbindgen#560), so normal builds do nothing and
//! the test command checks the committed header for drift instead (`make test-c`).
//! `MCPOOL_HEADER_OUT` writes the header elsewhere (the drift check writes to a temp dir).

use std::env;
use std::path::PathBuf;

/// The header's sections, in order: a title and the name prefixes of its functions (the
/// first matching section wins). cbindgen emits functions by module; this puts them in the
/// order a C programmer reads them, each section under a banner.
const SECTIONS: &[(&str, &[&str])] = &[
    (
        "Statuses, errors, version",
        &[
            "mcpool_status_",
            "mcpool_last_error_",
            "mcpool_last_item_error_",
            "mcpool_last_item_outcome_",
            "mcpool_version",
            "mcpool_tls_supported",
            "mcpool_interrupt_",
        ],
    ),
    (
        "Configuration",
        &[
            "mcpool_config_",
            "mcpool_option_",
            "mcpool_address_",
            "mcpool_server_list_",
        ],
    ),
    (
        "Client",
        &[
            "mcpool_client_new",
            "mcpool_client_free",
            "mcpool_client_server_",
        ],
    ),
    (
        "Metrics and events",
        &[
            "mcpool_client_metrics",
            "mcpool_metric_",
            "mcpool_metrics_",
            "mcpool_event_",
        ],
    ),
    (
        "Servers at run time, resolver answers",
        &["mcpool_client_set_servers", "mcpool_resolved_"],
    ),
    ("Per-operation records (docs/tracing.md)", &["mcpool_op_"]),
    (
        "Commands",
        &[
            "mcpool_client_",
            "mcpool_expiry_",
            "mcpool_delay_",
            "mcpool_whole_seconds",
        ],
    ),
    ("Items", &["mcpool_item_"]),
    ("Multi-get result sets", &["mcpool_multi_"]),
    (
        "Per-server results (version, stats)",
        &["mcpool_server_results_"],
    ),
];

/// The C ABI's version: the `0` of the shared library's SONAME `libmcpool.so.0`. Raise it
/// when a released entry point changes incompatibly.
const ABI_VERSION: &str = "0";

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    // A versioned SONAME, so programs record `libmcpool.so.0` and a later incompatible
    // library can be installed beside this one (`make install` adds the usual symlinks).
    if env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libmcpool.so.{ABI_VERSION}");
    }
    println!("cargo:rerun-if-env-changed=MCPOOL_GEN_HEADER");
    println!("cargo:rerun-if-env-changed=MCPOOL_HEADER_OUT");
    let wanted = env::var("MCPOOL_GEN_HEADER").is_ok_and(|v| v == "1")
        || env::var_os("CARGO_FEATURE_GEN_HEADER").is_some();
    if !wanted {
        return;
    }
    println!("cargo:rerun-if-changed=cbindgen.toml");
    println!("cargo:rerun-if-changed=src");
    let crate_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let out = env::var_os("MCPOOL_HEADER_OUT")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let repo = crate_dir.parent().expect("capi/ lies in the repository");
            repo.join("include").join("mcpool.h")
        });
    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml"))
        .expect("cbindgen.toml is readable and valid");
    // Only this crate is parsed, so public items of the Rust API never leak into the header.
    let bindings = cbindgen::Builder::new()
        .with_config(config)
        .with_src(crate_dir.join("src").join("lib.rs"))
        .generate()
        .expect("cbindgen could not generate the header");
    let mut raw = Vec::new();
    bindings.write(&mut raw);
    let text = String::from_utf8(raw).expect("cbindgen writes UTF-8");
    let text = add_sections(&text);
    if let Some(dir) = out.parent() {
        std::fs::create_dir_all(dir).expect("create the header's directory");
    }
    std::fs::write(&out, text).expect("write the header");
}

/// Regroups the function declarations by section, each under a banner comment.
fn add_sections(header: &str) -> String {
    const OPEN: &str = "extern \"C\" {\n#endif // __cplusplus\n\n";
    const CLOSE: &str = "\n#ifdef __cplusplus\n}  // extern \"C\"";
    let begin = header.find(OPEN).expect("extern C block") + OPEN.len();
    let end = header.rfind(CLOSE).expect("end of extern C block");
    let section_of = |block: &str| -> usize {
        // The declaration follows the doc comment; its name is the word before `(`.
        let decl = block.rsplit("*/").next().unwrap_or(block);
        let name = decl[..decl.find('(').expect("a function declaration")]
            .rsplit([' ', '*'])
            .next()
            .unwrap_or_default();
        SECTIONS
            .iter()
            .position(|(_, prefixes)| prefixes.iter().any(|p| name.starts_with(p)))
            .unwrap_or_else(|| panic!("function {name} belongs to no header section"))
    };
    let mut blocks: Vec<(usize, &str)> = header[begin..end]
        .split("\n\n")
        .filter(|b| !b.trim().is_empty())
        .map(|b| (section_of(b), b))
        .collect();
    blocks.sort_by_key(|&(section, _)| section); // stable: source order within a section
    let rule = format!("/* {} */", "-".repeat(92));
    let mut out = header[..begin].to_owned();
    let mut current = None;
    for (section, block) in blocks {
        if current != Some(section) {
            current = Some(section);
            let title = SECTIONS[section].0;
            out += &format!("{rule}\n/* {title:<92} */\n{rule}\n\n");
        }
        out += block;
        out += "\n\n";
    }
    out.truncate(out.trim_end().len());
    out += "\n";
    out += &header[end..];
    out
}
