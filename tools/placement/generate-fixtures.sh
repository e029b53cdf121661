#!/bin/sh
# Regenerates the committed placement fixtures from the real client libraries:
#   tests/fixtures/placement/keys.txt   the shared key set (tools/placement/make-keys.py)
#   tests/fixtures/placement/cases.txt  per case, the server index each library picks per key
#   tests/fixtures/placement/settings.txt  the same for client settings (CLIENT:WORD=VALUE,...)
# Needs (Debian): libcache-memcached-perl libcache-memcached-fast-perl python3-memcache
# python3-pylibmc python3-pymemcache libmemcached-dev libspymemcached-java default-jdk
# nutcracker memcached, and cargo (the Rust memcache crate from crates.io). Starts memcached on 127.77.N.I (loopback) and stops it again.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
fixtures="$here/../../tests/fixtures/placement"
mkdir -p "$fixtures"
/usr/bin/python3 "$here/make-keys.py" > "$fixtures/keys.txt"
/usr/bin/python3 "$here/run-cases.py" --keys "$fixtures/keys.txt" --out "$fixtures/cases.txt.new" \
    --out-settings "$fixtures/settings.txt.new"
# The Rust memcache crate: its own hash function, from a client of one memcached.
cargo build --quiet --release --manifest-path "$here/place-rust-memcache/Cargo.toml"
port=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
memcached -u nobody -l 127.0.0.1 -p "$port" -U 0 & mc=$!
trap 'kill $mc 2>/dev/null' EXIT
/usr/bin/python3 -c 'import socket, sys, time
for _ in range(50):
    try:
        socket.create_connection(("127.0.0.1", int(sys.argv[1])), 0.2).close(); break
    except OSError: time.sleep(0.1)' "$port"
"$here/place-rust-memcache/target/release/place-rust-memcache" "$fixtures/keys.txt" "127.0.0.1:$port" \
    >> "$fixtures/cases.txt.new"
mv "$fixtures/cases.txt.new" "$fixtures/cases.txt"
mv "$fixtures/settings.txt.new" "$fixtures/settings.txt"
echo "wrote $fixtures/keys.txt, $fixtures/cases.txt and $fixtures/settings.txt" >&2
