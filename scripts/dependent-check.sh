#!/bin/sh
# A Rust program that depends on the `mcpool` library crate builds no C artefact: builds a
# scratch crate with a path dependency on this repository's library and fails when its target
# directory holds a libmcpool.so or libmcpool.a (the C ABI is the separate capi/ crate).
set -eu
repo=$(cd "$(dirname "$0")/.." && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/src"
cat > "$dir/Cargo.toml" <<TOML
[package]
name = "dependent"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
mcpool = { path = "$repo" }

[workspace]
TOML
cat > "$dir/src/main.rs" <<'RS'
fn main() {
    let b = mcpool::Client::builder().server("127.0.0.1:11211");
    let _ = b;
}
RS
cp "$repo/Cargo.lock" "$dir/Cargo.lock"
CARGO_TARGET_DIR="$dir/target" ${CARGO:-cargo} build --quiet --offline --manifest-path "$dir/Cargo.toml" 2>/dev/null \
  || CARGO_TARGET_DIR="$dir/target" ${CARGO:-cargo} build --quiet --manifest-path "$dir/Cargo.toml"
found=$(find "$dir/target" -name 'libmcpool*.so' -o -name 'libmcpool*.a' | head -n 5)
if [ -n "$found" ]; then
  echo "test-dependent: building a dependent of the mcpool crate made C artefacts:" >&2
  echo "$found" >&2
  exit 1
fi
echo "test-dependent: a crate depending on mcpool built $(find "$dir/target/debug/deps" -name 'libmcpool-*.rlib' | wc -l) rlib of mcpool and no libmcpool.so/.a"
