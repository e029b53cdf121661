#!/bin/sh
# Two promises the packages make, checked from the sources (run by `make test`, test-versions):
#  1. The minimum Rust: every crate of the workspace declares the same `rust-version`, and no
#     locked dependency (Cargo.lock, as the Python sdist and the Perl dist build it, `--locked`,
#     with every feature, for this host) declares a higher one; with that toolchain installed,
#     the workspace builds with it.
#  2. The version: the one of the root Cargo.toml is the one of every other crate, the Python
#     package (pyproject.toml, mcpool.__version__), the Perl modules and the Maven pom.
set -eu
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
fail=0

field() { # field FILE KEY: the first `KEY = "value"` of a TOML file
	sed -n "s/^$2 = \"\(.*\)\"/\1/p" "$1" | head -n 1
}

msrv=$(field Cargo.toml rust-version)
version=$(field Cargo.toml version)
[ -n "$msrv" ] && [ -n "$version" ] || { echo "version-check: no version/rust-version in Cargo.toml" >&2; exit 1; }

for toml in capi/Cargo.toml cli/Cargo.toml bench/Cargo.toml testkit/Cargo.toml; do
	m=$(field "$toml" rust-version)
	v=$(field "$toml" version)
	[ "$m" = "$msrv" ] || { echo "version-check: $toml has rust-version \"$m\", Cargo.toml \"$msrv\"" >&2; fail=1; }
	[ "$v" = "$version" ] || { echo "version-check: $toml has version \"$v\", Cargo.toml \"$version\"" >&2; fail=1; }
done

check() { # check WHERE VALUE
	[ "$2" = "$version" ] || { echo "version-check: $1 says \"$2\", Cargo.toml \"$version\"" >&2; fail=1; }
}
check ffi/python/pyproject.toml "$(field ffi/python/pyproject.toml version)"
check "ffi/python/src/mcpool/__init__.py __version__" \
	"$(sed -n 's/^__version__ = "\(.*\)"/\1/p' ffi/python/src/mcpool/__init__.py)"
for pm in ffi/perl/lib/Mcpool.pm ffi/perl/lib/CHI/Driver/Mcpool.pm; do
	check "$pm \$VERSION" "$(sed -n "s/^our \$VERSION = '\(.*\)';/\1/p" "$pm" | head -n 1)"
done
check "include/mcpool.h MCPOOL_VERSION_*" "$(for p in MAJOR MINOR PATCH; do
	sed -n "s/^#define MCPOOL_VERSION_$p \([0-9]*\)$/\1/p" include/mcpool.h; done | paste -sd.)"
# The project's own <version>: the first one after <artifactId>mcpool</artifactId>.
check ffi/java/pom.xml "$(sed -n '/<artifactId>mcpool<\/artifactId>/,/<version>/s/.*<version>\(.*\)<\/version>.*/\1/p' ffi/java/pom.xml | head -n 1)"

# Every locked package this host builds, with every feature (tls), and its rust-version.
host=$(${RUSTC:-rustc} -vV | sed -n 's/^host: //p')
too_new=$(${CARGO:-cargo} metadata --format-version 1 --locked --all-features --filter-platform "$host" \
	| /usr/bin/python3 -c '
import json, sys
msrv = sys.argv[1]
def key(v):
    parts = [int(x) for x in v.split(".")]
    return parts + [0] * (3 - len(parts))
m = json.load(sys.stdin)
used = {n["id"] for n in m["resolve"]["nodes"]}
for p in m["packages"]:
    rv = p.get("rust_version")
    if p["id"] in used and rv and key(rv) > key(msrv):
        print("  %s %s needs Rust %s" % (p["name"], p["version"], rv))
' "$msrv") || { echo "version-check: cargo metadata failed" >&2; exit 1; }
if [ -n "$too_new" ]; then
	echo "version-check: Cargo.lock needs a newer Rust than the declared rust-version $msrv:" >&2
	printf '%s\n' "$too_new" >&2
	echo "  lock an older version (cargo update -p NAME --precise VERSION) or raise rust-version" \
		"everywhere (Cargo.toml files, ffi/python/README.md, setup.py)" >&2
	fail=1
fi

[ "$fail" = 0 ] || exit 1

# Our own code against the declared Rust, when that toolchain is installed (rustup toolchain
# install MSRV --profile minimal): the lock file check above cannot see a newer std API or
# language feature in our sources.
case $msrv in *.*.*) toolchain=$msrv ;; *) toolchain=$msrv.0 ;; esac
if command -v rustup >/dev/null 2>&1 && rustup run "$toolchain" rustc --version >/dev/null 2>&1; then
	CARGO_TARGET_DIR="$repo/target/msrv" rustup run "$toolchain" cargo check --quiet --locked --workspace \
		--all-targets --features mcpool/tls,mcpool-capi/tls \
		|| { echo "version-check: the workspace does not build with Rust $msrv" >&2; exit 1; }
	echo "version-check: version $version everywhere; the workspace and its locked dependencies build with Rust $msrv"
else
	echo "version-check: version $version everywhere; every locked dependency declares Rust $msrv or older" \
		"(rustup toolchain install $toolchain --profile minimal to also build the workspace with it)"
fi
