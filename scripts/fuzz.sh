#!/usr/bin/env bash
# Builds the protocol-parser fuzz targets (libFuzzer via libfuzzer-sys, coverage flags that
# stable rustc accepts: no nightly needed) and runs each for SECONDS (default 20).
#   scripts/fuzz.sh [SECONDS] [TARGET...]
# FUZZ_QUICK=1 (what `make test` uses for its short smoke runs) builds at opt-level 1 without
# debug info: about half the build time (53 s against 93 s on this machine, 2026-12-07), at
# fewer runs a second; a longer run without it builds as the release profile says.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
secs=${1:-20}; shift || true
targets=("$@"); [ ${#targets[@]} -gt 0 ] || targets=(parse_text parse_meta parse_binary c_abi value_decode)
export RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
 -Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
 -Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing"
export CARGO_TARGET_DIR=${FUZZ_TARGET_DIR:-$PWD/target}
if [ "${FUZZ_QUICK:-}" = 1 ]; then
  export CARGO_PROFILE_RELEASE_OPT_LEVEL=1 CARGO_PROFILE_RELEASE_DEBUG=0
fi
# An explicit --target keeps RUSTFLAGS off the build scripts, as cargo-fuzz does.
host=$(rustc -vV | sed -n 's/^host: //p')
cargo build --release --quiet --bins --target "$host"
bin=$CARGO_TARGET_DIR/$host/release
for t in "${targets[@]}"; do
  kind=${t#parse_}; mkdir -p "seeds/$kind"
  corpus=corpus/$t; mkdir -p "$corpus" artifacts/$t
  echo "fuzz: $t for ${secs}s"
  "$bin/$t" "$corpus" "seeds/$kind" -max_total_time="$secs" \
    -rss_limit_mb=2048 -malloc_limit_mb=64 -artifact_prefix=artifacts/$t/ -print_final_stats=1 \
    2>&1 | grep -E "stat::number_of_executed_units|stat::peak_rss|ERROR|panicked|Done" || true
  # (each pattern on its own: `ls a* b*` fails when either is missing, and hid crashes)
  if compgen -G "artifacts/$t/crash-*" >/dev/null || compgen -G "artifacts/$t/oom-*" >/dev/null \
     || compgen -G "artifacts/$t/leak-*" >/dev/null; then
    echo "fuzz: $t found a crash: see fuzz/artifacts/$t" >&2; exit 1
  fi
done
