"""mcpool.django.McpoolCache beside Django's own memcached backends with one server of two
down (a live memcached and a closed port), side by side, each preset against the backend it
stands in for: under the pymemcache preset a server in pymemcache's retry window answers
every call's default as PyMemcacheCache does (tester finding frameworks 3), and clear() with
a server down answers as each stock backend's (finding frameworks 5)."""
import socket
import time
import warnings

import pytest

from conftest import BrokenServer, Server, require

django = require("django", "python3-django")
from django.conf import settings  # noqa: E402

if not settings.configured:
    settings.configure(CACHES={"default": {
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}, USE_TZ=True)
django.setup()

import mcpool  # noqa: E402
import mcpool.django  # noqa: E402

STOCK = {"pymemcache": ("PyMemcacheCache", "pymemcache", "python3-pymemcache"),
         "python-memcached": ("MemcachedCache", "memcache", "python3-memcache"),
         "pylibmc": ("PyLibMCCache", "pylibmc", "python3-pylibmc")}


def _closed_port():
    """An address nobody listens on: a refused connect, a server down."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return "127.0.0.1:%d" % s.getsockname()[1]


@pytest.fixture
def live():
    """A memcached of the test's own (clear() flushes it)."""
    s = Server()
    yield s
    s.stop()


def backend(kind, preset, location, prefix, options=None):
    """Django's own backend for preset ("stock") or McpoolCache with that preset ("ours"),
    with the same LOCATION, KEY_PREFIX and OPTIONS (the same keys: each test runs the stock
    one first, then ours, and ends with what both leave alike)."""
    params = {"KEY_PREFIX": prefix, "OPTIONS": dict(options or {})}
    if kind == "ours":
        params["OPTIONS"]["preset"] = preset
        return mcpool.django.McpoolCache(location, params)
    name, module, package = STOCK[preset]
    require(module, package)
    from django.core.cache.backends import memcached
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # MemcachedCache is deprecated in Django 3.2
        return getattr(memcached, name)(location, params)


def keys_on(cache, location, preset, addr, n):
    """n of the caller's keys that the preset places on addr (as the stock backend does)."""
    placed = mcpool.Client(location, preset=preset)
    keys = [k for k in ("k%d" % i for i in range(400))
            if placed.server_for(cache.make_key(k)) == addr][:n]
    assert len(keys) == n
    return keys


def outcome(fn, *args):
    """A call's observable answer: ("ok", value) or ("raised",)."""
    try:
        return ("ok", fn(*args))
    except Exception:  # noqa: BLE001 - that it raised is the observable result
        return ("raised",)


# HashClient's retry_timeout, read by both: a window no slow machine outlasts, so that every
# call after the first failure falls in it (the window's length: test_..._default_options)
WINDOW = {"retry_timeout": 30}


def test_pymemcache_preset_answers_a_retry_window_as_pymemcachecache(live, prefix):
    """With a server down and no ignore_exc, Django's PyMemcacheCache (pymemcache's
    HashClient) raises on the call that fails against the server and answers every call's
    default while the server is in its retry window; McpoolCache under the pymemcache
    preset raised mcpool.ConnectionError on every call (tester finding frameworks 3). The
    same calls on both, side by side, give the same answers."""
    down = _closed_port()
    location = [live.addr, down]
    got = {}
    for kind in ("stock", "ours"):
        c = backend(kind, "pymemcache", location, prefix, WINDOW)
        dead = keys_on(c, location, "pymemcache", down, 3)
        up = keys_on(c, location, "pymemcache", live.addr, 3)
        first = outcome(c.set, dead[0], 1)  # the call that tries the server: raises
        c.set_many({k: "v-" + k for k in up})
        got[kind] = [
            first, outcome(c.get, dead[0]), outcome(c.get, dead[0], 5), outcome(c.set, dead[0], 1),
            outcome(c.add, dead[0], 1), outcome(c.delete, dead[0]), outcome(c.has_key, dead[0]),
            outcome(c.touch, dead[0]), outcome(c.incr, dead[0]), outcome(c.decr, dead[1]),
            outcome(c.get_or_set, dead[1], 7), outcome(c.get_or_set, dead[2], lambda: 8),
            outcome(c.get_many, dead + up),
            outcome(lambda: sorted(c.set_many({k: 1 for k in dead + up}))),
            outcome(c.get, up[0]), outcome(c.delete_many, dead + up), outcome(c.get_many, up),
            outcome(c.set, up[1], "x"), outcome(c.get, up[1]), outcome(c.clear),
            outcome(c.get, up[1])]
        expected_in_window = [
            ("raised",), ("ok", None), ("ok", 5), ("ok", None), ("ok", False), ("ok", False),
            ("ok", False), ("ok", False), ("ok", False), ("ok", False), ("ok", 7), ("ok", 8),
            ("ok", {k: "v-" + k for k in up}), ("ok", sorted(dead)), ("ok", 1), ("ok", None),
            ("ok", {}), ("ok", None), ("ok", "x"), ("ok", None), ("ok", None)]
        assert got[kind] == expected_in_window, kind
    assert got["ours"] == got["stock"]


@pytest.mark.parametrize("call", ["get", "set", "add", "delete", "incr", "get_many",
                                  "set_many", "delete_many", "clear"])
def test_pymemcache_preset_raises_on_the_call_that_tries_the_server(live, prefix, call):
    """Whatever the first call to reach the server down is, it raises in both backends, and
    the same call again, now in the retry window, answers (tester finding frameworks 3)."""
    down = _closed_port()
    location = [live.addr, down]
    got = {}
    for kind in ("stock", "ours"):
        c = backend(kind, "pymemcache", location, prefix, WINDOW)
        dead = keys_on(c, location, "pymemcache", down, 2)
        up = keys_on(c, location, "pymemcache", live.addr, 2)
        args = {"get": (dead[0],), "set": (dead[0], 1), "add": (dead[0], 1),
                "delete": (dead[0],), "incr": (dead[0],), "get_many": (up + dead,),
                "set_many": ({k: 1 for k in up + dead},), "delete_many": (up + dead,),
                "clear": ()}[call]
        fn = getattr(c, call)
        got[kind] = [outcome(fn, *args)[0], outcome(fn, *args)[0]]
    assert got["ours"] == got["stock"] == ["raised", "ok"]


def test_pymemcache_preset_retry_window_then_the_server_leaves_the_hash(live, prefix):
    """With HashClient's defaults (retry_attempts 2, retry_timeout 1 s), a key on the server
    down: set then get, polled until the key lives on the other server. Each backend raises
    only on the calls that try the server (one per retry_timeout), answers None in between,
    and then stores the key on the live server (the tester's dj_down_pymem.py; mcpool moves
    the key a call or two sooner, mcpool.compat.pymemcache's docstring)."""
    down = _closed_port()
    location = [live.addr, down]
    for kind in ("stock", "ours"):
        c = backend(kind, "pymemcache", location, prefix)
        key = keys_on(c, location, "pymemcache", down, 1)[0]
        raised, answers = 0, []
        deadline = time.monotonic() + 15
        while True:
            assert time.monotonic() < deadline, (kind, raised, answers)
            s, g = outcome(c.set, key, len(answers)), outcome(c.get, key)
            raised += (s == ("raised",)) or (g == ("raised",))
            if g == ("ok", len(answers)):
                break  # moved: stored on the live server
            answers.append(g)
            time.sleep(0.05)  # the poll's pace: the window is a time
        assert 1 <= raised <= (3 if kind == "ours" else 4), (kind, raised)
        assert all(a in (("ok", None), ("raised",)) for a in answers), (kind, answers)
        assert live.raw_get(c.make_key(key)) is not None, kind


@pytest.mark.parametrize("preset", ["python-memcached", "pymemcache", "pylibmc"])
def test_clear_with_a_server_down_answers_as_djangos_backend(live, prefix, preset):
    """clear() with one server down, three times: MemcachedCache returns None each time
    (python-memcached's flush_all skips a server it cannot reach), PyMemcacheCache raises
    once, on the call that tries the server, then returns None, PyLibMCCache raises each
    time; McpoolCache raised every time under every preset (tester finding frameworks 5).
    Each flushes the live server."""
    down = _closed_port()
    location = [live.addr, down]
    options = WINDOW if preset == "pymemcache" else {}
    got = {}
    for kind in ("stock", "ours"):
        c = backend(kind, preset, location, prefix, options)
        up = keys_on(c, location, preset, live.addr, 1)[0]
        c.set(up, "v")
        assert live.raw_get(c.make_key(up)) is not None
        answers = [outcome(c.clear) for _ in range(3)]
        got[kind] = (answers, live.raw_get(c.make_key(up)))
    assert got["ours"] == got["stock"]
    answers = {"python-memcached": [("ok", None)] * 3,
               "pymemcache": [("raised",), ("ok", None), ("ok", None)],
               "pylibmc": [("raised",)] * 3}[preset]
    assert got["ours"] == (answers, None)


def _outage_answers(cache):
    """Every call of Django's cache API on a cache whose one server is down or stalled: its
    answer, or the exception class it raised."""
    def run(fn, *args):
        try:
            return fn(*args)
        except Exception as e:  # noqa: BLE001 - the class raised is the observable result
            return type(e).__name__
    return {
        "get": run(cache.get, "k", "D"),
        "set": run(cache.set, "k", "v"),
        "add": bool(run(cache.add, "k", "v")),  # python-memcached's 0, our False
        "delete": run(cache.delete, "k"),
        "get_many": run(cache.get_many, ["k", "j"]),
        "set_many": sorted(run(cache.set_many, {"k": 1, "j": 2})),
        "has_key": run(cache.has_key, "k"),
        "touch": run(cache.touch, "k"),
        "get_or_set": run(cache.get_or_set, "k", 5),
        "incr": run(cache.incr, "k"),
        "delete_many": run(cache.delete_many, ["k", "j"]),
        "clear": run(cache.clear),
    }


@pytest.mark.parametrize("layout", ["down", "stalled"])
def test_python_memcached_preset_answers_an_outage_as_memcachedcache(prefix, layout):
    """One server down (a closed port) or stalled (accepts, never answers): MemcachedCache
    answers every call as python-memcached reports the failure (the default, None, False,
    incr's ValueError), never raising; so does the python-memcached preset (tester finding
    pyframeworks3 1: every call raised mcpool.ConnectionError or TimeoutError), side by side;
    and OPTIONS' own fail_open=False raises, as before."""
    # (a deliberately silent fake server: accepts, reads, never answers)
    silent = BrokenServer(None) if layout == "stalled" else None
    location = silent.addr if silent else _closed_port()
    options = {"socket_timeout": 0.3}
    try:
        ours = _outage_answers(backend("ours", "python-memcached", location, prefix, options))
        assert ours == {
            "get": "D", "set": None, "add": False, "delete": False, "get_many": {},
            "set_many": ["j", "k"], "has_key": False, "touch": False, "get_or_set": 5,
            "incr": "ValueError", "delete_many": None, "clear": None}, ours
        require("memcache", "python3-memcache")
        stock = _outage_answers(backend("stock", "python-memcached", location, prefix, options))
        assert ours == stock
        strict = backend("ours", "python-memcached", location, prefix,
                         dict(options, fail_open=False))
        with pytest.raises((mcpool.ConnectionError, mcpool.TimeoutError)):
            strict.get("k")
    finally:
        if silent:
            silent.close()
