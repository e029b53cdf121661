# The Python binding's targets, included by the root Makefile (paths relative to the root).
#
#   make test-python    build libmcpool, build the extension into a private directory
#                       (no system install), run its pytest suite with /usr/bin/python3
#   make python-install install the package into the system interpreter
TEST_TARGETS += test-python

PYTHON ?= /usr/bin/python3
PY_LIBDIR := $(abspath $(or $(CARGO_TARGET_DIR),target))/release
PY_SITE := $(abspath $(or $(CARGO_TARGET_DIR),target))/python-site
PIP_BUILD := $(PYTHON) -m pip install --quiet --no-build-isolation --no-deps --no-index

.PHONY: test-python python-ext python-install

# The extension, statically linked with libmcpool.a, into target/python-site.
python-ext: lib
	rm -rf $(PY_SITE) ffi/python/build
	MCPOOL_LIB_DIR=$(PY_LIBDIR) $(PIP_BUILD) --target $(PY_SITE) ./ffi/python

# pytest's exit code 5 means it collected no test: a failure here.
test-python: python-ext
	cd ffi/python && PYTHONPATH=$(PY_SITE) $(PYTHON) -m pytest -p no:cacheprovider -q tests; \
	rc=$$?; if [ $$rc -eq 5 ]; then echo "test-python: pytest collected no tests" >&2; fi; exit $$rc

python-install: lib
	rm -rf ffi/python/build
	MCPOOL_LIB_DIR=$(PY_LIBDIR) $(PIP_BUILD) --break-system-packages ./ffi/python
