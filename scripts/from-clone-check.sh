#!/bin/sh
# The bindings' "from a clone" builds never link an old core (README: `pip install
# ./ffi/python`, `cd ffi/perl && perl Makefile.PL && make`):
#  - with cargo, they run cargo on the repository every time (a no-op when the core is up to
#    date), whatever target/release already holds: a cargo wrapper records that it ran;
#  - without cargo, a libmcpool.a older than the core's sources is refused with a message,
#    one newer than them is linked.
# Usage: scripts/from-clone-check.sh python|perl (after `make lib`; run by test-python and
# test-perl). Nothing is installed outside a temporary directory.
set -eu
repo=$(cd "$(dirname "$0")/.." && pwd)
which=${1:?usage: from-clone-check.sh python|perl}
target=$(cd "$repo" && mkdir -p "${CARGO_TARGET_DIR:-target}" && cd "${CARGO_TARGET_DIR:-target}" && pwd)
python=${PYTHON:-/usr/bin/python3}
real_cargo=$(command -v "${CARGO:-cargo}") || { echo "from-clone-check: cargo not found" >&2; exit 1; }
[ -e "$target/release/libmcpool.a" ] || { echo "from-clone-check: run make lib first" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; rm -rf "$repo/ffi/python/build"' EXIT
fail() { echo "from-clone-check ($which): $*" >&2; exit 1; }

# A cargo that notes each call, then runs the real one.
cat > "$tmp/cargo" <<EOF
#!/bin/sh
echo "\$*" >> "$tmp/cargo.log"
exec "$real_cargo" "\$@"
EOF
chmod +x "$tmp/cargo"
# A target directory whose libmcpool.a is a copy of the built one, as old or as new as wanted.
mkdir -p "$tmp/target/release"
cp "$target/release/libmcpool.a" "$tmp/target/release/libmcpool.a"
nocargo_path=/usr/bin:/bin

case $which in
python)
	build() { # build ENV...: the extension into $tmp/site as the README's `pip install ./ffi/python`
		rm -rf "$tmp/site" "$repo/ffi/python/build"
		env -u MCPOOL_LIB_DIR "$@" "$python" -m pip install --quiet --no-build-isolation --no-deps \
			--no-index --target "$tmp/site" "$repo/ffi/python" >"$tmp/out" 2>&1
	}
	build CARGO="$tmp/cargo" || { cat "$tmp/out" >&2; fail "pip install ./ffi/python failed"; }
	grep -q 'build --release -p mcpool-capi' "$tmp/cargo.log" 2>/dev/null \
		|| fail "pip install ./ffi/python did not run cargo: it would link whatever $target/release holds"
	touch -d '2000-01-01' "$tmp/target/release/libmcpool.a"
	if build CARGO=/nonexistent/cargo PATH="$nocargo_path" HOME="$tmp" CARGO_TARGET_DIR="$tmp/target"; then
		fail "without cargo, an archive older than the sources was linked"
	fi
	grep -q 'older than the sources' "$tmp/out" || { cat "$tmp/out" >&2; fail "no clear message for a stale archive"; }
	touch "$tmp/target/release/libmcpool.a"
	build CARGO=/nonexistent/cargo PATH="$nocargo_path" HOME="$tmp" CARGO_TARGET_DIR="$tmp/target" \
		|| { cat "$tmp/out" >&2; fail "without cargo, an up-to-date archive was refused"; }
	;;
perl)
	cp -a "$repo/ffi/perl" "$tmp/perl"
	# Makefile.PL finds the repository two levels up: a copy of the core's sources (times kept)
	# with ffi/perl in it.
	mkdir -p "$tmp/repo/ffi"
	for f in Cargo.toml Cargo.lock src capi include; do cp -a "$repo/$f" "$tmp/repo/$f"; done
	mv "$tmp/perl" "$tmp/repo/ffi/perl"
	cd "$tmp/repo/ffi/perl"
	env -u MCPOOL_LIB_DIR CARGO="$tmp/cargo" perl Makefile.PL >"$tmp/out" 2>&1 || { cat "$tmp/out" >&2; fail "perl Makefile.PL failed"; }
	grep -q '^cargo-build-core :' Makefile && grep -q 'build --release -p mcpool-capi' Makefile \
		|| fail "perl Makefile.PL wrote no cargo build of the core: make would link whatever $target/release holds"
	touch -d '2000-01-01' "$tmp/target/release/libmcpool.a"
	if env -u MCPOOL_LIB_DIR CARGO=/nonexistent/cargo CARGO_TARGET_DIR="$tmp/target" perl Makefile.PL >"$tmp/out" 2>&1; then
		fail "without cargo, an archive older than the sources was taken"
	fi
	grep -q 'older than the sources' "$tmp/out" || { cat "$tmp/out" >&2; fail "no clear message for a stale archive"; }
	touch "$tmp/target/release/libmcpool.a"
	env -u MCPOOL_LIB_DIR CARGO=/nonexistent/cargo CARGO_TARGET_DIR="$tmp/target" perl Makefile.PL >"$tmp/out" 2>&1 \
		|| { cat "$tmp/out" >&2; fail "without cargo, an up-to-date archive was refused"; }
	;;
*) echo "usage: from-clone-check.sh python|perl" >&2; exit 2 ;;
esac
echo "from-clone-check ($which): cargo runs on every build from the clone; without it a stale libmcpool.a is refused"
