"""The type stubs (mcpool/__init__.pyi) against the module: every public name and every
public Client method and property the module has is in the stubs, and nothing more, with
the same parameter names as the C methods' signatures. They drifted once (add_multi,
incr_multi, decr_multi, meta_info, set_with_version were missing)."""
import ast
import inspect
import os

import pytest

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


_P = inspect.Parameter
_SPELLED_ELSEWHERE = object()  # a stub's `...` default: there is one, not spelled there


def _stub_default(node):
    if node is None:
        return _P.empty
    v = ast.literal_eval(node)
    return _SPELLED_ELSEWHERE if v is Ellipsis else v


def _stub_parameters(fn):
    """[(name, kind, default)] of a stub's def, without self."""
    a = fn.args
    pos = a.posonlyargs + a.args
    defaults = [None] * (len(pos) - len(a.defaults)) + list(a.defaults)
    out = [(x.arg, _P.POSITIONAL_ONLY if x in a.posonlyargs else _P.POSITIONAL_OR_KEYWORD,
            _stub_default(d)) for x, d in zip(pos, defaults)]
    if a.vararg:
        out.append((a.vararg.arg, _P.VAR_POSITIONAL, _P.empty))
    out += [(x.arg, _P.KEYWORD_ONLY, _stub_default(d)) for x, d in zip(a.kwonlyargs,
                                                                        a.kw_defaults)]
    if a.kwarg:
        out.append((a.kwarg.arg, _P.VAR_KEYWORD, _P.empty))
    return out[1:]


def _runtime_parameters(fn):
    """[(name, kind, default)] of inspect.signature(fn) (unbound), without self and without
    the private keywords (the compat modules' _failed, _given)."""
    params = list(inspect.signature(fn).parameters.values())[1:]
    return [(p.name, p.kind, p.default) for p in params if not p.name.startswith("_")]


def _split(params):
    """(the positional ones in order, {keyword-only name: (kind, default)})."""
    return ([p for p in params if p[1] != _P.KEYWORD_ONLY],
            {p[0]: p[1:] for p in params if p[1] == _P.KEYWORD_ONLY})


def _same_default(stub, real):
    if stub is _SPELLED_ELSEWHERE:
        return real is not _P.empty
    return stub == real and type(stub) is type(real)


def test_every_client_method_has_the_stubs_parameters():
    """(tester finding pyteam2 3) inspect.signature() and help() of the C methods left out
    keywords the parser takes and the stub lists (expire=, ttl=, val=, values=), and showed
    noreply as positional where the parser takes 4 positional arguments at most:
    `inspect.signature(c.set).bind("k", "v", expire=100)` raised TypeError. Every public
    method's runtime signature now has the stub's parameters: the same names, kinds
    (positional, keyword-only) and order of the positional ones, and the same defaults."""
    _, classes = _stubs()
    stubbed = {**classes["_Client"], **classes["Client"]}
    names = {n for n in dir(mcpool.Client) if not n.startswith("_")
             and callable(getattr(mcpool.Client, n))} | {"__init__"}
    assert names - set(stubbed) == set()
    for name in sorted(names):
        stub_pos, stub_kw = _split(_stub_parameters(stubbed[name]))
        real_pos, real_kw = _split(_runtime_parameters(getattr(mcpool.Client, name)))
        assert [p[:2] for p in real_pos] == [p[:2] for p in stub_pos], name
        assert {n: k for n, (k, _) in real_kw.items()} == \
            {n: k for n, (k, _) in stub_kw.items()}, name
        for (n, _, d), (_, _, rd) in zip(stub_pos, real_pos):
            assert _same_default(d, rd), (name, n, d, rd)
        for n, (_, d) in stub_kw.items():
            assert _same_default(d, real_kw[n][1]), (name, n, d, real_kw[n][1])


def _c_methods():
    return sorted(n for n in dir(mcpool.Client) if not n.startswith("_")
                  and getattr(getattr(mcpool.Client, n), "__text_signature__", None))


def test_the_signatures_take_what_the_parser_takes(prefix):
    """Each C method's signature says what its argument parser takes: one positional
    argument more than it lists is refused by the parser ("takes at most"), and every
    keyword it lists is taken (never "unexpected keyword argument"). On a server of this
    test's own: flush_all is among the calls."""
    from conftest import Server
    s = Server()
    try:
        c = mcpool.Client([s.addr])
        for name in _c_methods():
            sig = inspect.signature(getattr(c, name))
            npos = sum(1 for p in sig.parameters.values()
                       if p.kind in (_P.POSITIONAL_ONLY, _P.POSITIONAL_OR_KEYWORD))
            with pytest.raises(TypeError, match="positional|takes no arguments"):
                getattr(c, name)(*([prefix + "k"] * (npos + 1)))
            for p in sig.parameters.values():
                try:
                    getattr(c, name)(**{p.name: None})
                except TypeError as e:
                    assert "unexpected keyword" not in str(e), (name, p.name, e)
                except mcpool.Error:
                    pass
    finally:
        s.stop()


def test_every_alias_form_binds_and_works(prefix):
    """The call forms with an alias (expire=, ttl=, val=, values=, incr's value=,
    flush_all's time=), and the keyword-only noreply=/compress_level=, work and bind to the
    method's signature (`gat(key, expire=100)` was "missing a required argument: 'time'")."""
    from conftest import Server
    s = Server()
    try:
        c = mcpool.Client([s.addr])
        k, n = prefix + "k", prefix + "n"
        assert c.set(k, "v") and c.set_counter(n, 5)

        def token():
            return c.gets(k)[1]
        forms = [
            ("set", (k,), {"val": "v", "expire": 100}),
            ("set", (k, "v", 0, 10), {"noreply": True, "compress_level": 1}),
            ("add", (prefix + "a",), {"val": "v", "expire": 100}),
            ("replace", (k,), {"val": "v", "expire": 100}),
            ("append", (k,), {"val": "x", "expire": 5, "noreply": True}),
            ("append", (k, "x", 0, 0), {}),
            ("prepend", (k,), {"val": "x"}),
            ("cas", (k,), lambda: {"val": "v", "cas": token(), "expire": 100}),
            ("set_bytes", (k, b"v", 0), {"ttl": 100}),
            ("set_bytes", (k, b"v", 0), {"expire": 100}),
            ("set_multi", (), {"values": {k: "v"}, "expire": 100}),
            ("set_multi", ({k: "v"}, 0, "", 10), {"noreply": True, "compress_level": 1}),
            ("add_multi", (), {"values": {prefix + "b": "v"}, "expire": 100}),
            ("replace_multi", (), {"values": {k: "v"}, "expire": 100}),
            ("set_multi_noreply", (), {"values": {k: "v"}, "expire": 100}),
            ("append_multi", (), {"values": {k: "x"}}),
            ("prepend_multi", (), {"values": {k: "x"}}),
            ("cas_multi", (), lambda: {"values": {k: ("v", token())}, "expire": 100}),
            ("incr", (n,), {"value": 2, "noreply": True}),
            ("decr", (n,), {"value": 1}),
            ("set_counter", (n, 5), {"expire": 100}),
            ("incr_or_init", (n,), {"expire": 100}),
            ("decr_or_init", (n,), {"expire": 100}),
            ("touch", (k,), {"expire": 100, "noreply": True}),
            ("touch_multi", ([k],), {"expire": 100, "noreply": True}),
            ("gat", (k,), {"expire": 100}),
            ("gats", (k,), {"expire": 100}),
            ("gat_multi", ([k],), {"expire": 100}),
            ("gats_multi", ([k],), {"expire": 100}),
            ("delete", (k, None), {"noreply": True}),
            ("delete_multi", ([k], None, ""), {"noreply": True}),
            ("flush_all", (), {"time": 0, "noreply": True}),
        ]
        for name, args, kw in forms:
            kw = kw() if callable(kw) else kw
            inspect.signature(getattr(c, name)).bind(*args, **kw)
            getattr(c, name)(*args, **kw)  # works: no TypeError
            c.set(k, "v")
        # an alias and its parameter both given is still refused, as leaving both out
        with pytest.raises(TypeError, match="multiple values"):
            c.set(k, "v", 0, expire=5)
        with pytest.raises(TypeError, match="missing required argument 'time'"):
            c.gat(k)
    finally:
        s.stop()


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
