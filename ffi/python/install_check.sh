#!/usr/bin/env bash
# The Python packages as a user installs them (issue 20, items 3 and 7).
#   install_check.sh DIST_DIR [sdist]
# DIST_DIR holds the repaired wheel (mcpool-*-cp310-abi3-manylinux_*.whl) and the sdist
# (mcpool-*.tar.gz), made by `make python-dist`. Checks:
#   - the wheel: a fresh venv (/usr/bin/python3 -m venv), `pip install --no-index
#     --only-binary :all:` of the wheel (nothing compiled), then a set/get against a private
#     memcached, isolated (python -I: no PYTHONPATH, no script directory), with the module
#     loaded from the venv;
#   - with "sdist": another venv (system site packages: setuptools and wheel, offline),
#     `pip install --no-build-isolation` of the sdist, which builds the bundled Rust core
#     with cargo, then the same set/get; and that without cargo it fails naming rustup.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dist=$(cd "$1" && pwd)
python=${PYTHON:-/usr/bin/python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

shopt -s nullglob
wheels=("$dist"/mcpool-*-cp310-abi3-manylinux_*_x86_64.whl)
sdists=("$dist"/mcpool-*.tar.gz)
[ ${#wheels[@]} -eq 1 ] || { echo "install_check: want one manylinux abi3 wheel in $dist, found: ${wheels[*]:-none}" >&2; exit 1; }

# The smoke test a user would write: set and get through the installed package.
cat > "$tmp/smoke.py" <<'EOF'
import os, sys
import mcpool
where = os.path.dirname(mcpool.__file__)
assert where.startswith(sys.prefix), "mcpool loaded from %s, not the venv %s" % (where, sys.prefix)
assert os.path.exists(os.path.join(where, "py.typed")), "py.typed missing"
assert os.path.exists(os.path.join(where, "__init__.pyi")), "__init__.pyi missing"
mc = mcpool.Client([os.environ["MCPOOL_TEST_SERVER"]])
key = "install-check:%d" % os.getpid()
assert mc.set(key, "h\u00e9llo", time=60) is True
assert mc.get(key) == "h\u00e9llo", mc.get(key)
assert mc.get_multi([key, key + ":missing"]) == {key: "h\u00e9llo"}
assert mc.delete(key) is True and mc.get(key) is None
from importlib.metadata import version
print("install_check: %s: set/get ok (mcpool %s, libmcpool %s, from %s)"
      % (sys.argv[1], version("mcpool"), mcpool._mcpool.library_version(), where))
EOF

echo "install_check: wheel $(basename "${wheels[0]}") ($(stat -c %s "${wheels[0]}") bytes) into a fresh venv"
"$python" -m venv "$tmp/venv"
env -u PYTHONPATH "$tmp/venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-cache-dir \
  --no-index --only-binary :all: "${wheels[0]}"
"$here/../c/with_memcached.sh" "$tmp/venv/bin/python" -I "$tmp/smoke.py" wheel

if [ "${2:-}" = sdist ]; then
  [ ${#sdists[@]} -eq 1 ] || { echo "install_check: want one sdist in $dist, found: ${sdists[*]:-none}" >&2; exit 1; }
  echo "install_check: sdist $(basename "${sdists[0]}") ($(stat -c %s "${sdists[0]}") bytes): pip install --no-build-isolation (builds the bundled Rust core)"
  # Without cargo, the build stops at once with an error that names rustup.
  if PATH=/usr/bin:/bin command -v cargo >/dev/null; then
    echo "install_check: a cargo in /usr/bin: the no-cargo message is not checked" >&2
  else
    if env PATH=/usr/bin:/bin HOME="$tmp/nohome" CARGO= "$python" -m pip wheel --disable-pip-version-check --no-cache-dir \
        --no-index --no-build-isolation --no-deps -w "$tmp/nowheel" "${sdists[0]}" > "$tmp/nocargo.log" 2>&1; then
      echo "install_check: the sdist built without cargo?" >&2; exit 1
    fi
    grep -q "Rust toolchain (cargo.*rustup" "$tmp/nocargo.log" || {
      echo "install_check: without cargo, no error naming rustup:" >&2; cat "$tmp/nocargo.log" >&2; exit 1; }
    echo "install_check: sdist without cargo: fails naming rustup (ok)"
  fi
  "$python" -m venv --system-site-packages "$tmp/venv-sdist"
  start=$(date +%s)
  env -u PYTHONPATH "$tmp/venv-sdist/bin/python" -m pip install --quiet --disable-pip-version-check --no-cache-dir \
    --no-index --no-build-isolation --no-deps "${sdists[0]}"
  echo "install_check: sdist built and installed in $(( $(date +%s) - start )) s"
  "$here/../c/with_memcached.sh" "$tmp/venv-sdist/bin/python" -I "$tmp/smoke.py" sdist
fi
