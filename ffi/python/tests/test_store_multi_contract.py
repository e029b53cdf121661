"""The list-answering batch stores (set_multi, add_multi, replace_multi, append_multi,
prepend_multi) share one path and one contract, the one ffi/python/README.md states for
them: the returned list holds every key the server answered "not stored" (add: it existed;
replace/append/prepend: it was missing) and, with fail_open=True, the keys of a server down
or timed out; a key that failed with an error (its server down or timed out without
fail_open, a server's error reply, a value over the size limit) raises once the others are
stored, as delete_multi raises: the first such key's exception (ConnectionError,
TimeoutError, ServerError, ClientError), with `key` and `results` ({key: True stored, False
not stored, or that key's exception}). Tester finding partial 4: a server down was listed as
"not stored", so add_multi used as a lock took "cache down" for "held", and fail_open made no
difference (these tests asserted that before; retest9 3 had the README say replace_multi's
list was the keys that "were missing"). The drop-ins answer as their peers: they list such
keys where the peer does (python-memcached, pymemcache), raise where it raises (pylibmc)."""

import os
import socket

import pytest

import mcpool
from conftest import Server

CALLS = ["set_multi", "add_multi", "replace_multi", "append_multi", "prepend_multi"]


@pytest.fixture(params=[False, True], ids=["strict", "fail_open"])
def two_one_stopped(request, prefix):
    live, stopped = Server(), Server()
    try:
        c = mcpool.Client([live.addr, stopped.addr], retry_timeout=0, fail_open=request.param)
        keys = [prefix + "k%02d" % i for i in range(30)]
        up = [k for k in keys if c.server_for(k) == live.addr]
        dead = [k for k in keys if c.server_for(k) == stopped.addr]
        assert up and dead
        stopped.stop()
        yield c, keys, up, dead, request.param
    finally:
        live.stop()
        stopped.stop()


@pytest.mark.parametrize("call", CALLS)
def test_a_down_servers_keys_raise_unless_fail_open_lists_them(two_one_stopped, call):
    """(tester finding partial 4) Without fail_open: ConnectionError for the first key of the
    server down, carrying every key's outcome, the live server's keys stored; as
    delete_multi and touch_multi raise for the same outage. With fail_open: the down
    server's keys listed not stored, no exception, as documented."""
    c, keys, up, dead, fail_open = two_one_stopped
    existing = up[: len(up) // 2]  # the others are missing on the live server
    assert c.set_multi({k: "old" for k in existing}) == []
    answered_no = {"set_multi": [], "add_multi": existing}.get(
        call, [k for k in up if k not in existing])
    if fail_open:
        listed = getattr(c, call)({k: "v" for k in keys})
        assert sorted(listed) == sorted(dead + answered_no)
        return
    with pytest.raises(mcpool.ConnectionError) as e:
        getattr(c, call)({k: "v" for k in keys})
    first_dead = next(k for k in keys if k in dead)
    assert e.value.key == first_dead and repr(first_dead).strip("'") in str(e.value)
    results = e.value.results
    assert set(results) == set(keys)
    for k in up:
        assert results[k] is (k not in answered_no), k
    for k in dead:
        assert isinstance(results[k], mcpool.ConnectionError) and k in str(results[k]), k
    assert results[first_dead] is e.value
    stored = [k for k in up if k not in answered_no]
    want = {"set_multi": "v", "add_multi": "v", "replace_multi": "v",
            "append_multi": "oldv", "prepend_multi": "vold"}[call]
    assert c.get_multi(stored) == {k: want for k in stored}
    # the same outage raises the same class from delete_multi and touch_multi
    for other in (lambda: c.delete_multi(keys), lambda: c.touch_multi(keys, 100)):
        with pytest.raises(type(e.value)) as oe:
            other()
        assert set(oe.value.results) == set(keys)


@pytest.mark.parametrize("call", ["set_multi", "add_multi", "replace_multi", "append_multi"])
def test_a_value_over_the_size_limit_raises_and_the_others_are_stored(server, prefix, call):
    c = mcpool.Client([server.addr])
    big, small = prefix + "big", prefix + "small"
    assert c.set_multi({big: b"x", small: b"x"}) == []
    huge = os.urandom(2 * 1024 * 1024)  # incompressible
    other = {"add_multi": prefix + "new"}.get(call, small)
    with pytest.raises(mcpool.ClientError) as e:
        getattr(c, call)({big: huge, other: b"z"})
    assert e.value.status_name == "MCPOOL_VALUE_TOO_LARGE" and e.value.key == big
    assert e.value.results == {big: e.value, other: True}
    assert c.get(other) == (b"xz" if call == "append_multi" else b"z")  # the other stored


@pytest.mark.parametrize("protocol", ["text", "meta", "binary"])
@pytest.mark.parametrize("fail_open", [False, True])
def test_a_server_error_reply_raises_server_error_fail_open_or_not(
        server, server_error_server, prefix, protocol, fail_open):
    """A server that answers every store with SERVER_ERROR (a fake server): ServerError for
    its first key, its other keys' own ServerError in `results`, the live server's keys
    stored; with fail_open too, as set raises it there (fail_open answers only an outage as
    not stored; tester finding partial 4: the keys were listed, as "they existed")."""
    c = mcpool.Client([server.addr, server_error_server.addr], protocol=protocol,
                      fail_open=fail_open)
    keys = [prefix + "e%02d" % i for i in range(12)]
    bad = [k for k in keys if c.server_for(k) == server_error_server.addr]
    good = [k for k in keys if k not in bad]
    assert bad and good
    for call in ("set_multi", "add_multi"):
        with pytest.raises(mcpool.ServerError) as e:
            getattr(c, call)({k: "v" + call for k in keys})
        assert e.value.key == bad[0] and "out of memory" in str(e.value).lower()
        assert {k for k, r in e.value.results.items() if isinstance(r, mcpool.ServerError)} \
            == set(bad)
        assert all(e.value.results[k] is (call == "set_multi") for k in good)
    assert c.get_multi(good) == {k: "vset_multi" for k in good}
    with pytest.raises(mcpool.ServerError):
        c.set(bad[0], "v")


def test_add_multi_as_a_lock_tells_an_outage_from_a_held_lock(server, prefix):
    """(tester finding partial 4) The lock is held: ["lock"]; the only server refused:
    ConnectionError (it was ["lock"] too, so a caller skipped its work for a lock nobody
    held)."""
    lock = prefix + "lock"
    live = mcpool.Client([server.addr])
    assert live.add_multi({lock: "me"}) == []
    assert live.add_multi({lock: "other"}) == [lock]
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        down_addr = "127.0.0.1:%d" % s.getsockname()[1]
    down = mcpool.Client([down_addr])
    with pytest.raises(mcpool.ConnectionError) as e:
        down.add_multi({lock: "me"})
    assert e.value.key == lock and isinstance(e.value.results[lock], mcpool.ConnectionError)
    assert mcpool.Client([down_addr], fail_open=True).add_multi({lock: "me"}) == [lock]


def test_the_drop_ins_answer_a_failed_store_as_their_peers(server, server_error_server,
                                                           prefix):
    """python-memcached's set_multi and the pymemcache drop-in's set_many (HashClient with
    ignore_exc, as Django's PyMemcacheCache uses it) list the keys the SERVER_ERROR server
    refused, never raise; pylibmc raises (checked against the real ones where they answer
    alike: python-memcached lists them, pylibmc raises)."""
    import memcache as real_memcache
    import pylibmc as real_pylibmc
    import mcpool.compat.memcache as compat_memcache
    import mcpool.compat.pylibmc as compat_pylibmc
    from mcpool.compat.pymemcache import HashClient
    addrs = [server.addr, server_error_server.addr]
    keys = [prefix + "d%02d" % i for i in range(12)]
    got = []
    for mod in (real_memcache, compat_memcache):
        c = mod.Client(addrs, socket_timeout=2)
        got.append(sorted(c.set_multi({k: "v" for k in keys})))
    placed = mcpool.Client(addrs, preset="python-memcached")
    bad = sorted(k for k in keys if placed.server_for(k) == server_error_server.addr)
    assert bad and got[0] == got[1] == bad
    h = HashClient([tuple(a.rsplit(":", 1)) for a in addrs], ignore_exc=True)
    placed = mcpool.Client(addrs, preset="pymemcache")
    bad = sorted(k for k in keys if placed.server_for(k) == server_error_server.addr)
    assert bad and sorted(h.set_many({k: b"v" for k in keys})) == bad
    for mod in (real_pylibmc, compat_pylibmc):
        with pytest.raises(mod.Error):
            mod.Client(addrs).set_multi({k: "v" for k in keys})


class _Unpicklable:
    """A value whose own __reduce__ raises: the pickler's exception."""

    def __reduce__(self):
        raise ValueError("no pickling this one")


class _Interrupting:
    """A value whose __reduce__ raises what is not about the value (a Ctrl-C)."""

    def __reduce__(self):
        raise KeyboardInterrupt


@pytest.mark.parametrize("call", ["set_multi", "add_multi", "replace_multi"])
def test_a_value_mcpool_cannot_serialize_fails_alone(server, prefix, call):
    """(tester finding badinput 3) One value that cannot be stored (an object() without
    pickle, a str with a lone surrogate, an object that does not pickle) failed the whole
    batch, nothing stored, with neither `key` nor `results` and no key in the message: that
    item alone is refused, unsent, its key left as it was, the others stored, and the
    exception is that key's, naming the call and the key, as a refused key's."""
    plain = mcpool.Client([server.addr])
    pickling = mcpool.Client([server.addr], pickle=True)
    a, bad, c = prefix + "a", prefix + "bad", prefix + "c"
    cases = [
        (plain, object(), mcpool.ClientTypeError, "cannot store a object: values are", None),
        (plain, "x\udcff", mcpool.ClientError,
         "the value is a str that UTF-8 cannot encode (a lone surrogate)", UnicodeEncodeError),
        (pickling, lambda: 0, mcpool.ClientTypeError,
         "cannot store a function: it does not pickle (AttributeError: ", AttributeError),
        (pickling, _Unpicklable(), mcpool.ClientTypeError,
         "cannot store a _Unpicklable: it does not pickle (ValueError: no pickling this one)",
         ValueError),
    ]
    for mc, value, exc, words, cause in cases:
        mc.delete_multi([a, bad, c])
        if call == "replace_multi":
            assert mc.set_multi({a: "old", bad: "old", c: "old"}) == []
        elif call == "add_multi":
            assert mc.set(bad, "old")
        else:
            assert mc.set_multi({bad: "old"}) == []
        with pytest.raises(exc) as e:
            getattr(mc, call)({a: "new", bad: value, c: "new"})
        assert str(e.value).startswith("%s %r: %s" % (call, bad, words)), e.value
        assert e.value.key == bad
        assert e.value.results == {a: True, bad: e.value, c: True}
        assert (type(e.value.__cause__) is cause) if cause else e.value.__cause__ is None
        assert mc.get_multi([a, bad, c]) == {a: "new", bad: "old", c: "new"}, value


def test_what_pickling_raises_that_is_not_about_the_value_ends_the_batch(server, prefix):
    """A KeyboardInterrupt (or MemoryError) raised while pickling is no item's error: it
    propagates as it is, nothing sent, as from a single set."""
    mc = mcpool.Client([server.addr], pickle=True)
    a, b = prefix + "a", prefix + "b"
    for call in (mc.set_multi, mc.add_multi):
        with pytest.raises(KeyboardInterrupt):
            call({a: "new", b: _Interrupting()})
        assert mc.get_multi([a, b]) == {}
    with pytest.raises(KeyboardInterrupt):
        mc.set(a, _Interrupting())
    # a single set raises the pickler's own exception, as every peer does
    with pytest.raises(ValueError, match="^no pickling this one$"):
        mc.set(a, _Unpicklable())


def test_set_multi_noreply_names_the_key_and_sends_nothing(server, prefix):
    """set_multi_noreply takes str or bytes only, checked before anything is sent, as
    documented: the refusal names the key. (A str UTF-8 cannot encode is a str: that item
    alone fails, tests/test_batch_lone_surrogate.py.)"""
    mc = mcpool.Client([server.addr])
    a, bad = prefix + "a", prefix + "bad"
    with pytest.raises(mcpool.ClientTypeError) as e:
        mc.set_multi_noreply({a: "new", bad: 5})
    assert "takes str or bytes, not int (key %r)" % bad in str(e.value)
    assert mc.get_multi([a, bad]) == {}


def test_the_drop_ins_raise_the_picklers_exception_from_set_multi(server, prefix):
    """python-memcached and pylibmc let the pickler's exception through from set_multi: so
    do their drop-ins, whose mcpool.Client batch refuses that item alone."""
    import mcpool.compat.memcache as compat_memcache
    import mcpool.compat.pylibmc as compat_pylibmc
    for mod in (compat_memcache, compat_pylibmc):
        mc = mod.Client([server.addr])
        with pytest.raises(AttributeError, match="pickle"):
            mc.set_multi({prefix + "a": 1, prefix + "b": lambda: 0})
        with pytest.raises(ValueError, match="^no pickling this one$"):
            mc.set_multi({prefix + "a": 1, prefix + "b": _Unpicklable()})
