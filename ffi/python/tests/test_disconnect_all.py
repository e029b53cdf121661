"""disconnect_all() closes the client's connections (the core's mcpool_client_disconnect_all),
on mcpool.Client and the compat clients, as the peers do: python-memcached and pylibmc,
side by side, against one private memcached whose `stats` curr_connections counts them."""
import time

import pytest

from conftest import Server, require


@pytest.fixture
def own_server():
    s = Server()
    yield s
    s.stop()


def connections(server):
    """The server's open client connections, less the one asking (stats curr_connections)."""
    for line in server.raw(b"stats\r\n").split(b"\r\n"):
        if line.startswith(b"STAT curr_connections "):
            return int(line.split()[2]) - 1
    raise AssertionError("no curr_connections in stats")


def accepted(server):
    """Connections memcached has accepted so far, the one asking included (stats
    total_connections: it only grows, so no close still in flight can move it)."""
    for line in server.raw(b"stats\r\n").split(b"\r\n"):
        if line.startswith(b"STAT total_connections "):
            return int(line.split()[2])
    raise AssertionError("no total_connections in stats")


def settled(server, timeout=5.0):
    """The count once it stops moving: memcached reads the close of an earlier connection
    (the fixture's readiness probe, a stats query) on a worker thread, so a count taken at
    once may still hold it. Two equal reads 0.1 s apart, bounded."""
    deadline = time.monotonic() + timeout
    n = connections(server)
    while time.monotonic() < deadline:
        time.sleep(0.1)
        m = connections(server)
        if m == n:
            return n
        n = m
    return n


def settles_at(server, want, timeout=5.0):
    """The count once memcached has seen the closes (it reads each EOF on a worker thread):
    polled, bounded."""
    deadline = time.monotonic() + timeout
    n = connections(server)
    while n != want and time.monotonic() < deadline:
        time.sleep(0.02)
        n = connections(server)
    return n


def _mcpool(addr):
    import mcpool
    return mcpool.Client([addr])


def _mcpool_min_idle(addr):
    import mcpool
    return mcpool.Client([addr], min_idle=2, pool_size=4)


def _compat_memcache(addr):
    from mcpool.compat import memcache
    return memcache.Client([addr])


def _compat_pylibmc(addr):
    from mcpool.compat import pylibmc
    return pylibmc.Client([addr])


def _peer_memcache(addr):
    return require("memcache", "python3-memcache").Client([addr])


def _peer_pylibmc(addr):
    return require("pylibmc", "python3-pylibmc").Client([addr])


@pytest.mark.parametrize("make", [_mcpool, _mcpool_min_idle, _compat_memcache, _compat_pylibmc,
                                  _peer_memcache, _peer_pylibmc])
def test_disconnect_all_closes_the_connections(own_server, make):
    base = settled(own_server)
    before = accepted(own_server)
    c = make(own_server.addr)
    assert c.set("k", "v")
    assert c.get("k") == "v"
    # the one the calls used (answered: accepted), and the stats query's own
    assert accepted(own_server) >= before + 2
    if make is _mcpool_min_idle:
        # its min_idle connections open in the background: a connect still under way when
        # disconnect_all runs is not one it closes (it failed once so under a loaded machine)
        deadline = time.monotonic() + 10
        while c.metrics()[own_server.addr]["pool_open"] < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert c.metrics()[own_server.addr]["pool_open"] >= 2
    c.disconnect_all()
    assert settles_at(own_server, base) == base, make.__name__
    # the next call opens a connection again
    before = accepted(own_server)
    assert c.get("k") == "v"
    assert accepted(own_server) >= before + 2


def test_disconnect_all_keeps_the_servers_health():
    """A server marked dead stays marked (the core keeps health across disconnect_all)."""
    import mcpool
    from conftest import _free_port
    c = mcpool.Client(["127.0.0.1:%d" % _free_port()], failure_limit=1, retry_timeout=30,
                      connect_timeout=0.5, min_idle=0)
    with pytest.raises(mcpool.Error):
        c.get("k")
    c.disconnect_all()
    assert not next(iter(c.server_states().values()))["alive"]
