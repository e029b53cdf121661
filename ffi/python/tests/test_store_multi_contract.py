"""The list-answering batch stores (set_multi, add_multi, replace_multi, append_multi,
prepend_multi) share one path and one contract, the one ffi/python/README.md states for
them: the returned list holds every key not stored, whether the server said no (add: it
existed; replace/append/prepend: it was missing), its server is down (also with
fail_open=False), or its value is over the size limit; none of these raises. cas_multi,
touch_multi and the multi-gets raise for an outage instead (tester finding retest9 3: the
README said replace_multi's list was the keys that "were missing")."""

import os

import pytest

import mcpool
from conftest import Server


@pytest.fixture
def two_one_stopped(prefix):
    live, stopped = Server(), Server()
    try:
        c = mcpool.Client([live.addr, stopped.addr], retry_timeout=0, fail_open=False)
        keys = [prefix + "k%02d" % i for i in range(30)]
        up = [k for k in keys if c.server_for(k) == live.addr]
        dead = [k for k in keys if c.server_for(k) == stopped.addr]
        assert up and dead
        stopped.stop()
        yield c, keys, up, dead
    finally:
        live.stop()
        stopped.stop()


@pytest.mark.parametrize("call", ["set_multi", "add_multi", "replace_multi", "append_multi",
                                  "prepend_multi"])
def test_a_down_servers_keys_are_listed_not_stored_without_an_exception(two_one_stopped, call):
    c, keys, up, dead = two_one_stopped
    existing = up[: len(up) // 2]  # the others are missing on the live server
    assert c.set_multi({k: "old" for k in existing}) == []
    listed = getattr(c, call)({k: "v" for k in keys})
    answered_no = {"set_multi": [], "add_multi": existing}.get(
        call, [k for k in up if k not in existing])
    assert sorted(listed) == sorted(dead + answered_no)
    # the same outage raises for cas_multi and touch_multi, with every key's answer
    with pytest.raises(mcpool.ConnectionError) as e:
        c.touch_multi(keys, 100)
    assert set(e.value.results) == set(keys)


@pytest.mark.parametrize("call", ["set_multi", "add_multi", "replace_multi", "append_multi"])
def test_a_value_over_the_size_limit_is_listed_and_the_others_stored(server, prefix, call):
    c = mcpool.Client([server.addr])
    big, small = prefix + "big", prefix + "small"
    assert c.set_multi({big: b"x", small: b"x"}) == []
    huge = os.urandom(2 * 1024 * 1024)  # incompressible
    other = {"add_multi": prefix + "new"}.get(call, small)
    assert getattr(c, call)({big: huge, other: b"z"}) == [big]
    assert c.get(other) == (b"xz" if call == "append_multi" else b"z")  # the other stored
