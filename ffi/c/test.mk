# The C ABI's targets, included by the root Makefile (paths are relative to the root).
#
#   make test-c        header drift check, C tests, the same under valgrind and ASan/UBSan, install check
#   make header        regenerate include/mcpool.h (after changing capi/src)
#   make install PREFIX=/usr/local [LIBDIR=PREFIX/lib] [DESTDIR=...] [MCPOOL_FEATURES=tls]   libmcpool.so.0 (+ .a), mcpool.h, .pc, CMake package, the CLI
#   make uninstall PREFIX=/usr/local [LIBDIR=...] [DESTDIR=...]   removes what make install wrote there (its manifest)
TEST_TARGETS += test-c

MCPOOL_TARGET := $(abspath $(or $(CARGO_TARGET_DIR),target))
MCPOOL_VERSION := $(shell sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
LIBDIR_INSTALL = $(DESTDIR)$(LIBDIR)
INCDIR_INSTALL = $(DESTDIR)$(PREFIX)/include

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

# Every file `make install` writes (absolute, without DESTDIR: under PREFIX, the libraries, .pc
# files and CMake package under LIBDIR): the one list. install records it in PREFIX's
# share/mcpool/install-manifest.txt with the directories it creates, each ending in "/";
# uninstall removes what the manifest names. c-install-check fails when an install into an
# empty prefix leaves a file the list does not name, or the reverse.
INSTALL_MANIFEST := share/mcpool/install-manifest.txt
INSTALL_FILES = $(addprefix $(PREFIX)/,bin/mcpool include/mcpool.h share/mcpool/valgrind.supp \
	share/doc/mcpool/LICENSE-MIT share/doc/mcpool/LICENSE-APACHE share/doc/mcpool/THIRD-PARTY-NOTICES \
	$(INSTALL_MANIFEST)) \
	$(addprefix $(LIBDIR)/,$(SO_FULL) libmcpool.so.0 libmcpool.so .debug/$(SO_FULL).debug libmcpool.a \
	pkgconfig/mcpool.pc pkgconfig/mcpool-static.pc cmake/mcpool/mcpoolConfig.cmake cmake/mcpool/mcpoolConfigVersion.cmake)
INSTALL_DIRS = $(sort $(patsubst %/,%,$(dir $(INSTALL_FILES))))

# LIBDIR below PREFIX, relative to it (empty for a LIBDIR elsewhere): the .pc files then name
# it as ${exec_prefix}/..., and the CMake package finds the header from where it lies
# (LIBDIR/cmake/mcpool), as many ../ above LIBDIR as LIBDIR is below PREFIX; a LIBDIR elsewhere
# is written as it is, with PREFIX/include.
LIBDIR_REL = $(patsubst $(abspath $(PREFIX))/%,%,$(filter $(abspath $(PREFIX))/%,$(abspath $(LIBDIR))))
mcpool_empty :=
# " LIBDIR=..." for the messages and the manifest, unless LIBDIR is PREFIX/lib.
LIBDIR_ARG = $(if $(filter-out $(abspath $(PREFIX))/lib,$(abspath $(LIBDIR))), LIBDIR=$(LIBDIR))
PC_LIBDIR = $(if $(LIBDIR_REL),$${exec_prefix}/$(LIBDIR_REL),$(LIBDIR))
CMAKE_INCLUDEDIR = $(if $(LIBDIR_REL),$${_mcpool_libdir}/$(subst $(mcpool_empty) ,,$(patsubst %,../,$(subst /, ,$(LIBDIR_REL))))include,$(abspath $(PREFIX))/include)

# Installs the header, libmcpool.so.0.x.y with its symlinks (SONAME libmcpool.so.0), libmcpool.a,
# pkg-config files (mcpool, mcpool-static), a CMake package (LIBDIR/cmake/mcpool; the libraries
# and .pc files in LIBDIR too, PREFIX/lib unless given), valgrind's suppressions for the
# library's own threads (share/mcpool/valgrind.supp), the licences and the notices of the
# crates compiled in (share/doc/mcpool/) and the CLI, all stripped of debug info; the
# library's goes to LIBDIR/.debug/ (linked by .gnu_debuglink: gdb, elfutils and
# systemd-coredump look there), the CLI's is not installed. libmcpool.a is one object whose only
# global symbols are mcpool_* (scripts/static-lib.sh: the zstd and libdeflate inside cannot
# take the place of a program's own). Runs ldconfig when installing into the system's /usr or
# /usr/local without DESTDIR. `make install MCPOOL_FEATURES=tls`: with TLS (root Makefile).
# The manifest is written first, before any other directory is made (a failed install can be
# uninstalled: tester finding packaging 3), naming every directory this install is about to
# create (uninstall skips one that was never made); a failure to make the manifest's own
# directory removes the directories made for it. It keeps what an earlier install there
# recorded (an older version's library, the directories it created).
install: install-prefix-check lib cli
	@for f in $(addprefix $(DESTDIR),$(INSTALL_FILES)); do if [ -d "$$f" ]; then \
		echo "make install: $$f is a directory, where install would write a file: nothing installed" >&2; exit 1; fi; done; \
	for d in $(addprefix $(DESTDIR),$(INSTALL_DIRS)); do while [ -n "$$d" ] && [ ! -d "$$d" ]; do \
		if [ -e "$$d" ] || [ -L "$$d" ]; then echo "make install: $$d is not a directory, where install would make one: nothing installed" >&2; exit 1; fi; \
		d=$${d%/*}; done; done
	@set -e; m=$(DESTDIR)$(PREFIX)/$(INSTALL_MANIFEST); made=; \
	for d in $(INSTALL_DIRS); do p=$(DESTDIR)$$d; \
		while [ -n "$$p" ] && [ "$$p" != "$(DESTDIR)" ] && [ ! -d "$$p" ]; do made="$$made $${p#$(DESTDIR)}/"; p=$${p%/*}; done; \
	done; \
	old=$$(if [ -f "$$m" ]; then grep -v '^#' "$$m"; fi); \
	install -d "$${m%/*}" || { for d in $$(printf '%s\n' $$made | LC_ALL=C sort -ru); do rmdir "$(DESTDIR)$$d" 2>/dev/null || :; done; \
		echo "make install: cannot make $(PREFIX)/$(dir $(INSTALL_MANIFEST)) for the install manifest: nothing installed" >&2; exit 1; }; \
	{ echo "# mcpool $(MCPOOL_VERSION), make install PREFIX=$(PREFIX)$(LIBDIR_ARG): the files it wrote and, ending in /,"; \
	  echo "# the directories it created; make uninstall with the same PREFIX and LIBDIR removes them (a directory if empty)."; \
	  printf '%s\n' $(INSTALL_FILES) $$made $$old | LC_ALL=C sort -u; } > "$$m.new"; \
	mv -f "$$m.new" "$$m"; echo "manifest: $(PREFIX)/$(INSTALL_MANIFEST)"; \
	install -d $(addprefix $(DESTDIR),$(INSTALL_DIRS))
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
		sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(PC_LIBDIR)|' -e 's|@VERSION@|$(MCPOOL_VERSION)|' \
			ffi/c/$$f.in > $(LIBDIR_INSTALL)/pkgconfig/$$f; done
	for f in mcpoolConfig.cmake mcpoolConfigVersion.cmake; do \
		sed -e 's|@INCLUDEDIR@|$(CMAKE_INCLUDEDIR)|' -e 's|@VERSION@|$(MCPOOL_VERSION)|' \
			ffi/c/$$f.in > $(LIBDIR_INSTALL)/cmake/mcpool/$$f; done
	@case "$(DESTDIR):$(PREFIX)" in \
		:/usr|:/usr/local) $(LDCONFIG) && echo "ldconfig: run for $(LIBDIR)";; \
		?*:*) echo "staged in DESTDIR=$(DESTDIR) for $(PREFIX)";; \
		*) echo "not a system prefix: run programs with LD_LIBRARY_PATH=$(LIBDIR), or link with an rpath";; esac
	@echo "installed mcpool $(MCPOOL_VERSION) into $(DESTDIR)$(PREFIX); make uninstall PREFIX=$(PREFIX)$(UNINSTALL_ARGS) removes it"
UNINSTALL_ARGS = $(LIBDIR_ARG)$(if $(DESTDIR), DESTDIR=$(DESTDIR))

# Removes the files the manifest names and then the directories it names that are empty
# (deepest first), the manifest last; refuses a manifest naming a file outside PREFIX and LIBDIR
# (the install's LIBDIR must be given again when it is not below PREFIX). An install older than
# the manifest: the files this version installs, and its own directories if empty.
uninstall: install-prefix-check
	@set -e; m=$(DESTDIR)$(PREFIX)/$(INSTALL_MANIFEST); \
	if [ -f "$$m" ]; then list=$$(grep -v '^#' "$$m"); \
	elif [ -e $(DESTDIR)$(PREFIX)/include/mcpool.h ] || [ -e $(LIBDIR_INSTALL)/libmcpool.so.0 ]; then \
		echo "make uninstall: no $$m (installed before make install wrote one): removing the files this version installs, and its own directories if empty"; \
		list="$(INSTALL_FILES) $(LIBDIR)/cmake/mcpool/ $(PREFIX)/share/mcpool/ $(PREFIX)/share/doc/mcpool/"; \
	else echo "make uninstall: nothing of mcpool's in $(DESTDIR)$(PREFIX) (no $(PREFIX)/$(INSTALL_MANIFEST))" >&2; exit 1; fi; \
	for p in $$list; do case $$p in \
		*/../*|*/..|*/./*|*/.) ok=;; \
		*/) case $$p in $(PREFIX)/*|$(LIBDIR)/*) ok=1;; *) case "$(PREFIX)/ $(LIBDIR)/" in "$$p"*|*" $$p"*) ok=1;; *) ok=;; esac;; esac;; \
		*) case $$p in $(PREFIX)/*|$(LIBDIR)/*) ok=1;; *) ok=;; esac;; esac; \
		[ -n "$$ok" ] || { echo "make uninstall: $$m names $$p, not under PREFIX=$(PREFIX) or LIBDIR=$(LIBDIR) (or a directory above them):" \
			"refused, nothing removed (give the LIBDIR that make install was given)" >&2; exit 1; }; done; \
	n=0; for p in $$list; do case $$p in */|*/$(INSTALL_MANIFEST)) ;; *) \
		if [ -e $(DESTDIR)$$p ] || [ -L $(DESTDIR)$$p ]; then rm -f $(DESTDIR)$$p; n=$$((n + 1)); fi;; esac; done; \
	if [ -f "$$m" ]; then rm -f "$$m"; n=$$((n + 1)); fi; \
	kept=; for d in $$(printf '%s\n' $$list | grep '/$$' | LC_ALL=C sort -r); do \
		if [ -d $(DESTDIR)$$d ]; then rmdir $(DESTDIR)$$d 2>/dev/null || kept="$$kept $$d"; fi; done; \
	echo "removed $$n files of mcpool from $(DESTDIR)$(PREFIX)$${kept:+; kept, not empty:$$kept}"
	@case "$(DESTDIR):$(PREFIX)" in :/usr|:/usr/local) $(LDCONFIG) && echo "ldconfig: run for $(LIBDIR)";; esac

# Before anything is built: the recipes (and the .pc files' sed) take the paths as words, and
# the .pc files and the CMake package record PREFIX and LIBDIR, which must not depend on the
# directory a program is built in.
PREFIX_GOAL = make $(if $(filter uninstall,$(MAKECMDGOALS)),uninstall,install)
install-prefix-check:
	$(if $(strip $(PREFIX)),,$(error $(PREFIX_GOAL): PREFIX is empty))
	$(if $(filter /%,$(PREFIX)),,$(error $(PREFIX_GOAL): PREFIX="$(PREFIX)" is not an absolute \
	path; the pkg-config files record it: give an absolute one (e.g. PREFIX=$(abspath $(PREFIX)))))
	$(if $(strip $(LIBDIR)),,$(error $(PREFIX_GOAL): LIBDIR is empty (leave it out for PREFIX/lib)))
	$(if $(filter /%,$(LIBDIR)),,$(error $(PREFIX_GOAL): LIBDIR="$(LIBDIR)" is not an absolute \
	path; the pkg-config files record it: give an absolute one (e.g. LIBDIR=$(abspath $(LIBDIR)))))
	$(if $(or $(word 2,x$(PREFIX)x),$(word 2,x$(LIBDIR)x),$(word 2,x$(DESTDIR)x),$(findstring |,$(PREFIX)$(LIBDIR)$(DESTDIR))),$(error \
	$(PREFIX_GOAL): PREFIX="$(PREFIX)" LIBDIR="$(LIBDIR)" DESTDIR="$(DESTDIR)": a path with white space or "|" \
	is not supported; install into a path without them (and move or link it from there)))
	@:

# Refuses a PREFIX with a space, or relative, before building anything; installs into a temporary prefix as
# a user would, then checks the result: the files are those the manifest names, the SONAME and
# symlinks, no debug info in what was installed but gdb finding it (lib/.debug/), no global
# symbol but mcpool_* in libmcpool.a, the example built with pkg-config (shared), with
# mcpool-static.pc (static libmcpool, and a fully static `cc -static` program) and with CMake's
# find_package, each run against a private memcached; and the installed CLI. An install with
# LIBDIR below PREFIX (lib/<machine>) puts nothing else in PREFIX/lib, and its .pc files and
# CMake package build the example that runs; one with LIBDIR outside PREFIX records both paths.
# Then make uninstall, after a second install over the first and with files of others in the
# prefix, leaves only those; and a DESTDIR install and uninstall leave DESTDIR empty; after an
# install that failed making its directories, uninstall removes those it made (tester finding
# packaging 3), and one that could not make the manifest's directory made none.
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
	q=$$tmp/multiarch && ql=$$q/lib/$$(cc -dumpmachine) && \
	$(MAKE) --no-print-directory install PREFIX=$$q LIBDIR=$$ql >/dev/null && \
	(cd $$q && find . ! -type d | sed "s|^\.|$$q|" | LC_ALL=C sort) > $$tmp/found && \
	grep -v -e '^#' -e '/$$' $$q/$(INSTALL_MANIFEST) > $$tmp/listed && \
	diff -u $$tmp/listed $$tmp/found || { echo "c-install-check: make install LIBDIR=$$ql wrote other files than its manifest names" >&2; exit 1; }; \
	[ "$$(ls -A $$q/lib)" = "$${ql##*/}" ] || { echo "c-install-check: make install LIBDIR=$$ql wrote into $$q/lib:" $$(ls -A $$q/lib) >&2; exit 1; }; \
	for pc in mcpool mcpool-static; do [ "$$(PKG_CONFIG_PATH=$$ql/pkgconfig pkg-config --variable=libdir $$pc)" = "$$ql" ] \
		|| { echo "c-install-check: $$pc.pc's libdir is not LIBDIR=$$ql:" $$(grep libdir= $$ql/pkgconfig/$$pc.pc) >&2; exit 1; }; done; \
	cc -Wall -Wextra -Werror ffi/c/example.c $$(PKG_CONFIG_PATH=$$ql/pkgconfig pkg-config --cflags --libs mcpool) -o $$tmp/example-libdir && \
	cmake -S ffi/c/cmake-example -B $$tmp/cmake-libdir -Dmcpool_DIR=$$ql/cmake/mcpool >/dev/null && \
	cmake --build $$tmp/cmake-libdir >/dev/null && \
	o=$$tmp/outside && ol=$$tmp/outside-lib && \
	$(MAKE) --no-print-directory install PREFIX=$$o LIBDIR=$$ol >/dev/null && \
	[ "$$(PKG_CONFIG_PATH=$$ol/pkgconfig pkg-config --variable=libdir mcpool)" = "$$ol" ] && \
	[ "$$(PKG_CONFIG_PATH=$$ol/pkgconfig pkg-config --variable=includedir mcpool-static)" = "$$o/include" ] \
		|| { echo "c-install-check: make install LIBDIR=$$ol (outside PREFIX=$$o): wrong paths in" $$ol/pkgconfig/*.pc >&2; exit 1; }; \
	cmake -S ffi/c/cmake-example -B $$tmp/cmake-outside -Dmcpool_DIR=$$ol/cmake/mcpool >/dev/null && \
	cmake --build $$tmp/cmake-outside >/dev/null && \
	ffi/c/with_memcached.sh sh -c "LD_LIBRARY_PATH=$$lib $$tmp/example \"\$$MCPOOL_TEST_SERVER\" && \
		$$tmp/example-a \"\$$MCPOOL_TEST_SERVER\" && $$tmp/example-static \"\$$MCPOOL_TEST_SERVER\" && \
		LD_LIBRARY_PATH=$$lib $$tmp/cmake-build/example \"\$$MCPOOL_TEST_SERVER\" && \
		$$tmp/cmake-build/example_static \"\$$MCPOOL_TEST_SERVER\" && \
		LD_LIBRARY_PATH=$$ql $$tmp/example-libdir \"\$$MCPOOL_TEST_SERVER\" && \
		$$tmp/cmake-libdir/example \"\$$MCPOOL_TEST_SERVER\" && $$tmp/cmake-libdir/example_static \"\$$MCPOOL_TEST_SERVER\" && \
		$$p/bin/mcpool --servers \"\$$MCPOOL_TEST_SERVER\" set c-install-check hello >/dev/null && \
		[ \"\$$($$p/bin/mcpool --servers \"\$$MCPOOL_TEST_SERVER\" get c-install-check)\" = hello ]" && \
	echo "c-install-check: installed into $$p as a user would; SONAME libmcpool.so.0, stripped" \
		"($$(stat -c %s $$lib/$(SO_FULL)) B .so, $$(stat -c %s $$lib/libmcpool.a) B .a, only mcpool_* global);" \
		"example built with pkg-config (shared, static, cc -static) and CMake find_package, all ran;" \
		"and with LIBDIR=PREFIX/lib/$${ql##*/} (pkg-config, CMake)"; \
	$(MAKE) --no-print-directory uninstall PREFIX=$$q LIBDIR=$$ql >/dev/null && [ ! -e $$q ] \
		|| { echo "c-install-check: make uninstall PREFIX=$$q LIBDIR=$$ql left:" $$(find $$q) >&2; exit 1; }; \
	if $(MAKE) --no-print-directory uninstall PREFIX=$$o >$$tmp/outside.log 2>&1; then \
		echo "c-install-check: make uninstall without LIBDIR removed an install's files outside PREFIX" >&2; exit 1; fi; \
	grep -q 'give the LIBDIR that make install was given' $$tmp/outside.log && [ -e $$ol/libmcpool.a ] && [ -e $$o/bin/mcpool ] \
		|| { cat $$tmp/outside.log >&2; echo "c-install-check: make uninstall without the install's LIBDIR is not refused whole" >&2; exit 1; }; \
	$(MAKE) --no-print-directory uninstall PREFIX=$$o LIBDIR=$$ol >/dev/null && [ ! -e $$o ] && [ ! -e $$ol ] \
		|| { echo "c-install-check: make uninstall PREFIX=$$o LIBDIR=$$ol left:" $$(find $$o $$ol 2>/dev/null) >&2; exit 1; }; \
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
	mkdir -p $$tmp/dir/lib/libmcpool.a && \
	if $(MAKE) --no-print-directory install PREFIX=$$tmp/dir >$$tmp/dir.log 2>&1; then \
		echo "c-install-check: make install wrote into a directory named libmcpool.a" >&2; exit 1; fi; \
	grep -q 'libmcpool.a is a directory, where install would write a file: nothing installed' $$tmp/dir.log \
		&& [ "$$(cd $$tmp/dir && find . | LC_ALL=C sort | tr '\n' ' ')" = ". ./lib ./lib/libmcpool.a " ] \
		|| { cat $$tmp/dir.log >&2; echo "c-install-check: a directory where install writes a file is not refused up front (tester finding retest44 4)" >&2; exit 1; }; \
	mkdir -p $$tmp/failed/lib && touch $$tmp/failed/lib/other && \
	if $(MAKE) --no-print-directory install PREFIX=$$tmp/failed STRIP=false >$$tmp/failed.log 2>&1; then \
		echo "c-install-check: make install succeeded with a strip that fails" >&2; exit 1; fi; \
	$(MAKE) --no-print-directory uninstall PREFIX=$$tmp/failed >$$tmp/uninstall.log 2>&1 \
		|| { cat $$tmp/failed.log $$tmp/uninstall.log >&2; echo "c-install-check: make uninstall after a failed install failed" >&2; exit 1; }; \
	(cd $$tmp && find failed | LC_ALL=C sort) > $$tmp/left && printf '%s\n' failed failed/lib failed/lib/other > $$tmp/others && \
	diff -u $$tmp/others $$tmp/left || { echo "c-install-check: after a make install that failed halfway (its strip)," \
		"make uninstall left the directories above" >&2; exit 1; }; \
	mkdir -p $$tmp/nomanifest/lib && touch $$tmp/nomanifest/share $$tmp/nomanifest/lib/pkgconfig && \
	if $(MAKE) --no-print-directory install PREFIX=$$tmp/nomanifest >$$tmp/failed.log 2>&1; then \
		echo "c-install-check: make install succeeded where share is a file" >&2; exit 1; fi; \
	(cd $$tmp && find nomanifest | LC_ALL=C sort) > $$tmp/left && \
	printf '%s\n' nomanifest nomanifest/lib nomanifest/lib/pkgconfig nomanifest/share > $$tmp/others && \
	diff -u $$tmp/others $$tmp/left && grep -q 'is not a directory, where install would make one: nothing installed' $$tmp/failed.log \
		|| { cat $$tmp/failed.log >&2; echo "c-install-check: a make install where files stand at directories' places" \
		"(share, lib/pkgconfig) made the directories above, or did not say so (tester finding retest45 4)" >&2; exit 1; }; \
	echo "c-install-check: make uninstall removed what make install wrote (twice over, from DESTDIR, with LIBDIR" \
		"below and outside PREFIX, and after a failed install), others' files kept"
