#!/bin/sh
# Regenerates the committed placement fixtures from the real client libraries:
#   tests/fixtures/placement/keys.txt   the shared key set (tools/placement/make-keys.py)
#   tests/fixtures/placement/cases.txt  per case, the server index each library picks per key
#   tests/fixtures/placement/settings.txt  the same for client settings (CLIENT:WORD=VALUE,...)
# Needs (Debian): libcache-memcached-perl libcache-memcached-fast-perl python3-memcache
# python3-pylibmc python3-pymemcache libmemcached-dev libspymemcached-java default-jdk
# nutcracker memcached. Starts memcached on 127.77.N.I (loopback) and stops it again.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
fixtures="$here/../../tests/fixtures/placement"
mkdir -p "$fixtures"
/usr/bin/python3 "$here/make-keys.py" > "$fixtures/keys.txt"
/usr/bin/python3 "$here/run-cases.py" --keys "$fixtures/keys.txt" --out "$fixtures/cases.txt.new" \
    --out-settings "$fixtures/settings.txt.new"
mv "$fixtures/cases.txt.new" "$fixtures/cases.txt"
mv "$fixtures/settings.txt.new" "$fixtures/settings.txt"
echo "wrote $fixtures/keys.txt, $fixtures/cases.txt and $fixtures/settings.txt" >&2
