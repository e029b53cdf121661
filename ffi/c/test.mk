# The C ABI's targets, included by the root Makefile (paths are relative to the root).
#
#   make test-c        header drift check, C tests, the same under valgrind and ASan/UBSan, install check
#   make header        regenerate include/mcpool.h (after changing capi/src)
#   make install PREFIX=/usr/local [DESTDIR=...] [MCPOOL_FEATURES=tls]   libmcpool.so.0 (+ .a), mcpool.h, .pc, CMake package, the CLI
#   make uninstall PREFIX=/usr/local [DESTDIR=...]   removes what make install wrote there (its manifest)
TEST_TARGETS += test-c

MCPOOL_TARGET := $(abspath $(or $(CARGO_TARGET_DIR),target))
MCPOOL_VERSION := $(shell sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
LIBDIR_INSTALL := $(DESTDIR)$(PREFIX)/lib
INCDIR_INSTALL := $(DESTDIR)$(PREFIX)/include

.PHONY: test-c header header-check c-install-check install-prefix-check uninstall

# Regenerates the committed header.
header:
	MCPOOL_GEN_HEADER=1 $(CARGO) check -p mcpool-capi --quiet

# Fails when include/mcpool.h differs from what cbindgen makes of capi/src now.
header-check:
	@tmp=$$(mktemp -d) && \
	MCPOOL_GEN_HEADER=1 MCPOOL_HEADER_OUT=$$tmp/mcpool.h $(CARGO) check -p mcpool-capi --quiet && \
	if diff -u include/mcpool.h $$tmp/mcpool.h; then rm -rf $$tmp; echo "header-check: include/mcpool.h is up to date"; \
	else rm -rf $$tmp; echo "header-check: include/mcpool.h is stale: run 'make header' and commit it" >&2; exit 1; fi

test-c: header-check lib
	$(MAKE) -C ffi/c CARGO_TARGET_DIR=$(MCPOOL_TARGET) test valgrind sanitize
	$(MAKE) c-install-check

STRIP ?= strip
OBJCOPY ?= objcopy
LDCONFIG ?= ldconfig
SO_FULL := libmcpool.so.$(MCPOOL_VERSION)

# Every file `make install` writes, relative to PREFIX: the one list. install records it (as
# absolute paths, without DESTDIR) in share/mcpool/install-manifest.txt with the directories it
# created, each ending in "/"; uninstall removes what the manifest names. c-install-check fails
# when an install into an empty prefix leaves a file the list does not name, or the reverse.
INSTALL_MANIFEST := share/mcpool/install-manifest.txt
INSTALL_FILES := bin/mcpool include/mcpool.h lib/$(SO_FULL) lib/libmcpool.so.0 lib/libmcpool.so \
	lib/.debug/$(SO_FULL).debug lib/libmcpool.a lib/pkgconfig/mcpool.pc lib/pkgconfig/mcpool-static.pc \
	lib/cmake/mcpool/mcpoolConfig.cmake lib/cmake/mcpool/mcpoolConfigVersion.cmake \
	share/mcpool/valgrind.supp share/doc/mcpool/LICENSE-MIT share/doc/mcpool/LICENSE-APACHE \
	share/doc/mcpool/THIRD-PARTY-NOTICES $(INSTALL_MANIFEST)
INSTALL_DIRS := $(sort $(patsubst %/,%,$(dir $(INSTALL_FILES))))

# Installs the header, libmcpool.so.0.x.y with its symlinks (SONAME libmcpool.so.0), libmcpool.a,
# pkg-config files (mcpool, mcpool-static), a CMake package (lib/cmake/mcpool), valgrind's
# suppressions for the library's own threads (share/mcpool/valgrind.supp), the licences and
# the notices of the crates compiled in (share/doc/mcpool/) and the CLI, all stripped of debug
# info; the library's goes to lib/.debug/ (linked by .gnu_debuglink: gdb, elfutils and
# systemd-coredump look there), the CLI's is not installed. libmcpool.a is one object whose only
# global symbols are mcpool_* (scripts/static-lib.sh: the zstd and libdeflate inside cannot
# take the place of a program's own). Runs ldconfig when installing into the system's /usr or
# /usr/local without DESTDIR. `make install MCPOOL_FEATURES=tls`: with TLS (root Makefile).
# The manifest is written first (a failed install can be uninstalled) and keeps what an earlier
# install there recorded (an older version's library, the directories it created).
install: install-prefix-check lib cli
	@set -e; m=$(DESTDIR)$(PREFIX)/$(INSTALL_MANIFEST); made=; \
	for d in $(INSTALL_DIRS); do p=$(DESTDIR)$(PREFIX)/$$d; \
		while [ -n "$$p" ] && [ "$$p" != "$(DESTDIR)" ] && [ ! -d "$$p" ]; do made="$$made $${p#$(DESTDIR)}/"; p=$${p%/*}; done; \
	done; \
	old=$$(if [ -f "$$m" ]; then grep -v '^#' "$$m"; fi); \
	install -d $(addprefix $(DESTDIR)$(PREFIX)/,$(INSTALL_DIRS)); \
	{ echo "# mcpool $(MCPOOL_VERSION), make install PREFIX=$(PREFIX): the files it wrote and, ending in /, the"; \
	  echo "# directories it created; make uninstall PREFIX=$(PREFIX) removes them (a directory if empty)."; \
	  printf '%s\n' $(addprefix $(PREFIX)/,$(INSTALL_FILES)) $$made $$old | LC_ALL=C sort -u; } > "$$m.new"; \
	mv -f "$$m.new" "$$m"; echo "manifest: $(PREFIX)/$(INSTALL_MANIFEST)"
	install -m 644 include/mcpool.h $(INCDIR_INSTALL)/mcpool.h
	install -m 644 ffi/c/valgrind.supp $(DESTDIR)$(PREFIX)/share/mcpool/valgrind.supp
	install -m 644 LICENSE-MIT LICENSE-APACHE THIRD-PARTY-NOTICES $(DESTDIR)$(PREFIX)/share/doc/mcpool/
	$(OBJCOPY) --only-keep-debug $(MCPOOL_TARGET)/release/libmcpool.so $(LIBDIR_INSTALL)/.debug/$(SO_FULL).debug
	$(STRIP) --strip-debug -o $(LIBDIR_INSTALL)/$(SO_FULL) $(MCPOOL_TARGET)/release/libmcpool.so
	$(OBJCOPY) --add-gnu-debuglink=$(LIBDIR_INSTALL)/.debug/$(SO_FULL).debug $(LIBDIR_INSTALL)/$(SO_FULL)
	chmod 755 $(LIBDIR_INSTALL)/$(SO_FULL)
	ln -sf $(SO_FULL) $(LIBDIR_INSTALL)/libmcpool.so.0
	ln -sf libmcpool.so.0 $(LIBDIR_INSTALL)/libmcpool.so
	LD="$(LD)" AR="$(AR)" OBJCOPY="$(OBJCOPY)" scripts/static-lib.sh $(MCPOOL_TARGET)/release/libmcpool.a $(LIBDIR_INSTALL)/libmcpool.a
	chmod 644 $(LIBDIR_INSTALL)/libmcpool.a
	$(STRIP) --strip-debug -o $(DESTDIR)$(PREFIX)/bin/mcpool $(MCPOOL_TARGET)/release/mcpool
	for f in mcpool.pc mcpool-static.pc; do \
		sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(MCPOOL_VERSION)|' ffi/c/$$f.in > $(LIBDIR_INSTALL)/pkgconfig/$$f; done
	for f in mcpoolConfig.cmake mcpoolConfigVersion.cmake; do \
		sed -e 's|@VERSION@|$(MCPOOL_VERSION)|' ffi/c/$$f.in > $(LIBDIR_INSTALL)/cmake/mcpool/$$f; done
	@case "$(DESTDIR):$(PREFIX)" in \
		:/usr|:/usr/local) $(LDCONFIG) && echo "ldconfig: $(PREFIX)/lib registered";; \
		?*:*) echo "staged in DESTDIR=$(DESTDIR) for $(PREFIX)";; \
		*) echo "not a system prefix: run programs with LD_LIBRARY_PATH=$(PREFIX)/lib, or link with an rpath";; esac
	@echo "installed mcpool $(MCPOOL_VERSION) into $(DESTDIR)$(PREFIX); make uninstall PREFIX=$(PREFIX)$(if $(DESTDIR), DESTDIR=$(DESTDIR)) removes it"

# Removes the files the manifest names and then the directories it names that are empty
# (deepest first), the manifest last; refuses a manifest naming a file outside PREFIX. An install
# older than the manifest: the files this version installs, and its own directories if empty.
uninstall: install-prefix-check
	@set -e; m=$(DESTDIR)$(PREFIX)/$(INSTALL_MANIFEST); \
	if [ -f "$$m" ]; then list=$$(grep -v '^#' "$$m"); \
	elif [ -e $(DESTDIR)$(PREFIX)/include/mcpool.h ] || [ -e $(LIBDIR_INSTALL)/libmcpool.so.0 ]; then \
		echo "make uninstall: no $$m (installed before make install wrote one): removing the files this version installs, and its own directories if empty"; \
		list="$(addprefix $(PREFIX)/,$(INSTALL_FILES) lib/cmake/mcpool/ share/mcpool/ share/doc/mcpool/)"; \
	else echo "make uninstall: nothing of mcpool's in $(DESTDIR)$(PREFIX) (no $(PREFIX)/$(INSTALL_MANIFEST))" >&2; exit 1; fi; \
	for p in $$list; do case $$p in \
		*/../*|*/..|*/./*|*/.) ok=;; \
		*/) case $$p in $(PREFIX)/*) ok=1;; *) case $(PREFIX)/ in "$$p"*) ok=1;; *) ok=;; esac;; esac;; \
		*) case $$p in $(PREFIX)/*) ok=1;; *) ok=;; esac;; esac; \
		[ -n "$$ok" ] || { echo "make uninstall: $$m names $$p, not under $(PREFIX) (or a directory above it): refused, nothing removed" >&2; exit 1; }; done; \
	n=0; for p in $$list; do case $$p in */|*/$(INSTALL_MANIFEST)) ;; *) \
		if [ -e $(DESTDIR)$$p ] || [ -L $(DESTDIR)$$p ]; then rm -f $(DESTDIR)$$p; n=$$((n + 1)); fi;; esac; done; \
	if [ -f "$$m" ]; then rm -f "$$m"; n=$$((n + 1)); fi; \
	kept=; for d in $$(printf '%s\n' $$list | grep '/$$' | LC_ALL=C sort -r); do \
		if [ -d $(DESTDIR)$$d ]; then rmdir $(DESTDIR)$$d 2>/dev/null || kept="$$kept $$d"; fi; done; \
	echo "removed $$n files of mcpool from $(DESTDIR)$(PREFIX)$${kept:+; kept, not empty:$$kept}"
	@case "$(DESTDIR):$(PREFIX)" in :/usr|:/usr/local) $(LDCONFIG) && echo "ldconfig: run for $(PREFIX)/lib";; esac

# Before anything is built: the recipes (and the .pc files' sed) take the paths as words, and
# the .pc files and the CMake package record PREFIX, which must not depend on the directory a
# program is built in.
PREFIX_GOAL = make $(if $(filter uninstall,$(MAKECMDGOALS)),uninstall,install)
install-prefix-check:
	$(if $(strip $(PREFIX)),,$(error $(PREFIX_GOAL): PREFIX is empty))
	$(if $(filter /%,$(PREFIX)),,$(error $(PREFIX_GOAL): PREFIX="$(PREFIX)" is not an absolute \
	path; the pkg-config files record it: give an absolute one (e.g. PREFIX=$(abspath $(PREFIX)))))
	$(if $(or $(word 2,x$(PREFIX)x),$(word 2,x$(DESTDIR)x),$(findstring |,$(PREFIX)$(DESTDIR))),$(error \
	$(PREFIX_GOAL): PREFIX="$(PREFIX)" DESTDIR="$(DESTDIR)": a path with white space or "|" is not \
	supported; install into a path without them (and move or link it from there)))
	@:

# Refuses a PREFIX with a space, or relative, before building anything; installs into a temporary prefix as
# a user would, then checks the result: the files are those the manifest names, the SONAME and
# symlinks, no debug info in what was installed but gdb finding it (lib/.debug/), no global
# symbol but mcpool_* in libmcpool.a, the example built with pkg-config (shared), with
# mcpool-static.pc (static libmcpool, and a fully static `cc -static` program) and with CMake's
# find_package, each run against a private memcached; and the installed CLI. Then make uninstall,
# after a second install over the first and with files of others in the prefix, leaves only
# those; and a DESTDIR install and uninstall leave DESTDIR empty.
c-install-check:
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && set -e && \
	if $(MAKE) --no-print-directory install PREFIX="$$tmp/with space" >$$tmp/space.log 2>&1; then \
		echo "c-install-check: make install took a PREFIX with a space" >&2; exit 1; fi; \
	grep -q 'white space or "|" is not supported' $$tmp/space.log && [ ! -e "$$tmp/with space" ] && [ ! -e space ] \
		|| { cat $$tmp/space.log >&2; echo "c-install-check: a PREFIX with a space is not refused up front" >&2; exit 1; }; \
	if $(MAKE) --no-print-directory install PREFIX=relative/prefix >$$tmp/relative.log 2>&1; then \
		echo "c-install-check: make install took a relative PREFIX" >&2; exit 1; fi; \
	grep -q 'is not an absolute path' $$tmp/relative.log && [ ! -e relative ] \
		|| { cat $$tmp/relative.log >&2; echo "c-install-check: a relative PREFIX is not refused up front" >&2; exit 1; }; \
	p=$$tmp/prefix && $(MAKE) --no-print-directory install PREFIX=$$p >/dev/null && \
	lib=$$p/lib && export PKG_CONFIG_PATH=$$lib/pkgconfig && \
	(cd $$p && find . ! -type d | sed "s|^\.|$$p|" | LC_ALL=C sort) > $$tmp/found && \
	grep -v -e '^#' -e '/$$' $$p/$(INSTALL_MANIFEST) > $$tmp/listed && \
	diff -u $$tmp/listed $$tmp/found || { echo "c-install-check: make install wrote other files than its manifest names (INSTALL_FILES)" >&2; exit 1; }; \
	grep -qx "$$p/" $$p/$(INSTALL_MANIFEST) || { echo "c-install-check: the manifest does not name $$p/, which install created" >&2; exit 1; }; \
	for f in LICENSE-MIT LICENSE-APACHE THIRD-PARTY-NOTICES; do cmp -s $$f $$p/share/doc/mcpool/$$f \
		|| { echo "c-install-check: share/doc/mcpool/$$f missing" >&2; exit 1; }; done; \
	readelf -d $$lib/$(SO_FULL) | grep -q 'SONAME.*\[libmcpool.so.0\]' || { echo "c-install-check: SONAME is not libmcpool.so.0" >&2; exit 1; }; \
	[ "$$(readlink $$lib/libmcpool.so)" = libmcpool.so.0 ] && [ "$$(readlink $$lib/libmcpool.so.0)" = $(SO_FULL) ] || { echo "c-install-check: symlinks wrong" >&2; exit 1; }; \
	cmp -s ffi/c/valgrind.supp $$p/share/mcpool/valgrind.supp || { echo "c-install-check: share/mcpool/valgrind.supp missing" >&2; exit 1; }; \
	for f in $$lib/$(SO_FULL) $$lib/libmcpool.a $$p/bin/mcpool; do \
		if readelf -S $$f | grep -q '\.debug_info'; then echo "c-install-check: $$f has debug info" >&2; exit 1; fi; done; \
	globals=$$(nm -g --defined-only $$lib/libmcpool.a | awk 'NF == 3 && $$3 !~ /^mcpool_/ { print $$3 }'); \
	[ -z "$$globals" ] || { echo "c-install-check: libmcpool.a has global symbols besides mcpool_*:" $$globals >&2; exit 1; }; \
	if command -v gdb >/dev/null; then \
		gdb -nx -batch -ex 'info line mcpool_client_get' $$lib/$(SO_FULL) 2>&1 | grep -q '^Line [0-9]* of "capi/src/' \
		|| { echo "c-install-check: gdb finds no line information for the installed $(SO_FULL) (its .gnu_debuglink file)" >&2; exit 1; }; \
	else echo "c-install-check: gdb not installed: the separate debug info is not checked"; fi; \
	cc -Wall -Wextra -Werror ffi/c/example.c $$(pkg-config --cflags --libs mcpool) -o $$tmp/example && \
	readelf -d $$tmp/example | grep -q 'NEEDED.*\[libmcpool.so.0\]' || { echo "c-install-check: example does not need libmcpool.so.0" >&2; exit 1; }; \
	cc -Wall -Wextra -Werror ffi/c/example.c $$(pkg-config --cflags --libs mcpool-static) -o $$tmp/example-a && \
	if readelf -d $$tmp/example-a | grep -q 'NEEDED.*libmcpool'; then echo "c-install-check: mcpool-static linked the .so" >&2; exit 1; fi; \
	cc -static -Wall -Wextra -Werror ffi/c/example.c $$(pkg-config --cflags --libs --static mcpool-static) -o $$tmp/example-static 2>$$tmp/static.log || { cat $$tmp/static.log >&2; exit 1; }; \
	if readelf -d $$tmp/example-static 2>/dev/null | grep -q NEEDED; then echo "c-install-check: cc -static example is not static" >&2; exit 1; fi; \
	command -v cmake >/dev/null || { echo "c-install-check: cmake missing: apt-get install cmake" >&2; exit 1; }; \
	cmake -S ffi/c/cmake-example -B $$tmp/cmake-build -DCMAKE_PREFIX_PATH=$$p >/dev/null && \
	cmake --build $$tmp/cmake-build >/dev/null && \
	ffi/c/with_memcached.sh sh -c "LD_LIBRARY_PATH=$$lib $$tmp/example \"\$$MCPOOL_TEST_SERVER\" && \
		$$tmp/example-a \"\$$MCPOOL_TEST_SERVER\" && $$tmp/example-static \"\$$MCPOOL_TEST_SERVER\" && \
		LD_LIBRARY_PATH=$$lib $$tmp/cmake-build/example \"\$$MCPOOL_TEST_SERVER\" && \
		$$tmp/cmake-build/example_static \"\$$MCPOOL_TEST_SERVER\" && \
		$$p/bin/mcpool --servers \"\$$MCPOOL_TEST_SERVER\" set c-install-check hello >/dev/null && \
		[ \"\$$($$p/bin/mcpool --servers \"\$$MCPOOL_TEST_SERVER\" get c-install-check)\" = hello ]" && \
	echo "c-install-check: installed into $$p as a user would; SONAME libmcpool.so.0, stripped" \
		"($$(stat -c %s $$lib/$(SO_FULL)) B .so, $$(stat -c %s $$lib/libmcpool.a) B .a, only mcpool_* global);" \
		"example built with pkg-config (shared, static, cc -static) and CMake find_package, all ran"; \
	mkdir $$p/share/other && touch $$p/share/other/file $$lib/pkgconfig/other.pc && \
	$(MAKE) --no-print-directory install PREFIX=$$p >/dev/null && \
	$(MAKE) --no-print-directory uninstall PREFIX=$$p >$$tmp/uninstall.log && \
	(cd $$tmp && find prefix | LC_ALL=C sort) > $$tmp/left && \
	printf '%s\n' prefix prefix/lib prefix/lib/pkgconfig prefix/lib/pkgconfig/other.pc prefix/share prefix/share/other \
		prefix/share/other/file > $$tmp/others && \
	diff -u $$tmp/others $$tmp/left || { cat $$tmp/uninstall.log; echo "c-install-check: make uninstall (after a second install) left the files above," \
		"or removed others'" >&2; exit 1; }; \
	$(MAKE) --no-print-directory install DESTDIR=$$tmp/stage PREFIX=/usr/local >/dev/null && \
	if grep -q "$$tmp/stage" $$tmp/stage/usr/local/$(INSTALL_MANIFEST); then echo "c-install-check: the manifest records DESTDIR" >&2; exit 1; fi; \
	$(MAKE) --no-print-directory uninstall DESTDIR=$$tmp/stage PREFIX=/usr/local >/dev/null && \
	left=$$(find $$tmp/stage -mindepth 1) && [ -z "$$left" ] || { echo "c-install-check: uninstall from DESTDIR left: $$left" >&2; exit 1; }; \
	echo "c-install-check: make uninstall removed what make install wrote (twice over, and from DESTDIR), others' files kept"
