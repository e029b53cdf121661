#!/bin/sh
# Builds the mcpool Python extension for `mcpool bench` into DEST (bench/peers/peers.conf,
# section [mcpool-python]); rebuilds only when libmcpool.a or the C source is newer.
# usage: bench_build.sh DEST
set -eu
dest=$1
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
libdir=${CARGO_TARGET_DIR:-$root/target}/release
(cd "$root" && cargo build --quiet --release -p mcpool-capi)
so=$(find "$dest" -name '_mcpool*.so' -newer "$libdir/libmcpool.a" -newer "$here/src/_mcpool.c" 2>/dev/null | head -n 1)
[ -n "$so" ] && exit 0
rm -rf "$dest" "$here/build"
cd "$root"
MCPOOL_LIB_DIR=$libdir /usr/bin/python3 -m pip install --quiet --no-build-isolation --no-deps \
  --no-index --target "$dest" ./ffi/python 2>&1 | grep -v "as the 'root' user" >&2 || true
find "$dest" -name '_mcpool*.so' | grep -q . 
