"""Builds the mcpool CPython extension over include/mcpool.h and libmcpool.a.

The extension uses only the limited API of CPython 3.10 (Py_LIMITED_API): one abi3 wheel,
mcpool-<version>-cp310-abi3-<platform>.whl, serves every CPython from 3.10 on.

Where libmcpool comes from, in order:
  1. $MCPOOL_LIB_DIR (a directory with libmcpool.a, or libmcpool.so) and $MCPOOL_INCLUDE_DIR
     (default: the header of the Rust sources below);
  2. `cargo build --release -p mcpool-capi --locked` of the Rust sources: the repository's
     (ffi/python two levels under the crate; cargo rebuilds only what changed since the last
     build, so a `git pull` is never linked against an older core), or in an unpacked sdist
     the copy in mcpool-core/ (the workspace's crates and header, as listed in the
     repository's scripts/core-files.txt, put there by `setup.py sdist`), into
     $CARGO_TARGET_DIR or that directory's target/. Cargo's output goes to stderr (pip shows
     it with -v, or when the build fails); without cargo, an error says how to get it
     (rustup). In the repository without cargo, a libmcpool already built in target/release
     is taken only when it is newer than every source of the core; else an error says so.
$MCPOOL_FEATURES (e.g. `tls`): the cargo features of the core built in 2 (README.md, "TLS in
every package"); a library taken from 1 (or an earlier build in the repository) keeps its
own, and asked for `tls`, one without TLS stops the build, naming it.
The static archive is preferred: the extension then needs no rpath and no libmcpool.so at
run time, and links nothing beyond the C library (auditwheel finds no library to graft).
"""
import os
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext as _build_ext
from setuptools.command.sdist import sdist as _sdist

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
BUNDLED = os.path.join(HERE, "mcpool-core")  # the Rust sources inside an sdist

# What of the repository the sdist carries to build libmcpool: the list in
# scripts/core-files.txt (shared with the Perl dist), git-tracked files only.
CORE_LIST = os.path.join(REPO, "scripts", "core-files.txt")
CARGO_BUILD = ["build", "--release", "-p", "mcpool-capi", "--locked"]
# What the repository's libmcpool is built from: a library older than any of these is stale.
CORE_SOURCES = ["Cargo.toml", "Cargo.lock", "src", "capi", "include"]


def core_paths(root):
    """The git-tracked files under the paths that scripts/core-files.txt lists."""
    with open(CORE_LIST) as f:
        wanted = [l.strip() for l in f if l.strip() and not l.startswith("#")]
    out = subprocess.check_output(["git", "-C", root, "ls-files", "-z", "--"] + wanted)
    files = [p for p in out.decode().split("\0") if p]
    for must in ("Cargo.toml", "Cargo.lock", "capi/Cargo.toml", "include/mcpool.h"):
        if must not in files:
            raise SystemExit("mcpool: sdist: %s is not in the repository" % must)
    return files


def core_dir():
    """The Rust sources to build: the sdist's bundled copy, else the repository, else None."""
    if os.path.exists(os.path.join(BUNDLED, "Cargo.toml")):
        return BUNDLED
    if os.path.exists(os.path.join(REPO, "Cargo.toml")) and \
            os.path.exists(os.path.join(REPO, "capi", "src", "lib.rs")):
        return REPO
    return None


def has_lib(d):
    return any(os.path.exists(os.path.join(d, n)) for n in ("libmcpool.a", "libmcpool.so"))


def cargo_path():
    if os.environ.get("CARGO"):
        return shutil.which(os.environ["CARGO"])
    cargo = shutil.which("cargo")
    if not cargo:
        home = os.path.join(os.path.expanduser("~"), ".cargo", "bin", "cargo")
        cargo = home if os.access(home, os.X_OK) else None
    return cargo


def newest_source(core):
    """The newest modification time among the core's sources, and that file."""
    best = (0.0, None)
    for top in CORE_SOURCES:
        path = os.path.join(core, top)
        walk = [(path, [], [""])] if os.path.isfile(path) else os.walk(path)
        for d, dirs, files in walk:
            dirs[:] = [x for x in dirs if x != "target"]
            for f in files:
                p = os.path.join(d, f) if f else d
                best = max(best, (os.stat(p).st_mtime, p))
    return best


def fresh_repo_lib(libdir):
    """Without cargo: the repository's built libmcpool if it is newer than its sources."""
    lib = next((os.path.join(libdir, n) for n in ("libmcpool.a", "libmcpool.so")
                if os.path.exists(os.path.join(libdir, n))), None)
    if lib is None:
        return None
    mtime, newest = newest_source(REPO)
    if os.stat(lib).st_mtime < mtime:
        raise SystemExit(
            "mcpool: %s is older than the sources it is built from (%s changed since): linking "
            "it would install an old core. cargo was not found to rebuild it: install a Rust "
            "toolchain (https://rustup.rs) or put cargo on PATH, or rebuild the library "
            "(`cargo build --release -p mcpool-capi` in %s) and try again."
            % (lib, os.path.relpath(newest, REPO), REPO))
    sys.stderr.write("mcpool: cargo not found; %s is newer than its sources, linking it\n" % lib)
    return libdir


def cargo_features():
    """--features for $MCPOOL_FEATURES (space- or comma-separated), e.g. `tls`."""
    features = os.environ.get("MCPOOL_FEATURES", "").replace(",", " ").split()
    return ["--features", " ".join(features)] if features else []


def find_cargo():
    cargo = cargo_path()
    if not cargo:
        raise SystemExit(
            "mcpool: building from source needs a Rust toolchain (cargo, Rust 1.80 or later) "
            "and it was not found on PATH. Install one with rustup (https://rustup.rs: "
            "`curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh`, then open a "
            "new shell), or install the prebuilt wheel (mcpool-*-cp310-abi3-manylinux_*.whl), "
            "or set MCPOOL_LIB_DIR to a directory holding a built libmcpool.a.")
    return cargo


def build_core(core):
    """cargo build of the C ABI crate in core; returns the directory holding libmcpool.a."""
    cargo = find_cargo()
    # $CARGO_TARGET_DIR when set (cargo's own variable; a shared one keeps built crates),
    # else core/target.
    target = os.path.abspath(os.environ.get("CARGO_TARGET_DIR") or os.path.join(core, "target"))
    env = dict(os.environ, CARGO_TARGET_DIR=target)
    cmd = [cargo] + CARGO_BUILD + cargo_features()
    sys.stderr.write("mcpool: building the Rust core: %s (in %s); this takes a minute or two\n"
                     % (" ".join(cmd), core))
    sys.stderr.flush()
    # cargo's progress and errors go to our stderr, as they are (pip -v shows them).
    rc = subprocess.call(cmd, cwd=core, env=env, stdout=sys.stderr)
    libdir = os.path.join(target, "release")
    if rc != 0 or not has_lib(libdir):
        raise SystemExit("mcpool: `%s` failed (exit %d) in %s; its output is above"
                         % (" ".join(cmd), rc, core))
    return libdir


def find_lib():
    env = os.environ.get("MCPOOL_LIB_DIR")
    if env:
        return check_features(os.path.abspath(env), "MCPOOL_LIB_DIR=" + env)
    core = core_dir()
    if core == REPO and not cargo_path():
        target = os.environ.get("CARGO_TARGET_DIR") or os.path.join(REPO, "target")
        libdir = fresh_repo_lib(os.path.join(os.path.abspath(target), "release"))
        if libdir:
            return check_features(libdir, "the repository's " + libdir)
    if core is not None:
        return build_core(core)
    raise SystemExit(
        "mcpool: libmcpool not found: no Rust sources here (neither an sdist's mcpool-core/ "
        "nor the mcpool repository two levels up). Set MCPOOL_LIB_DIR to the directory "
        "holding libmcpool.a (and MCPOOL_INCLUDE_DIR to the one holding mcpool.h).")


def check_features(libdir, how):
    """A library built elsewhere keeps the features it was built with: asked for TLS
    ($MCPOOL_FEATURES), one built without it stops the build now, naming it, rather than
    refusing the first TLS option at run time (its rustls code leaves that name in it)."""
    if "tls" not in os.environ.get("MCPOOL_FEATURES", "").replace(",", " ").split():
        return libdir
    for name in ("libmcpool.a", "libmcpool.so"):
        path = os.path.join(libdir, name)
        if os.path.exists(path):
            with open(path, "rb") as f:
                if b"rustls" in f.read():
                    return libdir
            raise SystemExit(
                "mcpool: MCPOOL_FEATURES=tls asks for TLS, but %s (%s) was built without it. "
                "Rebuild it with TLS (make lib MCPOOL_FEATURES=tls in the mcpool sources), or "
                "unset MCPOOL_LIB_DIR to have this build make its own core with TLS (needs cargo)."
                % (path, how))
    return libdir


class sdist(_sdist):
    """Also puts the Rust sources of libmcpool and its header into the sdist (mcpool-core/),
    so that the sdist builds anywhere with a Rust toolchain."""

    def make_release_tree(self, base_dir, files):
        super().make_release_tree(base_dir, files)
        if core_dir() != REPO:
            raise SystemExit("mcpool: sdist is made from the repository (it bundles its Rust core)")
        dest = os.path.join(base_dir, "mcpool-core")
        for f in core_paths(REPO):
            os.makedirs(os.path.dirname(os.path.join(dest, f)), exist_ok=True)
            shutil.copy2(os.path.join(REPO, f), os.path.join(dest, f))


def link_options(libdir):
    static = os.path.join(libdir, "libmcpool.a")
    if os.path.exists(static):
        # The archive's symbols stay inside the extension (--exclude-libs); the system
        # libraries are what the Rust standard library needs (see mcpool.pc, Libs.private).
        # Debug info is stripped (-S); the symbol table and the dynamic symbols stay here
        # (make python-dist drops the symbol table from the wheel: auditwheel repair --strip).
        return dict(extra_objects=[static], depends=[static],
                    extra_link_args=["-Wl,--exclude-libs,ALL", "-Wl,--gc-sections", "-Wl,-S"],
                    libraries=["gcc_s", "util", "rt", "pthread", "m", "dl"])
    return dict(library_dirs=[libdir], libraries=["mcpool"], runtime_library_dirs=[libdir])


class build_ext(_build_ext):
    """Finds (or builds) libmcpool only when the extension is built: not for an sdist or for
    the wheel's metadata."""

    def build_extensions(self):
        libdir = find_lib()
        incdir = os.environ.get("MCPOOL_INCLUDE_DIR") or os.path.join(core_dir() or REPO, "include")
        if not os.path.exists(os.path.join(incdir, "mcpool.h")):
            raise SystemExit("mcpool: %s not found (set MCPOOL_INCLUDE_DIR)"
                             % os.path.join(incdir, "mcpool.h"))
        for ext in self.extensions:
            ext.include_dirs.append(incdir)
            ext.depends.append(os.path.join(incdir, "mcpool.h"))
            for k, v in link_options(libdir).items():
                getattr(ext, k).extend(v)
        super().build_extensions()


setup(
    cmdclass={"sdist": sdist, "build_ext": build_ext},
    options={"bdist_wheel": {"py_limited_api": "cp310"}},
    ext_modules=[
        Extension(
            "mcpool._mcpool",
            sources=["src/_mcpool.c"],
            # The limited API of CPython 3.10: one abi3 wheel (mcpool-*-cp310-abi3-*.whl)
            # serves every CPython from 3.10 on.
            define_macros=[("Py_LIMITED_API", "0x030A0000")],
            py_limited_api=True,
            extra_compile_args=["-O2", "-std=c11", "-Wall", "-Wextra",
                                "-Wno-missing-field-initializers", "-Wno-cast-function-type"],
        )
    ],
)
