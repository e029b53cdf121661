#!/usr/bin/env python3
"""Finds import circles among the library's modules: reads every `use crate::...` (and
`crate::x::` paths in code) of src/ (not the C ABI, the CLI or tests) and reports the
strongly connected components of the module graph with more than one member.
    scripts/import-cycles.py [SRC_DIR]   (exit 1 if there is a circle)"""
import os, re, sys

src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "src")
skip = ("ffi", "bin")

def module_of(path):
    rel = os.path.relpath(path, src)[:-3].split(os.sep)
    if rel[-1] in ("mod", "lib"):
        rel = rel[:-1]
    return rel[0] if rel else "lib"

edges = {}
reexports = {}
for mod_, names in re.findall(r"pub use (\w+)::(?:\w+::)*\{?([\w, ]+)\}?;", open(os.path.join(src, "lib.rs")).read()):
    for n in re.findall(r"\w+", names):
        reexports[n] = mod_
for root, dirs, files in os.walk(src):
    dirs[:] = [d for d in dirs if os.path.relpath(os.path.join(root, d), src).split(os.sep)[0] not in skip]
    for f in files:
        if not f.endswith(".rs"):
            continue
        p = os.path.join(root, f)
        m = module_of(p)
        if m == "lib":
            continue
        text = open(p).read()
        # Unit tests may reach anywhere; the graph is of the library's code.
        text = re.split(r"#\[cfg\(test\)\]\s*mod tests", text)[0]
        text = re.sub(r"//[^\n]*", "", text)
        deps = set(re.findall(r"\bcrate::(\w+)", text))
        for block in re.findall(r"use crate::\{([^;]*)\};", text, re.S):
            deps |= set(re.findall(r"(?:^|[,{\s])(\w+)(?=::|\s*[,}]|\s*$)", block))
        # `crate::Error` and the like: the module lib.rs re-exports them from.
        for name in list(deps):
            if name[:1].isupper() and name in reexports:
                deps.discard(name)
                deps.add(reexports[name])
        deps.discard(m)
        deps = {d for d in deps if os.path.exists(os.path.join(src, d + ".rs")) or os.path.isdir(os.path.join(src, d))}
        edges.setdefault(m, set()).update(deps)

# Tarjan's strongly connected components.
index, low, stack, on, sccs, n = {}, {}, [], set(), [], [0]
def visit(v):
    index[v] = low[v] = n[0]; n[0] += 1; stack.append(v); on.add(v)
    for w in edges.get(v, ()):
        if w not in index:
            visit(w); low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        c = []
        while True:
            w = stack.pop(); on.discard(w); c.append(w)
            if w == v:
                break
        sccs.append(c)
for v in sorted(edges):
    if v not in index:
        visit(v)
circles = [sorted(c) for c in sccs if len(c) > 1]
for m in sorted(edges):
    print(f"{m:12} -> {' '.join(sorted(edges[m]))}")
if circles:
    for c in circles:
        print("circle:", " <-> ".join(c))
    sys.exit(1)
print("no import circle among", len(edges), "modules")
