# The Java binding's targets, included by the root Makefile (paths are relative to the root).
#
#   make test-java     build libmcpool, the jar and JNI library, run the JUnit tests
TEST_TARGETS += test-java

.PHONY: test-java
test-java: lib
	$(MAKE) -C ffi/java CARGO_TARGET_DIR=$(abspath $(or $(CARGO_TARGET_DIR),target)) test
