# mcpool: `make` builds the libraries, `make test` runs every test, `make bench` runs the
# benchmark (both install what they need first, see scripts/install-deps.sh).
PREFIX ?= /usr/local
# Where make install puts the libraries, their .pc files and the CMake package (ffi/c/test.mk):
# LIBDIR=/usr/lib64 or /usr/lib/x86_64-linux-gnu where the system's loader and pkg-config look.
LIBDIR ?= $(PREFIX)/lib
# It reaches no sub-make: ffi/c's and ffi/java's Makefiles name cargo's output directory
# LIBDIR, which a `make ... LIBDIR=...` given here must not override.
MAKEOVERRIDES := $(filter-out LIBDIR=%,$(MAKEOVERRIDES))
CARGO ?= cargo
export CARGO_TERM_COLOR ?= never

# `make` alone builds the libraries and the CLI (the included test.mk files define targets too).
.DEFAULT_GOAL := all

TEST_TARGETS :=
# Each binding adds its own test target (ffi/*/test.mk: TEST_TARGETS += test-xyz).
-include ffi/*/test.mk

.PHONY: all deps lib cli test test-versions test-notices test-package test-dependent test-rust test-fuzz test-deny bench install uninstall
all: lib cli

deps:
	scripts/install-deps.sh

# Cargo features of the core in what `make` builds: the C library (lib, install), the CLI,
# and through them the Python wheel (python-ext, python-dist), the Perl module and dist and
# the jar; exported, so that setup.py and Makefile.PL build a bundled core with them too.
# `make ... MCPOOL_FEATURES=tls` adds TLS (README.md, "TLS in every package").
MCPOOL_FEATURES ?=
export MCPOOL_FEATURES
CARGO_FEATURES = $(if $(strip $(MCPOOL_FEATURES)),--features "$(strip $(MCPOOL_FEATURES))")

# Every build needs cargo: without it, say where to get it (tester finding packaging 8: a bare
# "cargo: No such file or directory").
.PHONY: have-cargo
have-cargo:
	@command -v $(CARGO) >/dev/null 2>&1 || { echo "make: '$(CARGO)' is not on PATH: install a Rust \
	toolchain (https://rustup.rs: curl https://sh.rustup.rs -sSf | sh, or make deps), or set CARGO=/path/to/cargo" >&2; exit 1; }

# The libraries; libmcpool.so.0 (its SONAME) beside libmcpool.so, so that programs linked
# against target/release find it at run time (ffi/c's tests use an rpath there).
lib: have-cargo
	$(CARGO) build --release -p mcpool-capi $(CARGO_FEATURES)
	ln -sf libmcpool.so $(abspath $(or $(CARGO_TARGET_DIR),target))/release/libmcpool.so.0

# The `mcpool` command-line tool: target/release/mcpool.
cli: have-cargo
	$(CARGO) build --release -p mcpool-cli $(CARGO_FEATURES)

test: deps test-versions test-notices test-rust test-package test-dependent test-fuzz test-deny $(TEST_TARGETS)
	@echo "make test: all suites passed"

# The declared minimum Rust holds for Cargo.lock (and, with that toolchain installed, for our
# code); one version in Cargo.toml, the Python package, the Perl modules and the pom.
test-versions:
	scripts/version-check.sh

# THIRD-PARTY-NOTICES (the licences of the crates compiled into libmcpool, the CLI and the
# bindings' packages) is current with Cargo.lock.
test-notices:
	scripts/third-party-notices.py --check

# Every crate of the workspace: the library, the C ABI, the CLI, the benchmark, the test kit.
test-rust:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets --features mcpool/tls,mcpool-capi/tls -- -D warnings
	RUSTDOCFLAGS=-Dwarnings $(CARGO) doc --workspace --no-deps --quiet
	$(CARGO) test --workspace
	$(CARGO) test -p mcpool --features tls --test tls

# What `cargo package` would ship of the library crate (Cargo.toml's `include`): its sources
# and licences, never the C ABI, CLI, bindings, benchmark, peers, tools, fuzzers or tests.
test-package:
	@list=$$($(CARGO) package -p mcpool --list --allow-dirty 2>/dev/null) || { echo "test-package: cargo package --list failed" >&2; exit 1; }; \
	if printf '%s\n' "$$list" | grep -qE '^(ffi|bench|capi|cli|testkit|include|tools|tests|fuzz|docs|examples|scripts)/'; then \
		echo "test-package: the crate would ship repository-only files:" >&2; \
		printf '%s\n' "$$list" | grep -E '^(ffi|bench|capi|cli|testkit|include|tools|tests|fuzz|docs|examples|scripts)/' >&2; exit 1; fi; \
	echo "test-package: cargo package ships $$(printf '%s\n' "$$list" | wc -l) files (the library and its licences)"

# A Rust program that depends on the library crate builds no C artefact: a scratch crate with
# a path dependency on it is built, and its target directory must hold no libmcpool.so/.a.
test-dependent:
	scripts/dependent-check.sh

# Dependency licences and sources (deny.toml). Advisories need the RustSec database from
# GitHub, which this environment cannot reach; `cargo install cargo-deny` to enable the check.
test-deny:
	@if command -v cargo-deny >/dev/null 2>&1; then cargo deny check licenses bans sources; \
	else echo "test-deny: cargo-deny not installed (cargo install cargo-deny); licence check skipped"; fi

# Short runs of the protocol-parser fuzzers, quickly built (scripts/fuzz.sh SECONDS for
# longer ones, built as the release profile says).
test-fuzz:
	FUZZ_QUICK=1 scripts/fuzz.sh $(or $(FUZZ_SECONDS),15)

bench: deps
	$(CARGO) run --release -p mcpool-cli -- bench --quick $(BENCH_ARGS)
