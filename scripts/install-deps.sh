#!/usr/bin/env bash
# Installs what the tests and the benchmark need from the system's packages, or says exactly
# what is missing. Idempotent: installs only what is absent. Extra package lists can be added
# by the bindings in ffi/*/packages.txt (one Debian package per line).
# The C and C++ compilers (build-essential: cargo's linker, the C code of libdeflate and zstd,
# the C tests, the Perl and Python extensions, libFuzzer) come from the system's packages too.
# The Rust toolchain does not (Debian's is often older than the crate's rust-version): without
# cargo, rustfmt and clippy of at least that version, this says so and how to get them (rustup).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(memcached libmemcached-dev libmemcached-tools libcache-memcached-perl
  libcache-memcached-fast-perl python3-pylibmc python3-pymemcache python3-memcache
  python3-pytest python3-dev libspymemcached-java nutcracker junit4 valgrind sasl2-bin
  pkg-config iproute2 libperl-dev openssl default-jdk-headless cmake build-essential git)
for f in ffi/*/packages.txt; do
  [ -f "$f" ] && while read -r p; do [ -n "$p" ] && packages+=("$p"); done < <(grep -v '^#' "$f")
done

# The Rust toolchain: cargo with rustfmt and clippy, at least Cargo.toml's rust-version.
rust_check() {
  local msrv have get
  msrv=$(sed -n 's/^rust-version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
  get="curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal --component rustfmt,clippy"
  if ! command -v cargo >/dev/null 2>&1; then
    if [ -x "$HOME/.cargo/bin/cargo" ]; then
      echo "install-deps: cargo is in $HOME/.cargo/bin but not on PATH: export PATH=\"\$HOME/.cargo/bin:\$PATH\"" >&2
    else
      echo "install-deps: no Rust toolchain (cargo, rustc $msrv or later, rustfmt, clippy); install it with rustup:" >&2
      echo "  $get" >&2
      echo "  then: . \"\$HOME/.cargo/env\" (or open a new shell)" >&2
    fi
    return 1
  fi
  have=$(rustc --version 2>/dev/null | sed -n 's/^rustc \([0-9]*\.[0-9]*\(\.[0-9]*\)\{0,1\}\).*/\1/p')
  if [ -z "$have" ] || [ "$(printf '%s\n%s\n' "$msrv" "$have" | sort -V | head -n 1)" != "$msrv" ]; then
    echo "install-deps: rustc ${have:-(none)} is older than the crate's rust-version $msrv:" \
      "rustup update stable (or: $get)" >&2
    return 1
  fi
  if ! cargo fmt --version >/dev/null 2>&1; then
    echo "install-deps: cargo fmt is missing: rustup component add rustfmt" >&2
    return 1
  fi
  if ! cargo clippy --version >/dev/null 2>&1; then
    echo "install-deps: cargo clippy is missing: rustup component add clippy" >&2
    return 1
  fi
}

missing=()
for p in $(printf '%s\n' "${packages[@]}" | sort -u); do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then rust_check; exit; fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-deps: not a Debian-like system; please install the equivalents of: ${missing[*]}" >&2
  exit 1
fi
sudo=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
    echo "install-deps: missing packages and no root: run as root: apt-get install ${missing[*]}" >&2
    exit 1
  fi
fi
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q >/dev/null
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
# Installing memcached starts a system service on 11211 on some systems; our tests never use it.
rust_check
