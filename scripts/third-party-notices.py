#!/usr/bin/env python3
"""THIRD-PARTY-NOTICES: the licences of the crates compiled into what mcpool ships.

libmcpool.so/.a, the `mcpool` CLI, the Python extension, the Perl module and the JNI library
all link the same core, so they carry the licences of every crate the C ABI and the CLI
depend on at run time (normal dependencies, every feature: the TLS build's too), including
the C libraries the -sys crates bundle (libdeflate, zstd). Build-only and test-only
dependencies are not shipped and not listed.

  scripts/third-party-notices.py            write THIRD-PARTY-NOTICES at the repository root
  scripts/third-party-notices.py --check    exit 1 when the committed file is not current

Each distinct licence text is printed once, with the crates that carry it.
"""

import hashlib
import json
import os
import re
import subprocess
import sys

ROOTS = ("mcpool-capi", "mcpool-cli")
TARGET = "x86_64-unknown-linux-gnu"
LICENCE_FILE = re.compile(r"^(LICEN[CS]E|COPYING|NOTICE|UNLICENSE)([-._].*)?$", re.I)
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(REPO, "THIRD-PARTY-NOTICES")


def metadata():
    out = subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--locked", "--all-features",
         "--filter-platform", TARGET],
        cwd=REPO, check=True, stdout=subprocess.PIPE).stdout
    return json.loads(out)


def shipped(meta):
    """The packages reachable from ROOTS through normal (run-time) dependencies."""
    pkgs = {p["id"]: p for p in meta["packages"]}
    nodes = {n["id"]: n for n in meta["resolve"]["nodes"]}
    members = set(meta["workspace_members"])
    todo = [i for i in members if pkgs[i]["name"] in ROOTS]
    seen = set(todo)
    while todo:
        for dep in nodes[todo.pop()]["deps"]:
            if any(k["kind"] is None for k in dep["dep_kinds"]) and dep["pkg"] not in seen:
                seen.add(dep["pkg"])
                todo.append(dep["pkg"])
    return sorted((pkgs[i] for i in seen - members), key=lambda p: (p["name"], p["version"]))


def licence_files(pkg):
    """The crate's licence files, and those of a C library it bundles (one level down)."""
    top = os.path.dirname(pkg["manifest_path"])
    found = []
    for d in [top] + sorted(os.path.join(top, e) for e in os.listdir(top)):
        if d != top and (not os.path.isdir(d) or os.path.islink(d)):
            continue
        for name in sorted(os.listdir(d)):
            path = os.path.join(d, name)
            if LICENCE_FILE.match(name) and os.path.isfile(path):
                found.append((os.path.relpath(path, top), path))
    return found


def render(pkgs):
    texts = {}  # digest -> (text, [crate/file ...])
    lines = [
        "Third-party notices for mcpool",
        "",
        "libmcpool, the mcpool CLI and the Python, Perl and Java bindings include the crates",
        "below (and the C libraries some of them bundle). Generated from Cargo.lock by",
        "scripts/third-party-notices.py; `make test` checks it is current.",
        "",
        "Crates (name version: licence):",
        "",
    ]
    for p in pkgs:
        files = licence_files(p)
        lines.append(f"  {p['name']} {p['version']}: {p['license'] or p.get('license_file') or 'unknown'}")
        for rel, path in files:
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read().replace("\r\n", "\n").strip("\n")
            h = hashlib.sha256(text.encode()).hexdigest()
            texts.setdefault(h, (text, []))[1].append(f"{p['name']} {p['version']} ({rel})")
        if not files:
            lines.append("    (no licence file in the crate: its licence is the SPDX expression above)")
    for text, who in sorted(texts.values(), key=lambda t: t[1][0]):
        lines += ["", "=" * 78, "The licence text of:"]
        lines += [f"  {w}" for w in who]
        lines += ["-" * 78, text]
    return "\n".join(lines) + "\n"


def main():
    text = render(shipped(metadata()))
    if sys.argv[1:] == ["--check"]:
        try:
            with open(OUT, encoding="utf-8") as f:
                current = f.read()
        except FileNotFoundError:
            current = None
        if current != text:
            print("third-party-notices: THIRD-PARTY-NOTICES is not current with Cargo.lock: "
                  "run scripts/third-party-notices.py and commit it", file=sys.stderr)
            return 1
        print("third-party-notices: THIRD-PARTY-NOTICES is current")
        return 0
    if sys.argv[1:]:
        print(__doc__, file=sys.stderr)
        return 2
    with open(OUT, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"third-party-notices: wrote {OUT} ({len(text)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
