# The C ABI's targets, included by the root Makefile (paths are relative to the root).
#
#   make test-c        header drift check, C tests, the same under valgrind and ASan/UBSan, install check
#   make header        regenerate include/mcpool.h (after changing src/ffi)
#   make install PREFIX=/usr/local [DESTDIR=...] [MCPOOL_FEATURES=tls]   libmcpool.so/.a, mcpool.h, mcpool.pc
TEST_TARGETS += test-c

MCPOOL_TARGET := $(abspath $(or $(CARGO_TARGET_DIR),target))
MCPOOL_VERSION := $(shell sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
LIBDIR_INSTALL := $(DESTDIR)$(PREFIX)/lib
INCDIR_INSTALL := $(DESTDIR)$(PREFIX)/include

.PHONY: test-c header header-check c-install-check

# Regenerates the committed header.
header:
	MCPOOL_GEN_HEADER=1 $(CARGO) check --lib --quiet

# Fails when include/mcpool.h differs from what cbindgen makes of src/ffi now.
header-check:
	@tmp=$$(mktemp -d) && \
	MCPOOL_GEN_HEADER=1 MCPOOL_HEADER_OUT=$$tmp/mcpool.h $(CARGO) check --lib --quiet && \
	if diff -u include/mcpool.h $$tmp/mcpool.h; then rm -rf $$tmp; echo "header-check: include/mcpool.h is up to date"; \
	else rm -rf $$tmp; echo "header-check: include/mcpool.h is stale: run 'make header' and commit it" >&2; exit 1; fi

test-c: header-check lib
	$(MAKE) -C ffi/c CARGO_TARGET_DIR=$(MCPOOL_TARGET) test valgrind sanitize
	$(MAKE) c-install-check

# Cargo features of the installed library: `make install MCPOOL_FEATURES=tls` adds TLS
# (off by default, see docs/c-abi.md).
MCPOOL_FEATURES ?=

install: lib
	$(if $(strip $(MCPOOL_FEATURES)),$(CARGO) build --release --lib --features $(MCPOOL_FEATURES))
	install -d $(LIBDIR_INSTALL)/pkgconfig $(INCDIR_INSTALL)
	install -m 644 include/mcpool.h $(INCDIR_INSTALL)/mcpool.h
	install -m 755 $(MCPOOL_TARGET)/release/libmcpool.so $(LIBDIR_INSTALL)/libmcpool.so
	install -m 644 $(MCPOOL_TARGET)/release/libmcpool.a $(LIBDIR_INSTALL)/libmcpool.a
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(MCPOOL_VERSION)|' ffi/c/mcpool.pc.in \
		> $(LIBDIR_INSTALL)/pkgconfig/mcpool.pc
	@echo "installed mcpool $(MCPOOL_VERSION) into $(DESTDIR)$(PREFIX)"

# Installs into a temporary prefix and builds the example with pkg-config alone.
c-install-check:
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	$(MAKE) --no-print-directory install PREFIX=$$tmp >/dev/null && \
	PKG_CONFIG_PATH=$$tmp/lib/pkgconfig cc -Wall -Wextra -Werror ffi/c/example.c \
		$$(PKG_CONFIG_PATH=$$tmp/lib/pkgconfig pkg-config --cflags --libs mcpool) -o $$tmp/example && \
	ffi/c/with_memcached.sh sh -c "LD_LIBRARY_PATH=$$tmp/lib $$tmp/example \"\$$MCPOOL_TEST_SERVER\"" && \
	echo "c-install-check: example built with pkg-config against $$tmp and ran"
