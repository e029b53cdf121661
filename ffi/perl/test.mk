# The Perl binding's targets, included by the root Makefile (paths are relative to the root).
#
#   make test-perl           build libmcpool, then perl Makefile.PL && make && make test in ffi/perl
#                            (the tests start their own memcached processes on free loopback
#                            ports), then Makefile.PL from the clone runs cargo (never an old
#                            libmcpool.a: scripts/from-clone-check.sh), then perl-install-check
#   make perl-install-check  the CPAN-style dist as a user installs it (ffi/perl/install-check.sh):
#                            the C library into a scratch prefix, make dist, the tarball built
#                            outside the repository through pkg-config, make test (00-load.t,
#                            01-commands.t, 10-chi.t; skipped without memcached), make install (perl Makefile.PL INSTALL_BASE=scratch), a set/get
#   make perl-dist           ffi/perl/Mcpool-<version>.tar.gz (with the Rust core and licences)
#   make perl-dist-cargo-check  the dist built with only cargo: its bundled Rust core compiled from
#                            scratch (minutes; not part of test-perl), 00-load.t and 01-commands.t
TEST_TARGETS += test-perl

.PHONY: test-perl perl-install-check perl-dist perl-dist-cargo-check
test-perl: lib
	cd ffi/perl && MCPOOL_LIB_DIR=$(abspath $(or $(CARGO_TARGET_DIR),target))/release perl Makefile.PL && \
		$(MAKE) && MCPOOL_REQUIRE_MEMCACHED=1 $(MAKE) test
	scripts/from-clone-check.sh perl
	$(MAKE) --no-print-directory perl-install-check

perl-install-check: lib
	MAKE="$(MAKE)" ffi/perl/install-check.sh

perl-dist: lib
	cd ffi/perl && MCPOOL_LIB_DIR=$(abspath $(or $(CARGO_TARGET_DIR),target))/release perl Makefile.PL >/dev/null && \
		$(MAKE) dist

perl-dist-cargo-check: lib
	MAKE="$(MAKE)" ffi/perl/cargo-check.sh
