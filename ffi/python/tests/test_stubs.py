"""The type stubs (mcpool/__init__.pyi) against the module: every public name and every
public Client method and property the module has is in the stubs, and nothing more, with
the same parameter names as the C methods' signatures. They drifted once (add_multi,
incr_multi, decr_multi, meta_info, set_with_version were missing)."""
import ast
import inspect
import os

import mcpool

STUBS = os.path.join(os.path.dirname(os.path.abspath(mcpool.__file__)), "__init__.pyi")


def _stubs():
    with open(STUBS) as f:
        tree = ast.parse(f.read())
    top, classes = set(), {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            top.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            top.add(node.target.id)
        elif isinstance(node, ast.Assign):  # the type aliases (Key, Value, ...)
            top.update(t.id for t in node.targets if isinstance(t, ast.Name))
        if isinstance(node, ast.ClassDef):
            classes[node.name] = {n.name: n for n in node.body if isinstance(n, ast.FunctionDef)}
    return top, classes


def test_stubs_list_the_public_module_names():
    top, _ = _stubs()
    public = set(mcpool.__all__) | {n for n in dir(mcpool) if not n.startswith("_")
                                    and not inspect.ismodule(getattr(mcpool, n))}
    assert public - top == set(), "in the module, not in the stubs"
    # The type aliases too (tester finding packaging 6: `from mcpool import Value` passed a
    # type check and failed at run time).
    assert {n for n in top if not n.startswith("_")} - public == set(), \
        "in the stubs, not in the module"


def test_stubs_list_every_public_client_method():
    _, classes = _stubs()
    stubbed = {**classes["_Client"], **classes["Client"]}
    public = {n for n in dir(mcpool.Client) if not n.startswith("_")}
    assert public - set(stubbed) == set(), "Client methods missing from the stubs"
    assert {n for n in stubbed if not n.startswith("_")} - public == set(), \
        "stubbed methods the Client does not have"


def test_stub_parameters_match_the_c_signatures():
    _, classes = _stubs()
    stubbed = {**classes["_Client"], **classes["Client"]}
    for name, fn in stubbed.items():
        sig = getattr(getattr(mcpool.Client, name, None), "__text_signature__", None)
        if name.startswith("_") or not sig:
            continue
        real = [p for p in inspect.signature(getattr(mcpool.Client, name)).parameters]
        args = fn.args
        # without self; the keyword-only ones after the positional ones, as in the signature
        stub = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs][1:]
        assert stub[:len(real)] == real, (name, stub, real)


def test_the_docs_spell_set_servers_as_the_binding_takes_it(servers, prefix):
    # the READMEs and docs/topology.md wrote set_servers(servers, weights=None), but weights
    # is keyword-only (as in Client()): c.set_servers([...], [1, 2]) raised TypeError
    import re
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
    docs = [os.path.join(root, p) for p in ("README.md", "docs/topology.md",
                                             "ffi/python/README.md")]
    docs = [p for p in docs if os.path.exists(p)]
    spelled = []
    for p in docs:
        with open(p) as f:
            spelled += re.findall(r"set_servers\(servers[^)]*\)", f.read())
    if docs:
        assert spelled and set(spelled) == {"set_servers(servers, *, weights=None)"}, spelled
    a, b = (s.addr for s in servers[:2])
    c = mcpool.Client([a])
    try:
        c.set_servers([a, b], [1, 2])
        raise AssertionError("weights taken positionally")
    except TypeError:
        pass
    c.set_servers([a, b], weights=[1, 2])
    assert c.set(prefix + "k", "v") and c.get(prefix + "k") == "v"
