"""Builds the mcpool CPython extension over include/mcpool.h and libmcpool.a.

Where libmcpool comes from, in order:
  1. $MCPOOL_LIB_DIR (a directory with libmcpool.a, or libmcpool.so) and $MCPOOL_INCLUDE_DIR
     (default: the repository's include/);
  2. the repository's target/release ($CARGO_TARGET_DIR/release when set), two levels up;
  3. `cargo build --release --lib` run in the repository, then 2.
The static archive is preferred: the extension then needs no rpath and no libmcpool.so at
run time.
"""
import os
import subprocess
import sys

from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))


def find_lib():
    env = os.environ.get("MCPOOL_LIB_DIR")
    if env:
        return os.path.abspath(env)
    target = os.environ.get("CARGO_TARGET_DIR") or os.path.join(REPO, "target")
    libdir = os.path.join(os.path.abspath(target), "release")
    has = lambda d: any(os.path.exists(os.path.join(d, n)) for n in ("libmcpool.a", "libmcpool.so"))
    if has(libdir):
        return libdir
    if os.path.exists(os.path.join(REPO, "Cargo.toml")):
        sys.stderr.write("mcpool: libmcpool not found; running cargo build --release --lib\n")
        subprocess.check_call(["cargo", "build", "--release", "--lib"], cwd=REPO)
        if has(libdir):
            return libdir
    raise SystemExit(
        "mcpool: libmcpool not found. Build it with `cargo build --release --lib` in the "
        "mcpool repository, or set MCPOOL_LIB_DIR to the directory holding libmcpool.a")


libdir = find_lib()
incdir = os.environ.get("MCPOOL_INCLUDE_DIR") or os.path.join(REPO, "include")
static = os.path.join(libdir, "libmcpool.a")
if os.path.exists(static):
    # The archive's symbols stay inside the extension (--exclude-libs); the system
    # libraries are what the Rust standard library needs (see mcpool.pc, Libs.private).
    link = dict(extra_objects=[static],
                extra_link_args=["-Wl,--exclude-libs,ALL", "-Wl,--gc-sections"],
                libraries=["gcc_s", "util", "rt", "pthread", "m", "dl"])
else:
    link = dict(library_dirs=[libdir], libraries=["mcpool"],
                runtime_library_dirs=[libdir])

setup(
    options={"bdist_wheel": {"py_limited_api": "cp38"}},
    ext_modules=[
        Extension(
            "mcpool._mcpool",
            sources=["src/_mcpool.c"],
            # The limited API of CPython 3.8: one abi3 wheel (mcpool-*-cp38-abi3-*.whl) serves
            # every CPython from 3.8 on.
            define_macros=[("Py_LIMITED_API", "0x03080000")],
            py_limited_api=True,
            include_dirs=[incdir],
            depends=[os.path.join(incdir, "mcpool.h")] + ([static] if os.path.exists(static) else []),
            extra_compile_args=["-O2", "-std=c11", "-Wall", "-Wextra", "-Wno-missing-field-initializers",
                                "-Wno-cast-function-type"],
            **link,
        )
    ],
)
