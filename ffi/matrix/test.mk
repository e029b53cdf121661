# The value matrices of issue 18 (ffi/matrix/run.py), included by the root Makefile.
#
#   make test-matrix   builds the five drivers (Rust example, C program, the Python
#                      extension, the Perl XS module, the Java jar) and runs writers x readers
#                      x kinds in the `mcpool` format, each legacy preset against its real
#                      peer, and the wrong-layout reads, against one private memcached
TEST_TARGETS += test-matrix

MATRIX_TARGET := $(abspath $(or $(CARGO_TARGET_DIR),target))

.PHONY: test-matrix matrix-drivers
matrix-drivers: lib python-ext
	$(CARGO) build --release --example value_matrix
	@mkdir -p $(MATRIX_TARGET)/matrix/java
	$(CC) -std=c11 -O2 -Wall -Wextra -Werror -Iinclude ffi/matrix/c_driver.c \
		-o $(MATRIX_TARGET)/matrix/c_driver -L$(MATRIX_TARGET)/release -lmcpool \
		-Wl,-rpath,$(MATRIX_TARGET)/release
	cd ffi/perl && MCPOOL_LIB_DIR=$(MATRIX_TARGET)/release perl Makefile.PL >/dev/null && $(MAKE) >/dev/null
	$(MAKE) -C ffi/java CARGO_TARGET_DIR=$(MATRIX_TARGET) build/mcpool.jar build/libmcpool_jni.so
	javac --release 11 -Xlint:all -Werror -d $(MATRIX_TARGET)/matrix/java \
		-cp ffi/java/build/mcpool.jar:/usr/share/java/spymemcached.jar ffi/matrix/MatrixDriver.java

test-matrix: matrix-drivers
	MCPOOL_TARGET=$(MATRIX_TARGET) /usr/bin/python3 ffi/matrix/run.py
