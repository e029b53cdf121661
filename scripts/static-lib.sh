#!/bin/sh
# libmcpool.a as `make install` puts it (ffi/c/test.mk): cargo's archive (the core, Rust's std
# and the C code compiled in, zstd 1.5.7 and libdeflate, some 430 objects) linked into one
# relocatable object in which only the mcpool_* functions are global; no debug info. So a C
# program that also links the system's libzstd or libdeflate gets the system's copy whatever
# the link order, and two Rust static libraries in one program do not clash on std's symbols.
#
#   scripts/static-lib.sh IN.a OUT.a      (LD, OBJCOPY, AR, NM: the tools, default binutils)
#
# The bitcode rustc embeds in std's objects (.llvmbc, .llvmcmd) and LLVM's address-significance
# tables (.llvm_addrsig) are dropped: concatenated by ld -r they would be invalid (GNU nm's LTO
# plugin fails on them, and lld would read wrong symbol indices).
set -eu
[ $# -eq 2 ] || { echo "usage: $0 IN.a OUT.a" >&2; exit 2; }
in=$1 out=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"${LD:-ld}" -r --whole-archive "$in" -o "$tmp/mcpool.o"
"${OBJCOPY:-objcopy}" --strip-debug --remove-section=.llvmbc --remove-section=.llvmcmd \
  --remove-section=.llvm_addrsig --wildcard --keep-global-symbol='mcpool_*' "$tmp/mcpool.o"
others=$("${NM:-nm}" -g --defined-only "$tmp/mcpool.o" | awk 'NF == 3 && $3 !~ /^mcpool_/ { print $3 }')
[ -z "$others" ] || { echo "$0: global symbols left besides mcpool_*: $others" >&2; exit 1; }
"${NM:-nm}" -g --defined-only "$tmp/mcpool.o" | grep -q ' T mcpool_client_new$' \
  || { echo "$0: $in has no mcpool_client_new" >&2; exit 1; }
rm -f "$tmp/libmcpool.a"
"${AR:-ar}" rcsD "$tmp/libmcpool.a" "$tmp/mcpool.o"
mv -f "$tmp/libmcpool.a" "$out"
