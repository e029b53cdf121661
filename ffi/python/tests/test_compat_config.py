"""Configuration of the drop-ins means what it means in the peer library, checked against the
real peer (python-memcached 1.59, pylibmc 1.6.3 over libmemcached 1.1.4) on real memcached."""
import os
import socket
import threading
import time

import pytest

import mcpool.compat.memcache as drop_memcache
import mcpool.compat.pylibmc as drop_pylibmc
from conftest import Server, require

memcache = require("memcache", "python3-memcache")
pylibmc = require("pylibmc", "python3-pylibmc")


@pytest.fixture(scope="module")
def big_server():
    s = Server("-I", "4m")
    yield s
    s.stop()


# ---- python-memcached: server_max_value_length ------------------------------------------------


@pytest.mark.parametrize("mod", [memcache, drop_memcache], ids=["python-memcached", "drop-in"])
def test_server_max_value_length_0_is_no_limit(big_server, prefix, mod):
    """python-memcached reads 0 as "no limit of its own": a 1.5 MB value is stored on a
    memcached that takes it (the drop-in kept a 1 MiB limit and returned 0, value lost)."""
    v = os.urandom(1500000)
    c = mod.Client([big_server.addr], server_max_value_length=0)
    k = prefix + "big"
    assert c.set(k, v)
    assert c.get(k) == v


@pytest.mark.parametrize("mod", [memcache, drop_memcache], ids=["python-memcached", "drop-in"])
def test_server_max_value_length_given_is_the_limit(big_server, prefix, mod):
    c = mod.Client([big_server.addr], server_max_value_length=1000)
    k = prefix + "limited"
    assert not c.set(k, os.urandom(1001))
    assert c.get(k) is None
    assert c.set(k, b"x" * 1000)


# ---- pylibmc: timeouts -------------------------------------------------------------------------


@pytest.fixture
def silent():
    """A server that accepts connections and never answers."""
    with socket.socket() as lsn:
        lsn.bind(("127.0.0.1", 0))
        lsn.listen(64)
        yield "127.0.0.1:%d" % lsn.getsockname()[1]


def waited(mod, addr, behaviors):
    c = mod.Client([addr], behaviors=behaviors)
    t0 = time.monotonic()
    with pytest.raises(mod.Error):
        c.get("k")
    return time.monotonic() - t0


PYLIBMCS = pytest.mark.parametrize("mod", [pylibmc, drop_pylibmc], ids=["pylibmc", "drop-in"])


@PYLIBMCS
def test_poll_timeout_is_the_wait_for_a_reply(silent, mod):
    """libmemcached waits for a reply _poll_timeout ms (the drop-in ignored it: 5 s)."""
    dt = waited(mod, silent, {"_poll_timeout": 300})
    assert 0.25 <= dt < 1.5, dt


@PYLIBMCS
@pytest.mark.parametrize("name", ["receive_timeout", "send_timeout"])
def test_receive_and_send_timeouts_shorten_no_wait(silent, mod, name):
    """SO_RCVTIMEO/SO_SNDTIMEO (us) do not shorten pylibmc's wait (the drop-in made 0.3 s of
    receive_timeout its io_timeout)."""
    dt = waited(mod, silent, {name: 300000, "_poll_timeout": 1500})
    assert 1.3 <= dt < 4, dt


@PYLIBMCS
def test_poll_timeout_0_fails_every_call(server, prefix, mod):
    """pylibmc times every call out at once; the drop-in refuses it (an error either way,
    never a client that waits)."""
    with pytest.raises(mod.Error):
        mod.Client([server.addr], behaviors={"_poll_timeout": 0}).set(prefix + "k", "v")


# ---- pylibmc: failure_limit ------------------------------------------------------------------


@pytest.fixture
def dead():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return "127.0.0.1:%d" % s.getsockname()[1]


def outcomes(mod, addr, behaviors, n=4):
    c = mod.Client([addr], behaviors=behaviors)
    out = []
    for _ in range(n):
        try:
            c.get("k")
            out.append("ok")
        except mod.Error as e:
            out.append(type(e).__name__)
    return out


@pytest.mark.parametrize("behaviors", [
    {}, {"failure_limit": 5}, {"failure_limit": 2}, "copied", {"auto_eject": True},
    {"auto_eject": True, "failure_limit": 5}, {"remove_failed": 3},
], ids=["none", "failure_limit-5", "failure_limit-2", "copied", "auto_eject",
        "auto_eject-failure_limit-5", "remove_failed-3"])
def test_failure_limit_changes_no_dead_server_handling(dead, behaviors):
    """libmemcached disables a server for retry_timeout at its first failure (ServerDown,
    no connect tried) whatever failure_limit says; giving pylibmc's default (5, as
    get_behaviors() reports it) made the drop-in try to connect on each of the next calls."""
    if behaviors == "copied":
        behaviors = dict(drop_pylibmc.Client([dead]).get_behaviors())
        assert behaviors["failure_limit"] == 5
    want = outcomes(pylibmc, dead, dict(behaviors))
    assert want == ["ConnectionError", "ServerDown", "ServerDown", "ServerDown"]
    assert outcomes(drop_pylibmc, dead, dict(behaviors)) == want
