# The Perl binding's target, included by the root Makefile (paths are relative to the root).
#
#   make test-perl    build libmcpool, then perl Makefile.PL && make && make test in ffi/perl
#                     (the tests start their own memcached processes on free loopback ports)
TEST_TARGETS += test-perl

.PHONY: test-perl
test-perl: lib
	cd ffi/perl && MCPOOL_LIB_DIR=$(abspath $(or $(CARGO_TARGET_DIR),target))/release perl Makefile.PL && \
		$(MAKE) && $(MAKE) test
