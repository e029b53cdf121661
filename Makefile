# mcpool: `make` builds the libraries, `make test` runs every test, `make bench` runs the
# benchmark (both install what they need first, see scripts/install-deps.sh).
PREFIX ?= /usr/local
CARGO ?= cargo
export CARGO_TERM_COLOR ?= never

TEST_TARGETS :=
# Each binding adds its own test target (ffi/*/test.mk: TEST_TARGETS += test-xyz).
-include ffi/*/test.mk

.PHONY: all deps lib test test-rust test-fuzz bench install
all: lib

deps:
	scripts/install-deps.sh

lib:
	$(CARGO) build --release --lib

test: deps test-rust test-fuzz $(TEST_TARGETS)
	@echo "make test: all suites passed"

test-rust:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --all-targets --features tls -- -D warnings
	$(CARGO) test
	$(CARGO) test --features tls --test tls

# Short runs of the protocol-parser fuzzers (scripts/fuzz.sh SECONDS for longer ones).
test-fuzz:
	scripts/fuzz.sh $(or $(FUZZ_SECONDS),20)

bench: deps
	$(CARGO) run --release --bin mcpool -- bench --quick $(BENCH_ARGS)
