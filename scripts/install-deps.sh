#!/usr/bin/env bash
# Installs what the tests and the benchmark need from the system's packages, or says exactly
# what is missing. Idempotent: installs only what is absent. Extra package lists can be added
# by the bindings in ffi/*/packages.txt (one Debian package per line).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(memcached libmemcached-dev libmemcached-tools libcache-memcached-perl
  libcache-memcached-fast-perl python3-pylibmc python3-pymemcache python3-memcache
  python3-pytest python3-dev libspymemcached-java nutcracker junit4 valgrind sasl2-bin
  pkg-config iproute2 libperl-dev openssl default-jdk-headless cmake)
for f in ffi/*/packages.txt; do
  [ -f "$f" ] && while read -r p; do [ -n "$p" ] && packages+=("$p"); done < <(grep -v '^#' "$f")
done

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

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
