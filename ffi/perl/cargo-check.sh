#!/usr/bin/env bash
# The Perl dist built with only cargo (make perl-dist-cargo-check; not in make test-perl: it
# compiles the Rust core from scratch, minutes): make dist, the tarball unpacked outside the
# repository, MCPOOL_BUILD_CORE=1 perl Makefile.PL (must take the bundled mcpool-core/, even if
# a libmcpool is installed), make (cargo build of the bundled core), make test of 00-load.t and
# 01-commands.t. Run from the repository root.
set -euo pipefail
make=${MAKE:-make}
root=$(pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mcpool-perl-cargo.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
unset MCPOOL_LIB_DIR MCPOOL_INCLUDE_DIR CARGO_TARGET_DIR PERL5LIB PERL_MM_OPT PERL_MB_OPT
version=$(sed -n "s/^our \$VERSION = '\(.*\)';/\1/p" ffi/perl/lib/Mcpool.pm)
dist=Mcpool-$version.tar.gz
(cd ffi/perl && rm -f "$dist" && perl Makefile.PL >/dev/null && "$make" --no-print-directory dist >/dev/null)
mv "ffi/perl/$dist" "$tmp/"
tar xzf "$tmp/$dist" -C "$tmp"
cd "$tmp/Mcpool-$version"
MCPOOL_BUILD_CORE=1 perl Makefile.PL > "$tmp/configure.log"
grep -q "linking the bundled Rust core" "$tmp/configure.log" \
  || { cat "$tmp/configure.log" >&2; echo "perl-dist-cargo-check: Makefile.PL did not take the bundled core" >&2; exit 1; }
grep '^Mcpool ' "$tmp/configure.log"
nice "$make" --no-print-directory
"$make" --no-print-directory test TEST_FILES='t/00-load.t t/01-commands.t'
so=blib/arch/auto/Mcpool/Mcpool.so
echo "perl-dist-cargo-check: $dist built with cargo from its bundled core outside $root; Mcpool.so $(stat -c %s $so) B"
