#!/usr/bin/env bash
# The Perl dist as a user installs it (make perl-install-check, part of make test-perl):
#   1. the C library into a scratch prefix (the root's make install PREFIX=...);
#   2. make dist here, the tarball unpacked into a scratch directory outside the repository;
#   3. there: PKG_CONFIG_PATH=PREFIX/lib/pkgconfig perl Makefile.PL (must take pkg-config
#      mcpool-static), make, make test (00-load.t, 01-commands.t and 10-chi.t only: the full
#      suite has just run from ffi/perl; every tracked test file must be in the MANIFEST), the
#      tests skipped without memcached, make install (configured with INSTALL_BASE=scratch);
#   4. with the C prefix removed (the module links libmcpool.a: it needs nothing at run
#      time), perl -I... -MMcpool set/get against a private memcached (ffi/c/with_memcached.sh).
# Run from the repository root; MAKE is the make to use.
set -euo pipefail
make=${MAKE:-make}
root=$(pwd)
[ -e "$root/ffi/perl/Makefile.PL" ] || { echo "perl-install-check: run from the repository root" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mcpool-perl.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
case "$tmp" in "$root"/*) echo "perl-install-check: $tmp is inside the repository" >&2; exit 1;; esac
# What the user's shell would not have: this repository's build settings.
unset MCPOOL_LIB_DIR MCPOOL_INCLUDE_DIR MCPOOL_BUILD_CORE PERL5LIB PERL_MM_OPT PERL_MB_OPT
# Every file the tests use is in the dist (tester finding packaging 1: t/10-chi.t's helper was
# not, and the dist's make test failed).
missing=$(git ls-files ffi/perl/t ffi/perl/lib | sed 's|^ffi/perl/||' | while read -r f; do
  awk '{print $1}' ffi/perl/MANIFEST | grep -qxF "$f" || echo "$f"; done)
[ -z "$missing" ] || { echo "perl-install-check: not in ffi/perl/MANIFEST: $missing" >&2; exit 1; }
export MCPOOL_REQUIRE_MEMCACHED=1
version=$(sed -n "s/^our \$VERSION = '\(.*\)';/\1/p" ffi/perl/lib/Mcpool.pm)
crate=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
[ "$version" = "$crate" ] || { echo "perl-install-check: lib/Mcpool.pm is $version, the crate $crate" >&2; exit 1; }

"$make" --no-print-directory install PREFIX="$tmp/prefix" >/dev/null

dist=Mcpool-$version.tar.gz
(cd ffi/perl && rm -f "$dist" && perl Makefile.PL >/dev/null && "$make" --no-print-directory dist >/dev/null)
mv "ffi/perl/$dist" "$tmp/"
mkdir "$tmp/build"
tar xzf "$tmp/$dist" -C "$tmp/build"
for f in Makefile.PL Mcpool.xs typemap lib/Mcpool.pm t/lib/McpoolTest.pm LICENSE-MIT LICENSE-APACHE THIRD-PARTY-NOTICES README \
         MANIFEST META.json mcpool-core/Cargo.toml mcpool-core/include/mcpool.h; do
  [ -e "$tmp/build/Mcpool-$version/$f" ] || { echo "perl-install-check: $dist lacks $f" >&2; exit 1; }
done

cd "$tmp/build/Mcpool-$version"
# INSTALL_BASE is MakeMaker's configure-time option (on make's command line it would not move
# the install paths: make install would write into the system's site directories).
# MCPOOL_FEATURES=tls against an installed library built without TLS stops at configure time,
# naming it (it would otherwise build, and refuse the first TLS option at run time).
if ! grep -q rustls "$tmp/prefix/lib/libmcpool.a"; then
  if MCPOOL_FEATURES=tls PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig" perl Makefile.PL > "$tmp/tls.log" 2>&1; then
    cat "$tmp/tls.log" >&2; echo "perl-install-check: MCPOOL_FEATURES=tls took a library without TLS" >&2; exit 1
  fi
  grep -q "asks for TLS, but pkg-config mcpool-static" "$tmp/tls.log" \
    || { cat "$tmp/tls.log" >&2; echo "perl-install-check: no clear stop for MCPOOL_FEATURES=tls" >&2; exit 1; }
  echo "perl-install-check: MCPOOL_FEATURES=tls with a library without TLS stops, naming it"
fi
PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig" perl Makefile.PL INSTALL_BASE="$tmp/perl5" > "$tmp/configure.log"
grep -q "linking pkg-config mcpool-static" "$tmp/configure.log" \
  || { cat "$tmp/configure.log" >&2; echo "perl-install-check: Makefile.PL did not take pkg-config mcpool-static" >&2; exit 1; }
grep '^Mcpool ' "$tmp/configure.log"
"$make" --no-print-directory >/dev/null
"$make" --no-print-directory test TEST_FILES='t/00-load.t t/01-commands.t t/10-chi.t'
# Without memcached (a CPAN install on a machine without one: no MEMCACHED, none on PATH) the
# tests that need it are skipped, naming what to install; they do not fail. A MEMCACHED that
# names no program (a typo) stops them, naming it (tester finding packaging 10).
MCPOOL_REQUIRE_MEMCACHED= env -u MEMCACHED PATH=/nonexistent "$(command -v perl)" "$(command -v prove)" -b t/01-commands.t \
  > "$tmp/skip.log" 2>&1 || { cat "$tmp/skip.log" >&2; echo "perl-install-check: without memcached the tests failed" >&2; exit 1; }
grep -q "skipped: no memcached to test against" "$tmp/skip.log" \
  || { cat "$tmp/skip.log" >&2; echo "perl-install-check: without memcached, no skip naming it" >&2; exit 1; }
if MCPOOL_REQUIRE_MEMCACHED= MEMCACHED=/nonexistent/memcached prove -b t/01-commands.t > "$tmp/typo.log" 2>&1; then
  cat "$tmp/typo.log" >&2; echo "perl-install-check: with MEMCACHED naming no program the tests passed" >&2; exit 1
fi
grep -q "MEMCACHED=/nonexistent/memcached names no executable program" "$tmp/typo.log" \
  || { cat "$tmp/typo.log" >&2; echo "perl-install-check: MEMCACHED naming no program is not named" >&2; exit 1; }
grep -qx "INSTALL_BASE = $tmp/perl5" Makefile && grep -q '^INSTALLSITEARCH = $(INSTALL_BASE)/' Makefile \
  || { echo "perl-install-check: make install would not go to $tmp/perl5" >&2; exit 1; }
"$make" --no-print-directory install >/dev/null
so=$(find "$tmp/perl5" -name Mcpool.so)
[ -n "$so" ] || { echo "perl-install-check: no Mcpool.so under $tmp/perl5" >&2; exit 1; }
if readelf -d "$so" | grep -q 'NEEDED.*libmcpool'; then echo "perl-install-check: $so needs libmcpool.so" >&2; exit 1; fi
rm -rf "$tmp/prefix" "$tmp/build"

cd "$tmp"
"$root/ffi/c/with_memcached.sh" perl -I"$tmp/perl5/lib/perl5" -MMcpool -e '
  my ($base) = @ARGV;
  index($INC{"Mcpool.pm"}, $base) == 0 or die "Mcpool loaded from $INC{q(Mcpool.pm)}, not $base\n";
  my $m = Mcpool->new({ servers => [$ENV{MCPOOL_TEST_SERVER}] });
  $m->set("perl-install-check", "hello \x{e9}") or die "set failed\n";
  my $v = $m->get("perl-install-check");
  $v eq "hello \x{e9}" or die "get returned ", $v // "undef", "\n";
  print "perl-install-check: set/get through the installed Mcpool ", Mcpool::library_version(), " ok\n";
' "$tmp/perl5"
echo "perl-install-check: $dist ($(stat -c %s "$tmp/$dist") B) built against an installed libmcpool" \
  "(pkg-config mcpool-static) outside the repository, tested, installed with INSTALL_BASE;" \
  "Mcpool.so $(stat -c %s "$so") B, needs no libmcpool at run time"
